#!/bin/sh
# SPDX-License-Identifier: MIT
# Build initramfs images with the real builders, with drvbind installed
# by `make install`, and boot each under QEMU into a real root disk whose
# /sbin/init (root-init) reports what it found on the second serial port.
#
#   test/initramfs/run.sh [IMAGE...]     itools itools-follow dracut dracut-sh mkinitcpio
#
# itools     mkinitramfs (initramfs-tools), MODULES=most, Debian's default:
#            the builder picks the modules itself (e1000, xhci-pci and
#            usb-storage among them, for udev's coldplug to load), and
#            the drvbind hook adds its own
# itools-follow
#            no build: itools's image (built before, in this run or an
#            earlier one) booted again with drvbind.follow=1, into a root
#            of its own whose /sbin/init is busybox init, its /etc/inittab
#            the installed inittab's line between two of root-follow's
#            (see there), and its /etc/drvbind.conf with a rule the
#            image's lacks
# dracut     dracut --no-hostonly (plus e1000), systemd as the initrd's init;
#            dracut's own selection has xhci-pci and usb-storage
# dracut-sh  the same without systemd: dracut's shell init
# dracut-rpm the dracut image again, from the RPM's payload instead of
#            make install's: DRVBIND_RPM=FILE (test/rpm.bats), unpacked
#            with rpm2cpio into build/initramfs/stage-rpm; only when named
# mkinitcpio Arch's builder, from MKINITCPIO_SRC (see mkinitcpio_tree;
#            without a source tree the image is skipped, saying so in
#            out/mkinitcpio/skipped), HOOKS=(base udev drvbind modconf
#            block): no autodetect, so the block hook puts xhci-pci and
#            usb-storage in for coldplug; e1000 and the root's ext4 in
#            MODULES=
#
# Nothing is installed into the machine: `make install DESTDIR=` stages
# drvbind under build/initramfs/stage, and each builder runs in a mount
# namespace (ns.sh) where that tree, the kernel that test/qemu/kernel.sh
# unpacked, a test /etc/drvbind.conf and a command line without rules
# lie over /usr, /etc, /boot and /proc/cmdline, so the builders find
# everything where a real install puts it. The image is built for the
# very kernel QEMU boots, whatever kernel the build machine runs.
#
# DRVBIND=FILE puts another binary in the images (e.g. an older build):
# it replaces the staged /usr/sbin/drvbind after `make install`.
#
# Results: build/initramfs/out/IMAGE/{build.log,contents,results,console.log}.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
w=build/initramfs
here=test/initramfs
[ $# -gt 0 ] || set -- itools itools-follow dracut dracut-sh mkinitcpio

k=$(sh test/qemu/kernel.sh build/qemu)
kdir=${k% *} kver=${k##* }
mkdir -p "$w/out"

rm -rf "$w/stage"
make -s install DESTDIR="$top/$w/stage" PREFIX=/usr
if [ -n "${DRVBIND:-}" ]; then
	install -m 755 "$DRVBIND" "$w/stage/usr/sbin/drvbind"
fi

# The rule baked into every image; the boot adds its own on the command line.
rm -rf "${w:?}/etc"
mkdir -p "$w/etc"
printf '# baked into the image by the drvbind hook\npci/0000:00:05.0:pci-stub\n' >"$w/etc/drvbind.conf"
echo "BOOT_IMAGE=/vmlinuz ro quiet" >"$w/cmdline"

# The root disk: busybox, its applet links, root-init as /sbin/init, and
# the /etc/os-release without which systemd will not switch into it.
# mke2fs -d fills the file system from a directory: no root, no mount.
r=$w/root
rm -rf "$r" "$w/root.img"
mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" \
	"$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/tmp"
cp "$(command -v busybox)" "$r/bin/busybox"
for a in $(busybox --list-full); do
	case $a in
	bin/busybox | sbin/init) continue ;;
	esac
	ln -s /bin/busybox "$r/$a"
done
cp "$here/root-init" "$r/sbin/init"
chmod 755 "$r/sbin/init"
printf 'ID=drvbind-test\nNAME="drvbind test root"\n' >"$r/etc/os-release"
mke2fs -q -F -t ext4 -d "$r" "$w/root.img" 32M >/dev/null
# The USB stick's medium: 1 MiB of zeros (a sparse file), booted as a snapshot.
rm -f "$w/stick.img"
truncate -s 1M "$w/stick.img"

# The follow boot's root: the same, but busybox's own init as /sbin/init,
# reading an /etc/inittab made of the installed file's lines (its
# comments left out) between two of root-follow's, the installed
# drvbind, and a config of the real root's own: besides the image's
# rule, one for the other e1000, which only a follower that read this
# file moves.
follow_root() {
	f=$w/root-follow
	rm -rf "$f" "$w/root-follow.img"
	cp -a "$r" "$f"
	rm "$f/sbin/init"
	ln -s /bin/busybox "$f/sbin/init"
	cp "$here/root-follow" "$f/sbin/root-follow"
	chmod 755 "$f/sbin/root-follow"
	cp "$w/stage/usr/sbin/drvbind" "$f/usr/sbin/drvbind"
	{
		echo "::sysinit:/sbin/root-follow start"
		grep -v -e '^#' -e '^$' "$w/stage/usr/share/drvbind/inittab"
		echo "::once:/sbin/root-follow replug"
	} >"$f/etc/inittab"
	printf '# the rules of the real root\npci/0000:00:05.0:pci-stub\npci/0000:00:06.0:none\n' \
		>"$f/etc/drvbind.conf"
	mke2fs -q -F -t ext4 -d "$f" "$w/root-follow.img" 32M >/dev/null
}

# inns COMMAND...: COMMAND with drvbind installed from $stage (make
# install's, or the RPM's payload for dracut-rpm).
stage=$w/stage
inns() {
	sh "$here/ns.sh" -u "$stage/usr" -u "$kdir" -e "$w/etc" -k "$w/cmdline" -b "$kdir/boot" -- "$@"
}

# mkinitcpio_tree: mkinitcpio laid out under build/mkinitcpio/usr as
# Arch installs it (/usr/bin/mkinitcpio, /usr/lib/initcpio/), from
# MKINITCPIO_SRC, a source tree or its tarball, by default the vendor
# tarball beside the checkout. Debian 12 does not package it, and its
# meson.build wants meson 1.4 where Debian 12 has 1.0: the @VARIABLES@
# its configure_file() calls fill in are filled in here, with the values
# meson would find on this machine. Kept until the source changes.
# Without a source it says so and returns 2; 1 when a step failed.
mkinitcpio_tree() {
	src=${MKINITCPIO_SRC:-}
	if [ -z "$src" ]; then
		for src in ../shared/vendor/mkinitcpio.tar.gz /work/shared/vendor/mkinitcpio.tar.gz; do
			[ -e "$src" ] && break
		done
	fi
	if ! [ -e "$src" ]; then
		echo "no mkinitcpio source: set MKINITCPIO_SRC to its tree or tarball"
		return 2
	fi
	t=build/mkinitcpio
	key=dir
	[ -d "$src" ] || key=$(sha256sum <"$src")
	[ "$key" != dir ] && [ "$(cat "$t/key" 2>/dev/null)" = "$key" ] && return 0
	rm -rf "$t"
	mkdir -p "$t/src" "$t/usr/bin" "$t/usr/lib/initcpio/install" "$t/usr/lib/initcpio/hooks"
	# (no set -e here: build's caller tests its status)
	if [ -d "$src" ]; then
		cp -R "$src/." "$t/src/" || return 1
	else
		tar -xzf "$src" -C "$t/src" --strip-components=1 || return 1
	fi
	# the version meson takes from git describe: the newest in CHANGELOG
	ver=$(sed -n 's/^CHANGES WITH v\([0-9.]*\).*/\1/p' "$t/src/CHANGELOG" | head -n 1)
	udevd=$(pkg-config --variable=systemd_util_dir systemd)/systemd-udevd
	# BINDIR is used once, for mkinitcpio's own PATH. Arch's /usr/sbin is
	# a link to /usr/bin; Debian 12 keeps blkid, switch_root, modinfo and
	# depmod in /usr/sbin, so its PATH gets both.
	for f in mkinitcpio lsinitcpio functions init init_functions shutdown \
		"$t/src"/install/* "$t/src"/hooks/*; do
		f=${f#"$t/src/"}
		case $f in
		*/meson.build) continue ;;
		mkinitcpio | lsinitcpio) d=$t/usr/bin/$f ;;
		*) d=$t/usr/lib/initcpio/$f ;;
		esac
		(cd "$t/src" && sed -e "s|@VERSION@|$ver|g" -e 's|@BINDIR@|/usr/bin:/usr/sbin|g' \
			-e 's|@SYSCONFDIR@|/etc|g' -e 's|@INITCPIO_LIBDIR@|/usr/lib/initcpio|g' \
			-e 's|@INITCPIO_SYSCONFDIR@|/etc/initcpio|g' -e 's|@VCONSOLE_CONF@|/etc/vconsole.conf|g' \
			-e "s|@UDEVD_PATH@|$udevd|g" -e "s|@TMPFILES_PATH@|$(command -v systemd-tmpfiles)|g" \
			-e 's|@MKINITCPIO_HOOKS@|base udev autodetect microcode modconf kms keyboard keymap consolefont block filesystems fsck|g' \
			"$f") >"$d" || return 1
	done
	chmod 755 "$t/usr/bin/mkinitcpio" "$t/usr/bin/lsinitcpio" "$t/usr/lib/initcpio/functions" || return 1
	# Arch's udev hook adds libkmod by its path there (systemd 256 and
	# later dlopen() it, ldd does not show it); Debian's is in the
	# multiarch directory.
	ln -s "$(ldd "$udevd" | awk '$1 == "libkmod.so.2" { print $3 }')" "$t/usr/lib/libkmod.so.2" || return 1
	# mkinitcpio-busybox, the image's shell and tools: Debian's busybox,
	# unpacked, not installed (it would replace busybox-static). Not
	# busybox-static itself: its shell runs its own applets before any
	# program on PATH, so mkinitcpio's init ran busybox's modprobe (which
	# cannot read kmod's modules.dep.bin) and mount (which cannot tell
	# ext4) instead of the kmod and util-linux ones the base hook adds:
	# MODULES= was never loaded and the root never mounted.
	# Fetched once, like the kernel (test/qemu/kernel.sh).
	b=build/mkinitcpio-busybox
	if ! [ -x "$b/bin/busybox" ]; then
		rm -rf "$b" && mkdir -p "$b"
		# apt-get download writes to the current directory
		(cd "$b" && { apt-get download busybox || { apt-get update && apt-get download busybox; }; }) ||
			{ echo "apt-get download busybox failed"; return 1; }
		dpkg -x "$b"/busybox_*.deb "$b" && rm "$b"/busybox_*.deb || return 1
	fi
	cp "$b/bin/busybox" "$t/usr/lib/initcpio/busybox" || return 1
	echo "$key" >"$t/key"
}

