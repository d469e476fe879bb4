#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Device-tree boards: QEMU's virt machines, arm64 (qemu-system-aarch64
# -cpu cortex-a57, Debian's linux-image-arm64) and armhf
# (qemu-system-arm, linux-image-armmp), TCG. Two boots each on Debian
# 12's kernel (6.1), the same two again on Debian 13's (6.12, trixie:
# the tests named "Linux 6.12", at the end), and on arm64 on sid's (7.2:
# "Linux 7.2"), by test/qemu/board.sh, two boots at a time: dt runs the
# cross-built drvbind as an initramfs hook would
# (test/qemu/guest/dt.sh), rootfs runs it as PID 1 of an image that is
# the board's whole root (guest/rootfs.sh). Each check below is a
# function that takes the suite ("" for 6.1, trixie, sid) and checks
# each board of $BOARDS, so every kernel answers the same assertions;
# where a kernel says something else, the check says so. Reports as in
# qemu.bats, from build/board/ARCH/out/BOOT/results (6.1) and
# build/board/ARCH/SUITE/out/BOOT/results (6.12, 7.2).

load qemu/results

BOARDS="arm64 armhf"

setup_file() {
	local a
	mkdir -p "$TOP/build/board"
	: >"$TOP/build/board/run.log"
	for a in $BOARDS; do
		"$TOP/test/qemu/board.sh" "$a" >>"$TOP/build/board/run.log" 2>&1
	done
}

# on ARCH [SUITE]: the reports read from here on are that board's, on
# Debian 12's kernel or on SUITE's.
on() {
	board=$1
	QEMU_OUT=$TOP/build/board/$1${2:+/$2}/out
	echo "# $1${2:+ on $2}"
}

@test "the board kernels are the ones linux-image-arm64 and linux-image-armmp depend on, and the image holds the cross build" {
	for m in arm64:linux-image-arm64 armhf:linux-image-armmp; do
		on "${m%%:*}"
		pkg=$(apt-cache depends "${m#*:}:$board" | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
		is kver "linux-image-$(cat "$TOP/build/board/$board/kver"):$board" "$pkg"
		# drvbind in the booted image is build/ARCH/drvbind, for that CPU
		(cd "$BATS_TEST_TMPDIR" && cpio -id --quiet sbin/drvbind <"$TOP/build/board/$board/root.cpio")
		cmp "$BATS_TEST_TMPDIR/sbin/drvbind" "$TOP/build/$board/drvbind"
		rm -r "$BATS_TEST_TMPDIR/sbin"
		case $board in
		arm64) want="AArch64 0x0" ;;
		armhf) want="ARM 0x5000400, Version5 EABI, hard-float ABI" ;;
		esac
		is machine "$(readelf -h "$TOP/build/$board/drvbind" | awk -F': *' '$1 ~ /Machine|Flags/ { printf "%s%s", s, $2; s = " " }')" "$want"
	done
}

# dt_rtc_none SUITE
dt_rtc_none() {
	local a
	for a in $BOARDS; do
		on "$a" "$1"
		booted dt
		has dt before.rtc "rtc0 "
		status_is dt cmdline 0
		has dt cmdline.link "amba/9010000.pl031 none"
		has dt cmdline.override "amba/9010000.pl031 none"
		has dt cmdline.dmesg "<14>drvbind: amba/9010000.pl031: rtc-pl031 -> none"
		has dt cmdline.rtc ""
	done
}

# dt_rtc_back SUITE
dt_rtc_back() {
	local a
	for a in $BOARDS; do
		on "$a" "$1"
		booted dt
		status_is dt back 0
		has dt back.link "amba/9010000.pl031 rtc-pl031"
		has dt back.stderr "drvbind: amba/9010000.pl031: none -> rtc-pl031"
		has dt back.dmesg "<6>rtc-pl031 9010000.pl031: registered as rtc1"
		has dt back.rtc "rtc1 "
	done
}

