# SPDX-License-Identifier: MIT
# Sourced by the tests in this directory (debian/tests/control): what
# they share to build an initramfs with the installed package and boot
# it under QEMU. Everything comes from installed packages: the kernel
# linux-image-amd64 names, initramfs-tools, drvbind's hook, busybox.
#
# The host is left as it was: the image is built in a private mount
# namespace where the test's drvbind.conf lies over /etc and a command
# line without rules over /proc/cmdline, so no /etc/drvbind.conf is
# written and the build host's own command line cannot add rules. On
# the disposable testbed of Debian's CI this changes nothing; with the
# null runner on a working machine it keeps that machine's files alone.
#
# QEMU runs under TCG unless DRVBIND_TEST_ACCEL=kvm and /dev/kvm can be
# opened: nested KVM hangs on some hosts, and TCG is always there.

set -eu

# shellcheck disable=SC2034 # used by the tests that source this file
here=$(cd "$(dirname "$0")" && pwd)
tmp=${AUTOPKGTEST_TMP:?run by autopkgtest: AUTOPKGTEST_TMP is not set}
out=${AUTOPKGTEST_ARTIFACTS:-$tmp}/$(basename "$0")
mkdir -p "$out"

# kernel_version: the version of the kernel linux-image-amd64 depends
# on, whose image and modules the package installed.
kernel_version() {
	dpkg-query -W -f '${Depends}\n' linux-image-amd64 |
		tr ',|' '\n' | sed -n 's/^ *linux-image-\([0-9][^ ]*\).*/\1/p' | head -n 1
}
kver=$(kernel_version)
[ -n "$kver" ] || { echo "linux-image-amd64 names no kernel" >&2; exit 1; }
[ -f "/boot/vmlinuz-$kver" ] || { echo "no /boot/vmlinuz-$kver" >&2; exit 1; }

# build_image IMG CONF: mkinitramfs for $kver into IMG, with CONF, a
# file, as /etc/drvbind.conf. MODULES=list keeps the image small and its
# build short (Debian's MODULES=most takes minutes on a busy machine):
# ext4 for the root, and a hook of the test's own that adds the drivers
# of the guest's devices (e1000, xhci-pci, usb-storage, virtio-blk) for
# udev's coldplug to load, as MODULES=most would. pci-stub is added by
# drvbind's hook alone. The build's output and the image's file list go
# to $out.
build_image() {
	d=$tmp/image
	rm -rf "$d"
	mkdir -p "$d/conf/conf.d" "$d/conf/hooks" "$d/conf/scripts" "$d/etc"
	printf 'MODULES=list\nBUSYBOX=auto\nCOMPRESS=zstd\n' >"$d/conf/initramfs.conf"
	echo ext4 >"$d/conf/modules"
	cat >"$d/conf/hooks/guest-drivers" <<-'HOOK'
		#!/bin/sh
		[ "$1" = prereqs ] && exit 0
		. /usr/share/initramfs-tools/hook-functions
		manual_add_modules e1000 xhci_pci usb_storage virtio_blk virtio_pci
	HOOK
	chmod 755 "$d/conf/hooks/guest-drivers"
	install -m 644 "$2" "$d/etc/drvbind.conf"
	echo "BOOT_IMAGE=/vmlinuz ro quiet" >"$d/cmdline"
	# shellcheck disable=SC2016 # expanded by the inner shell
	if ! unshare -m --propagation private sh -c '
		set -eu
		mount -t overlay drvbind-etc -o "lowerdir=$1/etc:/etc" /etc
		mount --bind "$1/cmdline" /proc/cmdline
		exec mkinitramfs -d "$1/conf" -o "$2" "$3"' sh "$d" "$1" "$kver" \
		>"$out/build.log" 2>&1; then
		cat "$out/build.log"
		echo "mkinitramfs failed" >&2
		exit 1
	fi
	lsinitramfs "$1" >"$out/contents"
}

# image_holds IMG ERE: the image's file list has a line matching ERE.
image_holds() {
	grep -qE -- "$1" "$out/contents" && return 0
	echo "the image holds no file matching $1" >&2
	return 1
}

