#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# What the real kernel does that a plain look at sysfs misses: a driver
# binds the devices present while it registers, before its bind and
# unbind files exist and before its add uevent; a USB interface has no
# driver_override but has authorized; a bus with neither can only be
# watched. The fake replays each in the kernel's order (order.bats).

load helper

SERIO_DEV=devices/platform/i8042/serio0

# interface_is D|none 0|1: the interface on driver D, or on none
# (assert_driver), and its authorized (authorized_is)
interface_is() {
	assert_driver usb "$USB_IF" "$1" && authorized_is "$2"
}

# uas_refused BIND MESSAGE [OPTION...]: drvbind OPTIONs moving
# stick_on_storage's interface to uas, whose bind answers BIND, fails
# with MESSAGE, exit 1, and rolls back: usb-storage's unbind, the bind,
# authorized put back to 1 as it was, usb-storage's bind; the interface
# ends on usb-storage, authorized.
uas_refused() {
	run_says 1 "$2" drvbind "${@:3}" "usb/$USB_IF:uas"
	interface_is usb-storage 1
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/unbind $USB_IF -> ok
	bus/usb/drivers/uas/bind $USB_IF -> $1
	$USB_IF_DEV/authorized 1 -> ok
	bus/usb/drivers/usb-storage/bind $USB_IF -> ok
	EOF
}

@test "a move waits while the device's native driver is registering, and completes on that driver's add uevent" {
	fake_driver pci pci-stub
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	# e1000 binds the NIC inside driver_register: no unbind file yet
	fake_register pci e1000 "match=$E1000" steps=attach
	assert_driver pci "$E1000" e1000
	fake_later idle fake_register_rest pci e1000
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub" drvbind -t 5 "pci/$E1000:pci-stub"
	assert_driver pci "$E1000" pci-stub
	# the override held the NIC while e1000 finished registering
	assert_log <<<"$E1000_TO_STUB"
}

@test "a driver that never finishes registering fails the move at the deadline, and the device stays on it" {
	fake_driver pci pci-stub
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	fake_register pci e1000 "match=$E1000" steps=attach
	run_says 1 "drvbind: pci/$E1000: e1000 -> pci-stub failed at unbind: No such file or directory; back on e1000" \
		drvbind -t 1 "pci/$E1000:pci-stub"
	nic_is e1000 '(null)'
}

@test "none on a device whose driver is unregistering waits for its unbind, and names the driver it had" {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override driver=e1000
	# bind and unbind are gone; the device is still bound
	fake_unregister pci e1000 steps=unbind
	fake_later idle fake_unregister_rest pci e1000
	run_says 0 "drvbind: pci/$E1000: e1000 -> none" drvbind -t 5 "pci/$E1000:none"
	nic_is none none
}

@test "none on a USB interface writes authorized 0, which unbinds its driver, with no unbind" {
	usb_stick driver=usb-storage
	run_says 0 "drvbind: usb/$USB_IF: usb-storage -> none" drvbind "usb/$USB_IF:none"
	interface_is none 0
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0 -> ok
	EOF
}

@test "none on a USB interface lasts: a driver that registers after drvbind exited cannot take it" {
	usb_stick
	run_says 0 "drvbind: usb/$USB_IF: unbound; held by authorized 0" drvbind -t 0 "usb/$USB_IF:none"
	fake_register usb usb-storage "match=$USB_IF"
	fake_probe usb "$USB_IF"
	interface_is none 0
}

@test "none on a USB interface whose native driver is registering unbinds it at once through authorized" {
	usb_stick
	fake_register usb usb-storage "match=$USB_IF" steps=attach
	assert_driver usb "$USB_IF" usb-storage
	run_says 0 "drvbind: usb/$USB_IF: usb-storage -> none" drvbind -t 5 "usb/$USB_IF:none"
	fake_register_rest usb usb-storage
	interface_is none 0
}

@test "a USB interface waiting for a driver not registered yet is held by authorized 0 against its native driver, then bound" {
	usb_stick
	fake_later idle fake_register usb usb-storage "match=$USB_IF" \; fake_register usb uas "match=$USB_IF"
	run drvbind -t 5 "usb/$USB_IF:uas"
	[ "$status" -eq 0 ]
	# usb-storage registered first and could not take the interface
	assert_output_is "drvbind: usb/$USB_IF: none -> uas"
	interface_is uas 1
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0 -> ok
	$USB_IF_DEV/authorized 1 -> ok
	bus/usb/drivers/uas/bind $USB_IF -> ok
	EOF
}