# dt_gpio SUITE
dt_gpio() {
	local a
	for a in $BOARDS; do
		on "$a" "$1"
		booted dt
		has dt before.gpio "gpiochip0 "
		has dt cmdline.link "amba/9030000.pl061 none"
		has dt cmdline.dmesg "<14>drvbind: amba/9030000.pl061: pl061_gpio -> none"
		has dt cmdline.gpio ""
		has dt back.link "amba/9030000.pl061 pl061_gpio"
		has dt back.stderr "drvbind: amba/9030000.pl061: none -> pl061_gpio"
		has dt back.dmesg "<6>pl061_gpio 9030000.pl061: PL061 GPIO chip registered"
	done
}

# dt_keys SUITE
dt_keys() {
	on armhf "$1"
	booted dt
	has dt cmdline.dmesg "<14>drvbind: platform/gpio-keys: gpio-keys -> none"
	local order st=0
	order=$(awk '$1 == "cmdline.dmesg" && $2 == "<14>drvbind:" { print $3 }' "$QEMU_OUT/dt/results" | tr '\n' ' ')
	is order "$order" "platform/gpio-keys: amba/9010000.pl031: amba/9030000.pl061: "
	# grep's 1: no line matched (2 would be an error)
	grep -e WARNING -e 'GPIOS STILL REQUESTED' "$QEMU_OUT/dt/results" || st=$?
	[ "$st" -eq 1 ]
}

# dt_refuse SUITE
dt_refuse() {
	local a
	for a in $BOARDS; do
		on "$a" "$1"
		booted dt
		status_is dt refuse 1
		has dt refuse.link "pci/0000:00:02.0 e1000"
		has dt refuse.override "pci/0000:00:02.0 (null)"
		case $a in
		arm64)
			# no IOMMU on this board. The driver core's words for a
			# failed probe differ: 6.1 warns (<4>) in the driver's
			# name, 6.12 and 7.2 log an error (<3>) in the device's, as
			# these boots' kernel logs had them
			case $1 in
			"") has dt refuse.dmesg "<4>vfio-pci: probe of 0000:00:02.0 failed with error -22" ;;
			trixie | sid) has dt refuse.dmesg "<3>vfio-pci 0000:00:02.0: probe with driver vfio-pci failed with error -22" ;;
			*) echo "no probe failure message known for $1"; false ;;
			esac
			has dt refuse.stderr "drvbind: pci/0000:00:02.0: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000" ;;
		armhf)
			# pcieport takes PCIe ports only: its probe answers ENODEV
			has dt refuse.stderr "drvbind: pci/0000:00:02.0: e1000 -> pcieport failed at bind: No such device; back on e1000" ;;
		esac
		has dt refuse.stderr 'drvbind: write bus/pci/drivers/e1000/bind "0000:00:02.0"'
	done
}

# rootfs_pid1 SUITE
rootfs_pid1() {
	local a
	for a in $BOARDS; do
		on "$a" "$1"
		booted rootfs
		has rootfs rootfs.dmesg "<6>Run /sbin/drvbind as init process"
		has rootfs rootfs.dmesg "<14>drvbind: amba/9010000.pl031: rtc-pl031 -> none"
		has rootfs rootfs.dmesg "<14>drvbind: amba/9030000.pl061: pl061_gpio -> none"
		has rootfs rootfs.link "amba/9010000.pl031 none"
		has rootfs rootfs.link "amba/9030000.pl061 none"
		has rootfs rootfs.rtc ""
		has rootfs init.pid 1
		has rootfs init.argv "/sbin/init"
		# the kernel's environment, the last drvbind= winning
		has rootfs init.env "drvbind=amba/9030000.pl061:none"
		has rootfs init.env "TERM=linux"
	done
}

# rootfs_init SUITE
rootfs_init() {
	local a
	for a in $BOARDS; do
		on "$a" "$1"
		booted rootfs
		as_kernel_left rootfs /sbin/init
	done
}

@test "the AMBA RTC 9010000.pl031 leaves its built-in rtc-pl031 for none by a rule on the command line, and the RTC goes with it" {
	dt_rtc_none ""
}

