#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Arch package: `make arch` (initramfs/pkg/arch.mk) builds
# initramfs/pkg/arch/PKGBUILD with Debian's makepkg from a tarball of the
# working tree, as the user nobody when run as root (in a copy under /tmp,
# which a checkout nobody cannot enter needs), once for the file;
# the tests read the package, its .PKGINFO and the recipe's .SRCINFO.
# The mkinitcpio hook the package carries is booted by builders.bats.

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export TOP
	export PKGDIR=$TOP/build/pkg/arch
	export VER
	VER=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
	export PKG=$PKGDIR/drvbind-$VER-1-x86_64.pkg.tar.zst
	make -s -C "$TOP" all
	mkdir -p "$TOP/build/pkg"
	t0=$(date +%s)
	# a failed build is reported by the first test, with the log
	make -s -C "$TOP" arch >"$TOP/build/pkg/arch.log" 2>&1 || true
	echo $(($(date +%s) - t0)) >"$TOP/build/pkg/arch.seconds"
}

is() {
	[[ $2 == "$3" ]] && return 0
	echo "$1: expected '$3', got '$2'"
	return 1
}

# listing: the package's members as "MODE OWNER GROUP PATH", files only,
# without makepkg's own .PKGINFO, .BUILDINFO and .MTREE.
listing() {
	bsdtar -tvf "$PKG" | awk '$1 !~ /^d/ && $NF !~ /^\./ { print $1, $3, $4, $NF }' | LC_ALL=C sort -k4
}

@test "makepkg builds the package as an unprivileged user" {
	echo "make arch: $(cat "$TOP/build/pkg/arch.seconds") s"
	grep -qx "==> Finished making: drvbind $VER-1 .*" "$TOP/build/pkg/arch.log" ||
		{ tail -n 30 "$TOP/build/pkg/arch.log"; false; }
	[ -f "$PKG" ]
	# makepkg refuses root: as root, make arch ran it as nobody
	if [ "$(id -u)" = 0 ]; then
		is owner "$(stat -c %U "$PKG")" nobody
	fi
	# makepkg checked the tarball against the sum pinned in the recipe's copy
	grep -qF "drvbind-$VER.tar.gz ... Passed" "$TOP/build/pkg/arch.log"
}

@test "the package's files are make install PREFIX=/usr's, with /usr/sbin as Arch's /usr/bin, the man pages gzipped and the license added, all owned by root" {
	d=$BATS_TEST_TMPDIR
	make -s -C "$TOP" install DESTDIR="$d/usr" PREFIX=/usr
	# Arch's /usr/sbin is a link to /usr/bin; makepkg gzips man pages
	# (zipman); Arch wants an MIT license file of each package's own
	want=$( (cd "$d/usr" && find . -type f | sed -e 's|^\./||' -e 's|^usr/sbin/|usr/bin/|' \
		-e 's|^usr/share/man/.*|&.gz|'; echo usr/share/licenses/drvbind/LICENSE) | LC_ALL=C sort)
	is files "$(listing | awk '{ print $4 }')" "$want"
	is owners "$(listing | awk '{ print $2, $3 }' | sort -u)" "root root"
	# and each one as make install with SBINDIR=/usr/bin puts it, mode
	# and bytes: the hooks name /usr/bin/drvbind
	make -s -C "$TOP" install DESTDIR="$d/bin" PREFIX=/usr SBINDIR=/usr/bin
	mkdir "$d/pkg"
	bsdtar -xf "$PKG" -C "$d/pkg"
	gunzip "$d/pkg"/usr/share/man/man*/*.gz
	install -D -m 644 "$TOP/LICENSE" "$d/bin/usr/share/licenses/drvbind/LICENSE"
	diff -r "$d/bin/usr" "$d/pkg/usr"
	is modes "$(cd "$d/pkg" && find usr -type f -printf '%m %p\n' | LC_ALL=C sort)" \
		"$(cd "$d/bin" && find usr -type f -printf '%m %p\n' | LC_ALL=C sort)"
	grep -qxF $'\tadd_binary /usr/bin/drvbind /sbin/drvbind' "$d/pkg/usr/lib/initcpio/install/drvbind"
}

@test "the binary in the package is byte-identical to make's build/drvbind" {
	bsdtar -xf "$PKG" -C "$BATS_TEST_TMPDIR" usr/bin/drvbind
	echo "package: $(wc -c <"$BATS_TEST_TMPDIR/usr/bin/drvbind") bytes, build/drvbind: $(wc -c <"$TOP/build/drvbind") bytes"
	cmp "$BATS_TEST_TMPDIR/usr/bin/drvbind" "$TOP/build/drvbind"
}

@test "the recipe's .SRCINFO and the package's .PKGINFO say license MIT, and the version is the Makefile's" {
	is srcinfo "$(grep -E '^\s*(license|pkgver) = ' "$PKGDIR/.SRCINFO" | tr -d '\t')" "pkgver = $VER
license = MIT"
	is pkginfo "$(bsdtar -xOf "$PKG" .PKGINFO | grep -E '^(license|pkgver) = ')" "pkgver = $VER-1
license = MIT"
	# the source is the tarball make arch packed, by its sum
	sum=$(sha256sum <"$PKGDIR/drvbind-$VER.tar.gz")
	grep -qx "	sha256sums = ${sum%% *}" "$PKGDIR/.SRCINFO"
}

@test "the PKGBUILD and initramfs/pkg/asuser.sh, which runs makepkg as nobody, are shellcheck-clean" {
	run shellcheck "$TOP/initramfs/pkg/arch/PKGBUILD" "$TOP/initramfs/pkg/asuser.sh"
	echo "$output"
	[ "$status" -eq 0 ]
}
