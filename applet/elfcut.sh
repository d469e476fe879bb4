#!/bin/sh
# SPDX-License-Identifier: MIT
# elfcut.sh FILE - drops the section headers of a static ELF binary.
#
# The kernel loads a program by its program headers alone; the section
# headers (and the names and symbols only they point to) are for tools.
# Cuts the file at the end of its last loaded segment and clears
# e_shoff, e_shnum and e_shstrndx, so that nothing points past the end.
set -eu
f=$1
end=0
# shellcheck disable=SC2046 # one "offset filesz" pair a LOAD segment
set -- $(readelf -lW "$f" | awk '$1 == "LOAD" { print $2, $5 }')
while [ $# -ge 2 ]; do
	e=$(($1 + $2))
	[ "$e" -gt "$end" ] && end=$e
	shift 2
done
truncate -s "$end" "$f"
# EI_CLASS 2 is ELF64: e_shoff at 40 (8 bytes), e_shnum and e_shstrndx
# at 60; ELF32: e_shoff at 32 (4 bytes), the two at 48.
if [ "$(od -An -tu1 -j4 -N1 "$f" | tr -d ' ')" = 2 ]; then
	at=40 n=8 sh=60
else
	at=32 n=4 sh=48
fi
head -c $n /dev/zero | dd of="$f" bs=1 seek=$at conv=notrunc 2>/dev/null
head -c 4 /dev/zero | dd of="$f" bs=1 seek=$sh conv=notrunc 2>/dev/null