@test "the RTC goes back from none to rtc-pl031 and registers again" {
	dt_rtc_back ""
}

@test "a rule naming a device by its device-tree name alone, 9030000.pl061, finds it on the AMBA bus, unbinds pl061_gpio and binds it back" {
	dt_gpio ""
}

@test "the power key leaves its GPIO controller first, in command-line order, so the kernel has no GPIO in use to warn about" {
	dt_keys ""
}

@test "a driver refusing the e1000 on the board's PCIe leaves it back on e1000, exit 1, failure and rollback reported" {
	dt_refuse ""
}

@test "as PID 1 of an image that is the whole root (rdinit=/sbin/drvbind), it moves the AMBA devices, then execs drvbind.init=/sbin/init as PID 1" {
	rootfs_pid1 ""
}

@test "the board's /sbin/init finds /proc, /sys and /dev as the kernel left them, the mount table as drvbind found it" {
	rootfs_init ""
}

# Later kernels: both boards boot the same two scenarios on Debian 13's
# kernel (6.12, trixie), as dt@trixie and rootfs@trixie, and arm64 also
# on sid's (7.2), as dt@sid and rootfs@sid, with the same checks. The
# kernel's flavours are still linux-image-arm64 and linux-image-armmp
# (6.12.*-arm64, 7.2.*-arm64, 6.12.*-armmp), and the board's Debian 12
# busybox serves as userland. BOARD_SUITES names the suites board.sh
# boots beside 6.1 on each board (default "trixie sid" on arm64,
# "trixie" on armhf; empty: none), and a suite left out is skipped here.

# board_suites ARCH: the suites board.sh boots on ARCH beside 6.1
board_suites() {
	case $1 in
	arm64) echo "${BOARD_SUITES-trixie sid}" ;;
	*) echo "${BOARD_SUITES-trixie}" ;;
	esac
}

# on_suite SUITE VERSION: SUITE was booted on each board of $BOARDS, by
# the kernel kernel.sh fetched from it, which is Linux VERSION (6.12,
# 7.2): each boot's console names that kernel.
on_suite() {
	local a kver b
	for a in $BOARDS; do
		[[ " $(board_suites "$a") " == *" $1 "* ]] || skip "$1 is not in BOARD_SUITES for $a"
		kver=$(cat "$TOP/build/board/$a/$1/kver" 2>/dev/null) ||
			{ echo "no $a kernel from $1: see build/board/run.log (BOARD_SUITES= leaves it out)"; return 1; }
		[[ $kver == "$2".* ]] || { echo "$1's $a kernel is $kver, not Linux $2"; return 1; }
		on "$a" "$1"
		for b in dt rootfs; do
			booted "$b"
			grep -q "Linux version $kver " "$QEMU_OUT/$b/console.log" ||
				{ echo "$a $b on $1 did not boot $kver"; return 1; }
		done
	done
}

# suite_apt CMD ARG...: apt-get or apt-cache on the package lists of the
# suite in $BATS_TEST_TMPDIR/apt/sources.list, fetched into the test's
# own directory, apart from the machine's apt state and pins (as
# kernel.sh fetches the kernel).
suite_apt() {
	local d=$BATS_TEST_TMPDIR/apt cmd=$1
	shift
	"$cmd" -o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o Acquire::Languages=none "$@"
}

