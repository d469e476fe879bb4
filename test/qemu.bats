#!/usr/bin/env bats
# The real-kernel tier: Debian's kernel under QEMU (TCG), a busybox
# initramfs whose /init runs drvbind and reports on the second serial
# port. Four boots (test/qemu/run.sh, two at a time) serve every test;
# the guest's side is test/qemu/guest/, one script per boot.
#
# Results are lines "RUN.KEY VALUE" in build/qemu/out/BOOT/results:
#   RUN.status / RUN.ms      drvbind's exit status and run time
#   RUN.stderr / RUN.dmesg   its messages; the kernel log during the run
#                            (dmesg -r: <facility*8+level>, /dev/kmsg
#                            lines are facility user, so <11> err, <14> info)
#   RUN.link BUS/DEV DRIVER  the driver link afterwards (or none)
#   RUN.override BUS/DEV V   driver_override afterwards
#   RUN.modprobe WHO: ARGS   who ran /sbin/modprobe (the kernel runs it too)

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export QEMU_OUT=$TOP/build/qemu/out
	mkdir -p "$TOP/build/qemu"
	# fetches the kernel on first use, builds the initramfs, boots
	"$TOP/test/qemu/run.sh" >"$TOP/build/qemu/run.log" 2>&1
}

# booted BOOT: the guest ran its scenario to the end.
booted() {
	local d=$QEMU_OUT/$1
	if [[ $(cat "$d/qemu.status" 2>/dev/null) == 0 ]] &&
		grep -qx end "$d/results" 2>/dev/null; then
		return 0
	fi
	echo "boot $1 did not finish (QEMU status $(cat "$d/qemu.status" 2>/dev/null))"
	tail -n 25 "$d/console.log" 2>/dev/null
	return 1
}

# val BOOT KEY: the first value of KEY.
val() {
	awk -v k="$2 " 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' \
		"$QEMU_OUT/$1/results"
}

# has BOOT KEY VALUE: one of KEY's lines is exactly VALUE.
has() {
	grep -qxF -- "$2 $3" "$QEMU_OUT/$1/results" && return 0
	echo "$1: no line: $2 $3"
	echo "$1: $2 lines are:"
	grep -F -- "$2 " "$QEMU_OUT/$1/results"
	return 1
}

# count BOOT KEY VALUE: how many of KEY's lines are exactly VALUE.
count() {
	grep -cxF -- "$2 $3" "$QEMU_OUT/$1/results"
}

# is NAME ACTUAL EXPECTED, saying both when they differ.
is() {
	[[ $2 == "$3" ]] && return 0
	echo "$1: expected '$3', got '$2'"
	return 1
}

# status_is BOOT RUN N: drvbind's exit status; its messages if not N.
status_is() {
	local st
	st=$(val "$1" "$2.status")
	[[ $st == "$3" ]] && return 0
	echo "$2: exit status $st, expected $3; its messages:"
	grep -F -- "$2.stderr " "$QEMU_OUT/$1/results"
	return 1
}

# within NAME MS LOW HIGH
within() {
	[[ $2 =~ ^[0-9]+$ ]] && (($2 >= $3 && $2 <= $4)) && return 0
	echo "$1: $2 ms, expected $3 to $4"
	return 1
}

