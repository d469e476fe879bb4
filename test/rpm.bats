#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The RPM for Fedora, RHEL and openSUSE (initramfs/pkg/rpm/drvbind.spec,
# make rpm: initramfs/pkg/rpm.mk), built once for the file by Debian's
# rpmbuild from a tarball of the working tree. The tests hold it against
# rpmlint (make rpm-lint: Fedora's settings in initramfs/pkg/rpm/rpmlint.toml),
# against what make install PREFIX=/usr puts in place and what make
# builds (the binary byte for byte), and against the promise that
# installing it changes nothing at boot until the user runs dracut -f:
# its scriptlets, run with a systemctl that records, only apply presets.
# Last, the package's payload (rpm2cpio) takes the place of make
# install's in the dracut boot of builders.bats (test/initramfs/run.sh
# dracut-rpm: dracut --no-hostonly with systemd, booted under QEMU), and
# that boot passes the same checks.

bats_require_minimum_version 1.5.0

load qemu/results

setup_file() {
	VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
	RPM=$TOP/build/pkg/rpm/drvbind-$VERSION-1.$(uname -m).rpm
	SRPM=$TOP/build/pkg/rpm/drvbind-$VERSION-1.src.rpm
	STAGE=$BATS_FILE_TMPDIR/stage
	X=$BATS_FILE_TMPDIR/x
	export VERSION RPM SRPM STAGE X
	make -s -C "$TOP" all
	mkdir -p "$TOP/build/pkg"
	# a failed build is reported by the first test, with the log
	make -C "$TOP" rpm >"$TOP/build/pkg/rpm.log" 2>&1 || :
	make -s -C "$TOP" install DESTDIR="$STAGE" PREFIX=/usr
	mkdir -p "$X"
	if [[ -f $RPM ]]; then
		rpm2cpio "$RPM" | (cd "$X" && cpio -idm --quiet)
	fi
	# the dracut boot, from the payload
	export QEMU_OUT=$TOP/build/initramfs/out
	mkdir -p "$QEMU_OUT"
	DRVBIND_RPM=$RPM "$TOP/test/initramfs/run.sh" dracut-rpm >"$TOP/build/initramfs/rpm-run.log" 2>&1 || :
}

# built: the package is there, or the test fails pointing at the first one.
built() {
	[[ -f $RPM ]] && return 0
	echo "no $RPM: make rpm failed (the first test shows its output)"
	return 1
}

# qf FILE FORMAT: rpm -qp --qf
qf() {
	rpm -qp --qf "$2" "$1" 2>/dev/null
}

@test "make rpm builds the package and its source package from a tarball of the working tree with rpmbuild" {
	[[ -f $RPM ]] || { tail -n 40 "$TOP/build/pkg/rpm.log"; false; }
	[[ -f $SRPM ]]
	grep -qxF "Wrote: $RPM" "$TOP/build/pkg/rpm.log"
	# the tarball holds what the Makefile builds and installs from, as the
	# working tree has it, and none of the packages' recipes
	local t=$BATS_TEST_TMPDIR/src
	mkdir "$t"
	tar -xzf "$TOP/build/pkg/rpm/SOURCES/drvbind-$VERSION.tar.gz" -C "$t"
	is "the tarball's top" "$(ls "$t")" "drvbind-$VERSION"
	is "what the tarball holds" "$(cd "$t/drvbind-$VERSION" && find . -type f | LC_ALL=C sort)" \
		"$(cd "$TOP" && find Makefile LICENSE README applet initramfs -path initramfs/pkg -prune -o -type f -print |
			sed 's|^|./|' | LC_ALL=C sort)"
	diff -r "$t/drvbind-$VERSION/applet" "$TOP/applet"
	diff -r -x pkg "$t/drvbind-$VERSION/initramfs" "$TOP/initramfs"
}

@test "the package's version is the Makefile's VERSION, its License is MIT (SPDX), and it BuildRequires musl-gcc and make" {
	built
	is version "$(qf "$RPM" '%{VERSION}')" "$VERSION"
	is license "$(qf "$RPM" '%{LICENSE}')" MIT
	local br
	br=$(rpm -qp --requires "$SRPM" 2>/dev/null)
	echo "BuildRequires: $br"
	grep -qx 'musl-gcc' <<<"$br"
	grep -qx 'make' <<<"$br"
}

