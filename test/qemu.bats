#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The real-kernel tier: Debian's kernel under QEMU (TCG), a busybox
# initramfs whose /init runs drvbind and reports on the second serial
# port; drvbind comes from the prepend image concatenated in front of it.
# Twelve boots on Debian 12's kernel (test/qemu/run.sh, two at a time)
# serve every test; five of them run drvbind as PID 1, three of them as
# a follower (drvbind.follow=1: follow, lockdown and serial), and one is
# a q35 machine with an emulated IOMMU, where vfio-pci binds for real.
# The pci and the two timing boots boot again on 5.10, 6.12, 7.2 and
# 7.3, and late, follow and vfio on 7.2 and 7.3 (the kernel matrix, at
# the end).
# The guest's side is test/qemu/guest/, one script per boot.
#
# Results are lines "RUN.KEY VALUE" in build/qemu/out/BOOT/results:
#   RUN.status / RUN.ms      drvbind's exit status and run time
#   RUN.stderr / RUN.dmesg   its messages; the kernel log during the run
#                            (dmesg -r: <facility*8+level>, /dev/kmsg
#                            lines are facility user, so <11> err, <14> info)
#   RUN.link BUS/DEV DRIVER  the driver link afterwards (or none)
#   RUN.override BUS/DEV V   driver_override afterwards
#   RUN.authorized V         a USB interface's authorized afterwards
#   RUN.modprobe WHO: ARGS   who ran /sbin/modprobe (the kernel runs it too)
#   init.KEY                 what /init found when it started (pid, argv,
#                            env, premount, dirs, mount, fd, sigign)

load qemu/results

setup_file() {
	# fetches the kernel on first use, builds the initramfs, boots
	boot_all test/qemu/run.sh build/qemu
}

# has_re BOOT KEY ERE: one of KEY's lines is KEY and then all of ERE.
# Where the device's own driver probes it as it appears, drvbind may
# look before that driver has bound it or after: its outcome is said
# either way.
has_re() {
	grep -F -- "$2 " "$QEMU_OUT/$1/results" | grep -qxE -- "$2 $3" && return 0
	echo "$1: no line: $2 $3 (an ERE)"
	echo "$1: $2 lines are:"
	grep -F -- "$2 " "$QEMU_OUT/$1/results"
	return 1
}

# probe_failed SUITE DEV: the kernel's line for vfio-pci's probe of DEV
# failing with EINVAL. The driver core's words differ: 5.10 and 6.1 warn
# (<4>) in the driver's name, 6.12 and 7.x log an error (<3>) in the
# device's, as these boots' kernel logs had them.
probe_failed() {
	case $1 in
	"" | @bullseye) echo "<4>vfio-pci: probe of $2 failed with error -22" ;;
	*) echo "<3>vfio-pci $2: probe with driver vfio-pci failed with error -22" ;;
	esac
}

# unauthorized BOOT: usb-storage's line in BOOT's kernel log when it may
# not probe the stick's interface (authorized 0): an error (<3>) up to
# 6.12, information (<6>) on 7.2 and 7.3, as these boots' logs had it.
unauthorized() {
	local level=3
	case $1 in
	*@sid | *@trixie-backports) level=6 ;;
	esac
	echo "<$level>usb-storage 2-1:1.0: Interface 0 is not authorized for usage"
}

