#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Device sets: one rule for every function of a slot (a pattern of bus
# ids), for devices chosen by their attributes (vendor, device, class,
# boot_vga), and for a device with its whole IOMMU group. Each device a
# set takes goes through a rule's whole procedure; one that fails takes
# the whole set back, as vfio refuses a group half bound. The fake's
# groups are links both ways, as iommu_group_add_device makes them.

load helper

VFIO_DEV=devices/pci0000:00

# a GPU-style slot 0000:01:00: VGA on nouveau, audio on snd_hda_intel;
# and a NIC next door that no set names
gpu_slot() {
	fake_driver pci nouveau 'match=*'
	fake_driver pci snd_hda_intel 'match=*'
	fake_driver pci e1000 'match=*'
	fake_driver pci vfio-pci 'match=*'
	fake_device pci 0000:01:00.0 driver=nouveau override vendor=0x10de device=0x1b80 pciclass=0x030000 boot_vga=0 "$@"
	fake_device pci 0000:01:00.1 driver=snd_hda_intel override vendor=0x10de device=0x10f0 pciclass=0x040300 "$@"
	fake_device pci 0000:02:00.0 driver=e1000 override vendor=0x8086 device=0x100e pciclass=0x020000
}

@test "a pattern takes every function of a slot to vfio-pci, says one line naming the set and each device, and leaves the next slot alone" {
	gpu_slot
	run_says 0 "drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 on vfio-pci" \
		drvbind -t 2 "pci/0000:01:00.*:vfio-pci"
	assert_driver pci 0000:01:00.0 vfio-pci
	assert_driver pci 0000:01:00.1 vfio-pci
	assert_driver pci 0000:02:00.0 e1000
	[ "$(cat "$SYS/bus/pci/devices/0000:01:00.1/driver_override")" = vfio-pci ]
}

@test "with -v each device of a set also says its own move" {
	gpu_slot
	run drvbind -v -t 2 "pci/0000:01:00.*:vfio-pci"
	[ "$status" -eq 0 ]
	grep -qxF "drvbind: pci/0000:01:00.0: nouveau -> vfio-pci" <<<"$output"
	grep -qxF "drvbind: pci/0000:01:00.1: snd_hda_intel -> vfio-pci" <<<"$output"
	grep -qxF "drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 on vfio-pci" <<<"$output"
}

@test "sets of 1, 4 and 64 devices each take all their devices, and only theirs" {
	local s f n
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	for s in 0 1 2 3 4 5 6 7; do
		for f in 0 1 2 3 4 5 6 7; do
			fake_device pci "0000:01:0$s.$f" driver=e1000 override
		done
	done
	fake_device pci 0000:02:00.0 driver=e1000 override
	for f in 0 1 2 3; do
		fake_device pci "0000:03:00.$f" driver=e1000 override
	done
	run drvbind -t 2 "pci/0000:01:*:pci-stub" "pci/0000:02:00.?:pci-stub" "pci/0000:03:00.*:pci-stub"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	n=$(ls "$SYS/bus/pci/drivers/pci-stub" | grep -c '^0000:')
	[ "$n" -eq 69 ]
	[[ ${lines[0]} == "drvbind: pci/0000:01:*: "*" on pci-stub" ]]
	# the 64 device ids, each once
	n=$(tr ' ' '\n' <<<"${lines[0]}" | grep -c '^0000:01:0[0-7]\.[0-7]$')
	[ "$n" -eq 64 ]
	grep -qxF "drvbind: pci/0000:02:00.?: 0000:02:00.0 on pci-stub" <<<"$output"
	grep -qE "^drvbind: pci/0000:03:00\.\*: (0000:03:00\.[0-3] ){4}on pci-stub$" <<<"$output"
}

