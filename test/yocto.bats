#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Yocto layer, initramfs/pkg/yocto/meta-drvbind, read by the real
# bitbake with openembedded-core (BITBAKE_SRC, OECORE_SRC: a directory
# or a tarball; the vendor tarballs by default). setup_file runs `make
# yocto-parse` once: the layer's recipe alone, every recipe of oe-core
# with the layer added, then `bitbake -e drvbind`, whose output the tests
# read. bitbake keeps its parse cache in build/pkg/yocto/build, so only
# the first run parses oe-core in full. Nothing is built with bitbake:
# there is no cross toolchain here. What the recipe would build from is
# checked instead: the files its SRC_URI lists, copied as do_unpack lays
# them out, are built with the host's musl-gcc and installed into the
# recipe's own directories, and each installed file must land in the
# package the recipe means for it.

bats_require_minimum_version 1.5.0

# is NAME ACTUAL EXPECTED, as the QEMU tiers' checks have it
load qemu/results

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export TOP BUILD=$TOP/build/pkg/yocto/build
	export ENV=$BUILD/drvbind.env LOG=$BATS_FILE_TMPDIR/parse.log
	export IMAGE=$BATS_FILE_TMPDIR/image
	local t=$SECONDS st=0
	make -s -C "$TOP" --no-print-directory yocto-parse >"$LOG" 2>&1 || st=$?
	export PARSE_STATUS=$st PARSE_TIME=$((SECONDS - t))
	YOCTO_SKIP=$(sed -n 's/^yocto: \(no .* tree .*\)/\1/p' "$LOG")
	export YOCTO_SKIP INSTALL_STATUS=1
	if [ -n "$YOCTO_SKIP" ] || [ "$st" -ne 0 ]; then
		echo "not run: make yocto-parse failed" >"$BATS_FILE_TMPDIR/install.log"
		return 0
	fi

	# do_unpack's layout: each file:// entry under sources/${BP}, with
	# the path it has in the checkout.
	local src=$BATS_FILE_TMPDIR/sources/drvbind-0.1 top e uris
	top=$(bbvar DRVBIND_TOPDIR)
	read -ra uris <<<"$(bbvar SRC_URI)"
	for e in "${uris[@]}"; do
		e=${e#file://}
		e=${e%%;*}
		mkdir -p "$src/$(dirname "$e")"
		cp -R "$top/$e" "$src/$e"
	done
	local -a dirs=()
	oemake
	for e in PREFIX SBINDIR MANDIR DATADIR ITOOLSDIR DRACUTDIR CPIODIR UNITDIR; do
		dirs+=("$e=${MK[$e]}")
	done
	st=0
	{ make -s -C "$src" --no-print-directory install DESTDIR="$IMAGE" "${dirs[@]}" &&
		rm -r "$IMAGE${MK[CPIODIR]}"; } >"$BATS_FILE_TMPDIR/install.log" 2>&1 || st=$?
	export INSTALL_STATUS=$st
}

setup() {
	[ -z "$YOCTO_SKIP" ] || skip "$YOCTO_SKIP"
}

# bbvar NAME [FILE]: NAME's value as bitbake -e printed it.
bbvar() {
	sed -n "s/^\(export \)\{0,1\}$1=\"\(.*\)\"\$/\2/p" "${2:-$ENV}"
}

