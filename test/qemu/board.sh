#!/bin/sh
# SPDX-License-Identifier: MIT
# Boot the board scenarios of one architecture, one after the other, and
# leave each guest's report in build/board/ARCH/out/NAME/results (see
# test/board.bats), beside its console.log.
#
#   test/qemu/board.sh arm64|armhf [SCENARIO...]     dt rootfs
#
# The boards are QEMU's virt machines, whose devices come from a device
# tree as on most ARM boards: AMBA 9010000.pl031 (rtc-pl031) and
# 9030000.pl061 (pl061_gpio) with built-in drivers, a generic PCIe host
# for an e1000 whose driver is a module. The kernels are Debian's
# (linux-image-arm64, linux-image-armmp), fetched and cached like the
# PC's (kernel.sh); busybox is busybox-static of the same architecture,
# from its .deb. drvbind is build/ARCH/drvbind (DRVBIND=FILE: another),
# inside the one image as /sbin/drvbind: the image is the board's whole
# root filesystem, as on many small boards.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
q=test/qemu
arch=$1
shift
[ $# -gt 0 ] || set -- dt rootfs

# Per board: QEMU, its console, the kernel's metapackage, the qemu-user
# that runs the board's busybox here, the modules the scenarios load, and
# a driver that refuses the e1000 (see guest/dt.sh).
case $arch in
arm64)
	qemu="qemu-system-aarch64 -M virt -cpu cortex-a57"
	meta=linux-image-arm64:arm64 user=qemu-aarch64-static
	mods="virtio_mmio virtio_console e1000 vfio-pci" refuse=vfio-pci ;;
armhf)
	# highmem=off: the armmp kernel has no LPAE, so nothing above 4 GiB
	qemu="qemu-system-arm -M virt,highmem=off -cpu cortex-a15"
	meta=linux-image-armmp:armhf user=qemu-arm-static
	mods="virtio_mmio virtio_console e1000" refuse=pcieport ;;
*)
	echo "board.sh: no board $arch (arm64, armhf)" >&2
	exit 1 ;;
esac

cache=build/board/$arch
out=$cache/out
bin=${DRVBIND:-build/$arch/drvbind}
[ -n "${DRVBIND:-}" ] || make -s ARCH="$arch" "$bin"

k=$(sh $q/kernel.sh "$cache" "$meta")
kdir=${k% *} kver=${k##* }

# busybox-static of the board's architecture cannot be installed beside
# the host's (one /bin/busybox): its .deb is unpacked, once.
busybox=$cache/busybox
if [ ! -x "$busybox" ]; then
	rm -rf "$cache/bb" && mkdir -p "$cache/bb"
	(cd "$cache/bb" && apt-get download "busybox-static:$arch" >&2)
	dpkg -x "$cache"/bb/busybox-static_*.deb "$cache/bb/root"
	cp "$cache/bb/root/bin/busybox" "$busybox.tmp"
	mv "$busybox.tmp" "$busybox"
	rm -rf "$cache/bb"
fi

MODULES=$mods BUSYBOX=$busybox BUSYBOX_RUN=$user ROOT_DRVBIND=$bin \
	sh $q/initramfs.sh "$kdir" "$kver" "$cache/root.cpio"

# The e1000 at PCI address 2 of the root bus is 0000:00:02.0. The power
# key (gpio-keys, built in on armhf) holds a GPIO of the pl061: its rule
# comes first, as a consumer must leave before its provider does, or the
# kernel warns that a GPIO chip in use goes away.
keys=drvbind=platform/gpio-keys:none
for s; do
	case $s in
	dt)
		append="refuse=$refuse $keys drvbind=amba/9010000.pl031:none drvbind=9030000.pl061:none" ;;
	rootfs)
		# PID 1 in the whole-root image, then the board's /sbin/init
		append="rdinit=/sbin/drvbind drvbind.init=/sbin/init $keys drvbind=9010000.pl031:none drvbind=amba/9030000.pl061:none" ;;
	*)
		echo "board.sh: no scenario $s" >&2
		exit 1 ;;
	esac
	rm -rf "${out:?}/$s"
	QEMU=$qemu CONSOLE=ttyAMA0 RESULTS=virtio sh $q/boot.sh \
		"$kdir/boot/vmlinuz-$kver" "$cache/root.cpio" "$out/$s" \
		"scenario=$s results=hvc0 $append" \
		-device e1000,bus=pcie.0,addr=2,romfile=
done