@test "the kernel is the one linux-image-amd64 depends on, unpacked once into build/qemu and reused" {
	pkg=$(apt-cache depends linux-image-amd64 | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	is kver "linux-image-$(cat "$TOP/build/qemu/kver")" "$pkg"
	kver=$(cat "$TOP/build/qemu/kver")
	[ -f "$TOP/build/qemu/kernel/boot/vmlinuz-$kver" ]
	[ -f "$TOP/build/qemu/kernel/lib/modules/$kver/modules.dep" ]
	# a second call finds the cache and downloads nothing
	run sh "$TOP/test/qemu/kernel.sh" "$TOP/build/qemu"
	[ "$status" -eq 0 ]
	is cache "$output" "$TOP/build/qemu/kernel $kver"
}

# The pci boot's checks, each on the boot pci$1: $1 is "" for Debian 12's
# kernel, @SUITE for another (the kernel matrix, at the end).

pciboot_move() {
	local b=pci$1
	booted "$b"
	status_is "$b" cmdline 0
	has "$b" cmdline.link "pci/0000:00:05.0 pci-stub"
	has "$b" cmdline.override "pci/0000:00:05.0 pci-stub"
	has "$b" cmdline.dmesg "<14>drvbind: pci/0000:00:05.0: e1000 -> pci-stub"
	has "$b" cmdline.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
}

@test "e1000 at 0000:00:05.0 moves to pci-stub through driver_override, by a rule on the real command line" {
	pciboot_move ""
}

pciboot_none() {
	local b=pci$1
	booted "$b"
	status_is "$b" cmdline 0
	has "$b" cmdline.link "pci/0000:00:06.0 none"
	has "$b" cmdline.override "pci/0000:00:06.0 none"
	has "$b" cmdline.dmesg "<14>drvbind: pci/0000:00:06.0: e1000 -> none"
}

@test "the rule none leaves e1000 at 0000:00:06.0 without a driver, kept so by driver_override" {
	pciboot_none ""
}

pciboot_already() {
	local b=pci$1
	booted "$b"
	status_is "$b" cmdline 0
	has "$b" cmdline.link "pci/0000:00:07.0 e1000"
	has "$b" cmdline.override "pci/0000:00:07.0 (null)"
	has "$b" cmdline.dmesg "<14>drvbind: pci/0000:00:07.0: already on e1000"
	# nothing was unbound: no second "eth" line for 00:07.0 in the log
	! grep -q '^cmdline\.dmesg .*e1000 0000:00:07.0' "$QEMU_OUT/$b/results"
}

@test "a device already on the wanted driver is left alone and reported as such" {
	pciboot_already ""
}

pciboot_usbnone() {
	local b=pci$1
	booted "$b"
	status_is "$b" usbnone 0
	has "$b" usbnone.link "usb/2-1:1.0 none"
	has "$b" usbnone.dmesg "<14>drvbind: usb/2-1:1.0: usb-storage -> none"
	# the command-line rules, settled before, are only confirmed
	has "$b" usbnone.dmesg "<14>drvbind: pci/0000:00:05.0: already on pci-stub"
}

@test "the usb-storage stick's interface 2-1:1.0 is unbound by the rule none" {
	pciboot_usbnone ""
}

pciboot_usbback() {
	local b=pci$1
	booted "$b"
	status_is "$b" usbback 0
	has "$b" usbback.link "usb/2-1:1.0 usb-storage"
	has "$b" usbback.dmesg "<14>drvbind: usb/2-1:1.0: none -> usb-storage"
	has "$b" usbback.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
}

@test "the interface 2-1:1.0 goes back from no driver to usb-storage" {
	pciboot_usbback ""
}

pciboot_vfio() {
	local b=pci$1 err="Invalid argument"
	# 5.10's bind answers ENODEV for every probe that failed (6.1 passes
	# the probe's own error on)
	[[ $1 != @bullseye ]] || err="No such device"
	booted "$b"
	status_is "$b" vfio 1
	has "$b" vfio.link "pci/0000:00:08.0 e1000"
	has "$b" vfio.override "pci/0000:00:08.0 (null)"
	has "$b" vfio.dmesg "$(probe_failed "$1" 0000:00:08.0)"
	has "$b" vfio.dmesg "<11>drvbind: pci/0000:00:08.0: e1000 -> vfio-pci failed at bind: $err; back on e1000"
	# the override was cleared before e1000 was asked again
	has "$b" vfio.stderr 'drvbind: write bus/pci/devices/0000:00:08.0/driver_override "\x0a"'
	has "$b" vfio.stderr 'drvbind: write bus/pci/drivers/e1000/bind "0000:00:08.0"'
}

@test "vfio-pci refusing e1000 without an IOMMU (EINVAL) leaves it back on e1000, exit 1, failure and rollback logged" {
	pciboot_vfio ""
}

pciboot_uas() {
	local b=pci$1
	booted "$b"
	status_is "$b" uas 1
	has "$b" uas.link "usb/2-1:1.0 usb-storage"
	has "$b" uas.dmesg "<11>drvbind: usb/2-1:1.0: usb-storage -> uas failed at bind: No such device after new_id \"46f4 0001 08\"; back on usb-storage"
	# QEMU's stick is 46f4:0001, interface class 08 (mass storage)
	has "$b" uas.stderr 'drvbind: write bus/usb/drivers/uas/new_id "46f4 0001 08"'
	has "$b" uas.stderr 'drvbind: write bus/usb/drivers/uas/remove_id "46f4 0001 08"'
}

@test "uas refusing a bulk-only stick (ENODEV) is tried through new_id, then the stick is back on usb-storage, exit 1" {
	pciboot_uas ""
}

@test "a missing device costs the 3 s timeout and exit 1, while the present device is moved at once" {
	booted missing
	status_is missing missing 1
	within run "$(val missing missing.ms)" 2900 9000
	# the present device was moved seconds before the deadline
	moved=$(awk '$1 == "missing.logged" && $3 == "pci/0000:00:05.0:" { print $2 }' "$QEMU_OUT/missing/results")
	lost=$(awk '$1 == "missing.logged" && $3 == "0000:00:1f.0:" { print $2 }' "$QEMU_OUT/missing/results")
	within "moved before the deadline by" $((10#$lost - 10#$moved)) 2000 9000
	has missing missing.link "pci/0000:00:05.0 pci-stub"
	has missing missing.dmesg "<14>drvbind: pci/0000:00:05.0: e1000 -> pci-stub"
	has missing missing.dmesg "<11>drvbind: 0000:00:1f.0: device not found (waited 3 s)"
}

@test "a PCI device added while drvbind waits, which bind refuses until the bus has finished adding it, ends on pci-stub" {
	booted missing
	status_is missing rescan 0
	has missing rescan.link "pci/0000:00:05.0 pci-stub"
	has missing rescan.stderr "drvbind: pci/0000:00:05.0: none -> pci-stub"
}

@test "malformed and hostile rules on the real command line are refused by name, touch nothing, and the good rule applies" {
	booted malformed
	status_is malformed malformed 1
	has malformed malformed.link "pci/0000:00:05.0 e1000"
	has malformed malformed.override "pci/0000:00:05.0 (null)"
	has malformed malformed.link "pci/0000:00:06.0 pci-stub"
	has malformed malformed.dmesg "<14>drvbind: pci/0000:00:06.0: e1000 -> pci-stub"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"e1000\": no ':' before the driver"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"0000:00:05.0:\": empty driver"
	has malformed malformed.dmesg "<11>drvbind: bad rule \":pci-stub\": empty device"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"../0000:00:05.0:pci-stub\": '..' in bus"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"0000:00:05.0:../../module/e1000\": '..' in driver"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"0000:00:05.0:e1000\\x1b[2J\": control character in driver"
	has malformed malformed.dmesg "<11>drvbind: bad \"drvbind.timeout\"=\"soon\": not a whole number of seconds"
	grep -q '^malformed\.dmesg <11>drvbind: bad rule "0000:00:05.0:xxxx.*"\.\.\.: too long a driver$' \
		"$QEMU_OUT/malformed/results"
	# the escape sequence never reaches the log raw
	! grep -E '^malformed\.(dmesg|stderr) ' "$QEMU_OUT/malformed/results" | grep -q $'\033'
}

# The late boot's checks (test/qemu/guest/late.sh), each on the boot
# late$1: $1 is "" for Debian 12's kernel, @SUITE for another (the
# kernel matrix, at the end).

late_driver() {
	local b=late$1
	booted "$b"
	status_is "$b" late 0
	# e1000 was loaded after a second and did not take the held device
	has "$b" held.link "pci/0000:00:05.0 none"
	has "$b" held.override "pci/0000:00:05.0 pci-stub"
	has "$b" late.link "pci/0000:00:05.0 pci-stub"
	has "$b" late.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
	is "modprobe requests" "$(count "$b" late.modprobe "drvbind: modprobe -q -- pci-stub")" 1
}

@test "a late driver: pci-stub loaded 3 s later is asked for once, e1000 is kept away meanwhile, and the device gets pci-stub" {
	late_driver ""
}

late_device() {
	local b=late$1 xhci end
	booted "$b"
	status_is "$b" late 0
	has "$b" late.link "usb/2-1:1.0 none"
	has "$b" late.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
	# authorized 0, written as usb-storage probes, waits for the probe
	# and then unbinds it: which drvbind saw first decides the words
	has_re "$b" late.dmesg "<14>drvbind: usb/2-1:1\.0: (usb-storage -> none|unbound; held by authorized 0)"
	# done soon after the host controller came (timeout is 30 s)
	xhci=$(val "$b" late.xhci_ms) end=$(val "$b" late.ms)
	# waiting on for the deadline would take 20 s more
	within "exit after xhci load" $((end - xhci)) 0 10000
}

@test "a late device: the interface appearing while drvbind waits ends up unbound although usb-storage probes it, and drvbind exits at once" {
	late_device ""
}

late_expire() {
	local b=late$1
	booted "$b"
	status_is "$b" expire 1
	# not before its -t 4; the default 10 s would be 10000 and more
	within run "$(val "$b" expire.ms)" 3900 9500
	has "$b" held.link "pci/0000:00:07.0 none"
	has "$b" held.override "pci/0000:00:07.0 vfio-pci"
	has "$b" expire.link "pci/0000:00:07.0 e1000"
	has "$b" expire.override "pci/0000:00:07.0 (null)"
	has "$b" expire.stderr "drvbind: pci/0000:00:07.0: driver vfio-pci not found; now on e1000 (waited 4 s)"
}

@test "a driver that never comes: at the deadline the held device is released to its native driver" {
	late_expire ""
}

late_bg() {
	local b=late$1
	booted "$b"
	status_is "$b" bg 0
	# the parent would otherwise wait for pci-stub, which the guest loads
	# only after it returned: until the -t 30 deadline
	within "-b returned after" "$(val "$b" bg.ms)" 0 15000
	has "$b" bg.stderr "drvbind: waiting in the background for 1 rule(s)"
	has "$b" held.link "pci/0000:00:06.0 none"
	has "$b" held.override "pci/0000:00:06.0 pci-stub"
	has "$b" bg.child gone
	has "$b" bg.stderr "drvbind: pci/0000:00:06.0: none -> pci-stub"
	has "$b" bg.link "pci/0000:00:06.0 pci-stub"
}

@test "-b returns at once and its background child binds the held device when pci-stub registers" {
	late_bg ""
}

late_pair() {
	local b=late$1
	booted "$b"
	status_is "$b" pair 0
	# not before pci-stub (3 s in); exit 0 says before the -t 10 deadline
	within run "$(val "$b" pair.ms)" 2500 20000
	has "$b" held.link "pci/0000:00:0a.0 none"
	has "$b" held.link "pci/0000:00:0b.0 none"
	has "$b" pair.link "pci/0000:00:0a.0 pci-stub"
	has "$b" pair.link "pci/0000:00:0b.0 pci-stub"
	has "$b" pair.stderr "drvbind: pci/0000:00:0a.0: none -> pci-stub"
	has "$b" pair.stderr "drvbind: pci/0000:00:0b.0: none -> pci-stub"
}

@test "two functions held for one late driver, as a GPU and its audio function for vfio-pci, both end on it" {
	late_pair ""
}

# When the native driver comes (test/qemu/guest/pcitiming.sh and
# usbtiming.sh, one boot each): e1000 for the e1000s, usb-storage for the
# stick's interface 2-1:1.0; loaded before drvbind starts, while it waits
# with the device present (1 s in), or before a device that appears
# while drvbind waits (1 s in: a PCI rescan after a remove; the USB
# device's authorized 0, then 1, which makes its interfaces anew). Each
# with `none` and with a move: to pci-stub, and to usb-storage itself
# (registered meanwhile, already bound, or probing the new interface).
# Every rule comes through a config file, so its outcome is logged as at
# boot. After each none case the native driver is loaded once more,
# drvbind gone (RUN.reload.*): it must not take the device. Each case is
# one function of the suite ("" for 6.1's boots, "@SUITE" for the
# kernel matrix's), the checks it shares with the others in
# timing_case, pci_none, pci_move, usb_none and usb_move.

# timing_case BOOT RUN DEV BEFORE SAID: the case RUN of a timing boot ran
# to its end, drvbind exited 0, DEV (BUS/ID) was on BEFORE (a driver,
# none, or absent) when drvbind started, and drvbind said SAID of it, an
# ERE (where the kernel decides whether drvbind looks before or after
# the native probe, either message, never either outcome)
timing_case() {
	booted "$1"
	status_is "$1" "$2" 0
	has "$1" "$2.before.link" "$3 $4"
	has_re "$1" "$2.dmesg" "<14>drvbind: ${3//./\\.}: ($5)"
}

# pci_none BOOT RUN ID BEFORE SAID: timing_case of the none case RUN on
# the e1000 ID, which ends unbound, held by driver_override none, and
# which e1000 loaded again after drvbind exited does not take
pci_none() {
	timing_case "$1" "$2" "pci/$3" "$4" "$5"
	has "$1" "$2.link" "pci/$3 none"
	has "$1" "$2.override" "pci/$3 none"
	has "$1" "$2.reload.link" "pci/$3 none"
}

# pci_move BOOT RUN ID BEFORE SAID: timing_case of the move RUN of the
# e1000 ID to pci-stub, which claims it and holds it, driver_override
# kept on pci-stub
pci_move() {
	timing_case "$1" "$2" "pci/$3" "$4" "$5"
	has "$1" "$2.dmesg" "<6>pci-stub $3: claimed by stub"
	has "$1" "$2.link" "pci/$3 pci-stub"
	has "$1" "$2.override" "pci/$3 pci-stub"
}

# usb_none BOOT RUN BEFORE SAID: timing_case of the none case RUN on the
# stick's interface, which ends unbound with authorized 0; usb-storage
# loaded again after drvbind exited is refused it, and it stays so
usb_none() {
	timing_case "$1" "$2" usb/2-1:1.0 "$3" "$4"
	has "$1" "$2.link" "usb/2-1:1.0 none"
	has "$1" "$2.authorized" 0
	has "$1" "$2.reload.dmesg" "$(unauthorized "$1")"
	has "$1" "$2.reload.link" "usb/2-1:1.0 none"
	has "$1" "$2.reload.authorized" 0
}

# usb_move BOOT RUN BEFORE SAID: timing_case of the move RUN of the
# stick's interface to usb-storage, which ends there, authorized
usb_move() {
	timing_case "$1" "$2" usb/2-1:1.0 "$3" "$4"
	has "$1" "$2.link" "usb/2-1:1.0 usb-storage"
	has "$1" "$2.authorized" 1
}

# The PCI cases: the e1000, the driver it had as drvbind started, what
# drvbind said of it.
pci_none_while() { pci_none "pcitiming$1" nonewhile 0000:00:05.0 none "unbound; held by driver_override none"; }
pci_move_while() { pci_move "pcitiming$1" movewhile 0000:00:06.0 none "none -> pci-stub"; }
pci_none_before() { pci_none "pcitiming$1" nonebefore 0000:00:07.0 e1000 "e1000 -> none"; }
pci_move_before() { pci_move "pcitiming$1" movebefore 0000:00:08.0 e1000 "e1000 -> pci-stub"; }

pci_none_after() {
	# an override written while e1000 probes the new device waits for
	# that probe (the device lock) and does not undo it: the device
	# must still end unbound
	pci_none "pcitiming$1" noneafter 0000:00:0a.0 absent "unbound; held by driver_override none|e1000 -> none"
	# the rescan was 1 s in; the -t 6 deadline would be 6000 and more
	within run "$(val "pcitiming$1" noneafter.ms)" 900 5000
}

pci_move_after() {
	pci_move "pcitiming$1" moveafter 0000:00:0b.0 absent "(none|e1000) -> pci-stub"
	within run "$(val "pcitiming$1" moveafter.ms)" 900 5000
}

@test "pci, none, e1000 loaded while drvbind waits: the unbound device is held by driver_override none at once, and e1000 never takes it" {
	pci_none_while ""
}

@test "pci, move, e1000 loaded while drvbind waits: the unbound device goes to pci-stub at once, before e1000 comes" {
	pci_move_while ""
}

@test "pci, none, e1000 bound before drvbind starts: unbound, and e1000 loaded again later does not take it back" {
	pci_none_before ""
}

@test "pci, move, e1000 bound before drvbind starts: e1000 -> pci-stub" {
	pci_move_before ""
}

@test "pci, none, the device rescanned in while drvbind waits, e1000 loaded: it ends unbound, drvbind exits once it came" {
	pci_none_after ""
}

@test "pci, move, the device rescanned in while drvbind waits, e1000 loaded: it ends on pci-stub, drvbind exits once it came" {
	pci_move_after ""
}

# The USB cases: the driver the interface had as drvbind started, what
# drvbind said of it, and what else each case shows.

usb_move_while() {
	local b=usbtiming$1
	usb_move "$b" movewhile none "none -> usb-storage"
	# asked for once; the guest loads it 1 s in
	is "modprobe requests" "$(count "$b" movewhile.modprobe "drvbind: modprobe -q -- usb-storage")" 1
	has "$b" movewhile.stderr 'drvbind: write bus/usb/devices/2-1:1.0/authorized "0"'
	# usb-storage's registration found the interface held
	has "$b" movewhile.dmesg "$(unauthorized "$b")"
	has "$b" movewhile.stderr 'drvbind: write bus/usb/devices/2-1:1.0/authorized "1"'
	has "$b" movewhile.stderr 'drvbind: write bus/usb/drivers/usb-storage/bind "2-1:1.0"'
	has "$b" movewhile.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
}

usb_none_while() {
	# usb-storage out and in again, drvbind gone: still refused
	usb_none "usbtiming$1" nonewhile none "unbound; held by authorized 0"
	has "usbtiming$1" nonewhile.dmesg "$(unauthorized "usbtiming$1")"
}

usb_move_before() {
	usb_move "usbtiming$1" movebefore usb-storage "already on usb-storage"
	! grep -q '^movebefore\.stderr drvbind: write ' "$QEMU_OUT/usbtiming$1/results"
}

usb_none_before() {
	usb_none "usbtiming$1" nonebefore usb-storage "usb-storage -> none"
	has "usbtiming$1" nonebefore.stderr 'drvbind: write bus/usb/devices/2-1:1.0/authorized "0"'
}

usb_none_after() {
	usb_none "usbtiming$1" noneafter absent "usb-storage -> none|unbound; held by authorized 0"
	has "usbtiming$1" noneafter.dmesg "<6>usb 2-1: authorized to connect"
	# the interface came 1 s in; the -t 8 deadline would be 8000 and more
	within run "$(val "usbtiming$1" noneafter.ms)" 900 6000
}

usb_move_after() {
	local new_id=
	# 5.10's bind says ENODEV, not EBUSY, while usb-storage probes the
	# interface: drvbind then teaches usb-storage the id it already had
	[[ $1 != @bullseye ]] || new_id='( \(new_id "46f4 0001 08"\))?'
	usb_move "usbtiming$1" moveafter absent "none -> usb-storage$new_id|already on usb-storage"
	within run "$(val "usbtiming$1" moveafter.ms)" 900 6000
}

@test "usb, move to usb-storage registering while drvbind waits: the interface is held with authorized 0 (its probe refused), then authorized and bound" {
	usb_move_while ""
}

@test "usb, none, usb-storage loaded while drvbind waits: authorized 0 keeps it from the interface, then and after drvbind exited" {
	usb_none_while ""
}

@test "usb, move to usb-storage, bound before drvbind starts: already on usb-storage, nothing written" {
	usb_move_before ""
}

@test "usb, none, usb-storage bound before drvbind starts: authorized 0 unbinds it, and usb-storage loaded again after drvbind exited does not take it back" {
	usb_none_before ""
}

@test "usb, none, the interface made anew while drvbind waits and probed by usb-storage: it ends unbound and stays so after drvbind exited" {
	usb_none_after ""
}

@test "usb, move to usb-storage, the interface made anew while drvbind waits and probed by usb-storage: it ends on usb-storage" {
	usb_move_after ""
}

# The PID 1 boots (test/qemu/guest/pid1.sh, myinit.sh): the kernel runs
# drvbind from the prepend image (build/drvbind.cpio, make initramfs)
# concatenated in front of the test image, which has no drvbind of its
# own; drvbind then execs the test image's init, which reports what it
# was handed (init.* lines) before it touches anything.

@test "the prepend image goes in front of another initramfs: the kernel runs /sbin/drvbind from it as PID 1, then that image's /init" {
	# drvbind is in the prepend image only
	cpio -it <"$TOP/build/drvbind.cpio" 2>/dev/null | grep -qx sbin/drvbind
	! cpio -it <"$TOP/build/qemu/test.cpio" 2>/dev/null | grep -q drvbind
	booted pid1
	has pid1 pid1.dmesg "<6>Run /sbin/drvbind as init process"
	has pid1 init.pid 1
	has pid1 init.argv "/init arg1 arg2"
}

@test "as PID 1 it moves devices of built-in drivers (pnp 00:05 off rtc_cmos, serio0 off atkbd) before the next init starts" {
	booted pid1
	has pid1 pid1.before.link "pnp/00:05 none"
	has pid1 pid1.before.link "serio/serio0 none"
	has pid1 pid1.dmesg "<14>drvbind: pnp/00:05: rtc_cmos -> none"
	has pid1 pid1.dmesg "<14>drvbind: serio/serio0: atkbd -> none"
	has pid1 pid1.after.link "pnp/00:05 none"
	has pid1 pid1.after.link "serio/serio0 none"
	# without a rule for it, 00:05 keeps rtc_cmos
	booted myinit
	has myinit myinit.link "pnp/00:05 rtc_cmos"
	has myinit myinit.link "serio/serio0 none"
}

@test "a missing drvbind.init= falls to /init, run as PID 1 with the arguments after -- and the kernel's environment, signals as the kernel left them" {
	booted pid1
	# why the named init did not run, in the kernel log before the fallback
	has pid1 pid1.dmesg "<11>drvbind: drvbind.init=/nonexistent: No such file or directory; trying the next init"
	has pid1 init.pid 1
	has pid1 init.argv "/init arg1 arg2"
	# unknown key=value parameters, the last drvbind= winning
	has pid1 init.env "foo=bar"
	has pid1 init.env "drvbind=0000:00:05.0:pci-stub"
	has pid1 init.env "HOME=/"
	has pid1 init.env "TERM=linux"
	# ignored signals as when the kernel runs /init itself (pci boot)
	is "ignored signals" "$(val pid1 init.sigign)" "$(val pci init.sigign)"
}

@test "drvbind.init=/sbin/myinit runs that init as PID 1, argv[0] its path and no arguments" {
	booted myinit
	has myinit init.pid 1
	has myinit init.argv "/sbin/myinit"
	has myinit init.env "drvbind=serio0:none"
	is "ignored signals" "$(val myinit init.sigign)" "$(val pci init.sigign)"
}

@test "the next init finds /proc, /sys and /dev as the kernel left them, and inherits none of drvbind's descriptors" {
	booted pid1
	# drvbind mounted proc, sysfs and devtmpfs and detached them all again
	as_kernel_left pid1 /init
	# an image with its own static /dev/null: that one is left as it was
	booted myinit
	has myinit init.premount /dev/null
	has myinit init.dirs "/proc: /sys: /dev:console,null,"
	is mounts "$(awk '$1 == "init.mount" { printf "%s %s %s;", $2, $3, $4 }' "$QEMU_OUT/myinit/results")" \
		"rootfs / rootfs;proc /proc proc;"
}

@test "a rule whose driver the next init loads: the device is held against e1000 meanwhile and the background child binds it to pci-stub" {
	booted pid1
	# the child was waiting when the init started, the device held
	[[ -n $(val pid1 pid1.child) ]] || { echo "no drvbind child running when /init started"; false; }
	has pid1 pid1.before.link "pci/0000:00:05.0 none"
	has pid1 pid1.before.override "pci/0000:00:05.0 pci-stub"
	# with the none rules of pnp 00:05 and serio0, which it watches: on
	# those buses nothing keeps a driver away
	has pid1 pid1.dmesg "<14>drvbind: waiting in the background for 3 rule(s)"
	# e1000 loaded by the init did not take it
	has pid1 pid1.held.link "pci/0000:00:05.0 none"
	# pci-stub loaded by the init: the child bound the device, and
	# watches on until its 30 s deadline
	has pid1 pid1.after.link "pci/0000:00:05.0 pci-stub"
	has pid1 pid1.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
	has pid1 pid1.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
	[[ -n $(val pid1 pid1.child_after) ]] || { echo "the child stopped watching before its deadline"; false; }
	# asked for once (by PID 1, before /proc was the init's: who is '?')
	is "modprobe requests" "$(grep -c ': modprobe -q -- pci-stub$' "$QEMU_OUT/pid1/results")" 1
}

@test "none on a bus without driver_override (pnp): the background child watches 00:05 and unbinds rtc_cmos when it probes the device again" {
	booted pid1
	has pid1 pid1.after.link "pnp/00:05 none"
	[[ -n $(val pid1 pid1.child_after) ]] || { echo "no drvbind child watching"; false; }
	# the init wrote 00:05 to the bus's drivers_probe: rtc_cmos bound it
	has pid1 pid1.dmesg "<14>drvbind: pnp/00:05: rtc_cmos bound it; unbound again"
	has pid1 pid1.watch.link "pnp/00:05 none"
}

@test "as PID 1 in an image with a static /dev/null but no /dev/kmsg, drvbind still writes its lines to the kernel log" {
	booted myinit
	has myinit myinit.link "serio/serio0 none"
	has myinit myinit.dmesg "<14>drvbind: serio/serio0: atkbd -> none"
}

@test "as PID 1 under a hostile command line and a bind the kernel refuses, drvbind reports each, rolls back, and the next init still runs" {
	# panic=-1: had PID 1 exited, the kernel would have panicked and the
	# machine ended before this init reported anything
	booted myinit
	has myinit init.pid 1
	has myinit init.argv "/sbin/myinit"
	grep -q '^myinit\.dmesg <11>drvbind: bad "drvbind\.init"="/p\{79\}"\.\.\.: path too long$' \
		"$QEMU_OUT/myinit/results"
	has myinit myinit.dmesg "<11>drvbind: bad rule \"../../../../dev/sda:x\": '..' in bus"
	has myinit myinit.dmesg "<11>drvbind: bad rule \"serio0:/sbin/init\": '/' in driver"
	has myinit myinit.dmesg "<11>drvbind: bad \"drvbind.timeout\"=\"99999999999999999999\": more than a day"
	# the 8250 PnP driver does not match the RTC: ENODEV, back on rtc_cmos
	has myinit myinit.dmesg "<11>drvbind: pnp/00:05: rtc_cmos -> serial failed at bind: No such device; back on rtc_cmos"
	has myinit myinit.link "pnp/00:05 rtc_cmos"
	# the good rule beside them applied
	has myinit myinit.dmesg "<14>drvbind: serio/serio0: atkbd -> none"
	has myinit myinit.link "serio/serio0 none"
}

# The follow boot (test/qemu/guest/follow.sh): drvbind as PID 1 with
# drvbind.follow=1 and the rules 0000:00:05.0:pci-stub and 2-1:1.0:none,
# every driver a module the next init loads. Its background child follows
# both rules while that init replugs and reloads, one step after another;
# QEMU's own unplug and plug of the stick are made by test/qemu/monitor.sh
# on the host, when the guest asks. Each step's report is STEP.* (its
# kernel log STEP.dmesg), taken once the follower has read every uevent.
# Where the follower and a native driver race for a new device, which of
# them came first decides drvbind's words, not the outcome.

# Each check below takes the suite as the pci boot's do: its boot is
# follow$1 ("" for Debian 12's kernel, @SUITE for another).

# follow_said BOOT STEP: drvbind's kernel-log lines of the step, after
# "drvbind: "
follow_said() {
	sed -n "s/^$2\.dmesg <[0-9]*>drvbind: //p" "$QEMU_OUT/$1/results"
}

# follower_ok BOOT STEP PRIOS: nothing drvbind said in the step failed,
# nor has a priority PRIOS matches (an ERE of the numbers in <N>), and
# the follower is the one PID 1 left
follower_ok() {
	local bad
	bad=$(grep -E "^$2\.dmesg <($3)>drvbind: |^$2\.dmesg .*drvbind: .*failed at" "$QEMU_OUT/$1/results") || :
	[[ -z $bad ]] || { echo "$2: drvbind said:"; echo "$bad"; return 1; }
	is "the follower at $2" "$(val "$1" "$2.child")" "$(val "$1" boot.child)"
}

# follow_ok BOOT STEP: follower_ok, nothing above info
follow_ok() {
	follower_ok "$1" "$2" '8|9|1[0-3]'
}

# follow_only BOOT STEP ERE: each line drvbind said in the step is ERE
# (there may be none)
follow_only() {
	local other
	other=$(follow_said "$1" "$2" | grep -vxE -- "$3") || :
	[[ -z $other ]] && return 0
	echo "$2: drvbind also said:"
	echo "$other"
	return 1
}

follow_start() {
	local b=follow$1 pid
	booted "$b"
	has "$b" boot.dmesg "<6>Run /sbin/drvbind as init process"
	has "$b" boot.dmesg "<14>drvbind: following 2 rule(s) in the background"
	pid=$(val "$b" boot.child)
	pid=${pid%%:*}
	[[ $pid =~ ^[0-9]+$ ]] || { echo "no follower when the next init started"; false; }
	is "the follower's parent" "$(val "$b" boot.ppid)" 1
	is "the follower's session" "$(val "$b" boot.sid)" "$pid"
	follow_ok "$b" boot
	# pci-stub not loaded yet: the e1000 is held for it
	has "$b" boot.link "pci/0000:00:05.0 none"
	has "$b" boot.override "pci/0000:00:05.0 pci-stub"
	has "$b" boot.link "usb/2-1:1.0 absent"
	follow_ok "$b" start
	has "$b" start.link "pci/0000:00:05.0 pci-stub"
	has "$b" start.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
	has "$b" start.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
	has "$b" start.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	has "$b" start.link "usb/2-1:1.0 none"
	has "$b" start.authorized 0
	has_re "$b" start.dmesg "<14>drvbind: usb/2-1:1\.0: (usb-storage -> none|unbound; held by authorized 0)"
}

@test "as PID 1 with drvbind.follow=1 it leaves a follower in a session of its own, which applies both rules as the drivers and the stick come" {
	follow_start ""
}

follow_rescan() {
	local b=follow$1 kind=
	# 6.12's and 7.x's logs say what kind of function the bus found
	[[ -z $1 || $1 == @bullseye ]] || kind=" conventional PCI endpoint"
	booted "$b"
	follow_ok "$b" rescan
	has "$b" rescan.dmesg "<6>pci 0000:00:05.0: [8086:100e] type 00 class 0x020000$kind"
	# a device the rescan made has no override: this one is the follower's
	has "$b" rescan.link "pci/0000:00:05.0 pci-stub"
	has "$b" rescan.override "pci/0000:00:05.0 pci-stub"
	has "$b" rescan.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
	# held before the bus probed the new device (none), or taken from
	# e1000; on the remove, between the kernel's two releases of the
	# going device's driver, the follower may bind it once more
	follow_only "$b" rescan "pci/0000:00:05\.0: (none|e1000) -> pci-stub"
	# its last move came after the bus added the new device
	awk '/^rescan\.dmesg .*\[8086:100e\]/ { added = NR } /^rescan\.dmesg .*drvbind: / { moved = NR }
		END { exit !(added && moved > added) }' "$QEMU_OUT/$b/results" ||
		{ echo "no move of the rescanned device:"; grep '^rescan\.' "$QEMU_OUT/$b/results"; false; }
}

@test "after a PCI remove and rescan the follower puts the new e1000 device on pci-stub again, through its own driver_override" {
	follow_rescan ""
}

follow_reload() {
	local b=follow$1
	booted "$b"
	follow_ok "$b" stub
	# the bus was asked to probe the device meanwhile: nothing took it
	has "$b" stub.out.link "pci/0000:00:05.0 none"
	has "$b" stub.out.override "pci/0000:00:05.0 pci-stub"
	has "$b" stub.modprobe "drvbind: modprobe -q -- pci-stub"
	has "$b" stub.link "pci/0000:00:05.0 pci-stub"
	has "$b" stub.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
	is "drvbind's lines" "$(follow_said "$b" stub)" "pci/0000:00:05.0: none -> pci-stub"
	follow_ok "$b" native
	has "$b" native.dmesg "<6>e1000: Intel(R) PRO/1000 Network Driver"
	has "$b" native.link "pci/0000:00:05.0 pci-stub"
	is "drvbind's lines" "$(follow_said "$b" native)" ""
}

@test "pci-stub unloaded and loaded again: its override keeps the device off e1000 meanwhile, the follower sees it back on pci-stub, and an e1000 reload changes nothing" {
	follow_reload ""
}

# follow_took_back BOOT STEP: the follower said one line for the stick's
# new interface, whichever way usb-storage's probe raced its look: a look
# after the probe bound it moved it (usb-storage -> none); a look before
# found it unbound and held it, and authorized 0, written while
# usb-storage probes, waits for the probe and then unbinds it
follow_took_back() {
	follow_only "$1" "$2" "usb/2-1:1\.0: (usb-storage -> none|unbound; held by authorized 0)"
	is "drvbind's lines" "$(follow_said "$1" "$2" | wc -l)" 1
}

follow_reenum() {
	local b=follow$1
	booted "$b"
	follow_ok "$b" reenum
	has "$b" reenum.out.link "usb/2-1:1.0 absent"
	has "$b" reenum.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	# a new interface is authorized: its 0 is the follower's
	has "$b" reenum.link "usb/2-1:1.0 none"
	has "$b" reenum.authorized 0
	follow_took_back "$b" reenum
}

@test "the stick's USB device deauthorized and authorized again: the follower keeps its new interface, probed by usb-storage, unbound with authorized 0" {
	follow_reenum ""
}

follow_replug() {
	local b=follow$1
	booted "$b"
	follow_ok "$b" replug
	has "$b" replug.out.link "usb/2-1:1.0 absent"
	has_re "$b" replug.dmesg "<6>usb 2-1: USB disconnect, device number [0-9]+"
	has_re "$b" replug.dmesg "<6>usb 2-1: new SuperSpeed USB device number [0-9]+ using xhci_hcd"
	has "$b" replug.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	has "$b" replug.link "usb/2-1:1.0 none"
	has "$b" replug.authorized 0
	follow_took_back "$b" replug
	# QEMU did both: qmp_capabilities, device_del, device_add answered
	# (QMP ends its lines in \r\n)
	local qmp=$QEMU_OUT/$b/qmp.log
	is "QMP answers" "$(grep -c $'^{"return": {}}\r$' "$qmp")" 3
	grep -q '"event": "DEVICE_DELETED", "data": {"device": "stick0"' "$qmp"
	! grep -q '"error"' "$qmp" || { cat "$qmp"; false; }
}

@test "QEMU unplugs the stick and plugs it in again through its monitor: the follower keeps the new device's interface unbound with authorized 0" {
	follow_replug ""
}

follow_term() {
	local b=follow$1
	booted "$b"
	has "$b" term.state ended
	within "ended after" "$(val "$b" term.ms)" 0 1000
	# its own exit_group(0), which a death by the signal would not make
	is "exit_group calls" "$(grep '^term\.exit_group ' "$QEMU_OUT/$b/results")" "term.exit_group 0"
	is "drvbind processes after" "$(val "$b" term.child)" ""
	has "$b" term.link "pci/0000:00:05.0 pci-stub"
	has "$b" term.override "pci/0000:00:05.0 pci-stub"
	has "$b" term.link "usb/2-1:1.0 none"
	has "$b" term.authorized 0
	is "drvbind's lines" "$(follow_said "$b" term)" ""
	# and in the whole boot nothing failed
	! grep 'failed at' "$QEMU_OUT/$b/results"
}

@test "SIGTERM ends the follower with status 0 within a second, and leaves the devices as they are" {
	follow_term ""
}

# The lockdown boot (test/qemu/guest/lockdown.sh): the USB storage
# lockdown, drvbind as PID 1 with only
#   drvbind=usb/*,bInterfaceClass=08:none drvbind.follow=1
# a device set of every USB interface of class 08 (mass storage), kept
# without a driver by the follower. One qemu-xhci holds a usb-storage
# stick (its interface 2-1:1.0), a usb-tablet (1-2:1.0, on usbhid: the
# control) and QEMU's usb-hub (1-3, its interface on hub) with three more
# sticks behind it (1-3.1:1.0 to 1-3.3:1.0). The init loads the drivers,
# re-enumerates the lone stick, then the hub with everything behind it,
# reloads usb-storage, then knocks on the follower as uid 65534 with /bin/knock
# (test/fake/knock.c) on every socket it listens on, as /proc/net/unix
# names them: knock1 three times from one process, knock2 and knock3
# once each; re-enumerates the lone stick again; and last knocks as root.
# Each step's report is STEP.*, taken once the follower has read every
# uevent, with every USB interface's class, driver and authorized;
# KNOCK.out is the knock's own ("self pid PID uid UID gid GID",
# then "PLACE connected peer-pid PID peer-uid UID closed|open MS" or
# "PLACE refused ERRNO" for each connection).

# lockdown_pid: the follower PID 1 left
lockdown_pid() {
	local p
	p=$(val lockdown boot.child)
	echo "${p%%:*}"
}

# lockdown_ok STEP: follower_ok, nothing above warning
lockdown_ok() {
	follower_ok lockdown "$1" '8|9|1[01]'
}

# The mass-storage interfaces, sorted by name as the set's line has its
# members: the three behind the hub, then the lone stick's.
storage="1-3.1:1.0 1-3.2:1.0 1-3.3:1.0 2-1:1.0"

# intfs STEP KEY VALUE: the USB interfaces whose STEP.KEY line is VALUE
# (class 08, link none, authorized 0), their names on one line, sorted
intfs() {
	awk -v k="$1.$2" -v v="$3" '$1 == k && $3 == v { sub("^usb/", "", $2); printf "%s%s", s, $2; s = " " }' \
		"$QEMU_OUT/lockdown/results"
}

# locked STEP: every mass-storage interface (class 08), the lone stick's
# and the three behind the hub, without a driver and authorized 0, and
# no other interface: the tablet's on usbhid, the hubs' on hub
locked() {
	has lockdown "$1.stick" 2-1:1.0
	has lockdown "$1.tablet" 1-2:1.0
	has lockdown "$1.hub" 1-3
	is "the sticks behind the hub" "$(sed -n "s/^$1\.hubstick //p" "$QEMU_OUT/lockdown/results" | paste -sd ' ' -)" \
		"1-3.1:1.0 1-3.2:1.0 1-3.3:1.0"
	is "mass-storage interfaces" "$(intfs "$1" class 08)" "$storage"
	is "interfaces without a driver" "$(intfs "$1" link none)" "$storage"
	is "interfaces not authorized" "$(intfs "$1" authorized 0)" "$storage"
	is "every interface's driver" "$(sed -n "s/^$1\.link //p" "$QEMU_OUT/lockdown/results" | tr '\n' ';')" \
		"usb/1-0:1.0 hub;usb/1-2:1.0 usbhid;usb/1-3.1:1.0 none;usb/1-3.2:1.0 none;usb/1-3.3:1.0 none;usb/1-3:1.0 hub;usb/2-0:1.0 hub;usb/2-1:1.0 none;"
}

# set_line: the set's one line for all four members
set_line="usb/*,bInterfaceClass=08: $storage on none"

# set_once STEP: drvbind said one line in the step, the set's, naming
# all four members (one of them was held anew)
set_once() {
	is "drvbind's lines" "$(follow_said lockdown "$1")" "$set_line"
}

# set_grew STEP: drvbind's lines of the step are the set's alone, one
# each time members were held anew, each naming every member there then
# (sorted), more of them than the line before; the last names all four.
# How many lines there are depends on how the sticks' arrivals fell
# between the follower's looks.
set_grew() {
	follow_only lockdown "$1" 'usb/\*,bInterfaceClass=08:( 1-3\.1:1\.0)?( 1-3\.2:1\.0)?( 1-3\.3:1\.0)?( 2-1:1\.0)? on none'
	follow_said lockdown "$1" | awk 'NF <= n { print "not more members than the line before: " $0; bad = 1 } { n = NF } END { exit bad }'
	is "the set's last line" "$(follow_said lockdown "$1" | tail -n 1)" "$set_line"
}

# knocker N: the pid of the process knockN
knocker() {
	val lockdown "knock$1.out self pid" | awk '{ print $1 }'
}

@test "drvbind=usb/*,bInterfaceClass=08:none with drvbind.follow=1 as PID 1 keeps every mass-storage interface without a driver as it appears, the stick's and the three behind a hub, and leaves the tablet on usbhid" {
	booted lockdown
	has lockdown boot.cmdline "console=ttyS0 panic=-1 scenario=lockdown rdinit=/sbin/drvbind drvbind.follow=1 drvbind=usb/*,bInterfaceClass=08:none"
	has lockdown boot.dmesg "<6>Run /sbin/drvbind as init process"
	has lockdown boot.dmesg "<14>drvbind: following 1 rule(s) in the background"
	[[ $(lockdown_pid) =~ ^[0-9]+$ ]] || { echo "no follower when the next init started"; false; }
	# no USB at all when drvbind started: the set waited for its devices
	has lockdown boot.stick absent
	lockdown_ok start
	locked start
	# usb-storage probed each as it came: the 0s are the follower's
	has_all lockdown <<-'EOF'
	start.dmesg <6>usb-storage 2-1:1.0: USB Mass Storage device detected
	start.dmesg <6>usb-storage 1-3.1:1.0: USB Mass Storage device detected
	start.dmesg <6>usb-storage 1-3.2:1.0: USB Mass Storage device detected
	start.dmesg <6>usb-storage 1-3.3:1.0: USB Mass Storage device detected
	EOF
	# the set's one rule: one line each time it held members anew
	set_grew start
}

@test "drvbind -l usb on the real kernel lists each of the four mass-storage interfaces as held by the set's rule, the hub and the tablet as they are" {
	booted lockdown
	is "drvbind -l usb" "$(sed -n 's/^start\.list //p' "$QEMU_OUT/lockdown/results")" "$(cat <<-'EOF'
	usb/1-0:1.0 hub bInterfaceClass=09
	usb/1-2 usb idVendor=0627 idProduct=0001 serial=28754-0000:00:09.0-2
	usb/1-2:1.0 usbhid bInterfaceClass=03
	usb/1-3 usb idVendor=0409 idProduct=55aa serial=314159-0000:00:09.0-3
	usb/1-3.1 usb idVendor=46f4 idProduct=0001 serial=1-0000:00:09.0-3.1
	usb/1-3.1:1.0 none bInterfaceClass=08 authorized=0 rule=none held
	usb/1-3.2 usb idVendor=46f4 idProduct=0001 serial=1-0000:00:09.0-3.2
	usb/1-3.2:1.0 none bInterfaceClass=08 authorized=0 rule=none held
	usb/1-3.3 usb idVendor=46f4 idProduct=0001 serial=1-0000:00:09.0-3.3
	usb/1-3.3:1.0 none bInterfaceClass=08 authorized=0 rule=none held
	usb/1-3:1.0 hub bInterfaceClass=09
	usb/2-0:1.0 hub bInterfaceClass=09
	usb/2-1 usb idVendor=46f4 idProduct=0001 serial=1-0000:00:09.0-1
	usb/2-1:1.0 none bInterfaceClass=08 authorized=0 rule=none held
	usb/usb1 usb idVendor=1d6b idProduct=0002 serial=0000:00:09.0
	usb/usb2 usb idVendor=1d6b idProduct=0003 serial=0000:00:09.0
	EOF
	)"
}

@test "the stick re-enumerated (authorized 0, then 1): usb-storage probes its new interface and the follower takes it away again, authorized 0" {
	booted lockdown
	lockdown_ok reenum
	# a new interface is authorized, and usb-storage took it: the 0 is the follower's
	has lockdown reenum.dmesg "<6>usb 2-1: authorized to connect"
	has lockdown reenum.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	locked reenum
	set_once reenum
}

@test "the hub re-enumerated (authorized 0, then 1): its three sticks come back anew, usb-storage probes each, and the follower takes each away again, authorized 0" {
	booted lockdown
	lockdown_ok hub
	# everything behind the hub went, and came back as new devices
	has_all lockdown <<-'EOF'
	hub.dmesg <6>usb 1-3: authorized to connect
	hub.dmesg <6>usb-storage 1-3.1:1.0: USB Mass Storage device detected
	hub.dmesg <6>usb-storage 1-3.2:1.0: USB Mass Storage device detected
	hub.dmesg <6>usb-storage 1-3.3:1.0: USB Mass Storage device detected
	EOF
	has_re lockdown hub.dmesg "<6>usb 1-3\.1: USB disconnect, device number [0-9]+"
	has_re lockdown hub.dmesg "<6>usb 1-3\.2: USB disconnect, device number [0-9]+"
	has_re lockdown hub.dmesg "<6>usb 1-3\.3: USB disconnect, device number [0-9]+"
	locked hub
	# the lone stick stayed a member throughout: in every line
	set_grew hub
	# and -l lists the same as before
	is "drvbind -l usb after" "$(sed -n 's/^hub\.list //p' "$QEMU_OUT/lockdown/results")" \
		"$(sed -n 's/^start\.list //p' "$QEMU_OUT/lockdown/results")"
}

@test "usb-storage unloaded and loaded again gets none of the sticks back: the kernel refuses it each unauthorized interface" {
	booted lockdown
	lockdown_ok reload
	has lockdown reload.dmesg "<6>usbcore: deregistering interface driver usb-storage"
	has lockdown reload.dmesg "<6>usbcore: registered new interface driver usb-storage"
	has_all lockdown <<-'EOF'
	reload.dmesg <3>usb-storage 2-1:1.0: Interface 0 is not authorized for usage
	reload.dmesg <3>usb-storage 1-3.1:1.0: Interface 0 is not authorized for usage
	reload.dmesg <3>usb-storage 1-3.2:1.0: Interface 0 is not authorized for usage
	reload.dmesg <3>usb-storage 1-3.3:1.0: Interface 0 is not authorized for usage
	EOF
	locked reload
	is "drvbind's lines" "$(follow_said lockdown reload)" ""
}

@test "an unprivileged user who knocks on the follower's abstract name reaches it, and the follower does not end: the same pid goes on following" {
	booted lockdown
	local pid abs n
	pid=$(lockdown_pid)
	# the name as /proc/net/unix shows it to anyone
	abs=$(sed -n 's/^knock\.listen \(@.*\)$/\1/p' "$QEMU_OUT/lockdown/results")
	[[ -n $abs ]] || { echo "the follower listens on no abstract name"; false; }
	has_re lockdown knock1.out "self pid [0-9]+ uid 65534 gid 65534"
	# the kernel says who listens there: the follower itself; a
	# stranger's connection is closed at once
	has_re lockdown knock1.out "$abs connected peer-pid $pid peer-uid 0 closed [0-9]+"
	lockdown_ok knock
	locked knock
	for n in 2 3; do
		has_re lockdown "knock$n.out" "self pid [0-9]+ uid 65534 gid 65534"
		has_re lockdown "knock$n.out" "$abs connected peer-pid $pid peer-uid 0 closed [0-9]+"
	done
	# each of the five connections reached the follower; three pids
	is "abstract knocks answered" "$(grep -c "^knock[123]\.out $abs connected peer-pid $pid " "$QEMU_OUT/lockdown/results")" 5
	is "knockers" "$(for n in 1 2 3; do knocker $n; done | sort -u | wc -l)" 3
	! grep -F "drvbind: another follower takes over" <(grep '^knock\.' "$QEMU_OUT/lockdown/results")
}

@test "unprivileged knocks are logged as one warning at once, naming uid 65534 and the first knocker's pid, and the others as one count" {
	booted lockdown
	local p1 p3
	p1=$(knocker 1)
	p3=$(knocker 3)
	[[ $p1 =~ ^[0-9]+$ && $p3 =~ ^[0-9]+$ ]] || { echo "knock1, knock3: no pids"; false; }
	is "drvbind's warnings at the knocks" "$(grep -c '^knock\.dmesg <12>drvbind: ' "$QEMU_OUT/lockdown/results")" 1
	has lockdown knock.dmesg "<12>drvbind: -f: uid 65534 (pid $p1) knocked, and may not end a follower of uid 0; ignored"
	# five knocks on the abstract name, the first said: the other four in
	# one line, a minute after the first or when the follower ends
	is "counts of the knocks" "$(grep -cxE "(knock|after|root)\.dmesg <12>drvbind: -f: 4 more knock\(s\) by other users, the last by uid 65534 \(pid $p3\); ignored" \
		"$QEMU_OUT/lockdown/results")" 1
}

@test "the follower listens at @drvbind-follow and at /run/drvbind.sock, a socket file root's alone: an unprivileged connect there is refused with EACCES" {
	booted lockdown
	is "listening sockets" "$(grep '^knock\.listen ' "$QEMU_OUT/lockdown/results" | sort | tr '\n' ';')" \
		"knock.listen /run/drvbind.sock;knock.listen @drvbind-follow;"
	has_re lockdown knock.sockfile "socket [0-7]00 0"
	is "refused knocks on the path" "$(grep -c '^knock[123]\.out /run/drvbind\.sock refused EACCES$' "$QEMU_OUT/lockdown/results")" 5
	! grep -E '^knock[123]\.out /run/drvbind\.sock connected' "$QEMU_OUT/lockdown/results"
}

@test "after the knocks the same follower still locks every stick through another re-enumeration, and the tablet stays on usbhid" {
	booted lockdown
	lockdown_ok after
	has lockdown after.dmesg "<6>usb 2-1: authorized to connect"
	has lockdown after.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	locked after
	set_once after
	# no stick ever got as far as a disk
	! grep -E '^(start|reenum|hub|reload|knock|after)\.dmesg .*(Direct-Access|Attached SCSI)' "$QEMU_OUT/lockdown/results"
}

@test "a knock from root, the follower's equal, ends it with status 0 and leaves every stick locked" {
	booted lockdown
	local pid
	pid=$(lockdown_pid)
	has_re lockdown root.out "self pid [0-9]+ uid 0 gid 0"
	has_re lockdown root.out "@drvbind-follow connected peer-pid $pid peer-uid 0 closed [0-9]+"
	has lockdown root.dmesg "<14>drvbind: another follower takes over"
	has lockdown root.state ended
	within "ended after" "$(val lockdown root.ms)" 0 2000
	is "exit_group calls" "$(grep '^root\.exit_group ' "$QEMU_OUT/lockdown/results")" "root.exit_group 0"
	is "drvbind processes after" "$(val lockdown root.child)" ""
	is "sockets left listening" "$(grep -c '^root\.listen ' "$QEMU_OUT/lockdown/results")" 0
	# what it held stays held
	locked root
	# and in the whole boot nothing failed
	! grep 'failed at' "$QEMU_OUT/lockdown/results"
}

# The serial boot (test/qemu/guest/serial.sh): drvbind as PID 1 with only
#   drvbind=usb/*:*,serial=DRVBINDA*:none drvbind.follow=1 drvbind.timeout=30
# a device set of every USB interface whose USB device has a serial
# DRVBINDA...: an interface has no serial of its own, so the item is
# matched against its nearest parent's, the stick's USB device. One
# qemu-xhci holds two QEMU usb-storage sticks, alike but for their
# serials: A (DRVBINDA0001) in port 1, 2-1, and B (DRVBINDB0002) in
# port 2, 2-2. The init loads the drivers, re-enumerates both sticks
# (reenum), has QEMU unplug A and plug it into port 3, 2-3 (moved), then
# swap them: B into port 1, A into port 2 (swapped); monitor.sh makes
# QEMU's unplugs and plugs when the guest asks. Each step's report is
# STEP.*, taken once the follower has read every uevent: STEP.a and
# STEP.b each stick's interface as the guest found it by its serial,
# STEP.serial every USB device's serial, and every interface's link and
# authorized.

# sticks STEP A B: at STEP the follower is the one PID 1 left and said
# nothing above info; A, stick A's interface, is without a driver and
# authorized 0, B, stick B's, on usb-storage and authorized 1, each
# under the USB device with its serial; no other interface lost its
# driver (the root hubs' stay on hub); and drvbind's one line of the
# step is the set's, naming A alone
sticks() {
	local s=$1 a=$2 b=$3 r=$QEMU_OUT/serial/results
	booted serial
	follow_ok serial "$s"
	has serial "$s.a" "$a"
	has serial "$s.serial" "usb/${a%:*} DRVBINDA0001"
	has serial "$s.link" "usb/$a none"
	has serial "$s.authorized" "usb/$a 0"
	has serial "$s.b" "$b"
	has serial "$s.serial" "usb/${b%:*} DRVBINDB0002"
	has serial "$s.link" "usb/$b usb-storage"
	has serial "$s.authorized" "usb/$b 1"
	has serial "$s.link" "usb/1-0:1.0 hub"
	has serial "$s.link" "usb/2-0:1.0 hub"
	is "interfaces without a driver" "$(grep "^$s\.link .* none$" "$r")" "$s.link usb/$a none"
	is "interfaces not authorized" "$(grep "^$s\.authorized .* 0$" "$r")" "$s.authorized usb/$a 0"
	is "drvbind's lines" "$(follow_said serial "$s")" "usb/*:*,serial=DRVBINDA*: $a on none"
}

@test "drvbind=usb/*:*,serial=DRVBINDA*:none with drvbind.follow=1 as PID 1 keeps the interface of the stick with serial DRVBINDA0001 without a driver as it appears, and leaves the identical stick DRVBINDB0002 on usb-storage" {
	booted serial
	has serial boot.cmdline "console=ttyS0 panic=-1 scenario=serial rdinit=/sbin/drvbind drvbind.follow=1 drvbind.timeout=30 drvbind=usb/*:*,serial=DRVBINDA*:none"
	has serial boot.dmesg "<6>Run /sbin/drvbind as init process"
	has serial boot.dmesg "<14>drvbind: following 1 rule(s) in the background"
	[[ $(val serial boot.child) =~ ^[0-9]+: ]] || { echo "no follower when the next init started"; false; }
	follow_ok serial boot
	# no USB at all when drvbind started: the set waited for its devices
	has serial boot.a absent
	has serial boot.b absent
	# the kernel's own word on which stick is in which port
	has serial start.dmesg "<6>usb 2-1: SerialNumber: DRVBINDA0001"
	has serial start.dmesg "<6>usb 2-2: SerialNumber: DRVBINDB0002"
	has serial start.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	has serial start.dmesg "<6>usb-storage 2-2:1.0: USB Mass Storage device detected"
	sticks start 2-1:1.0 2-2:1.0
	has serial start.dmesg "<14>drvbind: usb/*:*,serial=DRVBINDA*: 2-1:1.0 on none"
}

@test "drvbind -l usb on the real kernel lists the devices sorted, each stick's USB device with its ids and serial, each interface with its class, and the held one by its set's rule" {
	booted serial
	is "drvbind -l usb" "$(sed -n 's/^start\.list //p' "$QEMU_OUT/serial/results")" "$(cat <<-'EOF'
	usb/1-0:1.0 hub bInterfaceClass=09
	usb/2-0:1.0 hub bInterfaceClass=09
	usb/2-1 usb idVendor=46f4 idProduct=0001 serial=DRVBINDA0001
	usb/2-1:1.0 none bInterfaceClass=08 authorized=0 rule=none held
	usb/2-2 usb idVendor=46f4 idProduct=0001 serial=DRVBINDB0002
	usb/2-2:1.0 usb-storage bInterfaceClass=08
	usb/usb1 usb idVendor=1d6b idProduct=0002 serial=0000:00:09.0
	usb/usb2 usb idVendor=1d6b idProduct=0003 serial=0000:00:09.0
	EOF
	)"
}

@test "both sticks re-enumerated (authorized 0, then 1): the follower takes stick A's new interface away again by its device's serial, and B's new interface stays on usb-storage" {
	booted serial
	# new interfaces, authorized, and usb-storage took both: A's 0 is the follower's
	has serial reenum.dmesg "<6>usb 2-1: authorized to connect"
	has serial reenum.dmesg "<6>usb 2-2: authorized to connect"
	has serial reenum.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	has serial reenum.dmesg "<6>usb-storage 2-2:1.0: USB Mass Storage device detected"
	sticks reenum 2-1:1.0 2-2:1.0
	has serial reenum.dmesg "<14>drvbind: usb/*:*,serial=DRVBINDA*: 2-1:1.0 on none"
}

@test "stick A unplugged through QEMU's monitor and plugged into another port is still the one named by its serial: its new interface 2-3:1.0 is kept without a driver, and B stays on usb-storage" {
	booted serial
	has_re serial moved.dmesg "<6>usb 2-1: USB disconnect, device number [0-9]+"
	has_re serial moved.dmesg "<6>usb 2-3: new SuperSpeed USB device number [0-9]+ using xhci_hcd"
	has serial moved.dmesg "<6>usb 2-3: SerialNumber: DRVBINDA0001"
	has serial moved.dmesg "<6>usb-storage 2-3:1.0: USB Mass Storage device detected"
	# port 1 is empty now
	! grep '^moved\.serial usb/2-1 ' "$QEMU_OUT/serial/results"
	sticks moved 2-3:1.0 2-2:1.0
	has serial moved.dmesg "<14>drvbind: usb/*:*,serial=DRVBINDA*: 2-3:1.0 on none"
}

@test "the sticks swapped between ports: B in port 1, where A's interface was held, stays on usb-storage, and A in port 2, where B was, is kept without a driver" {
	booted serial
	has_re serial swapped.dmesg "<6>usb 2-3: USB disconnect, device number [0-9]+"
	has_re serial swapped.dmesg "<6>usb 2-2: USB disconnect, device number [0-9]+"
	has serial swapped.dmesg "<6>usb 2-1: SerialNumber: DRVBINDB0002"
	has serial swapped.dmesg "<6>usb 2-2: SerialNumber: DRVBINDA0001"
	has serial swapped.dmesg "<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	has serial swapped.dmesg "<6>usb-storage 2-2:1.0: USB Mass Storage device detected"
	sticks swapped 2-2:1.0 2-1:1.0
	has serial swapped.dmesg "<14>drvbind: usb/*:*,serial=DRVBINDA*: 2-2:1.0 on none"
	# QEMU made every unplug and plug the guest asked for: qmp_capabilities
	# and six device_del and device_add answered (QMP ends its lines in \r\n)
	local qmp=$QEMU_OUT/serial/qmp.log
	is "QMP answers" "$(grep -c $'^{"return": {}}\r$' "$qmp")" 7
	is "stick-a deleted" "$(grep -c '"event": "DEVICE_DELETED", "data": {"device": "stick-a"' "$qmp")" 2
	is "stick-b deleted" "$(grep -c '"event": "DEVICE_DELETED", "data": {"device": "stick-b"' "$qmp")" 1
	! grep -q '"error"' "$qmp" || { cat "$qmp"; false; }
	# and in the whole boot nothing failed
	! grep 'failed at' "$QEMU_OUT/serial/results"
}

# The vfio boot (test/qemu/guest/vfio.sh): QEMU's q35 with an emulated
# Intel IOMMU and intel_iommu=on, where vfio-pci binds for real and vfio
# makes /dev/vfio/GROUP once a device of the group is bound to it, and
# removes it when the last one leaves. Slot 5 holds two e1000 functions
# (8086:100e), one IOMMU group; 06.0, a lone 82545EM (8086:100f), is the
# control no rule names; slot 7 holds another 82545EM at 07.0 beside a
# PCI-PCI bridge at 07.1, one group. Each run RUN reports, before
# (RUN.before.*) and after, every device's driver link and override, its
# group (RUN.group pci/DEV N) and each group's node (RUN.vfio N present
# or absent); between cases the guest puts every device back as booted.

# Each check below takes the suite as the pci boot's do: its boot is
# vfio$1 ("" for Debian 12's kernel, @SUITE for another); the helpers
# take the boot, BOOT.

# vfio_group BOOT DEV: the IOMMU group the guest found DEV in at boot.
vfio_group() {
	awk -v d="pci/$2" '$1 == "boot.group" && $2 == d { print $3; exit }' \
		"$QEMU_OUT/$1/results"
}

# vfio_links BOOT RUN DRIVER DEV...: after RUN each DEV is on DRIVER.
vfio_links() {
	local b=$1 run=$2 drv=$3 d
	shift 3
	for d; do
		has "$b" "$run.link" "pci/$d $drv"
	done
}

# vfio_node BOOT RUN DEV present|absent: after RUN, the node of DEV's group.
vfio_node() {
	has "$1" "$2.vfio" "$(vfio_group "$1" "$3") $4"
}

# vfio_untouched BOOT RUN DEV...: after RUN each DEV is on e1000 with no
# override: no rule took it.
vfio_untouched() {
	local b=$1 run=$2 d
	shift 2
	for d; do
		has "$b" "$run.link" "pci/$d e1000"
		has "$b" "$run.override" "pci/$d (null)"
	done
}

# vfio_as_booted BOOT RUN: RUN started from the machine as booted, with
# its drivers loaded: the e1000s on e1000, the bridge on none, no
# override, no node for either group.
vfio_as_booted() {
	vfio_untouched "$1" "$2.before" 0000:00:05.0 0000:00:05.1 0000:00:06.0 0000:00:07.0
	has "$1" "$2.before.link" "pci/0000:00:07.1 none"
	has "$1" "$2.before.override" "pci/0000:00:07.1 (null)"
	vfio_node "$1" "$2.before" 0000:00:05.0 absent
	vfio_node "$1" "$2.before" 0000:00:07.0 absent
}

# vfio_case BOOT RUN STATUS "MEMBER..." LINE...: RUN of the vfio boot
# BOOT, from the machine as booted (vfio_as_booted), where drvbind exits
# STATUS with each LINE in the kernel log (RUN.dmesg). After it each
# MEMBER (none: "") is on vfio-pci, held there by driver_override, every
# other e1000 is untouched, the bridge is still on none with no
# override, and a group has its node when it holds a MEMBER, and only
# then.
vfio_case() {
	local b=$1 run=$2 st=$3 line d held=" "
	local -a members others=()
	read -ra members <<<"$4"
	shift 4
	booted "$b"
	vfio_as_booted "$b" "$run"
	status_is "$b" "$run" "$st"
	for line; do
		has "$b" "$run.dmesg" "$line"
	done
	vfio_links "$b" "$run" vfio-pci "${members[@]}"
	for d in "${members[@]}"; do
		has "$b" "$run.override" "pci/$d vfio-pci"
		held+="$(vfio_group "$b" "$d") "
	done
	for d in 0000:00:05.0 0000:00:05.1 0000:00:06.0 0000:00:07.0; do
		[[ " ${members[*]} " == *" $d "* ]] || others+=("$d")
	done
	vfio_untouched "$b" "$run" "${others[@]}"
	has "$b" "$run.link" "pci/0000:00:07.1 none"
	has "$b" "$run.override" "pci/0000:00:07.1 (null)"
	# one device of each group: slot 5's, 06.0's, slot 7's
	for d in 0000:00:05.0 0000:00:06.0 0000:00:07.0; do
		if [[ $held == *" $(vfio_group "$b" "$d") "* ]]; then
			vfio_node "$b" "$run" "$d" present
		else
			vfio_node "$b" "$run" "$d" absent
		fi
	done
}

vfio_groups() {
	local b=vfio$1 g
	booted "$b"
	has "$b" boot.id "pci/0000:00:05.0 0x8086 0x100e 0x020000"
	has "$b" boot.id "pci/0000:00:05.1 0x8086 0x100e 0x020000"
	has "$b" boot.id "pci/0000:00:06.0 0x8086 0x100f 0x020000"
	has "$b" boot.id "pci/0000:00:07.0 0x8086 0x100f 0x020000"
	# QEMU's PCI-PCI bridge (1b36:0001): header type 1, no driver
	has "$b" boot.id "pci/0000:00:07.1 0x1b36 0x0001 0x060400"
	has "$b" boot.link "pci/0000:00:07.1 none"
	g=$(vfio_group "$b" 0000:00:05.0)
	[[ $g =~ ^[0-9]+$ ]] || { echo "0000:00:05.0 is in no IOMMU group"; false; }
	has "$b" boot.members "$g 0000:00:05.0 0000:00:05.1"
	has "$b" boot.members "$(vfio_group "$b" 0000:00:06.0) 0000:00:06.0"
	has "$b" boot.members "$(vfio_group "$b" 0000:00:07.0) 0000:00:07.0 0000:00:07.1"
	# no device is bound to vfio-pci yet: no node
	vfio_node "$b" boot 0000:00:05.0 absent
}

@test "q35's emulated IOMMU puts both e1000 functions of slot 5 in one group, the lone e1000 in its own, and a bridge in its slot's group" {
	vfio_groups ""
}

vfio_waits() {
	local b=vfio$1
	booted "$b"
	status_is "$b" waits 0
	vfio_links "$b" waits.before none 0000:00:05.0 0000:00:05.1 0000:00:06.0
	has "$b" waits.stderr "drvbind: pci/0000:00:05.0: held for vfio-pci by driver_override"
	has "$b" waits.stderr "drvbind: pci/0000:00:05.1: held for vfio-pci by driver_override"
	# e1000, loaded 1 s in, took the control but not the held functions
	vfio_links "$b" waits.held none 0000:00:05.0 0000:00:05.1
	has "$b" waits.held.override "pci/0000:00:05.0 vfio-pci"
	has "$b" waits.held.override "pci/0000:00:05.1 vfio-pci"
	has "$b" waits.held.link "pci/0000:00:06.0 e1000"
	vfio_node "$b" waits.held 0000:00:05.0 absent
	# asked for once, not once by each rule that waits for it; the guest loads it
	is "modprobe requests" "$(count "$b" waits.modprobe "drvbind: modprobe -q -- vfio-pci")" 1
	has "$b" waits.dmesg "<14>drvbind: pci/0000:00:05.0: none -> vfio-pci"
	has "$b" waits.dmesg "<14>drvbind: pci/0000:00:05.1: none -> vfio-pci"
	vfio_links "$b" waits vfio-pci 0000:00:05.0 0000:00:05.1
	vfio_node "$b" waits 0000:00:05.0 present
	vfio_untouched "$b" waits 0000:00:06.0 0000:00:07.0
	vfio_node "$b" waits 0000:00:06.0 absent
	# done once vfio-pci came (about 2 s in), not at the -t 20 deadline
	within run "$(val "$b" waits.ms)" 1000 15000
}

@test "vfio-pci for real: both functions of a group are held by driver_override while e1000 loads, then bound as vfio-pci registers, making /dev/vfio/GROUP" {
	vfio_waits ""
}

vfio_bound() {
	vfio_case "vfio$1" bound 0 "0000:00:05.0 0000:00:05.1" \
		"<14>drvbind: pci/0000:00:05.0: e1000 -> vfio-pci" \
		"<14>drvbind: pci/0000:00:05.1: e1000 -> vfio-pci"
}

@test "vfio-pci for real: with e1000 bound before drvbind, per-device rules move both functions of the group e1000 -> vfio-pci, making /dev/vfio/GROUP" {
	vfio_bound ""
}

vfio_back() {
	local b=vfio$1 run
	booted "$b"
	for run in waitsback boundback; do
		vfio_links "$b" "$run.before" vfio-pci 0000:00:05.0 0000:00:05.1
		vfio_node "$b" "$run.before" 0000:00:05.0 present
		status_is "$b" "$run" 0
		has "$b" "$run.dmesg" "<14>drvbind: pci/0000:00:05.0: vfio-pci -> e1000"
		has "$b" "$run.dmesg" "<14>drvbind: pci/0000:00:05.1: vfio-pci -> e1000"
		# e1000 probed each function again: a new network interface
		has_re "$b" "$run.dmesg" "<6>e1000 0000:00:05\.0 eth[0-9]+: Intel\(R\) PRO/1000 Network Connection"
		has_re "$b" "$run.dmesg" "<6>e1000 0000:00:05\.1 eth[0-9]+: Intel\(R\) PRO/1000 Network Connection"
		vfio_links "$b" "$run" e1000 0000:00:05.0 0000:00:05.1
		has "$b" "$run.override" "pci/0000:00:05.0 e1000"
		has "$b" "$run.override" "pci/0000:00:05.1 e1000"
		vfio_node "$b" "$run" 0000:00:05.0 absent
		vfio_untouched "$b" "$run" 0000:00:06.0 0000:00:07.0
	done
}

@test "vfio-pci for real: a second run with per-device rules takes both functions back to e1000, after either move, and vfio removes /dev/vfio/GROUP" {
	vfio_back ""
}

vfio_eachfail() {
	# each rule stands alone: 07.0 stays moved, what a set of the two
	# must not leave
	vfio_case "vfio$1" eachfail 1 0000:00:07.0 \
		"$(probe_failed "$1" 0000:00:07.1)" \
		"<11>drvbind: pci/0000:00:07.1: none -> vfio-pci failed at bind: Invalid argument; left unbound" \
		"<14>drvbind: pci/0000:00:07.0: e1000 -> vfio-pci"
}

@test "vfio-pci for real refuses a PCI bridge (EINVAL): per-device rules for a bridge and its slot's e1000 fail the bridge alone, the e1000 stays on vfio-pci, exit 1" {
	vfio_eachfail ""
}

# Device sets (drvbind(8), Device sets), each run of the vfio boot with
# one set rule:
#   slot     pci/0000:00:05.*:vfio-pci: every function of the slot
#   group    pci/0000:00:05.0,iommu_group:vfio-pci: the device and every
#            other device of its IOMMU group
#   attrs    pci/vendor=0x8086,device=0x100e,iommu_group:vfio-pci: the
#            devices whose sysfs attributes match, and their groups
#   bridged  pci/0000:00:07.0,iommu_group:vfio-pci: a group that holds a
#            PCI bridge, which is left alone
#   setfail  pci/0000:00:07.*:vfio-pci: the slot's bridge, which
#            vfio-pci refuses (EINVAL, not a normal header type), fails
#            the whole set

vfio_set_slot() {
	vfio_case "vfio$1" slot 0 "0000:00:05.0 0000:00:05.1" \
		"<14>drvbind: pci/0000:00:05.*: 0000:00:05.0 0000:00:05.1 on vfio-pci"
}

@test "device sets: a wildcard, pci/0000:00:05.*, moves every function of the slot to vfio-pci and nothing else, making /dev/vfio/GROUP" {
	vfio_set_slot ""
}

vfio_set_group() {
	vfio_case "vfio$1" group 0 "0000:00:05.0 0000:00:05.1" \
		"<14>drvbind: pci/0000:00:05.0,iommu_group: 0000:00:05.0 0000:00:05.1 on vfio-pci"
}

@test "device sets: pci/0000:00:05.0,iommu_group moves the device and the rest of its IOMMU group to vfio-pci, making /dev/vfio/GROUP" {
	vfio_set_group ""
}

vfio_set_attrs() {
	vfio_case "vfio$1" attrs 0 "0000:00:05.0 0000:00:05.1" \
		"<14>drvbind: pci/vendor=0x8086,device=0x100e,iommu_group: 0000:00:05.0 0000:00:05.1 on vfio-pci"
}

@test "device sets: selected by vendor and device (8086:100e) with their groups, the slot-5 functions go to vfio-pci and the 8086:100f e1000s stay" {
	vfio_set_attrs ""
}

vfio_set_bridged() {
	# the set is 07.0 alone: vfio_case checks the bridge stays on none
	vfio_case "vfio$1" bridged 0 0000:00:07.0 \
		"<14>drvbind: pci/0000:00:07.0,iommu_group: 0000:00:07.0 on vfio-pci"
}

@test "device sets: an IOMMU group that holds a PCI bridge moves its e1000 to vfio-pci and leaves the bridge alone" {
	vfio_set_bridged ""
}

vfio_set_fail() {
	# no member is left on vfio-pci; the kernel refused the bridge: the
	# failure is real, not drvbind's guess
	vfio_case "vfio$1" setfail 1 "" \
		"$(probe_failed "$1" 0000:00:07.1)" \
		"<11>drvbind: pci/0000:00:07.1: none -> vfio-pci failed at bind: Invalid argument; left unbound" \
		"<11>drvbind: pci/0000:00:07.*: set failed; as before: 0000:00:07.0 0000:00:07.1"
	# 07.0 comes before 07.1: it had moved, and e1000 probed it again
	has_re "vfio$1" setfail.dmesg "<6>e1000 0000:00:07\.0 eth[0-9]+: Intel\(R\) PRO/1000 Network Connection"
}

@test "device sets: vfio-pci refusing one member (the slot's bridge, EINVAL) puts the whole set back, the e1000 on e1000, exit 1" {
	vfio_set_fail ""
}

# The kernel matrix: the pci boot and the two timing boots again on
# Debian 11's kernel (5.10, bullseye), Debian 13's (6.12, trixie), sid's
# (7.2) and trixie-backports' (7.3), booted by run.sh as pci@bullseye and
# so on, with the same checks as on 6.1 (each takes the suite). The two
# Linux 7 kernels boot late, follow and vfio too, with their checks:
# 7.0 moved driver_override into the driver core, and since 7.1 bind
# answers EAGAIN until the bus has finished adding the device.
# QEMU_SUITES names the suites (default "bullseye trixie sid
# trixie-backports"; empty: none), and a suite left out is skipped here.

# The checks of each boot, each a function that takes the suite ("" for
# 6.1's boots, "@SUITE" for the others).
PCI_BOOT_CHECKS=(pciboot_move pciboot_none pciboot_already pciboot_usbnone pciboot_usbback pciboot_vfio pciboot_uas)
PCI_TIMING_CHECKS=(pci_none_while pci_move_while pci_none_before pci_move_before pci_none_after pci_move_after)
USB_TIMING_CHECKS=(usb_move_while usb_none_while usb_move_before usb_none_before usb_none_after usb_move_after)
LATE_CHECKS=(late_driver late_device late_expire late_bg late_pair)
FOLLOW_CHECKS=(follow_start follow_rescan follow_reload follow_reenum follow_replug follow_term)
VFIO_CHECKS=(vfio_groups vfio_waits vfio_bound vfio_back vfio_eachfail vfio_set_slot vfio_set_group vfio_set_attrs vfio_set_bridged vfio_set_fail)

# checks_on SUITE CHECK...: each check on the suite's boots
checks_on() {
	local suite=$1 f
	shift
	for f; do
		"$f" "@$suite"
	done
}

# suite_boots SUITE: the boots run.sh makes on SUITE's kernel (its
# boots_of says the same)
suite_boots() {
	case $1 in
	sid | trixie-backports) echo pci pcitiming usbtiming late follow vfio ;;
	*) echo pci pcitiming usbtiming ;;
	esac
}

