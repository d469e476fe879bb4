#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, the real-kernel half: one boot of Debian's kernel under
# QEMU (TCG) with the test image (test/qemu/), the prepend image in
# front and test/bench/guest.sh and script.sh behind, as scenario
# "bench". Leaves DIR/results: "lat TOOL US", "wake TOOL PER_S",
# "cpu TOOL MS" lines.
#
#   test/bench/qemu.sh DIR ROUNDS
#
# DRVBIND=FILE measures another binary (its own prepend image is made).
set -eu

dir=$1 rounds=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
if [ -n "${DRVBIND:-}" ]; then
	prepend=$dir/drvbind.cpio
	mkdir -p "$dir"
	sh initramfs/prepend.sh "$DRVBIND" "$prepend"
else
	prepend=build/drvbind.cpio
	make -s "$prepend"
fi
k=$(sh test/qemu/kernel.sh build/qemu)
kdir=${k% *} kver=${k##* }
sh test/qemu/initramfs.sh "$kdir" "$kver" build/qemu/bench-test.cpio
mkdir -p "$dir/stage/test"
cp test/bench/guest.sh "$dir/stage/test/bench.sh"
cp test/bench/script.sh "$dir/stage/test/script.sh"
# cpio pads its output to 512 bytes: the archives stay 4-byte aligned
(cd "$dir/stage" && find . | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) >"$dir/bench.cpio"
cat "$prepend" build/qemu/bench-test.cpio "$dir/bench.cpio" >"$dir/boot.cpio"
QEMU_TIMEOUT=${QEMU_TIMEOUT:-600} sh test/qemu/boot.sh "$kdir/boot/vmlinuz-$kver" "$dir/boot.cpio" \
	"$dir" "scenario=bench bench_rounds=$rounds quiet initcall_debug" -device e1000,addr=5,romfile=
tr -d '\r' <"$dir/results" >"$dir/results.tmp" && mv "$dir/results.tmp" "$dir/results"
grep -q '^end$' "$dir/results" || { echo "qemu.sh: the guest did not finish:" >&2; tail -20 "$dir/console.log" >&2; exit 1; }