# mkinitcpio's own /etc: the rule, mkinitcpio.conf, and
# /etc/udev/hwdb.bin, which its udev hook copies beside
# /usr/lib/udev/hwdb.bin (systemd-hwdb writes it there; Debian's udev
# builds only the one under /usr): a link to that one, so the image
# holds one hwdb. Apart from $w/etc, so the other images stay as they
# were. No autodetect hook: the block hook adds every storage driver,
# xhci-pci and usb-storage among them, for coldplug to load; the root's
# ext4, and e1000, which no hook adds, are in MODULES=.
mkinitcpio_etc() {
	e=$w/etc-mkinitcpio
	rm -rf "$e"
	mkdir -p "$e/udev"
	cp "$w/etc/drvbind.conf" "$e/drvbind.conf"
	ln -s /usr/lib/udev/hwdb.bin "$e/udev/hwdb.bin"
	printf 'MODULES=(e1000 ext4)\nHOOKS=(base udev drvbind modconf block)\nCOMPRESSION=zstd\n' \
		>"$e/mkinitcpio.conf"
}

# build NAME: the image build/initramfs/NAME.img, its build log and its
# file list.
build() {
	o=$w/out/$1
	rm -rf "$o" "$w/$1.img"
	mkdir -p "$o"
	case $1 in
	itools)
		conf=$w/itools-conf
		rm -rf "$conf"
		mkdir -p "$conf/conf.d" "$conf/hooks" "$conf/scripts"
		printf 'MODULES=most\nBUSYBOX=auto\nCOMPRESS=zstd\n' >"$conf/initramfs.conf"
		inns mkinitramfs -d "$conf" -o "$w/$1.img" "$kver" >"$o/build.log" 2>&1
		lsinitramfs "$w/$1.img" >"$o/contents" ;;
	dracut | dracut-sh)
		# zstd -1: gzip, dracut's default here, takes most of a minute
		img=$w/$1.img
		[ "$1" = dracut ] && omit= || omit="systemd systemd-initrd dracut-systemd"
		inns dracut --no-hostonly --no-hostonly-cmdline --force --kver "$kver" \
			--add-drivers e1000 --omit "$omit" --compress "zstd -1 -q -T0" \
			"$img" >"$o/build.log" 2>&1
		lsinitrd "$img" >"$o/contents" ;;
	dracut-rpm)
		# the package's files alone, where rpm would put them
		stage=$w/stage-rpm
		rm -rf "$stage"
		mkdir -p "$stage"
		if ! [ -f "${DRVBIND_RPM:-}" ]; then
			echo "no RPM: set DRVBIND_RPM to the package (make rpm)" >"$o/build.log"
			return 1
		fi
		rpm2cpio "$DRVBIND_RPM" | (cd "$stage" && cpio -idm --quiet)
		inns dracut --no-hostonly --no-hostonly-cmdline --force --kver "$kver" \
			--add-drivers e1000 --compress "zstd -1 -q -T0" \
			"$w/$1.img" >"$o/build.log" 2>&1
		stage=$w/stage
		lsinitrd "$w/$1.img" >"$o/contents" ;;
	itools-follow)
		follow_root
		[ -s "$w/itools.img" ] || echo "no $w/itools.img: build itools first" >"$o/build.log"
		;;
	mkinitcpio)
		# no source tree: out/mkinitcpio/skipped says which variable to set
		mkinitcpio_tree >"$o/build.log" 2>&1 || {
			[ $? = 2 ] && mv "$o/build.log" "$o/skipped"
			return 0
		}
		m=build/mkinitcpio/usr
		mkinitcpio_etc
		sh "$here/ns.sh" -u "$m" -u "$w/stage/usr" -u "$kdir" -e "$w/etc-mkinitcpio" \
			-k "$w/cmdline" -b "$kdir/boot" -- mkinitcpio -k "$kver" -g "$w/$1.img" >>"$o/build.log" 2>&1
		sh "$here/ns.sh" -u "$m" -- lsinitcpio "$w/$1.img" >"$o/contents" ;;
	esac
}