@test "rpmlint with Fedora's settings finds no error in the package, the source package or the spec, and each warning left is explained in the spec" {
	built
	run make -s -C "$TOP" rpm-lint
	echo "$output"
	[[ $status -eq 0 ]]
	[[ $output == *" 0 errors, "* ]]
	# by its name, in the list at the top of the spec
	local w st=0
	while read -r w; do
		grep -qE -- "^#   $w( |$)" "$TOP/initramfs/pkg/rpm/drvbind.spec" ||
			{ echo "not explained in drvbind.spec: $w"; st=1; }
	done < <(sed -n 's/^[^ ]*: W: \([^ ]*\).*/\1/p' <<<"$output" | sort -u)
	[[ $st -eq 0 ]]
}

@test "rpm -qlp lists the binary, both man pages, the dracut module, both units, the license and README, and no hook of initramfs-tools or mkinitcpio" {
	built
	local l
	l=$(rpm -qlp "$RPM" 2>/dev/null)
	echo "$l"
	for f in /usr/sbin/drvbind /usr/share/man/man8/drvbind.8.gz /usr/share/man/man5/drvbind.conf.5.gz \
		/usr/lib/dracut/modules.d/90drvbind/module-setup.sh /usr/lib/dracut/modules.d/90drvbind/drvbind.sh \
		/usr/share/drvbind/modules.sh /usr/lib/systemd/system/drvbind.service \
		/usr/lib/systemd/system/drvbind-follow.service; do
		grep -qxF "$f" <<<"$l" || { echo "missing: $f"; return 1; }
	done
	# Fedora's %license and %doc directories are the name's; Debian's rpm adds the version
	grep -qxE "/usr/share/licenses/drvbind(-$VERSION)?/LICENSE" <<<"$l"
	grep -qxE "/usr/share/doc/drvbind(-$VERSION)?/README" <<<"$l"
	run ! grep -E 'initramfs-tools|initcpio|inittab|runit' <<<"$l"
}

