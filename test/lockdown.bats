#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A lockdown that fails closed: a rule to none, and every hold of a set
# to none, never hands a device to a driver, not when a limit binds, not
# when a step fails, not on a rollback; a follower's limits last a
# lifetime; and only events about a rule's device or driver cost a look
# or a write. The hostile devices here are the fake kernel's: one with
# more interfaces than a set holds, one stick in port after port.

load helper

# storage_device PORT N: a USB device at PORT (1-PORT) with N interfaces
# of mass-storage class 08, each on usb-storage
storage_device() {
	local i
	fake_device usb "1-$1" idVendor=0781 idProduct=5567
	for ((i = 0; i < $2; i++)); do
		fake_device usb "1-$1:1.$i" parent="1-$1" class=08 driver=usb-storage
	done
}

# all_held PORT N: every one of the N interfaces of storage_device PORT
# is driverless and authorized 0
all_held() {
	local i
	for ((i = 0; i < $2; i++)); do
		assert_driver usb "1-$1:1.$i" none || return 1
		[ "$(cat "$SYS/bus/usb/devices/1-$1:1.$i/authorized")" = 0 ] || {
			echo "1-$1:1.$i is authorized $(cat "$SYS/bus/usb/devices/1-$1:1.$i/authorized")"
			return 1
		}
	done
}

# gpu_slot: a GPU's two functions, 0000:01:00.0 on nouveau and .1 on
# snd_hda_intel, each with driver_override, and vfio-pci
gpu_slot() {
	fake_driver pci nouveau 'match=*'
	fake_driver pci snd_hda_intel 'match=*'
	fake_driver pci e1000 'match=*'
	fake_driver pci vfio-pci 'match=*'
	fake_device pci 0000:01:00.0 driver=nouveau override vendor=0x10de device=0x1b80
	fake_device pci 0000:01:00.1 driver=snd_hda_intel override vendor=0x10de device=0x10f0
}

@test "a none set holds every interface of a device with more than 64 of them, and names those beyond the limit" {
	fake_driver usb usb-storage 'match=*'
	storage_device 1 70
	run drvbind -t 1 "usb/*,bInterfaceClass=08:none"
	[ "$status" -eq 0 ]
	all_held 1 70
	# a directory's order, as the kernel lists it: the first 64 found are members
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "drvbind: usb/*,bInterfaceClass=08: more than 64 devices; held all the same: 1-1:1."* ]]
	[ "$(tr ' ' '\n' <<<"${lines[0]}" | grep -c '^1-1:1\.[0-9]*$')" -eq 6 ]
	[[ ${lines[1]} == "drvbind: usb/*,bInterfaceClass=08: 1-1:1."*" on none" ]]
	[ "$(tr ' ' '\n' <<<"${lines[1]}" | grep -c '^1-1:1\.[0-9]*$')" -eq 64 ]
	! grep -q 'authorized 1 ' "$FAKE/log"
}

@test "a set that moves devices to a driver still fails whole past 64, and every device stays where it was" {
	fake_driver usb usb-storage 'match=*'
	fake_driver usb usbip-host 'match=*'
	storage_device 1 70
	run drvbind -t 1 "usb/*,bInterfaceClass=08:usbip-host"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "drvbind: usb/*,bInterfaceClass=08: more than 64 devices" ]
	[[ ${lines[1]} == "drvbind: usb/*,bInterfaceClass=08: set failed; as before: 1-1:1."* ]]
	[ -z "$(ls "$SYS/bus/usb/drivers/usbip-host" | grep '^1-')" ]
}

@test "a following none set holds devices on three hubs' worth of ports past its limit, and takes the later ones as members once earlier ones leave" {
	fake_driver usb usb-storage 'match=*'
	storage_device 1 30
	storage_device 2 30
	follow "usb/*,bInterfaceClass=08:none"
	idle
	all_held 1 30
	all_held 2 30
	# a third device of 30 interfaces: 26 beyond the set's 64
	stopped storage_device 3 30
	stopped fake_uevent add "$FAKE_DEVPATH" SUBSYSTEM=usb
	idle
	all_held 3 30
	grep -qx "drvbind: usb/\*,bInterfaceClass=08: more than 64 devices; held all the same:.*" "$FAKE/follow.out"
	# the first goes: its slots are given back, and a replug of the
	# third is held by members again
	for ((i = 0; i < 30; i++)); do
		fake_ctl unplug usb "1-1:1.$i"
	done
	idle
	for ((i = 0; i < 30; i++)); do
		fake_ctl unplug usb "1-3:1.$i"
		fake_ctl replug usb "1-3:1.$i"
	done
	idle
	all_held 2 30
	all_held 3 30
	follow_end_ok
}