@test "the kernel is the one linux-image-amd64 depends on, unpacked once into build/qemu and reused" {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
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

@test "e1000 at 0000:00:05.0 moves to pci-stub through driver_override, by a rule on the real command line" {
	booted pci
	status_is pci cmdline 0
	has pci cmdline.link "pci/0000:00:05.0 pci-stub"
	has pci cmdline.override "pci/0000:00:05.0 pci-stub"
	has pci cmdline.dmesg "<14>drvbind: pci/0000:00:05.0: e1000 -> pci-stub"
	has pci cmdline.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
}

@test "the rule none leaves e1000 at 0000:00:06.0 without a driver, kept so by driver_override" {
	booted pci
	status_is pci cmdline 0
	has pci cmdline.link "pci/0000:00:06.0 none"
	has pci cmdline.override "pci/0000:00:06.0 none"
	has pci cmdline.dmesg "<14>drvbind: pci/0000:00:06.0: e1000 -> none"
}

@test "a device already on the wanted driver is left alone and reported as such" {
	booted pci
	status_is pci cmdline 0
	has pci cmdline.link "pci/0000:00:07.0 e1000"
	has pci cmdline.override "pci/0000:00:07.0 (null)"
	has pci cmdline.dmesg "<14>drvbind: pci/0000:00:07.0: already on e1000"
	# nothing was unbound: no second "eth" line for 00:07.0 in the log
	! grep -q '^cmdline\.dmesg .*e1000 0000:00:07.0' "$QEMU_OUT/pci/results"
}

@test "the usb-storage stick's interface 2-1:1.0 is unbound by the rule none" {
	booted pci
	status_is pci usbnone 0
	has pci usbnone.link "usb/2-1:1.0 none"
	has pci usbnone.dmesg "<14>drvbind: usb/2-1:1.0: usb-storage -> none"
	# the command-line rules, settled before, are only confirmed
	has pci usbnone.dmesg "<14>drvbind: pci/0000:00:05.0: already on pci-stub"
}

@test "the interface 2-1:1.0 goes back from no driver to usb-storage" {
	booted pci
	status_is pci usbback 0
	has pci usbback.link "usb/2-1:1.0 usb-storage"
	has pci usbback.dmesg "<14>drvbind: usb/2-1:1.0: none -> usb-storage"
	has pci usbback.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
}

@test "vfio-pci refusing e1000 without an IOMMU (EINVAL) leaves it back on e1000, exit 1, failure and rollback logged" {
	booted pci
	status_is pci vfio 1
	has pci vfio.link "pci/0000:00:08.0 e1000"
	has pci vfio.override "pci/0000:00:08.0 (null)"
	has pci vfio.dmesg "<4>vfio-pci: probe of 0000:00:08.0 failed with error -22"
	has pci vfio.dmesg "<11>drvbind: pci/0000:00:08.0: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000"
	# the override was cleared before e1000 was asked again
	has pci vfio.stderr 'drvbind: write bus/pci/devices/0000:00:08.0/driver_override "\x0a"'
	has pci vfio.stderr 'drvbind: write bus/pci/drivers/e1000/bind "0000:00:08.0"'
}

@test "uas refusing a bulk-only stick (ENODEV) is tried through new_id, then the stick is back on usb-storage, exit 1" {
	booted pci
	status_is pci uas 1
	has pci uas.link "usb/2-1:1.0 usb-storage"
	has pci uas.dmesg "<11>drvbind: usb/2-1:1.0: usb-storage -> uas failed at bind: No such device after new_id \"46f4 0001 08\"; back on usb-storage"
	# QEMU's stick is 46f4:0001, interface class 08 (mass storage)
	has pci uas.stderr 'drvbind: write bus/usb/drivers/uas/new_id "46f4 0001 08"'
	has pci uas.stderr 'drvbind: write bus/usb/drivers/uas/remove_id "46f4 0001 08"'
}

@test "a missing device costs the 3 s timeout and exit 1, while the present device is moved at once" {
	booted missing
	status_is missing missing 1
	within run "$(val missing missing.ms)" 2900 4500
	# one second in, the present device is already done
	has missing missing.early.link "pci/0000:00:05.0 pci-stub"
	has missing missing.link "pci/0000:00:05.0 pci-stub"
	has missing missing.dmesg "<14>drvbind: pci/0000:00:05.0: e1000 -> pci-stub"
	has missing missing.dmesg "<11>drvbind: 0000:00:1f.0: device not found (waited 3 s)"
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

@test "a late driver: pci-stub loaded 3 s later is asked for once, e1000 is kept away meanwhile, and the device gets pci-stub" {
	booted late
	status_is late late 0
	# e1000 was loaded after a second and did not take the held device
	has late held.link "pci/0000:00:05.0 none"
	has late held.override "pci/0000:00:05.0 pci-stub"
	has late late.link "pci/0000:00:05.0 pci-stub"
	has late late.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
	is "modprobe requests" "$(count late late.modprobe "drvbind: modprobe -q -- pci-stub")" 1
	within "pci-stub loaded at" "$(val late late.pcistub_ms)" 2500 5000
}

@test "a late device: the interface appearing while drvbind waits ends up unbound although usb-storage probes it, and drvbind exits at once" {
	booted late
	status_is late late 0
	has late late.link "usb/2-1:1.0 none"
	has late late.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
	has late late.dmesg "<14>drvbind: usb/2-1:1.0: usb-storage -> none"
	# done soon after the host controller came (timeout is 30 s)
	xhci=$(val late late.xhci_ms) end=$(val late late.ms)
	within "exit after xhci load" $((end - xhci)) 0 3000
}

@test "a driver that never comes: at the deadline the held device is released to its native driver" {
	booted late
	status_is late expire 1
	within run "$(val late expire.ms)" 3900 5500
	has late held.link "pci/0000:00:07.0 none"
	has late held.override "pci/0000:00:07.0 vfio-pci"
	has late expire.link "pci/0000:00:07.0 e1000"
	has late expire.override "pci/0000:00:07.0 (null)"
	has late expire.stderr "drvbind: pci/0000:00:07.0: driver vfio-pci not found; now on e1000 (waited 4 s)"
}

@test "-b returns at once and its background child binds the held device when pci-stub registers" {
	booted late
	status_is late bg 0
	within "-b returned after" "$(val late bg.ms)" 0 1000
	has late bg.stderr "drvbind: waiting in the background for 1 rule(s)"
	has late held.link "pci/0000:00:06.0 none"
	has late held.override "pci/0000:00:06.0 pci-stub"
	has late bg.child gone
	has late bg.stderr "drvbind: pci/0000:00:06.0: none -> pci-stub"
	has late bg.link "pci/0000:00:06.0 pci-stub"
}

@test "two functions held for one late driver, as a GPU and its audio function for vfio-pci, both end on it" {
	booted late
	status_is late pair 0
	within run "$(val late pair.ms)" 2500 8000
	has late held.link "pci/0000:00:0a.0 none"
	has late held.link "pci/0000:00:0b.0 none"
	has late pair.link "pci/0000:00:0a.0 pci-stub"
	has late pair.link "pci/0000:00:0b.0 pci-stub"
	has late pair.stderr "drvbind: pci/0000:00:0a.0: none -> pci-stub"
	has late pair.stderr "drvbind: pci/0000:00:0b.0: none -> pci-stub"
}
