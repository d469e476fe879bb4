#!/bin/sh
# Fetch the kernel Debian's linux-image-amd64 points at, the way a Debian
# user gets it, and unpack it under build/qemu/ (no root needed beyond
# apt's own download). The unpacked tree is the cache: a later run that
# finds it reuses it and reaches no registry.
#
#   test/qemu/kernel.sh [CACHEDIR]     prints DIR KVER on stdout
#
# DIR holds boot/vmlinuz-KVER and lib/modules/KVER with a fresh depmod.
set -eu

cache=${1:-build/qemu}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# A finished unpack leaves "kver"; anything else is started again.
if [ -s "$cache/kver" ]; then
	kver=$(cat "$cache/kver")
	if [ -f "$cache/kernel/boot/vmlinuz-$kver" ] &&
		[ -f "$cache/kernel/lib/modules/$kver/modules.dep" ]; then
		echo "$cache/kernel $kver"
		exit 0
	fi
fi

# The metapackage names the versioned image package; that one is fetched.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
if [ -z "$pkg" ]; then
	# apt's lists may be empty on a fresh machine
	apt-get update >/dev/null 2>&1 || true
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
fi
[ -n "$pkg" ] || { echo "kernel.sh: linux-image-amd64 names no image package" >&2; exit 1; }
kver=${pkg#linux-image-}

rm -rf "$cache/kernel" "$cache/kver" "$cache"/linux-image-*.deb
# apt-get download writes to the current directory. As root it warns
# that its sandbox user cannot write there and downloads unsandboxed: harmless.
(cd "$cache" && apt-get download "$pkg" >&2) || {
	echo "kernel.sh: apt-get download $pkg failed" >&2
	exit 1
}
dpkg -x "$cache"/"$pkg"_*.deb "$cache/kernel"
depmod -b "$cache/kernel" "$kver"
rm -f "$cache"/"$pkg"_*.deb
echo "$kver" >"$cache/kver"
echo "$cache/kernel $kver"