# on_suite SUITE VERSION: the suite was booted, by the kernel kernel.sh
# fetched from it, which is Linux VERSION (5.10, 7.2, ...): each of its
# boots ran to its end and its console names that kernel.
on_suite() {
	local kver b
	[[ " ${QEMU_SUITES-bullseye trixie sid trixie-backports} " == *" $1 "* ]] || skip "$1 is not in QEMU_SUITES"
	kver=$(cat "$TOP/build/qemu/$1/kver" 2>/dev/null) ||
		{ echo "no kernel from $1: see build/qemu/run.log (QEMU_SUITES= leaves it out)"; return 1; }
	[[ $kver == "$2".* ]] || { echo "$1's kernel is $kver, not Linux $2"; return 1; }
	for b in $(suite_boots "$1"); do
		booted "$b@$1"
		grep -q "Linux version $kver " "$QEMU_OUT/$b@$1/console.log" ||
			{ echo "$b@$1 did not boot $kver"; return 1; }
	done
}

@test "Linux 5.10 (Debian 11): the pci boot: e1000 to pci-stub and none, already on e1000, the stick to none and back, vfio-pci and uas refused and rolled back" {
	on_suite bullseye 5.10
	checks_on bullseye "${PCI_BOOT_CHECKS[@]}"
}

