#!/bin/sh
# SPDX-License-Identifier: MIT
# Build initramfs images with the real builders, with drvbind installed
# by `make install`, and boot each under QEMU into a real root disk whose
# /sbin/init (root-init) reports what it found on the second serial port.
#
#   test/initramfs/run.sh [IMAGE...]     itools dracut dracut-sh
#
# itools     mkinitramfs (initramfs-tools), MODULES=most, Debian's default:
#            the builder picks the modules itself (e1000, xhci-pci and
#            usb-storage among them, for udev's coldplug to load), and
#            the drvbind hook adds its own
# dracut     dracut --no-hostonly (plus e1000), systemd as the initrd's init;
#            dracut's own selection has xhci-pci and usb-storage
# dracut-sh  the same without systemd: dracut's shell init
#
# Nothing is installed into the machine: `make install DESTDIR=` stages
# drvbind under build/initramfs/stage, and each builder runs in a mount
# namespace (ns.sh) where that tree, the kernel that test/qemu/kernel.sh
# unpacked, a test /etc/drvbind.conf and a command line without rules
# lie over /usr, /etc, /boot and /proc/cmdline, so the builders find
# everything where a real install puts it. The image is built for the
# very kernel QEMU boots, whatever kernel the build machine runs.
#
# DRVBIND=FILE puts another binary in the images (e.g. an older build):
# it replaces the staged /usr/sbin/drvbind after `make install`.
#
# Results: build/initramfs/out/IMAGE/{build.log,contents,results,console.log}.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
w=build/initramfs
here=test/initramfs
[ $# -gt 0 ] || set -- itools dracut dracut-sh

k=$(sh test/qemu/kernel.sh build/qemu)
kdir=${k% *} kver=${k##* }
mkdir -p "$w/out"

rm -rf "$w/stage"
make -s install DESTDIR="$top/$w/stage" PREFIX=/usr
if [ -n "${DRVBIND:-}" ]; then
	install -m 755 "$DRVBIND" "$w/stage/usr/sbin/drvbind"
fi

# The rule baked into every image; the boot adds its own on the command line.
rm -rf "${w:?}/etc"
mkdir -p "$w/etc"
printf '# baked into the image by the drvbind hook\npci/0000:00:05.0:pci-stub\n' >"$w/etc/drvbind.conf"
echo "BOOT_IMAGE=/vmlinuz ro quiet" >"$w/cmdline"

# The root disk: busybox, its applet links, root-init as /sbin/init, and
# the /etc/os-release without which systemd will not switch into it.
# mke2fs -d fills the file system from a directory: no root, no mount.
r=$w/root
rm -rf "$r" "$w/root.img"
mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" \
	"$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/tmp"
cp "$(command -v busybox)" "$r/bin/busybox"
for a in $(busybox --list-full); do
	case $a in
	bin/busybox | sbin/init) continue ;;
	esac
	ln -s /bin/busybox "$r/$a"
done
cp "$here/root-init" "$r/sbin/init"
chmod 755 "$r/sbin/init"
printf 'ID=drvbind-test\nNAME="drvbind test root"\n' >"$r/etc/os-release"
mke2fs -q -F -t ext4 -d "$r" "$w/root.img" 32M >/dev/null
# The USB stick's medium: 1 MiB of zeros (a sparse file), booted as a snapshot.
rm -f "$w/stick.img"
truncate -s 1M "$w/stick.img"

inns() {
	sh "$here/ns.sh" -u "$w/stage/usr" -u "$kdir" -e "$w/etc" -k "$w/cmdline" -b "$kdir/boot" -- "$@"
}

# build NAME: the image build/initramfs/NAME.img, its build log and its
# file list.
build() {
	o=$w/out/$1
	rm -rf "$o" "$w/$1.img"
	mkdir -p "$o"
	case $1 in
	itools)
		conf=$w/itools-conf
		rm -rf "$conf"
		mkdir -p "$conf/conf.d" "$conf/hooks" "$conf/scripts"
		printf 'MODULES=most\nBUSYBOX=auto\nCOMPRESS=zstd\n' >"$conf/initramfs.conf"
		inns mkinitramfs -d "$conf" -o "$w/$1.img" "$kver" >"$o/build.log" 2>&1
		lsinitramfs "$w/$1.img" >"$o/contents" ;;
	dracut | dracut-sh)
		# zstd -1: gzip, dracut's default here, takes most of a minute
		img=$w/$1.img
		[ "$1" = dracut ] && omit= || omit="systemd systemd-initrd dracut-systemd"
		inns dracut --no-hostonly --no-hostonly-cmdline --force --kver "$kver" \
			--add-drivers e1000 --omit "$omit" --compress "zstd -1 -q -T0" \
			"$img" >"$o/build.log" 2>&1
		lsinitrd "$img" >"$o/contents" ;;
	esac
}

# boot NAME: the image under QEMU, two e1000s (0000:00:05.0 has the
# config's rule, 0000:00:06.0 none), a USB stick (usb-storage on
# qemu-xhci at 0000:00:09.0; on the USB 3 root hub its interface is
# 2-1:1.0) and the root disk (disk and stick are snapshots: their files
# are not written). The command line adds a rule sending the stick's
# interface to none, so that usb-storage, which coldplug loads, must not
# take it, and a rule for a device that never appears, with a timeout far
# beyond QEMU's: a boot that waited for it would never reach the root's
# init.
boot() {
	case $1 in
	itools) append="root=/dev/vda" ;;
	*) append="root=/dev/vda rd.shell=0 rd.emergency=poweroff" ;;
	esac
	QEMU_TIMEOUT=${QEMU_TIMEOUT:-240} sh test/qemu/boot.sh \
		"$kdir/boot/vmlinuz-$kver" "$w/$1.img" "$w/out/$1" \
		"$append drvbind.timeout=600 \"drvbind=0000:00:1f.0:vfio-pci\" drvbind=2-1:1.0:none" \
		-drive "file=$w/root.img,if=virtio,format=raw,snapshot=on" \
		-device e1000,addr=5,romfile= -device e1000,addr=6,romfile= \
		-device qemu-xhci,id=xhci,addr=9 \
		-drive "file=$w/stick.img,if=none,id=stick,format=raw,snapshot=on" \
		-device usb-storage,bus=xhci.0,drive=stick
}

# One at a time: each guest keeps a CPU busy, and the builders want one too.
for i; do
	t0=$(date +%s)
	build "$i" || echo "run.sh: building $i failed, see $w/out/$i/build.log" >&2
	echo $(($(date +%s) - t0)) >"$w/out/$i/build.seconds"
	[ -s "$w/$i.img" ] && boot "$i"
done
