#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Debian package (initramfs/pkg/debian/, make deb: initramfs/pkg/debian.mk).
# setup_file runs make deb once; the tests then hold the .deb against
# lintian, against what make install PREFIX=/usr puts in place and what
# make builds (file for file, the binary byte for byte), and against the
# promise that installing it changes nothing at boot until the user
# rebuilds the initramfs: no maintainer script, no trigger, no enabled
# unit. Last, dpkg installs it into an empty root and purges it again.
# The source package is linted too. The package's own tests, which boot
# it (debian/tests), are run by make autopkgtest.

bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
	DEB=$TOP/build/pkg/drvbind_${VERSION}_$(dpkg --print-architecture).deb
	LOG=$BATS_FILE_TMPDIR/deb.log
	STAGE=$BATS_FILE_TMPDIR/stage
	X=$BATS_FILE_TMPDIR/x
	export TOP VERSION DEB LOG STAGE X
	make -C "$TOP" deb >"$LOG" 2>&1 || :
	# what the package must hold, and build/drvbind from the same sources
	make -s -C "$TOP" install DESTDIR="$STAGE" PREFIX=/usr
	if [[ -f $DEB ]]; then
		dpkg-deb -x "$DEB" "$X"
	fi
}

# built: the .deb is there, or the test fails pointing at the first one.
built() {
	[[ -f $DEB ]] && return 0
	echo "no $DEB: make deb failed (the first test shows its output)"
	return 1
}

@test "make deb builds build/pkg/drvbind_VERSION_ARCH.deb from the working tree with dpkg-buildpackage" {
	[[ -f $DEB ]] || { cat "$LOG"; false; }
	grep -q '^dpkg-buildpackage: info: binary-only upload' "$LOG"
}

@test "the package's version is the Makefile's VERSION (a native package: the debian/ tree is drvbind's own)" {
	v=$(dpkg-parsechangelog -l "$TOP/initramfs/pkg/debian/changelog" -S Version)
	[[ $v == "$VERSION" ]] || { echo "debian/changelog: $v, Makefile: $VERSION"; false; }
	built
	[[ $(dpkg-deb -f "$DEB" Version) == "$VERSION" ]]
}

@test "lintian --pedantic finds no error and no warning in the .deb, and every override it carries is used" {
	built
	run lintian --pedantic --fail-on error,warning -I "$DEB"
	echo "$output"
	[[ $status -eq 0 ]]
	[[ $output != *unused-override* ]]
}

@test "lintian --pedantic shows no tag at all, info and pedantic ones included, that an override does not explain" {
	built
	run --separate-stderr lintian --pedantic -I "$DEB"
	[[ $status -eq 0 && -z $output ]] || { echo "$output"; false; }
}

@test "the source package (dpkg-source of the tree make deb packs) is lintian --pedantic clean, with its tests and upstream metadata" {
	s=$BATS_TEST_TMPDIR/src
	mkdir -p "$s/drvbind-$VERSION"
	cp -R "$TOP/Makefile" "$TOP/LICENSE" "$TOP/README" "$TOP/applet" "$TOP/initramfs" "$s/drvbind-$VERSION/"
	rm -rf "$s/drvbind-$VERSION/initramfs/pkg"
	cp -R "$TOP/initramfs/pkg/debian" "$s/drvbind-$VERSION/debian"
	(cd "$s" && dpkg-source -b "drvbind-$VERSION" >/dev/null)
	run --separate-stderr lintian --pedantic -I "$s/drvbind_$VERSION.dsc"
	[[ $status -eq 0 && -z $output ]] || { echo "$output"; false; }
	dpkg-source -x "$s/drvbind_$VERSION.dsc" "$s/x" >/dev/null
	for f in debian/tests/control debian/tests/initramfs-tools debian/tests/systemd-follow \
		debian/upstream/metadata debian/README.source; do
		[[ -f $s/x/$f ]] || { echo "not in the source package: $f"; false; }
	done
}

@test "debian/tests: the control file names each test script there, and every script is shellcheck-clean" {
	t=$TOP/initramfs/pkg/debian/tests
	for n in $(sed -n 's/^Tests://p' "$t/control" | tr ',' ' '); do
		[[ -x $t/$n ]] || { echo "the control file names $n: no executable debian/tests/$n"; false; }
	done
	shellcheck -x -s sh "$t/lib.sh" "$t/guest" "$t/initramfs-tools" "$t/systemd-follow"
}