@test "the package's files are make install PREFIX=/usr's, same content and mode (man pages gzipped, modules.sh executable), less the other builders' hooks and inits, all owned by root" {
	built
	cd "$STAGE"
	local st=0 f d want
	while read -r f; do
		case $f in
		./usr/share/initramfs-tools/* | ./usr/lib/initcpio/* | ./usr/share/drvbind/inittab | ./usr/share/drvbind/runit/*)
			[[ ! -e $X/$f ]] || { echo "$f: in the package"; st=1; }
			continue ;;
		./usr/share/man/*) d=$X/$f.gz; gzip -dc "$d" | cmp - "$f" || st=1 ;;
		*) d=$X/$f; cmp "$d" "$f" || st=1 ;;
		esac
		want=$(stat -c %a "$f")
		[[ $f == ./usr/share/drvbind/modules.sh ]] && want=755
		[[ $(stat -c %a "$d") == "$want" ]] ||
			{ echo "$f: mode $(stat -c %a "$d") in the package, $want wanted"; st=1; }
	done < <(find . ! -type d | sort)
	is owners "$(rpm -qp --qf '[%{FILEUSERNAME}:%{FILEGROUPNAME}\n]' "$RPM" 2>/dev/null | sort -u)" "root:root"
	[[ $st -eq 0 ]]
}

@test "the binary in the package is build/drvbind from make, byte for byte" {
	built
	echo "in the package: $(wc -c <"$X/usr/sbin/drvbind") bytes; build/drvbind: $(wc -c <"$TOP/build/drvbind") bytes"
	cmp "$X/usr/sbin/drvbind" "$TOP/build/drvbind"
}

@test "the scriptlets rebuild no initramfs and enable nothing: on install they apply the presets, on removal disable and stop, on upgrade restart a running follower" {
	built
	local scripts
	scripts=$(rpm -qp --scripts "$RPM" 2>/dev/null)
	run ! grep -E 'dracut|initramfs|mkinitrd|\benable\b' <<<"$scripts"
	is triggers "$(rpm -qp --triggers "$RPM" 2>/dev/null)" ""
	# each scriptlet run by sh, as rpm runs it, with a systemctl that
	# records its arguments: the first install (1), the last removal (0), an
	# upgrade (2)
	local b=$BATS_TEST_TMPDIR/bin log=$BATS_TEST_TMPDIR/systemctl.log
	mkdir "$b"
	printf '#!/bin/sh\necho "$*" >>%s\n' "$log" >"$b/systemctl"
	chmod 755 "$b/systemctl"
	PATH=$b:$PATH sh -c "$(qf "$RPM" '%{POSTIN}')" post 1
	is "%post on install" "$(cat "$log")" "--no-reload preset drvbind.service drvbind-follow.service"
	rm -f "$log"
	PATH=$b:$PATH sh -c "$(qf "$RPM" '%{POSTIN}')" post 2
	[[ ! -e $log ]] || { echo "%post on upgrade: $(cat "$log")"; false; }
	PATH=$b:$PATH sh -c "$(qf "$RPM" '%{PREUN}')" preun 0
	is "%preun on removal" "$(cat "$log")" "--no-reload disable --now drvbind.service drvbind-follow.service"
	rm -f "$log"
	PATH=$b:$PATH sh -c "$(qf "$RPM" '%{POSTUN}')" postun 1
	grep -qxF "try-restart drvbind-follow.service" "$log"
	run ! grep -vx -e 'daemon-reload' -e 'try-restart drvbind-follow.service' "$log"
}

@test "rpm installs the package into an empty root and erases it without leaving a file" {
	built
	[[ $(id -u) == 0 ]] || skip "rpm --root installs as root"
	local r=$BATS_TEST_TMPDIR/root
	mkdir "$r"
	# no shell in the empty root for the scriptlets, tried above
	rpm --root "$r" --initdb
	rpm --root "$r" -i --nodeps --noscripts "$RPM"
	cmp "$r/usr/sbin/drvbind" "$TOP/build/drvbind"
	rpm --root "$r" -e --noscripts drvbind
	run find "$r" -path "$r/var" -prune -o -path "$r/root/.rpmdb" -prune -o -path "$r/usr/lib/sysimage" -prune -o ! -type d -print
	[[ -z $output ]] || { echo "left behind: $output"; false; }
}

# The boot from the payload: the checks of builders.bats's dracut boot
# (qemu/results.bash), on the image dracut-rpm.

@test "dracut --no-hostonly, with the package's files in place of make install's, includes the module: drvbind, the config, pci-stub's module, the unit, enabled" {
	built
	[[ -f $TOP/build/initramfs/stage-rpm/usr/sbin/drvbind ]] || { tail -n 20 "$TOP/build/initramfs/rpm-run.log"; false; }
	cmp "$TOP/build/initramfs/stage-rpm/usr/sbin/drvbind" "$TOP/build/drvbind"
	holds dracut-rpm ' usr/sbin/drvbind$'
	holds dracut-rpm ' etc/drvbind\.conf$'
	holds dracut-rpm '/pci-stub\.ko$'
	holds dracut-rpm ' usr/lib/systemd/system/drvbind\.service$'
	holds dracut-rpm 'sysinit\.target\.wants/drvbind\.service -> '
	said dracut-rpm "dracut: *** Including module: drvbind ***"
	said dracut-rpm "drvbind: pci-stub: adding module pci-stub"
}

@test "booted from that image, 0000:00:05.0 is on pci-stub before the real root's init runs, while e1000 took 0000:00:06.0" {
	applied dracut-rpm
}

@test "booted from that image, the USB stick's interface 2-1:1.0, sent to none on the command line, has no driver when the real root's init runs, though coldplug loaded usb-storage" {
	holds dracut-rpm '/usb-storage\.ko$'
	unheld dracut-rpm
}

@test "booted from that image, drvbind's waiting child outlives the switch to the real root (argv[0] @drvbind) and does not hold up boot" {
	booted dracut-rpm
	waiting dracut-rpm "@drvbind -b"
}
