#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Buildroot package (initramfs/pkg/buildroot/, a br2-external tree;
# make buildroot-*: initramfs/pkg/buildroot.mk), held against Buildroot
# itself, from BUILDROOT_SRC (a tree or a tarball; by default the vendor
# tarball beside the repository). Its own checker, utils/check-package
# -b, reads every file; then setup_file configures Buildroot for aarch64
# with an external musl toolchain (Debian's cross gcc on a sysroot of
# musl-dev:arm64) and the package, and runs drvbind-show-info,
# drvbind-legal-info (make buildroot-info) and make drvbind (make
# buildroot-build) once each; the tests read what they left in
# build/pkg/buildroot. About 1 minute from a cold build/, 30 s after.

bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export TOP
	local src=${BUILDROOT_SRC-} c
	if [[ -z $src ]]; then
		for c in "$TOP/../shared/vendor/buildroot.tar.gz" /work/shared/vendor/buildroot.tar.gz; do
			[[ -e $c ]] && { src=$c; break; }
		done
	fi
	# (bats 1.8 cannot skip from setup_file: setup skips each test)
	if [[ -z $src || ! -e $src ]]; then
		export NO_BUILDROOT="no Buildroot: set BUILDROOT_SRC to a Buildroot tree or tarball"
		return 0
	fi
	export BUILDROOT_SRC=$src
	VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
	SIZE_MAX=$(sed -n 's/^SIZE_MAX *= *//p' "$TOP/Makefile")
	BR=$TOP/build/pkg/buildroot
	OUT=$BR/out
	export VERSION SIZE_MAX BR OUT
	make -s -C "$TOP" buildroot-info >"$BATS_FILE_TMPDIR/info.log" 2>&1 || :
	make -s -C "$TOP" buildroot-build >"$BATS_FILE_TMPDIR/build.log" 2>&1 || :
}

setup() {
	[[ -z ${NO_BUILDROOT-} ]] || skip "$NO_BUILDROOT"
}

# ran WHAT FILE: make buildroot-WHAT left FILE, or the test fails showing
# what it printed.
ran() {
	[[ -e $2 ]] && return 0
	echo "make buildroot-$1 did not make $2; it printed:"
	cat "$BATS_FILE_TMPDIR/$1.log"
	return 1
}

@test "check-package -b accepts every file of the package with 0 warnings" {
	run make -s -C "$TOP" buildroot-check
	echo "$output"
	[[ $status -eq 0 ]]
	[[ $output == *"0 warnings generated"* ]]
	# It has no checks for a br2-external tree's external.desc and
	# external.mk, and says so; it read every line of the other files.
	[[ $(grep ': ignored$' <<<"$output" | sort | tr '\n' ' ') == "./external.desc: ignored ./external.mk: ignored " ]]
	local n
	n=$(cd "$TOP/initramfs/pkg/buildroot" &&
		find . -type f ! -name external.desc ! -name external.mk -exec cat {} + | wc -l)
	[[ $output == *"$n lines processed"* ]]
}

@test "drvbind-show-info reports the package with its version and license MIT" {
	ran info "$BR/show-info.json"
	run /usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["drvbind"]
print(p["version"], p["licenses"], " ".join(p["license_files"]), p["redistributable"],
      p["downloads"][0]["uris"][0], " ".join(p["dependencies"]))' "$BR/show-info.json"
	echo "$output"
	[[ $status -eq 0 ]]
	[[ $output == "$VERSION MIT LICENSE True local+$BR/drvbind "* ]]
	# built with the toolchain Buildroot was given, nothing downloaded for it
	[[ " $output " == *" toolchain "* && " $output " != *" host-tar "* ]]
}

@test "drvbind-legal-info produces the license file (LICENSE) for drvbind" {
	local l=$OUT/legal-info
	ran info "$l/manifest.csv"
	cmp "$TOP/LICENSE" "$l/licenses/drvbind-$VERSION/LICENSE"
	# checked against drvbind.hash on the way
	grep -qxF "LICENSE: OK (sha256: $(sha256sum <"$TOP/LICENSE" | cut -d' ' -f1))" "$BR/info.log"
	grep -q "^\"drvbind\",\"$VERSION\",\"MIT\",\"LICENSE\"," "$l/manifest.csv"
	# the source archive: the checkout, without what a build left there
	run tar -tzf "$l/sources/drvbind-$VERSION/drvbind-$VERSION.tar.gz"
	[[ $status -eq 0 ]]
	[[ $output == *"drvbind-$VERSION/LICENSE"* && $output == *"drvbind-$VERSION/applet/main.c"* ]]
	[[ $output != *"drvbind-$VERSION/build/"* && $output != *"drvbind-$VERSION/.git/"* ]]
}

@test "make drvbind with an external musl toolchain builds a static aarch64 /sbin/drvbind within the size budget" {
	local bin=$OUT/target/sbin/drvbind
	ran build "$bin"
	run file -b "$bin"
	echo "$output"
	[[ $output == *"ELF 64-bit LSB executable, ARM aarch64"* && $output == *"statically linked"* ]]
	local size arm64=-
	size=$(wc -c <"$bin")
	[[ ! -f $TOP/build/arm64/drvbind ]] || arm64=$(wc -c <"$TOP/build/arm64/drvbind")
	echo "$size bytes, budget $SIZE_MAX (build/arm64/drvbind: $arm64 bytes)"
	((size <= SIZE_MAX))
	# linked with the Makefile's arm64 flags, its linker script, and -Os
	# the last optimisation level (Buildroot's own is -O2)
	local link
	link=$(grep -- ' -o build/drvbind.syms ' "$BR/build.log")
	[[ $link == *" -mcmodel=tiny "*" -Wl,-T,applet/tiny.ld "* ]]
	[[ $(grep -o -- ' -O[0-9a-z]*' <<<"$link" | tail -n 1) == " -Os" ]]
	run qemu-aarch64-static "$bin" -V
	[[ $status -eq 0 && $output == "drvbind $VERSION" ]]
}