@test "Linux 5.10 (Debian 11): none and a move to pci-stub, e1000 loaded before drvbind, while it waits, and before the device appears" {
	on_suite bullseye 5.10
	checks_on bullseye "${PCI_TIMING_CHECKS[@]}"
}

@test "Linux 5.10 (Debian 11): none and a move to usb-storage, usb-storage loaded before drvbind, while it waits, and before the interface appears" {
	on_suite bullseye 5.10
	checks_on bullseye "${USB_TIMING_CHECKS[@]}"
}

@test "Linux 6.12 (Debian 13): the pci boot: e1000 to pci-stub and none, already on e1000, the stick to none and back, vfio-pci and uas refused and rolled back" {
	on_suite trixie 6.12
	checks_on trixie "${PCI_BOOT_CHECKS[@]}"
}

@test "Linux 6.12 (Debian 13): none and a move to pci-stub, e1000 loaded before drvbind, while it waits, and before the device appears" {
	on_suite trixie 6.12
	checks_on trixie "${PCI_TIMING_CHECKS[@]}"
}

@test "Linux 6.12 (Debian 13): none and a move to usb-storage, usb-storage loaded before drvbind, while it waits, and before the interface appears" {
	on_suite trixie 6.12
	checks_on trixie "${USB_TIMING_CHECKS[@]}"
}