@test "a USB interface held for a driver that never comes is authorized again and probed, so its native driver takes it back" {
	usb_stick
	fake_driver usb usb-storage "match=$USB_IF"
	run_says 1 "drvbind: usb/$USB_IF: driver uas not found; now on usb-storage (waited 1 s)" \
		drvbind -t 1 "usb/$USB_IF:uas"
	interface_is usb-storage 1
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0 -> ok
	$USB_IF_DEV/authorized 1 -> ok
	bus/usb/drivers_probe $USB_IF -> ok
	EOF
}

@test "a move of a USB interface left at authorized 0 authorizes it before the bind" {
	usb_stick
	fake_driver usb usb-storage "match=$USB_IF"
	printf 0 >"$SYS/$USB_IF_DEV/authorized"
	: >"$FAKE/log"
	run_says 0 "drvbind: usb/$USB_IF: none -> usb-storage" drvbind "usb/$USB_IF:usb-storage"
	interface_is usb-storage 1
	assert_log <<-EOF
	$USB_IF_DEV/authorized 1 -> ok
	bus/usb/drivers/usb-storage/bind $USB_IF -> ok
	EOF
}

@test "a failed bind of a USB interface puts authorized back as it was and rebinds the old driver" {
	stick_on_storage
	fake_driver usb uas "match=$USB_IF" probe=EIO
	uas_refused EIO "drvbind: usb/$USB_IF: usb-storage -> uas failed at bind: I/O error; back on usb-storage"
}

@test "a move of a USB interface to a driver that makes new_id after its add uevent looks again and teaches it" {
	stick_on_storage
	# usb_register_driver: bind files and the add uevent, new_id later.
	# The kernel makes new_id at once, and drvbind looks again for a
	# second from its first bind, refused. The fake's steps are a
	# shell's: drvbind is stopped at that bind until the job has found
	# it, then again once it waits, while new_id and remove_id are made.
	fake_register usb uas new_id steps=add
	fake_fault bus/usb/drivers/uas/bind stop
	fake_later 0 on_stop drvbind_find \; when_idle paused fake_register_rest usb uas
	run_says 0 "drvbind: usb/$USB_IF: usb-storage -> uas (new_id \"0781 5567 08\")" \
		drvbind -t 10 "usb/$USB_IF:uas"
	interface_is uas 1
	# the first bind came before new_id, the second after it
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/unbind $USB_IF -> ok
	bus/usb/drivers/uas/bind $USB_IF -> ENODEV
	bus/usb/drivers/uas/bind $USB_IF -> ENODEV
	bus/usb/drivers/uas/new_id 0781 5567 08 -> ok
	bus/usb/drivers/uas/remove_id 0781 5567 08 -> ok
	EOF
}

@test "a move of a USB interface to a driver that never gets new_id fails after a second, back on its driver" {
	stick_on_storage
	fake_driver usb uas
	# one bind, then no write while it looked again for new_id
	uas_refused ENODEV "drvbind: usb/$USB_IF: usb-storage -> uas failed at bind: No such device; back on usb-storage" -t 5
}

@test "none on a bus without driver_override or authorized unbinds a driver that binds the device while drvbind watches" {
	fake_driver serio atkbd match=serio0
	fake_device serio serio0 driver=atkbd
	# the probe once drvbind watches; it watches to its deadline, which
	# leaves a loaded machine's shell time enough to make it
	fake_later idle fake_probe serio serio0
	run_says 0 - drvbind -t 5 serio/serio0:none <<-EOF
	drvbind: serio/serio0: atkbd -> none
	drvbind: serio/serio0: atkbd bound it; unbound again
	EOF
	assert_driver serio serio0 none
	assert_log <<-EOF
	bus/serio/drivers/atkbd/unbind serio0 -> ok
	bus/serio/drivers_probe serio0 -> ok
	bus/serio/drivers/atkbd/unbind serio0 -> ok
	EOF
}

@test "none on a bus nothing can hold waits on the unbind of a driver that is registering" {
	fake_device serio serio0
	fake_register serio atkbd match=serio0 steps=attach
	assert_driver serio serio0 atkbd
	fake_later idle fake_register_rest serio atkbd
	run_says 0 "drvbind: serio/serio0: atkbd -> none" drvbind -t 5 serio/serio0:none
	assert_driver serio serio0 none
}

@test "none on a USB device (no interface: authorized there only deconfigures it) is watched, not held" {
	fake_device usb 1-1 idVendor=0781 idProduct=5567 driver=usb
	run_says 0 "drvbind: usb/1-1: usb -> none" drvbind -t 0 usb/1-1:none
	assert_driver usb 1-1 none
	assert_log <<-EOF
	bus/usb/drivers/usb/unbind 1-1 -> ok
	EOF
}