@test "the .deb holds every file make install PREFIX=/usr puts in place, same content and mode (man pages gzipped), owned by root" {
	built
	cd "$STAGE"
	st=0
	while read -r f; do
		d=$X/$f
		case $f in
		./usr/share/man/*) d=$d.gz; gzip -dc "$d" | cmp - "$f" || st=1 ;;
		*) cmp "$d" "$f" || st=1 ;;
		esac
		[[ $(stat -c %a "$d") == $(stat -c %a "$f") ]] ||
			{ echo "$f: mode $(stat -c %a "$d") in the .deb, $(stat -c %a "$f") from make install"; st=1; }
	done < <(find . ! -type d | sort)
	run bash -c "dpkg-deb -c '$DEB' | awk '\$2 != \"root/root\"'"
	[[ -z $output ]] || { echo "not root's: $output"; st=1; }
	[[ $st -eq 0 ]]
}

@test "beyond make install's files the .deb holds only Debian's doc files and the lintian overrides" {
	built
	diff -u <(cd "$STAGE" && find . ! -type d | sort) \
		<(cd "$X" && find . ! -type d | sed 's|^\(\./usr/share/man/.*\)\.gz$|\1|' |
			grep -vxE '\./usr/share/doc/drvbind/(copyright|changelog\.gz|README\.Debian)|\./usr/share/lintian/overrides/drvbind' | sort)
	for f in usr/share/doc/drvbind/copyright usr/share/doc/drvbind/changelog.gz \
		usr/share/doc/drvbind/README.Debian usr/share/lintian/overrides/drvbind; do
		[[ -f $X/$f ]] || { echo "missing: /$f"; false; }
	done
}

@test "the binary in the .deb is build/drvbind from make, byte for byte" {
	built
	echo "in the .deb: $(wc -c <"$X/usr/sbin/drvbind") bytes; build/drvbind: $(wc -c <"$TOP/build/drvbind") bytes"
	cmp "$X/usr/sbin/drvbind" "$TOP/build/drvbind" && return
	# make deb copies the tree: sources edited since then explain a difference
	diff -r "$TOP/build/pkg/deb/drvbind-$VERSION/applet" "$TOP/applet"
	false
}

@test "the .deb has no maintainer script and no trigger: installing or removing it runs no update-initramfs, dracut or systemctl" {
	built
	run bash -c "dpkg-deb --ctrl-tarfile '$DEB' | tar -tf - | sed -e 's|^\./||' -e '/^$/d' | sort | tr '\n' ' '"
	[[ $output == "control md5sums " ]] || { echo "control archive: $output"; false; }
}

@test "the package depends on nothing at run time and names the musl linked into it" {
	built
	for f in Depends Pre-Depends Recommends; do
		[[ -z $(dpkg-deb -f "$DEB" "$f") ]] || { echo "$f: $(dpkg-deb -f "$DEB" "$f")"; false; }
	done
	musl=$(dpkg-query -W -f '${source:Package} (= ${source:Version})' "musl-dev:$(dpkg --print-architecture)")
	[[ $(dpkg-deb -f "$DEB" Static-Built-Using) == "$musl" ]]
	[[ $(dpkg-deb -f "$DEB" Enhances) == *initramfs-tools* ]]
}

@test "debian/copyright gives LICENSE's text as its MIT license" {
	diff <(sed -n '/^Permission/,$p' "$TOP/LICENSE") \
		<(sed -n '/^License: MIT$/,$p' "$TOP/initramfs/pkg/debian/copyright" | sed -n '/^ Permission/,$p' |
			sed -e 's/^ //' -e 's/^\.$//')
}

@test "dpkg installs the .deb into an empty root without processing a trigger, and its purge leaves no file behind" {
	built
	[[ $(id -u) == 0 ]] || skip "dpkg --root installs as root"
	r=$BATS_TEST_TMPDIR/root
	mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
	: >"$r/var/lib/dpkg/status"
	dpkg --root="$r" --log="$BATS_TEST_TMPDIR/dpkg.log" -i "$DEB"
	[[ $(dpkg-query --admindir="$r/var/lib/dpkg" -W -f '${Status}' drvbind) == "install ok installed" ]]
	cmp "$r/usr/sbin/drvbind" "$X/usr/sbin/drvbind"
	[[ ! -s $r/var/lib/dpkg/triggers/Unincorp ]]
	run ! grep -E 'trigproc|triggers-' "$BATS_TEST_TMPDIR/dpkg.log"
	dpkg --root="$r" --log="$BATS_TEST_TMPDIR/dpkg.log" --purge drvbind
	run find "$r" -path "$r/var" -prune -o ! -type d -print
	[[ -z $output ]] || { echo "left behind: $output"; false; }
}
