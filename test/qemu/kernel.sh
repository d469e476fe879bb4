#!/bin/sh
# SPDX-License-Identifier: MIT
# Fetch the kernel a Debian metapackage points at (linux-image-amd64 by
# default; linux-image-arm64:arm64 or linux-image-armmp:armhf for the
# boards, which needs only `dpkg --add-architecture`), the way a Debian
# user gets it, and unpack it under CACHEDIR (no root needed beyond
# apt's own download). The unpacked tree is the cache: a later run that
# finds it reuses it and reaches no registry.
#
#   test/qemu/kernel.sh [CACHEDIR [METAPACKAGE [SUITE]]]   prints DIR KVER
#
# DIR holds boot/vmlinuz-KVER and lib/modules/KVER with a fresh depmod
# (kmod reads modules of any architecture). Without SUITE the package is
# the one this machine's apt sources name; with one (bullseye, trixie,
# sid, trixie-backports) it is that suite's, from the same Debian
# archive, through a sources list and package lists of its own under
# CACHEDIR/apt (removed once the kernel is unpacked): the machine's apt
# configuration is not touched.
#
# Up to Linux 6.x the versioned image package (linux-image-KVER) holds
# the kernel and its modules. From 7.x on (sid, trixie-backports) it is
# empty and depends on linux-base-KVER (modules.builtin, modules.order),
# linux-binary-KVER (the image, as lib/modules/KVER/vmlinuz) and
# linux-modules-KVER: those three are fetched instead.
set -eu

cache=${1:-build/qemu}
meta=${2:-linux-image-amd64}
suite=${3:-}
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

# apt_do CMD ARGS...: apt-get or apt-cache on the machine's sources, or on the
# suite's own list. A suite's choice ignores the machine's pins too: one
# there for the machine's own packages must not pick another kernel; and
# its installed packages (dpkg's status): a linux-image-amd64 installed
# here would name the machine's own kernel, which the suite does not have.
apt_do() {
	cmd=$1
	shift
	if [ -n "$suite" ]; then
		set -- -o "Dir::Etc::SourceList=$cache/apt/sources.list" \
			-o Dir::Etc::SourceParts=/dev/null \
			-o Dir::Etc::Preferences=/dev/null \
			-o Dir::Etc::PreferencesParts=/dev/null \
			-o Dir::State::status=/dev/null \
			-o "Dir::State::Lists=$cache/apt/lists" \
			-o "Dir::Cache=$cache/apt/cache" "$@"
	fi
	"$cmd" "$@"
}
if [ -n "$suite" ]; then
	# The Debian archive the machine's sources name (one-line or deb822
	# format), the first URI that ends in /debian.
	archive=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null |
		sed -n -e 's/^URIs://p' -e 's/^deb \(\[[^]]*\] *\)\{0,1\}\([^ ]*\).*/\2/p' |
		tr ' ' '\n' | grep -m 1 '/debian/*$') || archive=http://deb.debian.org/debian
	mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial"
	# The suite alone: with trixie-backports, trixie's own 6.12 is not
	# in the lists, so the metapackage can only name the backport.
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive $suite main" \
		>"$cache/apt/sources.list"
fi

# The metapackage names the versioned image package; that one is fetched.
depends() {
	apt_do apt-cache depends "$meta" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
pkg=$(depends)
if [ -z "$pkg" ]; then
	# apt's lists may be empty on a fresh machine, a suite's always are;
	# where the archive cannot be reached, apt's own words say why
	mkdir -p "$cache/apt"
	if ! apt_do apt-get update >"$cache/apt/update.log" 2>&1; then
		echo "kernel.sh: apt-get update${suite:+ of $suite} failed:" >&2
		grep -e '^E:' -e '^Err:' "$cache/apt/update.log" >&2 || cat "$cache/apt/update.log" >&2
	fi
	pkg=$(depends)
fi
[ -n "$pkg" ] || { echo "kernel.sh: $meta names no image package${suite:+ in $suite}" >&2; exit 1; }
# a foreign architecture's package is named PKG:ARCH, its file PKG_VER_ARCH.deb
name=${pkg%:*}
kver=${name#linux-image-}

# The split packages of 7.x, as the image package names them (PKG:ARCH
# for a foreign architecture); none before 7.x.
parts=$(apt_do apt-cache depends "$pkg" 2>/dev/null |
	awk -v k="$kver" '$1 == "Depends:" { p = $2; sub(/:.*/, "", p)
		if (p == "linux-base-" k || p == "linux-binary-" k || p == "linux-modules-" k) print $2 }')

rm -rf "$cache/kernel" "$cache/kver" "$cache/debs"
mkdir -p "$cache/debs"
# apt-get download writes to the current directory. As root it warns
# that its sandbox user cannot write there and downloads unsandboxed: harmless.
# shellcheck disable=SC2086 # parts: package names, one a word
(cd "$cache/debs" && apt_do apt-get download ${parts:-$pkg} >&2) || {
	echo "kernel.sh: apt-get download ${parts:-$pkg} failed${suite:+ (suite $suite)}" >&2
	exit 1
}
for deb in "$cache"/debs/*.deb; do
	dpkg -x "$deb" "$cache/kernel"
done
rm -rf "$cache/debs"
# Since trixie the modules are under usr/lib/modules (and .ko.xz): depmod
# -b and modprobe -d look under lib/modules, as the merged /usr has it.
if [ ! -d "$cache/kernel/lib/modules" ] && [ -d "$cache/kernel/usr/lib/modules" ]; then
	ln -s usr/lib "$cache/kernel/lib"
fi
# 7.x has no /boot: its image is lib/modules/KVER/vmlinuz. A link gives
# it the name the boots take, the package's tree left as unpacked.
if [ ! -f "$cache/kernel/boot/vmlinuz-$kver" ] &&
	[ -f "$cache/kernel/lib/modules/$kver/vmlinuz" ]; then
	mkdir -p "$cache/kernel/boot"
	ln -s "../lib/modules/$kver/vmlinuz" "$cache/kernel/boot/vmlinuz-$kver"
fi
[ -f "$cache/kernel/boot/vmlinuz-$kver" ] || {
	echo "kernel.sh: no kernel image in ${parts:-$pkg} (neither boot/vmlinuz-$kver nor lib/modules/$kver/vmlinuz)" >&2
	exit 1
}
[ -d "$cache/kernel/lib/modules/$kver/kernel" ] || {
	echo "kernel.sh: no modules in ${parts:-$pkg} (lib/modules/$kver/kernel)" >&2
	exit 1
}
depmod -b "$cache/kernel" "$kver"
# a suite's package lists, and apt's words, served this fetch only: the
# unpacked tree is the cache
rm -rf "$cache/apt"
echo "$kver" >"$cache/kver"
echo "$cache/kernel $kver"
