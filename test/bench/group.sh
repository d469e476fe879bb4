#!/bin/sh
# SPDX-License-Identifier: MIT
# The IOMMU group peer: vfio-pci-bind's procedure (andre-richter/
# vfio-pci-bind, the script passthrough guides point to) as a boot script
# in busybox sh. Given one device, every device of its IOMMU group except
# the bridges gets driver_override, leaves its driver and is probed again
# (drivers_probe), which the override sends to DRIVER. As there, nothing
# is checked after the probe and nothing is put back on a failure.
#
#   busybox sh test/bench/group.sh DEVICE [DRIVER]
dev=$1
drv=${2:-vfio-pci}
group=/sys/bus/pci/devices/$dev/iommu_group/devices
[ -d "$group" ] || { echo "$dev: no IOMMU group" >&2; exit 1; }
[ -d "/sys/bus/pci/drivers/$drv" ] || modprobe "$drv" || exit 1
for d in "$group"/*; do
	read -r class <"$d/class"
	case $class in 0x0604*) continue ;; esac
	id=${d##*/}
	echo "$drv" >"$d/driver_override"
	[ -e "/sys/bus/pci/drivers/$drv/$id" ] && continue
	[ -e "$d/driver" ] && echo "$id" >"$d/driver/unbind"
	echo "$id" >/sys/bus/pci/drivers_probe
done
