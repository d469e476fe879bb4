#!/bin/sh
# SPDX-License-Identifier: MIT
# Boot the test kernel and initramfs once under QEMU (TCG: nested KVM
# hangs on the machines this runs on) and collect what the guest said.
#
#   test/qemu/boot.sh KERNEL INITRD DIR APPEND [QEMU-ARG...]
#
# DIR/console.log  the kernel console (first serial port)
# DIR/results      the guest's report (second serial port)
# DIR/qemu.status  QEMU's exit status (124: killed by the timeout)
# DIR/seconds      how long the boot took
#
# The boards set QEMU (qemu-system-aarch64 -M virt ...) and CONSOLE
# (ttyAMA0), and RESULTS=virtio: a virt board has one UART, so the
# report goes to a virtio console instead (hvc0 in the guest).
set -u

kernel=$1 initrd=$2 dir=$3 append=$4
shift 4
mkdir -p "$dir"
rm -f "$dir/console.log" "$dir/results" "$dir/qemu.status" "$dir/seconds"
if [ "${RESULTS:-serial}" = virtio ]; then
	set -- -chardev "file,id=results,path=$dir/results" \
		-device virtio-serial-device -device virtconsole,chardev=results "$@"
else
	set -- -serial "file:$dir/results" "$@"
fi
t0=$(date +%s)
# panic=-1 and -no-reboot: if PID 1 dies the machine ends at once
# instead of rebooting; the hard timeout covers a guest that hangs.
# shellcheck disable=SC2086 # QEMU is a command and its options
timeout -k 5 "${QEMU_TIMEOUT:-120}" ${QEMU:-qemu-system-x86_64} \
	-nodefaults -display none -no-reboot -m 512 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=${CONSOLE:-ttyS0} panic=-1 $append" \
	-serial "file:$dir/console.log" \
	"$@" </dev/null >"$dir/qemu.out" 2>&1
echo $? >"$dir/qemu.status"
echo $(($(date +%s) - t0)) >"$dir/seconds"