@test "Linux 7.2 (Debian sid): the pci boot: e1000 to pci-stub and none, already on e1000, the stick to none and back, vfio-pci and uas refused and rolled back" {
	on_suite sid 7.2
	checks_on sid "${PCI_BOOT_CHECKS[@]}"
}

@test "Linux 7.2 (Debian sid): none and a move to pci-stub, e1000 loaded before drvbind, while it waits, and before the device appears" {
	on_suite sid 7.2
	checks_on sid "${PCI_TIMING_CHECKS[@]}"
}

@test "Linux 7.2 (Debian sid): none and a move to usb-storage, usb-storage loaded before drvbind, while it waits, and before the interface appears" {
	on_suite sid 7.2
	checks_on sid "${USB_TIMING_CHECKS[@]}"
}

@test "Linux 7.2 (Debian sid): late drivers and a late device: held against e1000 until pci-stub registers, released at a deadline, -b's child, two functions for one driver" {
	on_suite sid 7.2
	checks_on sid "${LATE_CHECKS[@]}"
}

@test "Linux 7.2 (Debian sid): the follower left by PID 1 holds its rules through a PCI rescan, driver reloads, a USB re-enumeration and QEMU's replug, and ends on SIGTERM" {
	on_suite sid 7.2
	checks_on sid "${FOLLOW_CHECKS[@]}"
}

