#!/bin/sh
# SPDX-License-Identifier: MIT
# prepend.sh BINARY OUT: the prepend-anywhere initramfs, an uncompressed
# newc archive holding /sbin/drvbind and the mount points it may need.
# The kernel unpacks concatenated archives in order, so
#   cat OUT /boot/initrd.img > combined.img
# with rdinit=/sbin/drvbind runs drvbind first, which then execs the
# image's own /init. Each archive must start on a 4-byte boundary or the
# kernel ignores the rest: cpio pads its output to 512 bytes, and this
# checks it. Built without root and reproducibly: owner 0, mtime 0.
set -eu
bin=$1 out=$2
stage=$out.d
rm -rf "$stage"
mkdir -p "$stage/sbin" "$stage/proc" "$stage/sys" "$stage/dev"
cp "$bin" "$stage/sbin/drvbind"
chmod 755 "$stage/sbin/drvbind"
find "$stage" -exec touch -h -d @0 {} +
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc --owner=0:0 --reproducible --quiet) >"$out.tmp"
rm -rf "$stage"
size=$(wc -c <"$out.tmp")
if [ $((size % 4)) -ne 0 ]; then
	echo "prepend.sh: $out is $size bytes, not a multiple of 4" >&2
	exit 1
fi
mv "$out.tmp" "$out"
