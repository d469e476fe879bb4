#!/bin/sh
# SPDX-License-Identifier: MIT
# The hand-written peer: what people paste into an initramfs hook to move
# a device to another driver, written plainly. For each BUS/DEVICE:DRIVER
# it waits (polling every 0.1 s, TIMEOUT seconds at most) for the device
# and the driver, then driver_override, unbind, bind.
#
#   busybox sh test/bench/script.sh TIMEOUT BUS/DEVICE:DRIVER...
timeout=$1
shift
for rule; do
	bus=${rule%%/*}
	dev=${rule#*/}
	dev=${dev%:*}
	drv=${rule##*:}
	sys=/sys/bus/$bus/devices/$dev
	n=0
	while [ ! -e "$sys" ] || [ ! -e "/sys/bus/$bus/drivers/$drv" ]; do
		if [ "$n" -ge $((timeout * 10)) ]; then
			echo "$dev: not found" >&2
			continue 2
		fi
		sleep 0.1
		n=$((n + 1))
	done
	[ -e "$sys/driver_override" ] && echo "$drv" >"$sys/driver_override"
	[ -e "$sys/driver" ] && echo "$dev" >"$sys/driver/unbind"
	echo "$dev" >"/sys/bus/$bus/drivers/$drv/bind" || echo "$dev: bind failed" >&2
done