@test "Linux 7.2 (Debian sid): vfio-pci for real under q35's emulated IOMMU: held while e1000 loads, moves and back, a refused bridge, and the device sets" {
	on_suite sid 7.2
	checks_on sid "${VFIO_CHECKS[@]}"
}

@test "Linux 7.3 (Debian trixie-backports): the pci boot: e1000 to pci-stub and none, already on e1000, the stick to none and back, vfio-pci and uas refused and rolled back" {
	on_suite trixie-backports 7.3
	checks_on trixie-backports "${PCI_BOOT_CHECKS[@]}"
}

@test "Linux 7.3 (Debian trixie-backports): none and a move to pci-stub, e1000 loaded before drvbind, while it waits, and before the device appears" {
	on_suite trixie-backports 7.3
	checks_on trixie-backports "${PCI_TIMING_CHECKS[@]}"
}

@test "Linux 7.3 (Debian trixie-backports): none and a move to usb-storage, usb-storage loaded before drvbind, while it waits, and before the interface appears" {
	on_suite trixie-backports 7.3
	checks_on trixie-backports "${USB_TIMING_CHECKS[@]}"
}

@test "Linux 7.3 (Debian trixie-backports): late drivers and a late device: held against e1000 until pci-stub registers, released at a deadline, -b's child, two functions for one driver" {
	on_suite trixie-backports 7.3
	checks_on trixie-backports "${LATE_CHECKS[@]}"
}

@test "Linux 7.3 (Debian trixie-backports): the follower left by PID 1 holds its rules through a PCI rescan, driver reloads, a USB re-enumeration and QEMU's replug, and ends on SIGTERM" {
	on_suite trixie-backports 7.3
	checks_on trixie-backports "${FOLLOW_CHECKS[@]}"
}

@test "Linux 7.3 (Debian trixie-backports): vfio-pci for real under q35's emulated IOMMU: held while e1000 loads, moves and back, a refused bridge, and the device sets" {
	on_suite trixie-backports 7.3
	checks_on trixie-backports "${VFIO_CHECKS[@]}"
}
