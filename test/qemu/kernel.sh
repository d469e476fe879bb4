#!/bin/sh
# Fetch the kernel a Debian metapackage points at (linux-image-amd64 by
# default; linux-image-arm64:arm64 or linux-image-armmp:armhf for the
# boards, which needs only `dpkg --add-architecture`), the way a Debian
# user gets it, and unpack it under CACHEDIR (no root needed beyond
# apt's own download). The unpacked tree is the cache: a later run that
# finds it reuses it and reaches no registry.
#
#   test/qemu/kernel.sh [CACHEDIR [METAPACKAGE]]   prints DIR KVER on stdout
#
# DIR holds boot/vmlinuz-KVER and lib/modules/KVER with a fresh depmod
# (kmod reads modules of any architecture).
set -eu

cache=${1:-build/qemu}
meta=${2:-linux-image-amd64}
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
depends() {
	apt-cache depends "$meta" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
pkg=$(depends)
if [ -z "$pkg" ]; then
	# apt's lists may be empty on a fresh machine
	apt-get update >/dev/null 2>&1 || true
	pkg=$(depends)
fi
[ -n "$pkg" ] || { echo "kernel.sh: $meta names no image package" >&2; exit 1; }
# a foreign architecture's package is named PKG:ARCH, its file PKG_VER_ARCH.deb
name=${pkg%:*}
kver=${name#linux-image-}

rm -rf "$cache/kernel" "$cache/kver" "$cache"/linux-image-*.deb
# apt-get download writes to the current directory. As root it warns
# that its sandbox user cannot write there and downloads unsandboxed: harmless.
(cd "$cache" && apt-get download "$pkg" >&2) || {
	echo "kernel.sh: apt-get download $pkg failed" >&2
	exit 1
}
dpkg -x "$cache"/"$name"_*.deb "$cache/kernel"
depmod -b "$cache/kernel" "$kver"
rm -f "$cache"/"$name"_*.deb
echo "$kver" >"$cache/kver"
echo "$cache/kernel $kver"
