#!/bin/sh
# SPDX-License-Identifier: MIT
# The host's side of a hot-plug: QEMU's own unplug and plug of a device,
# when the guest asks for it, while the guest waits for the kernel to
# see it (the follow boot, test/qemu/guest/follow.sh).
#
#   test/qemu/monitor.sh DIR DEVICE
#
# DEVICE is the -device value the boot started with, id= included
# (usb-storage,bus=xhci.0,port=1,drive=stick,id=stick0). QEMU's QMP
# monitor is a pipe chardev on the FIFOs DIR/qmp.in and DIR/qmp.out
# (made before QEMU starts): it needs no socket client, and the guest's
# report (DIR/results) is the other way. Each line "monitor unplug" in
# the report is answered by a device_del of the id, each "monitor plug"
# by a device_add of DEVICE again, in order; QEMU's answers go to
# DIR/qmp.log. Ends once boot.sh wrote DIR/qemu.status, or at
# QEMU_TIMEOUT.
set -u

dir=$1 device=$2
id=${device##*id=}
id=${id%%,*}

# args: DEVICE's properties as QMP arguments, its driver first
args() {
	(
		IFS=,
		# shellcheck disable=SC2086 # split at the commas
		set -- $device
		printf '{"driver":"%s"' "$1"
		shift
		for kv; do
			printf ',"%s":"%s"' "${kv%%=*}" "${kv#*=}"
		done
		printf '}'
	)
}

# Both FIFOs opened read-write: such an open never waits for the other
# side, and what is written before QEMU reads waits in the pipe. The
# reader sees no end of file that way: it is stopped at the end.
exec 4<>"$dir/qmp.in"
cat 0<>"$dir/qmp.out" >"$dir/qmp.log" &
reader=$!
printf '{"execute":"qmp_capabilities"}\n' >&4

done=0
end=$(($(date +%s) + ${QEMU_TIMEOUT:-120} + 10))
while [ ! -e "$dir/qemu.status" ] && [ "$(date +%s)" -lt "$end" ]; do
	# only whole lines: one the guest is still writing matches neither
	asked=$(grep -x -e 'monitor unplug' -e 'monitor plug' "$dir/results" 2>/dev/null)
	n=0
	for a in $asked; do
		[ "$a" = monitor ] && continue
		n=$((n + 1))
		[ "$n" -gt "$done" ] || continue
		case $a in
		unplug) printf '{"execute":"device_del","arguments":{"id":"%s"}}\n' "$id" ;;
		plug) printf '{"execute":"device_add","arguments":%s}\n' "$(args)" ;;
		esac >&4
		done=$n
	done
	sleep 0.2
done
# QEMU has ended: the reader has its last answers once the pipe is empty
sleep 0.2
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
exit 0
