#!/bin/sh
# SPDX-License-Identifier: MIT
# Boot the board scenarios of one architecture and leave each guest's
# report in build/board/ARCH/out/NAME/results (see test/board.bats),
# beside its console.log; NAME@SUITE's in build/board/ARCH/SUITE/out/NAME.
#
#   test/qemu/board.sh arm64|armhf [SCENARIO[@SUITE]...]
#                          dt rootfs, then dt@S rootfs@S for each S of
#                          BOARD_SUITES (default "trixie sid" on arm64,
#                          "trixie" on armhf)
#
# The boards are QEMU's virt machines, whose devices come from a device
# tree as on most ARM boards: AMBA 9010000.pl031 (rtc-pl031) and
# 9030000.pl061 (pl061_gpio) with built-in drivers, a generic PCIe host
# for an e1000 whose driver is a module. The kernels are Debian's
# (linux-image-arm64, linux-image-armmp), fetched and cached like the
# PC's (kernel.sh): Debian 12's (6.1) without @SUITE, else that suite's
# (trixie: Debian 13's 6.12; sid: 7.2), each with an image of its own
# modules.
# Busybox is Debian 12's busybox-static of the same architecture, from
# its .deb, on every kernel (it is only the userland). drvbind is
# build/ARCH/drvbind (DRVBIND=FILE: another), inside the one image as
# /sbin/drvbind: the image is the board's whole root filesystem, as on
# many small boards. QEMU_JOBS boots run at once (default: the number
# of CPUs; each TCG guest keeps one busy).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
q=test/qemu
arch=$1
shift

# Per board: QEMU, its console, the kernel's metapackage, the qemu-user
# that runs the board's busybox here, the modules the scenarios load, a
# driver that refuses the e1000 (see guest/dt.sh), and the suites booted
# beside Debian 12 by default. Linux 7 boots on arm64, the architecture
# most boards that run drvbind have; armhf stays on 6.1 and 6.12.
case $arch in
arm64)
	qemu="qemu-system-aarch64 -M virt -cpu cortex-a57"
	meta=linux-image-arm64:arm64 user=qemu-aarch64-static
	mods="virtio_mmio virtio_console e1000 vfio-pci" refuse=vfio-pci
	suites="trixie sid" ;;
armhf)
	# highmem=off: the armmp kernel has no LPAE, so nothing above 4 GiB
	qemu="qemu-system-arm -M virt,highmem=off -cpu cortex-a15"
	meta=linux-image-armmp:armhf user=qemu-arm-static
	mods="virtio_mmio virtio_console e1000" refuse=pcieport
	suites=trixie ;;
*)
	echo "board.sh: no board $arch (arm64, armhf)" >&2
	exit 1 ;;
esac
if [ $# -eq 0 ]; then
	set -- dt rootfs
	for suite in ${BOARD_SUITES-$suites}; do
		set -- "$@" "dt@$suite" "rootfs@$suite"
	done
fi

cache=build/board/$arch
bin=${DRVBIND:-build/$arch/drvbind}
[ -n "${DRVBIND:-}" ] || make -s ARCH="$arch" "$bin"

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

# The kernel and image of each suite named, once: Debian 12's in
# build/board/ARCH, another suite's in build/board/ARCH/SUITE. DIR/root.cpio
# is the image, DIR/boot.kernel names the kernel. A suite whose kernel
# cannot be fetched costs its own boots only: their checks then say so.
prepared=
for s; do
	case ${s%@*} in
	dt | rootfs) ;;
	*)
		echo "board.sh: no scenario ${s%@*}" >&2
		exit 1 ;;
	esac
	suite=
	case $s in
	*@*) suite=${s#*@} ;;
	esac
	dir=$cache${suite:+/$suite}
	case " $prepared " in
	*" $dir "*) continue ;;
	esac
	prepared="$prepared $dir"
	rm -f "$dir/boot.kernel"
	if ! k=$(sh $q/kernel.sh "$dir" "$meta" "$suite"); then
		[ -n "$suite" ] || exit 1
		echo "board.sh: no kernel from $suite: its boots are left out" >&2
		continue
	fi
	kdir=${k% *} kver=${k##* }
	# A module the kernel has built in has nothing to load: 6.12's
	# virtio_console (CONFIG_VIRTIO_CONSOLE=y in trixie's arm64 and
	# armmp kernels, =m in Debian 12's) is there before /init runs.
	loadable=
	for m in $mods; do
		modprobe -d "$kdir" -S "$kver" --show-depends "$m" 2>/dev/null |
			grep -q '^builtin ' || loadable="$loadable $m"
	done
	MODULES=$loadable BUSYBOX=$busybox BUSYBOX_RUN=$user ROOT_DRVBIND=$bin \
		sh $q/initramfs.sh "$kdir" "$kver" "$dir/root.cpio"
	echo "$kdir/boot/vmlinuz-$kver" >"$dir/boot.kernel"
done

# The e1000 at PCI address 2 of the root bus is 0000:00:02.0. The power
# key (gpio-keys, built in on armhf) holds a GPIO of the pl061: its rule
# comes first, as a consumer must leave before its provider does, or the
# kernel warns that a GPIO chip in use goes away.
keys=drvbind=platform/gpio-keys:none

# scenario NAME[@SUITE]: one boot, on that suite's kernel and image.
scenario() {
	dir=$cache name=$1
	case $1 in
	*@*) dir=$cache/${1#*@} name=${1%@*} ;;
	esac
	case $name in
	dt)
		append="refuse=$refuse $keys drvbind=amba/9010000.pl031:none drvbind=9030000.pl061:none" ;;
	rootfs)
		# PID 1 in the whole-root image, then the board's /sbin/init
		append="rdinit=/sbin/drvbind drvbind.init=/sbin/init $keys drvbind=9010000.pl031:none drvbind=amba/9030000.pl061:none" ;;
	esac
	rm -rf "${dir:?}/out/$name"
	# no kernel from that suite (said above): no report, and none left over
	[ -s "$dir/boot.kernel" ] || return 0
	# The report's virtio console is the only port: max_ports=1 turns
	# QEMU's multiport off, so virtio_console adds the port, and hvc0,
	# within its probe (on 6.12, where it is built in, within the
	# guest's load of virtio_mmio). With multiport the port comes later,
	# from QEMU's control messages, and /dev/hvc0 can exist a moment
	# before it opens: /init's open then failed ("can't create
	# /dev/hvc0: No such device"), in 2 of 20 armhf boots on 6.12 two
	# at a time, none of 20 on 6.1; with max_ports=1 none of 36 on 6.12.
	QEMU=$qemu CONSOLE=ttyAMA0 RESULTS=virtio sh $q/boot.sh \
		"$(cat "$dir/boot.kernel")" "$dir/root.cpio" "$dir/out/$name" \
		"scenario=$name results=hvc0 $append" \
		-global virtio-serial-device.max_ports=1 \
		-device e1000,bus=pcie.0,addr=2,romfile=
}

. $q/pool.sh
pool scenario "$@"
