#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Device-tree boards: QEMU's virt machines, arm64 (qemu-system-aarch64
# -cpu cortex-a57, Debian's linux-image-arm64) and armhf
# (qemu-system-arm, linux-image-armmp), TCG. Two boots each, one after
# the other (test/qemu/board.sh): dt runs the cross-built drvbind as an
# initramfs hook would (test/qemu/guest/dt.sh), rootfs runs it as PID 1
# of an image that is the board's whole root (guest/rootfs.sh). Reports
# as in qemu.bats, from build/board/ARCH/out/BOOT/results.

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

# on ARCH: the reports read from here on are that board's.
on() {
	board=$1
	QEMU_OUT=$TOP/build/board/$1/out
	echo "# $1"
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

@test "the AMBA RTC 9010000.pl031 leaves its built-in rtc-pl031 for none by a rule on the command line, and the RTC goes with it" {
	for a in $BOARDS; do
		on "$a"
		booted dt
		has dt before.rtc "rtc0 "
		status_is dt cmdline 0
		has dt cmdline.link "amba/9010000.pl031 none"
		has dt cmdline.override "amba/9010000.pl031 none"
		has dt cmdline.dmesg "<14>drvbind: amba/9010000.pl031: rtc-pl031 -> none"
		has dt cmdline.rtc ""
	done
}

@test "the RTC goes back from none to rtc-pl031 and registers again" {
	for a in $BOARDS; do
		on "$a"
		booted dt
		status_is dt back 0
		has dt back.link "amba/9010000.pl031 rtc-pl031"
		has dt back.stderr "drvbind: amba/9010000.pl031: none -> rtc-pl031"
		has dt back.dmesg "<6>rtc-pl031 9010000.pl031: registered as rtc1"
		has dt back.rtc "rtc1 "
	done
}

@test "a rule naming a device by its device-tree name alone, 9030000.pl061, finds it on the AMBA bus, unbinds pl061_gpio and binds it back" {
	for a in $BOARDS; do
		on "$a"
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

@test "the power key leaves its GPIO controller first, in command-line order, so the kernel has no GPIO in use to warn about" {
	on armhf
	booted dt
	has dt cmdline.dmesg "<14>drvbind: platform/gpio-keys: gpio-keys -> none"
	order=$(awk '$1 == "cmdline.dmesg" && $2 == "<14>drvbind:" { print $3 }' "$QEMU_OUT/dt/results" | tr '\n' ' ')
	is order "$order" "platform/gpio-keys: amba/9010000.pl031: amba/9030000.pl061: "
	run grep -e WARNING -e 'GPIOS STILL REQUESTED' "$QEMU_OUT/dt/results"
	echo "$output"
	[ "$status" -eq 1 ]
}

@test "a driver refusing the e1000 on the board's PCIe leaves it back on e1000, exit 1, failure and rollback reported" {
	on arm64
	booted dt
	status_is dt refuse 1
	has dt refuse.link "pci/0000:00:02.0 e1000"
	has dt refuse.override "pci/0000:00:02.0 (null)"
	# no IOMMU on this board
	has dt refuse.dmesg "<4>vfio-pci: probe of 0000:00:02.0 failed with error -22"
	has dt refuse.stderr "drvbind: pci/0000:00:02.0: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000"
	has dt refuse.stderr 'drvbind: write bus/pci/drivers/e1000/bind "0000:00:02.0"'
	on armhf
	booted dt
	status_is dt refuse 1
	has dt refuse.link "pci/0000:00:02.0 e1000"
	has dt refuse.override "pci/0000:00:02.0 (null)"
	# pcieport takes PCIe ports only: its probe answers ENODEV
	has dt refuse.stderr "drvbind: pci/0000:00:02.0: e1000 -> pcieport failed at bind: No such device; back on e1000"
	has dt refuse.stderr 'drvbind: write bus/pci/drivers/e1000/bind "0000:00:02.0"'
}

@test "as PID 1 of an image that is the whole root (rdinit=/sbin/drvbind), it moves the AMBA devices, then execs drvbind.init=/sbin/init as PID 1" {
	for a in $BOARDS; do
		on "$a"
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

@test "the board's /sbin/init finds /proc, /sys and /dev as the kernel left them, the mount table as drvbind found it" {
	for a in $BOARDS; do
		on "$a"
		booted rootfs
		as_kernel_left rootfs /sbin/init
	done
}