@test "a set of more than 64 devices is refused with a message, and none of its devices moves" {
	local s f
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	for s in 0 1 2 3 4 5 6 7 8; do
		for f in 0 1 2 3 4 5 6 7; do
			fake_device pci "0000:01:0$s.$f" driver=e1000 override
		done
	done
	run drvbind -t 2 "pci/0000:01:*:pci-stub"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "drvbind: pci/0000:01:*: more than 64 devices" ]
	# the 64 it took before it had to stop, none of them moved
	[[ ${lines[1]} == "drvbind: pci/0000:01:*: set failed; as before: 0000:01:00.0 "* ]]
	[ "$(tr ' ' '\n' <<<"${lines[1]}" | grep -c '^0000:01:0[0-8]\.[0-7]$')" -eq 64 ]
	[ -z "$(ls "$SYS/bus/pci/drivers/pci-stub" | grep '^0000:')" ]
	! grep -q -- '-> pci-stub' "$FAKE/log"
}

@test "iommu_group takes the device and every other device of its group, and leaves the group's bridge on its driver" {
	fake_driver pci pcieport 'match=*'
	fake_device pci 0000:00:01.0 driver=pcieport override pciclass=0x060400 group=1
	gpu_slot group=1
	fake_device pci 0000:00:02.0 driver=e1000 override group=2
	run drvbind -t 2 "pci/0000:01:00.0,iommu_group:vfio-pci"
	[ "$status" -eq 0 ]
	[[ $output == "drvbind: pci/0000:01:00.0,iommu_group: "* ]]
	assert_driver pci 0000:01:00.0 vfio-pci
	assert_driver pci 0000:01:00.1 vfio-pci
	assert_driver pci 0000:00:01.0 pcieport
	assert_driver pci 0000:00:02.0 e1000
	grep -qE "^drvbind: pci/0000:01:00\.0,iommu_group: (0000:01:00\.[01] ){2}on vfio-pci$" <<<"$output"
}

@test "of two identical GPUs, vendor, device and boot_vga=0 pick the one the firmware did not boot on, with its group" {
	fake_driver pci nouveau 'match=*'
	fake_driver pci snd_hda_intel 'match=*'
	fake_driver pci vfio-pci 'match=*'
	fake_device pci 0000:01:00.0 driver=nouveau override vendor=0x10de device=0x1b80 boot_vga=1 group=1
	fake_device pci 0000:01:00.1 driver=snd_hda_intel override vendor=0x10de device=0x10f0 group=1
	fake_device pci 0000:02:00.0 driver=nouveau override vendor=0x10de device=0x1b80 boot_vga=0 group=2
	fake_device pci 0000:02:00.1 driver=snd_hda_intel override vendor=0x10de device=0x10f0 group=2
	run drvbind -t 2 "pci/vendor=0x10de,device=0x1b80,boot_vga=0,iommu_group:vfio-pci"
	[ "$status" -eq 0 ]
	grep -qE "^drvbind: pci/vendor=0x10de,device=0x1b80,boot_vga=0,iommu_group: (0000:02:00\.[01] ){2}on vfio-pci$" <<<"$output"
	assert_driver pci 0000:01:00.0 nouveau
	assert_driver pci 0000:01:00.1 snd_hda_intel
	assert_driver pci 0000:02:00.0 vfio-pci
	assert_driver pci 0000:02:00.1 vfio-pci
}

@test "a class pattern takes the devices of that class alone" {
	gpu_slot
	run_says 0 "drvbind: pci/class=0x0403*: 0000:01:00.1 on vfio-pci" \
		drvbind -t 2 "pci/class=0x0403*:vfio-pci"
	assert_driver pci 0000:01:00.0 nouveau
}

@test "a device of the set that fails takes the whole set back to its drivers, and the line names each device and where it is" {
	gpu_slot
	fake_fault bus/pci/drivers/vfio-pci/bind EINVAL
	run drvbind -t 2 "pci/0000:01:00.*:vfio-pci"
	[ "$status" -eq 1 ]
	assert_driver pci 0000:01:00.0 nouveau
	assert_driver pci 0000:01:00.1 snd_hda_intel
	[ "$(cat "$SYS/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
	[ "$(cat "$SYS/bus/pci/devices/0000:01:00.1/driver_override")" = "(null)" ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "drvbind: pci/0000:01:00."[01]": "*" -> vfio-pci failed at bind: Invalid argument; back on "* ]]
	[ "${lines[1]}" = "drvbind: pci/0000:01:00.*: set failed; as before: 0000:01:00.0 0000:01:00.1" ]
}

