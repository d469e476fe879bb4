#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the test initramfs without root: a staging tree packed with
# `cpio --owner=0:0`, so no file needs to belong to root on disk.
#
#   test/qemu/initramfs.sh KDIR KVER OUT
#
# The image holds busybox (static) and its applets, every module the
# scenarios load (with dependencies, in load order, one list per
# module), and test/qemu/guest/ as /init (and /sbin/myinit) plus the
# scenario scripts under /test. The kernel command line's scenario=NAME
# picks the scenario. drvbind itself is not in it: the guest boots this
# image behind the prepend image (make initramfs), so every boot also
# proves that concatenation.
#
# The boards (test/qemu/board.sh) set, in the environment:
#   MODULES      the modules instead of the PC's
#   BUSYBOX      a static busybox of the board's architecture, run by
#   BUSYBOX_RUN  (qemu-user) to list its applets
#   ROOT_DRVBIND a drvbind to put in the image as /sbin/drvbind, with the
#                init as /sbin/init too: an image that is a board's whole
#                root filesystem, drvbind included
set -eu

kdir=$1 kver=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)

# Every module a scenario may load, by module name as modprobe knows it.
mods=${MODULES:-e1000 pci-stub vfio-pci xhci-pci usb-storage uas}

# busybox-static's: the image has no libc for a dynamic one.
busybox=${BUSYBOX:-$(command -v busybox)} || { echo "initramfs.sh: busybox-static missing" >&2; exit 1; }

stage=$out.d
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" \
	"$stage/proc" "$stage/sys" "$stage/dev" "$stage/run" "$stage/tmp" \
	"$stage/mod" "$stage/test"
cp "$busybox" "$stage/bin/busybox"
# Applet links by hand: --install would have to run inside the guest.
# No modprobe: the scenarios put their own at /sbin/modprobe, which only
# records that drvbind asked, so the scenario decides when a module loads.
for a in $(${BUSYBOX_RUN:+"$BUSYBOX_RUN"} "$busybox" --list-full); do
	case $a in
	bin/busybox|sbin/modprobe|linuxrc|sbin/init) continue ;;
	esac
	ln -s /bin/busybox "$stage/$a"
done

# /mod/NAME.list: the .ko files NAME needs, in load order (modprobe may
# name one twice, e.g. vfio via a softdep; the guest skips loaded ones).
for m in $mods; do
	modprobe -d "$kdir" -S "$kver" --show-depends "$m" |
		awk '$1 == "insmod" { print $2 }' >"$stage/mod/$m.list.host"
	[ -s "$stage/mod/$m.list.host" ] || { echo "initramfs.sh: no module $m" >&2; exit 1; }
	while read -r ko; do
		b=${ko##*/}
		cp "$ko" "$stage/mod/$b"
		echo "/mod/$b"
	done <"$stage/mod/$m.list.host" | awk '!seen[$0]++' >"$stage/mod/$m.list"
	rm "$stage/mod/$m.list.host"
done

cp "$here/guest/init" "$stage/init"
cp "$here/guest/init" "$stage/sbin/myinit"
cp "$here/guest/modprobe" "$stage/sbin/modprobe"
cp "$here/guest/"*.sh "$stage/test/"
chmod 755 "$stage/init" "$stage/sbin/myinit" "$stage/sbin/modprobe"
if [ -n "${ROOT_DRVBIND:-}" ]; then
	cp "$ROOT_DRVBIND" "$stage/sbin/drvbind"
	cp "$here/guest/init" "$stage/sbin/init"
	chmod 755 "$stage/sbin/drvbind" "$stage/sbin/init"
fi

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$stage"