@test "one stick plugged and unplugged at 200 ports in turn is held at every one: a follower gives back the slots of devices that left" {
	local p
	fake_driver usb usb-storage 'match=*'
	for ((p = 1; p <= 200; p++)); do
		storage_device "$p" 1
		fake_ctl unplug usb "1-$p:1.0"
	done
	follow "usb/*,bInterfaceClass=08:none"
	for ((p = 1; p <= 200; p++)); do
		fake_ctl replug usb "1-$p:1.0"
		idle
		all_held "$p" 1 || { echo "port $p"; return 1; }
		fake_ctl unplug usb "1-$p:1.0"
	done
	idle
	! grep -q 'more than' "$FAKE/follow.out"
	follow_end_ok
}

@test "a rule to none whose unbind fails keeps driver_override none and says so, and nothing binds the device back" {
	pci_stub_setup
	fake_fault "bus/pci/drivers/e1000/unbind" EIO
	run_says 1 "drvbind: pci/$E1000: e1000 -> none failed at unbind: I/O error; held by driver_override none, still on e1000" \
		drvbind -t 1 "pci/$E1000:none"
	[ "$(cat "$SYS/bus/pci/devices/$E1000/driver_override")" = none ]
	assert_log <<-EOF
	$E1000_DEV/driver_override none -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> EIO
	EOF
}

@test "a none set whose member fails keeps its other members held" {
	fake_driver usb usb-storage 'match=*'
	storage_device 1 1
	storage_device 2 1
	fake_fault "devices/pci0000:00/0000:00:1d.7/usb1/1-2/1-2:1.0/authorized" EIO
	run drvbind -t 1 "usb/*,bInterfaceClass=08:none"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "drvbind: usb/1-2:1.0: usb-storage -> none failed at authorized: I/O error; still on usb-storage" ]
	[ "${lines[1]}" = "drvbind: usb/*,bInterfaceClass=08: set failed; still held: 1-1:1.0" ]
	[ "${#lines[@]}" -eq 2 ]
	all_held 1 1
	assert_driver usb 1-2:1.0 usb-storage
	! grep -q 'authorized 1 ' "$FAKE/log"
}

@test "an add uevent that no rule's device or driver sends, as a FUSE mount by any user does, makes a failed set write nothing" {
	gpu_slot
	fake_fault bus/pci/drivers/vfio-pci/bind EINVAL always
	follow -t 1 "pci/0000:01:00.*:vfio-pci"
	idle
	grep -q 'set failed' "$FAKE/follow.out"
	cp "$FAKE/log" "$FAKE/log.before"
	# a FUSE mount's bdi, another bus's device of a member's name, and
	# a device of the set's bus that it does not match
	fake_uevent add /devices/virtual/bdi/0:99 SUBSYSTEM=bdi
	fake_uevent add /devices/virtual/misc/0000:01:00.0 SUBSYSTEM=misc
	fake_device pci 0000:02:00.0 driver=e1000 override
	fake_uevent add "$FAKE_DEVPATH" SUBSYSTEM=pci
	idle
	diff "$FAKE/log.before" "$FAKE/log"
	# its own device's add is a reason to try again
	fake_uevent add /devices/pci0000:00/0000:01:00.0 SUBSYSTEM=pci
	idle
	! diff -q "$FAKE/log.before" "$FAKE/log" >/dev/null
	follow_end_ok
}

@test "an overflow of the uevent socket makes a follower look at its rules again, but a failed rule moves and rolls back no more" {
	gpu_slot
	fake_fault bus/pci/drivers/vfio-pci/bind EINVAL always
	follow -t 1 "pci/0000:01:00.0:vfio-pci"
	idle
	grep -q 'failed at bind' "$FAKE/follow.out"
	cp "$FAKE/log" "$FAKE/log.before"
	stopped fake_ns "$UEVENT" -n 2000 change /devices/virtual/misc/burst "PAD=$(printf '%01000d' 0)"
	idle
	diff "$FAKE/log.before" "$FAKE/log"
	follow_end_ok
}
