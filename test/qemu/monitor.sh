#!/bin/sh
# SPDX-License-Identifier: MIT
# The host's side of a hot-plug: QEMU's own unplug and plug of a device,
# when the guest asks for it, while the guest waits for the kernel to
# see it (the follow and serial boots, test/qemu/guest/follow.sh and
# serial.sh).
#
#   test/qemu/monitor.sh DIR DEVICE...
#
# Each DEVICE is a -device value the boot started with, id= included
# (usb-storage,bus=xhci.0,port=1,drive=stick,id=stick0). QEMU's QMP
# monitor is a pipe chardev on the FIFOs DIR/qmp.in and DIR/qmp.out
# (made before QEMU starts): it needs no socket client, and the guest's
# report (DIR/results) is the other way. Each line "monitor unplug [ID]"
# in the report is answered by a device_del of ID, each line
# "monitor plug [ID [PROP=VALUE,...]]" by a device_add of the DEVICE
# whose id is ID, with each PROP's value instead of its own (port=3:
# the same device in another port); without ID, the first DEVICE. In
# order; QEMU's answers go to DIR/qmp.log. Ends once boot.sh wrote
# DIR/qemu.status, or at QEMU_TIMEOUT.
set -u

dir=$1
shift
devices="$*"

# id_of DEVICE: its id
id_of() {
	local id="${1##*id=}"
	echo "${id%%,*}"
}

# device [ID]: the DEVICE whose id is ID; without ID the first
device() {
	local d
	for d in $devices; do
		if [ -z "$1" ] || [ "$(id_of "$d")" = "$1" ]; then
			echo "$d"
			return
		fi
	done
}

# args DEVICE [PROP=VALUE,...]: DEVICE's properties as QMP arguments,
# its driver first; a property the second argument names has its value
# from there
args() {
	(
		extra=$2
		IFS=,
		# shellcheck disable=SC2086 # split at the commas
		set -- $1
		printf '{"driver":"%s"' "$1"
		shift
		for kv; do
			case ,$extra, in
			*,"${kv%%=*}"=*) ;;
			*) printf ',"%s":"%s"' "${kv%%=*}" "${kv#*=}" ;;
			esac
		done
		for kv in $extra; do
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
	# only whole lines (wc counts their ends): one the guest is still
	# writing may not have its arguments yet
	whole=$(wc -l 2>/dev/null <"$dir/results") || whole=0
	asked=$(head -n "$whole" "$dir/results" 2>/dev/null | grep -E '^monitor (unplug|plug)( |$)')
	n=0
	while read -r _ verb id extra; do
		[ -n "$verb" ] || continue
		n=$((n + 1))
		[ "$n" -gt "$done" ] || continue
		d=$(device "$id")
		case $verb in
		unplug) printf '{"execute":"device_del","arguments":{"id":"%s"}}\n' "$(id_of "$d")" ;;
		plug) printf '{"execute":"device_add","arguments":%s}\n' "$(args "$d" "$extra")" ;;
		esac >&4
		done=$n
	done <<-EOF
		$asked
	EOF
	sleep 0.2
done
# QEMU has ended: the reader has its last answers once the pipe is empty
sleep 0.2
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
exit 0