@test "a device of the set that had no driver is unbound again when another device fails the set, as its line says" {
	fake_driver pci snd_hda_intel 'match=*'
	fake_driver pci vfio-pci 'match=*'
	fake_device pci 0000:01:00.0 override vendor=0x10de device=0x1b80 pciclass=0x030000
	fake_device pci 0000:01:00.1 driver=snd_hda_intel override vendor=0x10de device=0x10f0 pciclass=0x040300
	fake_fault bus/pci/drivers/vfio-pci/bind pass
	fake_fault bus/pci/drivers/vfio-pci/bind EIO
	run_says 1 - drvbind -t 2 "pci/0000:01:00.*:vfio-pci" <<-EOF
	drvbind: pci/0000:01:00.1: snd_hda_intel -> vfio-pci failed at bind: I/O error; back on snd_hda_intel
	drvbind: pci/0000:01:00.*: set failed; as before: 0000:01:00.0 0000:01:00.1
	EOF
	assert_driver pci 0000:01:00.0 none
	assert_driver pci 0000:01:00.1 snd_hda_intel
	[ "$(cat "$SYS/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
	log_has "bus/pci/drivers/vfio-pci/unbind 0000:01:00.0 -> ok"
}

@test "a set that matches nothing waits like a missing device and says so at its deadline" {
	gpu_slot
	run_says 1 "drvbind: pci/0000:05:00.*: device not found (waited 1 s)" \
		drvbind -t 1 "pci/0000:05:00.*:vfio-pci"
}

@test "a set takes a device that appears while it waits for its driver" {
	fake_driver pci e1000 'match=*'
	fake_device pci 0000:01:00.0 driver=e1000 override
	fake_later idle fake_device pci 0000:01:00.1 driver=e1000 override \; fake_driver pci pci-stub 'match=*'
	run drvbind -t 5 -m /bin/true "pci/0000:01:00.*:pci-stub"
	[ "$status" -eq 0 ]
	grep -qE "^drvbind: pci/0000:01:00\.\*: (0000:01:00\.[01] ){2}on pci-stub$" <<<"$output"
	assert_driver pci 0000:01:00.0 pci-stub
	assert_driver pci 0000:01:00.1 pci-stub
}

@test "a set whose driver is missing asks modprobe for it once, holds its devices, and takes them when it comes" {
	fake_driver pci nouveau 'match=*'
	fake_driver pci snd_hda_intel 'match=*'
	fake_device pci 0000:01:00.0 driver=nouveau override
	fake_device pci 0000:01:00.1 driver=snd_hda_intel override
	fake_device pci 0000:01:00.2 override
	fake_later idle driver_registers pci vfio-pci
	run_says 0 "drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 0000:01:00.2 on vfio-pci" \
		drvbind -t 5 "pci/0000:01:00.*:vfio-pci"
	run cat "$FAKE/modprobe.log"
	assert_output_is "modprobe -q -- vfio-pci"
	assert_driver pci 0000:01:00.0 vfio-pci
	assert_driver pci 0000:01:00.2 vfio-pci
}

@test "a rule of a device's own wins over a set that also matches it" {
	gpu_slot
	fake_driver pci pci-stub 'match=*'
	run drvbind -t 2 "pci/0000:01:00.1:pci-stub" "pci/0000:01:00.*:vfio-pci"
	[ "$status" -eq 0 ]
	assert_driver pci 0000:01:00.0 vfio-pci
	assert_driver pci 0000:01:00.1 pci-stub
}

@test "-l names the rule of each device a set matches" {
	gpu_slot
	fake_conf "pci/0000:01:00.*:vfio-pci"
	run_says 0 - drvbind -l pci <<-EOF
	pci/0000:01:00.0 nouveau vendor=0x10de device=0x1b80 rule=vfio-pci
	pci/0000:01:00.1 snd_hda_intel vendor=0x10de device=0x10f0 rule=vfio-pci
	pci/0000:02:00.0 e1000 vendor=0x8086 device=0x100e
	EOF
}

@test "-l names the rule of every device of the IOMMU group a set takes, and not the group's bridge" {
	fake_driver pci pcieport 'match=*'
	fake_device pci 0000:00:01.0 driver=pcieport override pciclass=0x060400 group=1
	gpu_slot group=1
	fake_conf "pci/0000:01:00.0,iommu_group:vfio-pci"
	run_says 0 - drvbind -l pci <<-EOF
	pci/0000:00:01.0 pcieport
	pci/0000:01:00.0 nouveau vendor=0x10de device=0x1b80 rule=vfio-pci
	pci/0000:01:00.1 snd_hda_intel vendor=0x10de device=0x10f0 rule=vfio-pci
	pci/0000:02:00.0 e1000 vendor=0x8086 device=0x100e
	EOF
}

@test "malformed sets are refused by name, and the good rules beside them still apply" {
	gpu_slot
	fake_driver pci pci-stub 'match=*'
	run_says 1 - drvbind -t 2 "0000:01:00.*:vfio-pci" "pci/0000:01:00.0,,x=1:vfio-pci" "pci/0000:01:00.0,group:vfio-pci" \
		"pci/vendor=0x10de,:vfio-pci" "pci/=0x10de:vfio-pci" "pci/0000:02:00.0:pci-stub" <<-'EOF'
	drvbind: bad rule "0000:01:00.*:vfio-pci": a set needs its BUS/
	drvbind: bad rule "pci/0000:01:00.0,,x=1:vfio-pci": an empty item in a set
	drvbind: bad rule "pci/0000:01:00.0,group:vfio-pci": not ATTR=PATTERN or iommu_group
	drvbind: bad rule "pci/vendor=0x10de,:vfio-pci": an empty item in a set
	drvbind: bad rule "pci/=0x10de:vfio-pci": an empty item in a set
	drvbind: pci/0000:02:00.0: e1000 -> pci-stub
	EOF
	assert_driver pci 0000:01:00.0 nouveau
}

@test "with -v the line of a failed set is whole, its rollback's own lines apart" {
	gpu_slot
	fake_fault bus/pci/drivers/vfio-pci/bind EINVAL
	run drvbind -v -t 2 "pci/0000:01:00.*:vfio-pci"
	[ "$status" -eq 1 ]
	grep -qxF "drvbind: pci/0000:01:00.*: set failed; as before: 0000:01:00.0 0000:01:00.1" <<<"$output"
	assert_driver pci 0000:01:00.0 nouveau
	assert_driver pci 0000:01:00.1 snd_hda_intel
}

@test "a dry run says which devices a set would put on its driver, and writes nothing" {
	gpu_slot
	run_says 0 "drvbind: pci/0000:01:00.*: would put 0000:01:00.0 0000:01:00.1 on vfio-pci" \
		drvbind -n "pci/0000:01:00.*:vfio-pci"
	assert_driver pci 0000:01:00.0 nouveau
	assert_driver pci 0000:01:00.1 snd_hda_intel
	[ ! -s "$FAKE/log" ]
}

@test "a dry run of a set whose driver is not loaded says the set's one line, and each member's wait with -v alone" {
	gpu_slot
	run_says 0 "drvbind: pci/0000:01:00.*: would put 0000:01:00.0 0000:01:00.1 on pci-stub" \
		drvbind -n "pci/0000:01:00.*:pci-stub"
	run drvbind -n -v "pci/0000:01:00.*:pci-stub"
	[ "$status" -eq 0 ]
	grep -qxF "drvbind: pci/0000:01:00.0: would wait for pci-stub (not loaded now), then move from nouveau" <<<"$output"
	grep -qxF "drvbind: pci/0000:01:00.1: would wait for pci-stub (not loaded now), then move from snd_hda_intel" <<<"$output"
	assert_driver pci 0000:01:00.0 nouveau
	[ ! -e "$FAKE/modprobe.log" ]
	[ ! -s "$FAKE/log" ]
}

# ---- attributes of parents, as udev's ATTRS{} ----

# The serial numbers of two sticks of one model, SanDisk's 0781:5567.
SERIAL_A=4C530001230101112095
SERIAL_B=4C530001240101112096

# two_sticks: the two sticks, A in port 1 (1-1) and B in port 2 (1-2),
# each with its one mass-storage interface on usb-storage; the interfaces
# have no idVendor, idProduct or serial: their USB devices have.
two_sticks() {
	fake_driver usb usb-storage 'match=*'
	fake_device usb 1-1 idVendor=0781 idProduct=5567 serial=$SERIAL_A
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	fake_device usb 1-2 idVendor=0781 idProduct=5567 serial=$SERIAL_B
	fake_device usb 1-2:1.0 parent=1-2 class=08 driver=usb-storage
}

@test "of two identical sticks, the interface whose USB device has the set's idVendor, idProduct and serial goes to none, and the other stays on usb-storage" {
	two_sticks
	run_says 0 "drvbind: usb/*:*,idVendor=0781,idProduct=5567,serial=$SERIAL_A: 1-1:1.0 on none" \
		drvbind -t 0 "usb/*:*,idVendor=0781,idProduct=5567,serial=$SERIAL_A:none"
	assert_driver usb 1-1:1.0 none
	assert_driver usb 1-2:1.0 usb-storage
	[ "$(cat "$SYS/bus/usb/devices/1-2:1.0/authorized")" = 1 ]
	assert_log <<-EOF
	devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0/authorized 0 -> ok
	EOF
}

@test "a pattern on a parent's serial takes the interfaces of that stick alone, and -l names their rule" {
	two_sticks
	fake_conf "usb/*:*,serial=4C5300012301*:none"
	run_says 0 - drvbind -l usb <<-EOF
	usb/1-1 none idVendor=0781 idProduct=5567 serial=$SERIAL_A
	usb/1-1:1.0 usb-storage bInterfaceClass=08 rule=none
	usb/1-2 none idVendor=0781 idProduct=5567 serial=$SERIAL_B
	usb/1-2:1.0 usb-storage bInterfaceClass=08
	EOF
	run_says 0 "drvbind: usb/*:*,serial=4C5300012301*: 1-1:1.0 on none" drvbind -t 0
	assert_driver usb 1-1:1.0 none
	assert_driver usb 1-2:1.0 usb-storage
}

@test "a device's own attribute wins over its parent's of the same name: a Realtek NIC behind an Intel root port is no vendor=0x8086, the root port is" {
	fake_driver pci pcieport 'match=*'
	fake_driver pci r8169 'match=*'
	fake_driver pci pci-stub 'match=*'
	fake_device pci 0000:00:1c.0 vendor=0x8086 device=0x2940 pciclass=0x060400 override driver=pcieport
	fake_device pci 0000:01:00.0 path=pci0000:00/0000:00:1c.0 vendor=0x10ec device=0x8168 pciclass=0x020000 \
		override driver=r8169
	run_says 1 "drvbind: pci/0000:01:*,vendor=0x8086: device not found (waited 0 s)" \
		drvbind -t 0 "pci/0000:01:*,vendor=0x8086:pci-stub"
	assert_log </dev/null
	assert_driver pci 0000:01:00.0 r8169
	run_says 0 "drvbind: pci/*,vendor=0x8086: 0000:00:1c.0 on pci-stub" \
		drvbind -t 0 "pci/*,vendor=0x8086:pci-stub"
	assert_driver pci 0000:01:00.0 r8169
	assert_driver pci 0000:00:1c.0 pci-stub
}

@test "the nearest parent with the attribute wins: the root hub's serial, its controller's address, takes the interface of a keyboard without a serial of its own, not a stick's" {
	fake_driver usb usb-storage 'match=*'
	fake_driver usb usbhid 'match=*'
	fake_device usb usb1 path=pci0000:00/0000:00:1d.7 idVendor=1d6b idProduct=0002 serial=0000:00:1d.7 driver=usb
	fake_device usb 1-1 parent=usb1 idVendor=0781 idProduct=5567 serial=$SERIAL_A
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	fake_device usb 1-2 parent=usb1 idVendor=046d idProduct=c31c
	fake_device usb 1-2:1.0 parent=1-2 class=03 driver=usbhid
	run_says 0 "drvbind: usb/*:*,serial=0000:00:1d.7: 1-2:1.0 on none" \
		drvbind -t 0 "usb/*:*,serial=0000:00:1d.7:none"
	assert_driver usb 1-2:1.0 none
	assert_driver usb 1-1:1.0 usb-storage
	assert_log <<-EOF
	devices/pci0000:00/0000:00:1d.7/usb1/1-2/1-2:1.0/authorized 0 -> ok
	EOF
}

@test "an attribute that neither the device nor any parent has matches nothing: a stick without a serial is no serial=*" {
	fake_driver usb usb-storage 'match=*'
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	run_says 1 "drvbind: usb/*,serial=*: device not found (waited 0 s)" \
		drvbind -t 0 "usb/*,serial=*:none"
	assert_driver usb 1-1:1.0 usb-storage
	assert_log </dev/null
	# the same stick by its class, which the interface has: taken
	run_says 0 "drvbind: usb/*,bInterfaceClass=08: 1-1:1.0 on none" drvbind -t 0 "usb/*,bInterfaceClass=08:none"
}

@test "PCI functions behind one root port are picked by the port's secondary_bus_number, which only a bridge has, and those behind the other port stay" {
	fake_driver pci pcieport 'match=*'
	fake_driver pci e1000e 'match=*'
	fake_driver pci vfio-pci 'match=*'
	# two root ports, each a bridge with its secondary bus, and a
	# two-port NIC behind each: functions 0 and 1
	fake_device pci 0000:00:1c.0 vendor=0x8086 device=0x2940 pciclass=0x060400 override driver=pcieport
	echo 2 >"$FAKE/back/devices/pci0000:00/0000:00:1c.0/secondary_bus_number"
	fake_device pci 0000:00:1c.1 vendor=0x8086 device=0x2942 pciclass=0x060400 override driver=pcieport
	echo 3 >"$FAKE/back/devices/pci0000:00/0000:00:1c.1/secondary_bus_number"
	for f in 0 1; do
		fake_device pci "0000:02:00.$f" path=pci0000:00/0000:00:1c.0 vendor=0x8086 device=0x105e \
			pciclass=0x020000 override driver=e1000e
		fake_device pci "0000:03:00.$f" path=pci0000:00/0000:00:1c.1 vendor=0x8086 device=0x105e \
			pciclass=0x020000 override driver=e1000e
	done
	# class=0x02*: the bridge itself, whose own secondary_bus_number is 3, is left out
	run_says 0 "drvbind: pci/*,class=0x02*,secondary_bus_number=3: 0000:03:00.0 0000:03:00.1 on vfio-pci" \
		drvbind -t 0 "pci/*,class=0x02*,secondary_bus_number=3:vfio-pci"
	assert_driver pci 0000:03:00.0 vfio-pci
	assert_driver pci 0000:03:00.1 vfio-pci
	assert_driver pci 0000:02:00.0 e1000e
	assert_driver pci 0000:02:00.1 e1000e
	assert_driver pci 0000:00:1c.1 pcieport
}

@test "none on a set's unbound interface says the set's line, and with -v the member's hold too" {
	fake_driver usb usb-storage 'match=*'
	fake_device usb 1-1 idVendor=0781 idProduct=5567 serial=$SERIAL_A
	fake_device usb 1-1:1.0 parent=1-1 class=08
	run_says 0 "drvbind: usb/*:*,serial=$SERIAL_A: 1-1:1.0 on none" drvbind -t 0 "usb/*:*,serial=$SERIAL_A:none"
	[ "$(cat "$SYS/bus/usb/devices/1-1:1.0/authorized")" = 0 ]
	printf 1 >"$SYS/bus/usb/devices/1-1:1.0/authorized"
	run_says 0 - drvbind -v -t 0 "usb/*:*,serial=$SERIAL_A:none" <<-EOF
	drvbind: write bus/usb/devices/1-1:1.0/authorized "0"
	drvbind: usb/1-1:1.0: unbound; held by authorized 0
	drvbind: usb/*:*,serial=$SERIAL_A: 1-1:1.0 on none
	EOF
	assert_driver usb 1-1:1.0 none
	[ "$(cat "$SYS/bus/usb/devices/1-1:1.0/authorized")" = 0 ]
}

@test "each set form drvbind(8) and the README show takes the devices its example says" {
	fake_driver pci vfio-pci 'match=*'
	# two GPUs alike but for the card's maker and which one the firmware
	# booted on, the first with its audio function; an Intel NIC that
	# shares its IOMMU group with a USB controller
	fake_device pci 0000:01:00.0 driver=nouveau override vendor=0x10de device=0x1b80 \
		subsystem_vendor=0x1028 pciclass=0x030000 boot_vga=0 group=1
	fake_device pci 0000:01:00.1 driver=snd_hda_intel override vendor=0x10de device=0x10f0 \
		subsystem_vendor=0x1028 pciclass=0x040300 group=1
	fake_device pci 0000:02:00.0 driver=nouveau override vendor=0x10de device=0x1b80 \
		subsystem_vendor=0x1043 pciclass=0x030000 boot_vga=1 group=2
	fake_device pci 0000:03:00.0 driver=e1000 override vendor=0x8086 device=0x100e \
		pciclass=0x020000 group=3
	fake_device pci 0000:04:00.0 driver=xhci_hcd override vendor=0x1b21 device=0x1242 \
		pciclass=0x0c0330 group=3
	while read -r rule devices; do
		run_says 0 "drvbind: ${rule%:*}: would put $devices on vfio-pci" drvbind -n "$rule"
	done <<-'EOF'
	pci/0000:01:00.*:vfio-pci 0000:01:00.0 0000:01:00.1
	pci/0000:01:00.0,iommu_group:vfio-pci 0000:01:00.0 0000:01:00.1
	pci/vendor=0x10de,device=0x1b80,boot_vga=0:vfio-pci 0000:01:00.0
	pci/vendor=0x8086,class=0x0200*,iommu_group:vfio-pci 0000:03:00.0 0000:04:00.0
	pci/subsystem_vendor=0x1028,device=0x1b80:vfio-pci 0000:01:00.0
	EOF
	[ ! -s "$FAKE/log" ]
}

@test "devices present move in the written order of the rules for one device each, then every set's devices in the order of their bus ids" {
	local d
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	for d in 0000:01:00.0 0000:01:00.1 0000:02:00.0 0000:03:00.0 0000:03:00.1 0000:04:00.0; do
		fake_device pci "$d" driver=e1000 override
	done
	run_says 0 - drvbind -t 0 "pci/0000:03:00.*:pci-stub" pci/0000:04:00.0:pci-stub \
		"pci/0000:01:00.*:pci-stub" pci/0000:02:00.0:pci-stub <<-EOF
	drvbind: pci/0000:04:00.0: e1000 -> pci-stub
	drvbind: pci/0000:02:00.0: e1000 -> pci-stub
	drvbind: pci/0000:03:00.*: 0000:03:00.0 0000:03:00.1 on pci-stub
	drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 on pci-stub
	EOF
	# the order of the moves: each device's unbind, then its bind
	run awk '$1 ~ /bind$/ { print $2 }' "$FAKE/log"
	assert_output_is <<-EOF
	$(for d in 04:00.0 02:00.0 01:00.0 01:00.1 03:00.0 03:00.1; do
		printf '0000:%s\n' "$d" "$d"
	done)
	EOF
}