# make_root DIR: a root file system in DIR with busybox and its applets
# (busybox-static, so no library is needed), /sbin/init left free.
make_root() {
	rm -rf "$1"
	mkdir -p "$1/bin" "$1/sbin" "$1/usr/bin" "$1/usr/sbin" "$1/etc" \
		"$1/proc" "$1/sys" "$1/dev" "$1/run" "$1/tmp"
	cp /bin/busybox "$1/bin/busybox"
	for a in $(/bin/busybox --list-full); do
		case $a in
		bin/busybox | sbin/init) continue ;;
		esac
		ln -s /bin/busybox "$1/$a"
	done
	printf 'ID=drvbind-test\nNAME="drvbind test root"\n' >"$1/etc/os-release"
}

# disk DIR IMG: an ext4 image of DIR (mke2fs -d: no mount needed).
disk() {
	mke2fs -q -F -t ext4 -d "$1" "$2" 128M >/dev/null
}

# boot IMG ROOTIMG APPEND: boots $kver with IMG as its initramfs and
# ROOTIMG as /dev/vda, with two e1000s (0000:00:05.0, 0000:00:06.0) and
# a USB stick on qemu-xhci, whose interface is 2-1:1.0; the disks are
# snapshots. drvbind.timeout=120: under TCG on a busy host the stick can
# take longer than the default 10 s to appear. The console goes to $out/console.log, the guest's report
# (its second serial port) to $out/results. A guest that hangs is
# stopped after DRVBIND_TEST_TIMEOUT seconds (600).
boot() {
	accel=tcg
	if [ "${DRVBIND_TEST_ACCEL:-tcg}" = kvm ]; then
		if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
			accel=kvm
		else
			echo "DRVBIND_TEST_ACCEL=kvm, but /dev/kvm cannot be opened: TCG"
		fi
	fi
	truncate -s 1M "$tmp/stick.img"
	rm -f "$out/console.log" "$out/results"
	t0=$(date +%s)
	st=0
	timeout -k 5 "${DRVBIND_TEST_TIMEOUT:-600}" qemu-system-x86_64 \
		-machine "pc,accel=$accel" -m 512 -nodefaults -display none -no-reboot \
		-kernel "/boot/vmlinuz-$kver" -initrd "$1" \
		-append "console=ttyS0 panic=-1 root=/dev/vda rw drvbind.timeout=120 $3" \
		-serial "file:$out/console.log" -serial "file:$out/results" \
		-drive "file=$2,if=virtio,format=raw,snapshot=on" \
		-device e1000,addr=5,romfile= -device e1000,addr=6,romfile= \
		-device qemu-xhci,id=xhci,addr=9 \
		-drive "file=$tmp/stick.img,if=none,id=stick,format=raw,snapshot=on" \
		-device usb-storage,bus=xhci.0,drive=stick \
		</dev/null >"$out/qemu.out" 2>&1 || st=$?
	echo "booted $kver under $accel: QEMU ended with status $st after $(($(date +%s) - t0)) s"
	# the guest's lines end in CR LF
	tr -d '\r' <"$out/results" >"$out/report"
	if ! grep -qx end "$out/report"; then
		echo "the guest's report did not end; its console:" >&2
		tail -n 40 "$out/console.log" >&2
		cat "$out/qemu.out" >&2
		exit 1
	fi
}

# expect LINE WHY: the guest reported LINE, or the test fails saying WHY
# and showing what the guest reported instead.
fails=0
expect() {
	if grep -qxF -- "$1" "$out/report"; then
		echo "ok: $1"
		return 0
	fi
	echo "FAIL: $2" >&2
	echo "  expected: $1" >&2
	echo "  reported: $(grep -F -- "${1%% *}" "$out/report" | grep -v '^kmsg ' | tr '\n' ';')" >&2
	fails=$((fails + 1))
}

# finish: the test's status, after every expect has been checked; the
# guest's kernel log lines from drvbind are shown for the record.
finish() {
	sed -n 's/^kmsg //p' "$out/report"
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed; the report: $out/report" >&2
		exit 1
	fi
}