# suite_kernels SUITE VERSION: each board of $BOARDS booted the kernel
# SUITE's metapackage depends on (linux-image-arm64, linux-image-armmp),
# of the board's flavour, Linux VERSION, and its image holds the cross
# build. The suite's lists come from the Debian archive this machine's
# sources name, for the boards' architectures only.
suite_kernels() {
	local d=$BATS_TEST_TMPDIR/apt archive deps kver pkg a meta flavour archs= metas=
	for a in $BOARDS; do
		archs+=${archs:+,}$a
		case $a in
		arm64) metas+=" linux-image-arm64:arm64" ;;
		armhf) metas+=" linux-image-armmp:armhf" ;;
		esac
	done
	archive=$(apt-cache policy | awk '$2 ~ /\/debian\/?$/ { print $2; exit }')
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	echo "deb [arch=$archs signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${archive:-http://deb.debian.org/debian} $1 main" \
		>"$d/sources.list"
	suite_apt apt-get -q update >/dev/null
	# one call for all: each apt-cache run reads the lists anew (~3 s)
	# shellcheck disable=SC2086 # metas: package names, one a word
	deps=$(suite_apt apt-cache depends $metas |
		awk '/^[^ ]/ { p = $1 } $1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print p, $2 }')
	echo "$deps"
	for a in $BOARDS; do
		on "$a" "$1"
		case $a in
		arm64) meta=linux-image-arm64 flavour=arm64 ;;
		armhf) meta=linux-image-armmp flavour=armmp ;;
		esac
		pkg=$(awk -v p="$meta:$a" '$1 == p { print $2; exit }' <<<"$deps")
		kver=$(cat "$TOP/build/board/$a/$1/kver")
		is kver "linux-image-$kver:$a" "$pkg"
		[[ $kver == "$2".*-$flavour ]] || { echo "$1's $meta is $kver, not $2 $flavour"; false; }
		# drvbind in the booted image is build/ARCH/drvbind
		(cd "$BATS_TEST_TMPDIR" && cpio -id --quiet sbin/drvbind <"$TOP/build/board/$a/$1/root.cpio")
		cmp "$BATS_TEST_TMPDIR/sbin/drvbind" "$TOP/build/$a/drvbind"
		rm -r "$BATS_TEST_TMPDIR/sbin"
	done
}

@test "Linux 6.12 (Debian 13): the board kernels are the ones trixie's linux-image-arm64 and linux-image-armmp depend on, booted by both scenarios, the image holding the cross build" {
	on_suite trixie 6.12
	suite_kernels trixie 6.12
}

@test "Linux 6.12 (Debian 13): the AMBA RTC and GPIO controller leave their built-in drivers for none by command-line rules, the power key first, and come back by rules as arguments" {
	on_suite trixie 6.12
	dt_rtc_none trixie
	dt_rtc_back trixie
	dt_gpio trixie
	dt_keys trixie
}

@test "Linux 6.12 (Debian 13): a driver refusing the e1000 on the board's PCIe leaves it back on e1000, exit 1, failure and rollback reported" {
	on_suite trixie 6.12
	dt_refuse trixie
}

@test "Linux 6.12 (Debian 13): as PID 1 of the whole-root image it moves the AMBA devices and execs /sbin/init, which finds /proc, /sys and /dev as the kernel left them" {
	on_suite trixie 6.12
	rootfs_pid1 trixie
	rootfs_init trixie
}

# sid on the arm64 board alone: every check above reads $BOARDS, the
# boards booted (the power key is armhf's: no dt_keys here).

@test "Linux 7.2 (Debian sid): the arm64 board's kernel is the one sid's linux-image-arm64 depends on, booted by both scenarios, the image holding the cross build" {
	local BOARDS=arm64
	on_suite sid 7.2
	suite_kernels sid 7.2
}

@test "Linux 7.2 (Debian sid): on arm64 the AMBA RTC and GPIO controller leave their built-in drivers for none by command-line rules, and come back by rules as arguments" {
	local BOARDS=arm64
	on_suite sid 7.2
	dt_rtc_none sid
	dt_rtc_back sid
	dt_gpio sid
}

@test "Linux 7.2 (Debian sid): vfio-pci refusing the e1000 on the arm64 board's PCIe leaves it back on e1000, exit 1, failure and rollback reported" {
	local BOARDS=arm64
	on_suite sid 7.2
	dt_refuse sid
}

@test "Linux 7.2 (Debian sid): as PID 1 of the arm64 board's whole-root image it moves the AMBA devices and execs /sbin/init, which finds /proc, /sys and /dev as the kernel left them" {
	local BOARDS=arm64
	on_suite sid 7.2
	rootfs_pid1 sid
	rootfs_init sid
}
