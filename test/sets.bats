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
	run drvbind -l pci
	[ "$status" -eq 0 ]
	grep -qx "pci/0000:01:00.0 nouveau rule=vfio-pci" <<<"$output"
	grep -qx "pci/0000:01:00.1 snd_hda_intel rule=vfio-pci" <<<"$output"
	grep -qx "pci/0000:02:00.0 e1000" <<<"$output"
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