# oemake: MK[VAR] for each VAR=VALUE of EXTRA_OEMAKE, split as
# oe_runmake's shell splits it.
oemake() {
	declare -gA MK=()
	local a
	eval "set -- $(bbvar EXTRA_OEMAKE "$@")"
	for a; do
		MK[${a%%=*}]=${a#*=}
	done
}

# owner PATH: the package PATH goes to, as do_package splits the
# install: the first of PACKAGES with a FILES entry that is PATH, a
# directory above it, or a pattern matching it. PKGS and PKGFILES
# (pkgfiles) hold PACKAGES and each one's FILES.
pkgfiles() {
	local p
	declare -gA PKGFILES=()
	read -ra PKGS <<<"$(bbvar PACKAGES)"
	for p in "${PKGS[@]}"; do
		PKGFILES[$p]=$(bbvar "FILES:$p")
	done
}

owner() {
	local p e entries
	for p in "${PKGS[@]}"; do
		# read, not $(...) unquoted: the entries are patterns, not for the host
		read -ra entries <<<"${PKGFILES[$p]}"
		for e in "${entries[@]}"; do
			# the entry is a pattern
			# shellcheck disable=SC2053
			if [[ $1 == "$e" || $1 == "$e"/* || $1 == $e ]]; then
				echo "$p"
				return
			fi
		done
	done
	echo "(none)"
}

@test "bitbake parses openembedded-core with the layer added, without a warning" {
	cat "$LOG"
	echo "make yocto-parse: ${PARSE_TIME} s"
	[ "$PARSE_STATUS" -eq 0 ]
	run grep -E '^(WARNING|ERROR):' "$LOG"
	[ "$status" -eq 1 ]
	is FILE "$(bbvar FILE)" "$TOP/initramfs/pkg/yocto/meta-drvbind/recipes-kernel/drvbind/drvbind_0.1.bb"
	# the series oe-core names as its own is one the layer declares
	[[ " $(bbvar LAYERSERIES_COMPAT_drvbind) " == *" $(bbvar LAYERSERIES_COMPAT_core) "* ]]
}

@test "bitbake -e drvbind says MIT, with the md5 of the LICENSE file at the top" {
	is LICENSE "$(bbvar LICENSE)" MIT
	is LIC_FILES_CHKSUM "$(bbvar LIC_FILES_CHKSUM)" "file://LICENSE;md5=$(md5sum <"$TOP/LICENSE" | cut -d' ' -f1)"
	is PV "$(bbvar PV)" "$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")"
}

@test "the sources are the checkout the layer sits in, and nothing is fetched" {
	is DRVBIND_TOPDIR "$(bbvar DRVBIND_TOPDIR)" "$TOP"
	is BB_NO_NETWORK "$(bbvar BB_NO_NETWORK)" 1
	local e n=0 uris
	read -ra uris <<<"$(bbvar SRC_URI)"
	for e in "${uris[@]}"; do
		[[ $e == file://*";subdir=drvbind-0.1" ]] || { echo "not a local file under \${BP}: $e"; return 1; }
		e=${e#file://}
		[ -e "$TOP/${e%%;*}" ] || { echo "missing: $e"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

@test "the files SRC_URI lists are enough to build and install drvbind" {
	cat "$BATS_FILE_TMPDIR/install.log"
	[ "$INSTALL_STATUS" -eq 0 ]
	oemake
	[ -x "$IMAGE${MK[SBINDIR]}/drvbind" ]
}

@test "the Makefile gets the cross compiler and the distro's flags, with -Os last and musl's crt1.o from the target sysroot" {
	oemake
	is ARCH "${MK[ARCH]}" ""
	is CC "${MK[CC]}" "$(bbvar CC)"
	[[ ${MK[CC]} == x86_64-oe-linux-musl-gcc\ * ]]
	[[ ${MK[CC]} == *" --sysroot=$(bbvar STAGING_DIR_TARGET)"* ]]
	is CFLAGS "${MK[CFLAGS]}" "$(bbvar CFLAGS) -Os"
	is LDFLAGS "${MK[LDFLAGS]}" "$(bbvar LDFLAGS)"
	# RELRO and BIND_NOW, which a static binary cannot use, are off
	[[ ${MK[LDFLAGS]} != *relro* && ${MK[LDFLAGS]} != *now* ]]
	is CRT1 "${MK[CRT1]}" "$(bbvar STAGING_LIBDIR)/crt1.o"
	# the Makefile already strips it and drops its section headers
	is INHIBIT_PACKAGE_STRIP "$(bbvar INHIBIT_PACKAGE_STRIP)" 1
	is INHIBIT_PACKAGE_DEBUG_SPLIT "$(bbvar INHIBIT_PACKAGE_DEBUG_SPLIT)" 1
}

@test "on an arm64 machine the Makefile's arm64 size flags apply" {
	local env=$BATS_TEST_TMPDIR/arm64.env
	MACHINE=qemuarm64 "$BUILD/bitbake" -e -b "$(bbvar FILE)" >"$env"
	oemake "$env"
	is ARCH "${MK[ARCH]}" arm64
	[[ ${MK[CC]} == aarch64-oe-linux-musl-gcc\ * ]]
}

@test "each initramfs hook and each unit is a package of its own, beside the binary alone" {
	is PACKAGES "$(bbvar PACKAGES | tr -s ' ' | sed 's/^ //; s/ $//')" \
		"drvbind-dracut drvbind-initramfs-tools drvbind-systemd-initrd drvbind-follow drvbind-common drvbind-src drvbind-dbg drvbind-staticdev drvbind-dev drvbind-doc drvbind-locale drvbind"
	is FILES:drvbind-dracut "$(bbvar FILES:drvbind-dracut)" /usr/lib/dracut/modules.d/90drvbind
	is FILES:drvbind-initramfs-tools "$(bbvar FILES:drvbind-initramfs-tools)" \
		"/usr/share/initramfs-tools/hooks/drvbind /usr/share/initramfs-tools/scripts/init-top/drvbind"
	is FILES:drvbind-systemd-initrd "$(bbvar FILES:drvbind-systemd-initrd)" /usr/lib/systemd/system/drvbind.service
	is FILES:drvbind-follow "$(bbvar FILES:drvbind-follow | tr -s ' ')" \
		"/usr/lib/systemd/system/drvbind-follow.service /usr/share/drvbind/inittab /usr/share/drvbind/runit"
	is FILES:drvbind-common "$(bbvar FILES:drvbind-common)" /usr/share/drvbind
	# a hook needs the binary and modules.sh; dracut's the initrd's unit
	# too, since this configuration has systemd
	[[ " $(bbvar DISTRO_FEATURES) " == *" systemd "* ]]
	is RDEPENDS:drvbind-dracut "$(bbvar RDEPENDS:drvbind-dracut | tr -s ' ')" "drvbind drvbind-common drvbind-systemd-initrd"
	is RDEPENDS:drvbind-initramfs-tools "$(bbvar RDEPENDS:drvbind-initramfs-tools)" "drvbind drvbind-common"
	is RDEPENDS:drvbind-systemd-initrd "$(bbvar RDEPENDS:drvbind-systemd-initrd)" drvbind
	is RDEPENDS:drvbind "$(bbvar RDEPENDS:drvbind)" ""
	# the follower's unit is enabled where its package is installed; the
	# initrd's unit is not enabled in the running system
	is SYSTEMD_PACKAGES "$(bbvar SYSTEMD_PACKAGES)" drvbind-follow
	is SYSTEMD_SERVICE:drvbind-follow "$(bbvar SYSTEMD_SERVICE:drvbind-follow)" drvbind-follow.service
	is SYSTEMD_AUTO_ENABLE:drvbind-follow "$(bbvar SYSTEMD_AUTO_ENABLE:drvbind-follow)" enable
}

@test "every installed file goes to the package meant for it, and the hooks name the packaged paths" {
	[ "$INSTALL_STATUS" -eq 0 ]
	# do_install leaves mkinitcpio's files out, as this test's install did
	sed -n '/^do_install() {$/,/^}$/p' "$ENV" | grep -qx "	rm -r $(bbvar D)/usr/lib/initcpio"
	local f got='' files
	pkgfiles
	mapfile -t files < <(cd "$IMAGE" && find . ! -type d | sed 's/^\.//' | LC_ALL=C sort)
	for f in "${files[@]}"; do
		got+="$(owner "$f") $f"$'\n'
	done
	output=${got%$'\n'}
	is packages "$output" "$(
		cat <<EOF
drvbind-dracut /usr/lib/dracut/modules.d/90drvbind/drvbind.sh
drvbind-dracut /usr/lib/dracut/modules.d/90drvbind/module-setup.sh
drvbind-follow /usr/lib/systemd/system/drvbind-follow.service
drvbind-systemd-initrd /usr/lib/systemd/system/drvbind.service
drvbind /usr/sbin/drvbind
drvbind-follow /usr/share/drvbind/inittab
drvbind-common /usr/share/drvbind/modules.sh
drvbind-follow /usr/share/drvbind/runit/drvbind-follow/run
drvbind-initramfs-tools /usr/share/initramfs-tools/hooks/drvbind
drvbind-initramfs-tools /usr/share/initramfs-tools/scripts/init-top/drvbind
drvbind-doc /usr/share/man/man5/drvbind.conf.5
drvbind-doc /usr/share/man/man8/drvbind.8
EOF
	)"
	grep -qx "ExecStart=@/sbin/drvbind @drvbind -b" "$IMAGE/usr/lib/systemd/system/drvbind.service"
	grep -qx "ExecStart=/usr/sbin/drvbind -f" "$IMAGE/usr/lib/systemd/system/drvbind-follow.service"
	grep -qx "::respawn:/usr/sbin/drvbind -f" "$IMAGE/usr/share/drvbind/inittab"
	grep -qx "exec /usr/sbin/drvbind -f" "$IMAGE/usr/share/drvbind/runit/drvbind-follow/run"
	for f in usr/lib/dracut/modules.d/90drvbind/module-setup.sh usr/share/initramfs-tools/hooks/drvbind; do
		grep -q ' /usr/sbin/drvbind /sbin/drvbind$' "$IMAGE/$f"
		grep -q 'sh /usr/share/drvbind/modules.sh ' "$IMAGE/$f"
	done
	grep -q 'inst_simple /usr/lib/systemd/system/drvbind.service ' \
		"$IMAGE/usr/lib/dracut/modules.d/90drvbind/module-setup.sh"
}

@test "with glibc the recipe is skipped as incompatible with the host" {
	run env TCLIBC=glibc "$BUILD/bitbake" -e drvbind -R conf/layer-only.conf
	[ "$status" -eq 1 ]
	grep -qx "drvbind was skipped: incompatible with host x86_64-oe-linux (not in COMPATIBLE_HOST)" <<<"$output"
}

@test "a broken copy of the recipe stops the parse with a ParseError and status 1" {
	local layer=$BATS_TEST_TMPDIR/meta-drvbind build=$BATS_TEST_TMPDIR/build
	cp -R "$TOP/initramfs/pkg/yocto/meta-drvbind" "$layer"
	# a quote left open, as an edit might leave it
	# shellcheck disable=SC2016 # bitbake's ${PN}, not the shell's
	echo 'RDEPENDS:${PN}-dracut += "${PN}-common' >>"$layer/recipes-kernel/drvbind/drvbind_0.1.bb"
	make -s -C "$TOP" --no-print-directory yocto-setup YOCTO_LAYER="$layer" YOCTO_BUILD="$build"
	run "$build/bitbake" -p -R conf/layer-only.conf
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"ParseError"*"drvbind_0.1.bb"* ]]
}