# boot NAME: the image under QEMU, two e1000s (0000:00:05.0 has the
# config's rule, 0000:00:06.0 none), a USB stick (usb-storage on
# qemu-xhci at 0000:00:09.0; on the USB 3 root hub its interface is
# 2-1:1.0) and the root disk (disk and stick are snapshots: their files
# are not written). The command line adds a rule sending the stick's
# interface to none, so that usb-storage, which coldplug loads, must not
# take it, and a rule for a device that never appears, with a timeout far
# beyond QEMU's: a boot that waited for it would never reach the root's
# init.
boot() {
	root=root
	case $1 in
	itools | mkinitcpio) append="root=/dev/vda" ;;
	itools-follow) append="root=/dev/vda drvbind.follow=1" root=root-follow ;;
	*) append="root=/dev/vda rd.shell=0 rd.emergency=poweroff" ;;
	esac
	QEMU_TIMEOUT=${QEMU_TIMEOUT:-240} sh test/qemu/boot.sh \
		"$kdir/boot/vmlinuz-$kver" "$w/$(image "$1").img" "$w/out/$1" \
		"$append drvbind.timeout=600 \"drvbind=0000:00:1f.0:vfio-pci\" drvbind=2-1:1.0:none" \
		-drive "file=$w/$root.img,if=virtio,format=raw,snapshot=on" \
		-device e1000,addr=5,romfile= -device e1000,addr=6,romfile= \
		-device qemu-xhci,id=xhci,addr=9 \
		-drive "file=$w/stick.img,if=none,id=stick,format=raw,snapshot=on" \
		-device usb-storage,bus=xhci.0,drive=stick
}

# image NAME: the image the boot NAME boots
image() {
	case $1 in
	itools-follow) echo itools ;;
	*) echo "$1" ;;
	esac
}

# One at a time: each guest keeps a CPU busy, and the builders want one too.
for i; do
	t0=$(date +%s)
	build "$i" || echo "run.sh: building $i failed, see $w/out/$i/build.log" >&2
	echo $(($(date +%s) - t0)) >"$w/out/$i/build.seconds"
	if [ -s "$w/$(image "$i").img" ]; then
		boot "$i"
	fi
done
