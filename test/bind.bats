#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The procedure of one rule on devices and drivers that are already
# there: driver_override, unbind, bind (match_busid, new_id), the check
# of the driver link, and the rollback after any failure.  Every test
# compares the whole write log, so the order of the writes is checked.

load helper

# A USB flash drive: the device 1-1 and its mass-storage interface 1-1:1.0.
usb_setup() {
	fake_device usb 1-1 idVendor=0781 idProduct=5567 "$@"
	fake_device usb 1-1:1.0 parent=1-1 class=08
}

# usbip_setup [ARG...]: the flash drive's device 1-1 on the generic usb
# driver, and usbip-host beside it, with match_busid, as usbip-host
# registers (ARGs go to usbip-host); both take any device.
usbip_setup() {
	fake_driver usb usb match=*
	fake_driver usb usbip-host match=* match_busid "$@"
	usb_setup driver=usb
}

# usb_on_storage [DRIVER...]: the flash drive with its interface bound to
# usb-storage through the mount, DRIVERs beside it (each takes any
# device), and the write log emptied of that bind: the start of every
# test that moves the interface off a driver.
usb_on_storage() {
	local d
	for d in usb-storage "$@"; do
		fake_driver usb "$d" match=*
	done
	usb_setup
	printf %s 1-1:1.0 >"$SYS/bus/usb/drivers/usb-storage/bind"
	: >"$FAKE/log"
}

# probe_first BUS DRIVER ERR [COMMAND...]: the driver's probe answers
# ERR the first time, after COMMAND has run in the backing tree, and
# succeeds from then on.  The fake reads the probe outcome afresh for
# each probe, so a FIFO makes each read one step: the writer runs
# COMMAND while the fake waits for it, hands out ERR, then empty outcomes.
probe_first() {
	local f=$FAKE/back/bus/$1/drivers/$2/.fake_probe err=$3
	shift 3
	rm -f "$f"
	mkfifo "$f"
	(
		exec 4>"$f"
		"$@"
		printf '%s\n' "$err" >&4
		exec 4>&-
		while :; do
			: >"$f"
		done
	) </dev/null >/dev/null 2>&1 3>&- &
	echo $! >>"$FAKE/pids"
}

# native_bind BUS ID DRIVER: the driver's own probe takes the device,
# links made straight in the backing tree while the fake is busy.
native_bind() {
	local dev up
	dev=$(_fake_devrel "$2") || return 1
	up=$(_fake_up "$dev")
	ln -s "${up}bus/$1/drivers/$3" "$FAKE/back/$dev/driver"
	ln -s "../../../../$dev" "$FAKE/back/bus/$1/drivers/$3/$2"
}

# probe_refused ERR BIND MESSAGE: the rollback tests: the move of the NIC
# to a vfio-pci whose probe refuses it with ERR, and whose bind so
# answered BIND, fails with MESSAGE, exit 1, and is rolled back: the
# NIC is on e1000 again, its override cleared.
probe_refused() {
	pci_setup match=* "probe=$1"
	run_says 1 "$3" drvbind "pci/$E1000:vfio-pci"
	nic_is e1000 "(null)"
	assert_rollback_log "$2"
}

# moved_to_uas <<EOF WRITES EOF: drvbind moves usb_on_storage's interface
# to uas and says so, exit 0, the write log is WRITES exactly, and the
# interface ends on uas.
moved_to_uas() {
	run_says 0 "drvbind: usb/1-1:1.0: usb-storage -> uas" drvbind usb/1-1:1.0:uas
	assert_log
	assert_driver usb 1-1:1.0 uas
}

@test "a device already on the rule's driver is left alone and nothing is written" {
	pci_setup
	run_says 0 "drvbind: pci/$E1000: already on e1000" drvbind "pci/$E1000:e1000"
	assert_log </dev/null
	assert_driver pci "$E1000" e1000
}

@test "an unbound USB interface is bound with one write to the driver's bind" {
	fake_driver usb usb-storage match=1-1:1.0
	usb_setup
	run_says 0 "drvbind: usb/1-1:1.0: none -> usb-storage" drvbind usb/1-1:1.0:usb-storage
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/bind 1-1:1.0 -> ok
	EOF
	assert_driver usb 1-1:1.0 usb-storage
}

@test "on PCI the override is written first, then the old driver unbinds, then the new one binds" {
	pci_setup
	run_says 0 "drvbind: pci/$E1000: e1000 -> vfio-pci" drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$E1000_DEV/driver_override vfio-pci -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	bus/pci/drivers/vfio-pci/bind $E1000 -> ok
	EOF
	assert_driver pci "$E1000" vfio-pci
	# the override stays, so that no other driver takes the device later
	override_is vfio-pci
}

@test "on a bus without driver_override the device is unbound, then bound to the new driver" {
	usb_on_storage uas
	moved_to_uas <<-EOF
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	bus/usb/drivers/uas/bind 1-1:1.0 -> ok
	EOF
}

@test "none on PCI writes none to driver_override, then unbinds" {
	pci_setup
	run_says 0 "drvbind: pci/$E1000: e1000 -> none" drvbind "pci/$E1000:none"
	assert_log <<-EOF
	$E1000_DEV/driver_override none -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	EOF
	nic_is none none
}

@test "none on a bus without driver_override or authorized only unbinds, then watches until the deadline" {
	fake_driver usb usb-storage match=*
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08 noauth
	printf %s 1-1:1.0 >"$SYS/bus/usb/drivers/usb-storage/bind"
	: >"$FAKE/log"
	run_says 0 "drvbind: usb/1-1:1.0: usb-storage -> none" drvbind -t 0 usb/1-1:1.0:none
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	EOF
	assert_driver usb 1-1:1.0 none
}

@test "none on an unbound PCI device writes none to driver_override, waits out any probe through drivers_probe, and says it is held so" {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 0 "drvbind: pci/$E1000: unbound; held by driver_override none" drvbind "pci/$E1000:none"
	assert_log <<-EOF
	$E1000_DEV/driver_override none -> ok
	bus/pci/drivers_probe $E1000 -> ok
	EOF
	nic_is none none
	# a later drivers_probe cannot hand it to e1000 any more
	printf %s "$E1000" >"$SYS/bus/pci/drivers_probe"
	assert_driver pci "$E1000" none
}

@test "none run again on a PCI device it already holds says already unbound, and writes nothing" {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 0 "drvbind: pci/$E1000: unbound; held by driver_override none" drvbind "pci/$E1000:none"
	: >"$FAKE/log"
	run_says 0 "drvbind: pci/$E1000: already unbound" drvbind "pci/$E1000:none"
	assert_log </dev/null
	nic_is none none
}

@test "a PCI driver that lacks the id is taught it through new_id, which binds at once, then the id is removed" {
	# PCI before 3.16: no driver_override, so the id table decides
	pci_new_id_setup
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub (new_id \"8086 100e\")" \
		drvbind "pci/$E1000:pci-stub"
	assert_log <<<"$(stub_taught_writes)"
	assert_driver pci "$E1000" pci-stub
}

@test "a USB interface is taught through new_id as its device's idVendor and idProduct with its class" {
	fake_driver usb usb-storage new_id
	usb_setup
	run_says 0 "drvbind: usb/1-1:1.0: none -> usb-storage (new_id \"0781 5567 08\")" \
		drvbind usb/1-1:1.0:usb-storage
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/bind 1-1:1.0 -> ENODEV
	bus/usb/drivers/usb-storage/new_id 0781 5567 08 -> ok
	bus/usb/drivers/usb-storage/remove_id 0781 5567 08 -> ok
	EOF
	assert_driver usb 1-1:1.0 usb-storage
}

@test "when new_id leaves the device unbound drvbind binds it itself before remove_id" {
	fake_driver usb usb-storage new_id
	usb_setup
	# the probe run by new_id is deferred; the bind after it succeeds
	probe_first usb usb-storage EPROBE_DEFER
	run_says 0 "drvbind: usb/1-1:1.0: none -> usb-storage (new_id \"0781 5567 08\")" \
		drvbind usb/1-1:1.0:usb-storage
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/bind 1-1:1.0 -> ENODEV
	bus/usb/drivers/usb-storage/new_id 0781 5567 08 -> ok
	bus/usb/drivers/usb-storage/bind 1-1:1.0 -> ok
	bus/usb/drivers/usb-storage/remove_id 0781 5567 08 -> ok
	EOF
	assert_driver usb 1-1:1.0 usb-storage
}

@test "usbip-host gets add BUSID in match_busid before the bind" {
	usbip_setup
	run_says 0 "drvbind: usb/1-1: usb -> usbip-host" drvbind usb/1-1:usbip-host
	assert_log <<-EOF
	bus/usb/drivers/usb/unbind 1-1 -> ok
	bus/usb/drivers/usbip-host/match_busid add 1-1 -> ok
	bus/usb/drivers/usbip-host/bind 1-1 -> ok
	EOF
	assert_driver usb 1-1 usbip-host
}

@test "a refused usbip-host bind takes the bus id out of match_busid and rebinds the old driver" {
	usbip_setup probe=ENXIO
	run_says 1 "drvbind: usb/1-1: usb -> usbip-host failed at bind: No such device or address; back on usb" \
		drvbind usb/1-1:usbip-host
	assert_log <<-EOF
	bus/usb/drivers/usb/unbind 1-1 -> ok
	bus/usb/drivers/usbip-host/match_busid add 1-1 -> ok
	bus/usb/drivers/usbip-host/bind 1-1 -> ENXIO
	bus/usb/drivers/usbip-host/match_busid del 1-1 -> ok
	bus/usb/drivers/usb/bind 1-1 -> ok
	EOF
	assert_driver usb 1-1 usb
}

@test "a probe refusing with EINVAL is rolled back to the old driver with the override cleared" {
	probe_refused EINVAL EINVAL \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000"
}

@test "a probe refusing with ENXIO is rolled back to the old driver with the override cleared" {
	probe_refused ENXIO ENXIO \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: No such device or address; back on e1000"
}

@test "a probe refusing with ENODEV on a driver without new_id is rolled back" {
	probe_refused ENODEV ENODEV \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: No such device; back on e1000"
}

@test "a probe answering EAGAIN is rolled back to the old driver" {
	probe_refused EAGAIN EAGAIN \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Resource temporarily unavailable; back on e1000"
}

@test "a deferred probe, EAGAIN from bind, is rolled back to the old driver" {
	probe_refused EPROBE_DEFER EAGAIN \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Resource temporarily unavailable; back on e1000"
}

@test "a bind that succeeds without binding fails the check of the driver link and is rolled back" {
	probe_refused silent ok \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at verify: not bound; back on e1000"
}

@test "a failed move of a device that had no driver leaves it unbound with the override cleared" {
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci vfio-pci match=* probe=EINVAL
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 1 "drvbind: pci/$E1000: none -> vfio-pci failed at bind: Invalid argument; left unbound" \
		drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$E1000_DEV/driver_override vfio-pci -> ok
	bus/pci/drivers/vfio-pci/bind $E1000 -> EINVAL
	$E1000_DEV/driver_override \\n -> ok
	EOF
	nic_is none "(null)"
}

@test "an unbind failing with EIO is reported and the device stays on its driver" {
	pci_setup
	fake_fault bus/pci/drivers/e1000/unbind EIO
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at unbind: I/O error; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$E1000_DEV/driver_override vfio-pci -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> EIO
	$E1000_DEV/driver_override \\n -> ok
	EOF
	nic_is e1000 "(null)"
}

@test "a short write to bind is a failure and is rolled back" {
	pci_setup
	fake_fault bus/pci/drivers/vfio-pci/bind short
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: short write; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_rollback_log short
	assert_driver pci "$E1000" e1000
}

@test "EINTR on driver_override stops the move before any unbind" {
	pci_setup
	fake_fault "bus/pci/devices/$E1000/driver_override" EINTR
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at driver_override: Interrupted system call; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$E1000_DEV/driver_override vfio-pci -> EINTR
	$E1000_DEV/driver_override \\n -> ok
	EOF
	nic_is e1000 "(null)"
}

@test "a rollback refused by the old driver is reported with its own step and error" {
	rollback_refused EINVAL EIO EINVAL \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; rollback to e1000 failed at bind: I/O error"
}

@test "a bind answering EBUSY once makes drvbind look at the device again and bind it" {
	pci_setup
	fake_fault bus/pci/drivers/vfio-pci/bind EBUSY
	run_says 0 "drvbind: pci/$E1000: e1000 -> vfio-pci" drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$E1000_DEV/driver_override vfio-pci -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	bus/pci/drivers/vfio-pci/bind $E1000 -> EBUSY
	bus/pci/drivers/vfio-pci/bind $E1000 -> ok
	EOF
	assert_driver pci "$E1000" vfio-pci
}

@test "a device the native driver takes before the bind is unbound from it and bound again" {
	usb_on_storage uas
	# usb-storage's own probe takes the interface while uas's bind runs
	probe_first usb uas EBUSY native_bind usb 1-1:1.0 usb-storage
	moved_to_uas <<-EOF
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	bus/usb/drivers/uas/bind 1-1:1.0 -> EBUSY
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	bus/usb/drivers/uas/bind 1-1:1.0 -> ok
	EOF
}

@test "a bind that stays EBUSY is given up, reported as a bind failure and rolled back" {
	pci_setup
	fake_fault bus/pci/drivers/vfio-pci/bind EBUSY always
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Resource busy; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	nic_is e1000 "(null)"
	[ "$(sed -n 1p "$FAKE/log")" = "$E1000_DEV/driver_override vfio-pci -> ok" ]
	[ "$(sed -n 2p "$FAKE/log")" = "bus/pci/drivers/e1000/unbind $E1000 -> ok" ]
	log_has "bus/pci/drivers/vfio-pci/bind $E1000 -> EBUSY"
	log_has "$E1000_DEV/driver_override \\n -> ok"
	[ "$(tail -n 1 "$FAKE/log")" = "bus/pci/drivers/e1000/bind $E1000 -> ok" ]
}

@test "an unbind answering ENODEV because the device changed hands is looked at again" {
	usb_on_storage uas
	fake_fault bus/usb/drivers/usb-storage/unbind ENODEV
	moved_to_uas <<-EOF
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ENODEV
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	bus/usb/drivers/uas/bind 1-1:1.0 -> ok
	EOF
}

@test "a driver_override that held a value before is put back on rollback" {
	pci_setup match=* probe=ENXIO
	echo e1000 >"$FAKE/back/$E1000_DEV/driver_override"
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: No such device or address; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$(vfio_writes ENXIO)
	$E1000_DEV/driver_override e1000 -> ok
	bus/pci/drivers/e1000/bind $E1000 -> ok
	EOF
	nic_is e1000 e1000
}

@test "a dry run writes nothing at all and says what it would do" {
	pci_setup
	usb_on_storage uas
	fake_device pci 0000:00:03.0 override
	run_says 0 - drvbind -n "pci/$E1000:vfio-pci" usb/1-1:1.0:usb-storage \
		pci/0000:00:03.0:none usb/1-1:none <<-EOF
	drvbind: pci/$E1000: would move e1000 -> vfio-pci
	drvbind: usb/1-1:1.0: would stay on usb-storage
	drvbind: pci/0000:00:03.0: would stay unbound
	drvbind: usb/1-1: would stay unbound
	EOF
	assert_log </dev/null
	assert_driver pci "$E1000" e1000
	assert_driver usb 1-1:1.0 usb-storage
	override_is "(null)"
}

@test "a dry run whose driver is not loaded says it would wait for it, then move from the driver the device is on or from none, asks no modprobe, writes nothing and exits 0" {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override driver=e1000
	fake_device pci 0000:00:03.0 vendor=0x8086 device=0x100e override
	usb_on_storage
	start=$SECONDS
	# the default timeout, 10 s: a dry run waits for nothing
	run_says 0 - drvbind -n "pci/$E1000:vfio-pci" pci/0000:00:03.0:vfio-pci usb/1-1:1.0:uas <<-EOF
	drvbind: pci/$E1000: would wait for vfio-pci (not loaded now), then move from e1000
	drvbind: pci/0000:00:03.0: would wait for vfio-pci (not loaded now), then move from none
	drvbind: usb/1-1:1.0: would wait for uas (not loaded now), then move from usb-storage
	EOF
	((SECONDS - start < 8))
	[ ! -e "$FAKE/modprobe.log" ]
	assert_log </dev/null
	nic_is e1000 "(null)"
	assert_driver pci 0000:00:03.0 none
	override_of pci 0000:00:03.0 "(null)"
	assert_driver usb 1-1:1.0 usb-storage
	[ "$(cat "$SYS/bus/usb/devices/1-1:1.0/authorized")" = 1 ]
}

@test "a dry run beside a rule whose device is missing still exits 1 for that rule alone" {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override driver=e1000
	run_says 1 - drvbind -n "pci/$E1000:vfio-pci" pci/0000:00:09.0:vfio-pci <<-EOF
	drvbind: pci/$E1000: would wait for vfio-pci (not loaded now), then move from e1000
	drvbind: pci/0000:00:09.0: device not found (waited 0 s)
	EOF
	[ ! -e "$FAKE/modprobe.log" ]
	assert_log </dev/null
}

@test "none on an unbound USB interface writes authorized 0 and says it is held so; run again it says already unbound and writes nothing" {
	fake_driver usb usb-storage match=1-1:1.0
	usb_setup
	run_says 0 "drvbind: usb/1-1:1.0: unbound; held by authorized 0" drvbind usb/1-1:1.0:none
	assert_log <<-EOF
	devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0/authorized 0 -> ok
	EOF
	: >"$FAKE/log"
	run_says 0 "drvbind: usb/1-1:1.0: already unbound" drvbind usb/1-1:1.0:none
	assert_log </dev/null
	assert_driver usb 1-1:1.0 none
	[ "$(cat "$SYS/bus/usb/devices/1-1:1.0/authorized")" = 0 ]
}

# list_setup: a tree for -l, each bus's devices made out of the order of
# their ids, the buses too: a USB root hub, usb1, with two sticks of the
# same model (1-1, and 1-10 in port 10) and the first one's interface on
# usb-storage; pnp_setup's serial port; the EHCI controller the hub is
# on, the NIC on e1000 (pci_setup) and 0000:00:03.0 with an override of
# vfio-pci set; and platform, a bus without drivers or devices.
list_setup() {
	fake_driver usb usb-storage "match=1-1:1.0"
	fake_device usb usb1 path=pci0000:00/0000:00:1d.7 idVendor=1d6b idProduct=0002 \
		serial=0000:00:1d.7 driver=usb
	fake_device usb 1-10 parent=usb1 idVendor=0781 idProduct=5567 serial=4C530001240101112096
	fake_device usb 1-1:1.0 path=pci0000:00/0000:00:1d.7/usb1/1-1 class=08
	fake_device usb 1-1 parent=usb1 idVendor=0781 idProduct=5567 serial=4C530001230101112095
	printf %s 1-1:1.0 >"$SYS/bus/usb/drivers/usb-storage/bind"
	pnp_setup
	fake_device pci 0000:00:1d.7 vendor=0x8086 device=0x293a override driver=ehci-pci
	fake_device pci 0000:00:03.0 override
	echo vfio-pci >"$FAKE/back/devices/pci0000:00/0000:00:03.0/driver_override"
	pci_setup
	fake_bus platform
	: >"$FAKE/log"
}

# The lines of list_setup's USB devices, in the order of their ids:
# strcmp's, where ':' comes after the digits.
LIST_USB="usb/1-1 none idVendor=0781 idProduct=5567 serial=4C530001230101112095
usb/1-10 none idVendor=0781 idProduct=5567 serial=4C530001240101112096
usb/1-1:1.0 usb-storage bInterfaceClass=08
usb/usb1 usb idVendor=1d6b idProduct=0002 serial=0000:00:1d.7"

@test "-l lists the buses with drivers in the order of their names, each bus's devices in the order of their ids, with driver, ids and a set driver_override" {
	list_setup
	run_says 0 - drvbind -l <<-EOF
	pci/$E1000 e1000 vendor=0x8086 device=0x100e
	pci/0000:00:03.0 none override=vfio-pci
	pci/0000:00:1d.7 ehci-pci vendor=0x8086 device=0x293a
	pnp/00:05 serial
	$LIST_USB
	EOF
	assert_log </dev/null
}

@test "-l BUS lists that bus only, in the order of its ids" {
	list_setup
	run_says 0 "$LIST_USB" drvbind -l usb
	assert_log </dev/null
}

@test "-l leaves out a bus without drivers, whose devices nothing binds, and -l BUS lists it all the same" {
	local m
	pci_setup
	fake_bus memory
	# memory blocks on a bus no driver registers with, in strcmp's order
	# memory0 memory1 memory10 memory2, made in the natural one
	for m in 0 1 2 10; do
		fake_device memory "memory$m" path=system/memory
		echo online >"$FAKE/back/devices/system/memory/memory$m/state"
	done
	run_says 0 "pci/$E1000 e1000 vendor=0x8086 device=0x100e" drvbind -l
	run_says 0 - drvbind -l memory <<-EOF
	memory/memory0 none
	memory/memory1 none
	memory/memory10 none
	memory/memory2 none
	EOF
	# a bus with neither drivers nor devices: nothing, and no error
	fake_bus platform
	run_says 0 "" drvbind -l platform
}

@test "-l names the rule of each device it lists, says whether its hold is in place, and lists the rules whose device is absent after every bus" {
	pci_setup
	fake_device pci 0000:00:03.0 override
	echo vfio-pci >"$FAKE/back/devices/pci0000:00/0000:00:03.0/driver_override"
	usb_on_storage
	# authorized 0 unbinds usb-storage, as the kernel does
	printf 0 >"$SYS/bus/usb/devices/1-1:1.0/authorized"
	: >"$FAKE/log"
	fake_conf "pci/0000:00:03.0:vfio-pci" "0000:00:07.0:pci-stub"
	fake_cmdline "drvbind=$E1000:vfio-pci drvbind=1-1:1.0:none"
	run_says 0 - drvbind -l <<-EOF
	pci/$E1000 e1000 vendor=0x8086 device=0x100e rule=vfio-pci
	pci/0000:00:03.0 none override=vfio-pci rule=vfio-pci held
	usb/1-1 none idVendor=0781 idProduct=5567
	usb/1-1:1.0 none bInterfaceClass=08 authorized=0 rule=none held
	0000:00:07.0 absent rule=pci-stub
	EOF
	assert_log </dev/null
}

@test "-l of a bus that does not exist fails" {
	pci_setup
	run_says 1 "drvbind: nosuchbus: no such bus: No such file or directory" drvbind -l nosuchbus
}

@test "one failing rule among several leaves the others applied and the exit status 1" {
	pci_setup match=* probe=EINVAL
	fake_device pci 0000:00:03.0 vendor=0x8086 device=0x100e override driver=e1000
	echo 0000:00:03.0 >>"$FAKE/back/bus/pci/drivers/e1000/.fake_match"
	usb_on_storage uas
	run_says 1 - drvbind usb/1-1:1.0:uas "pci/$E1000:vfio-pci" pci/0000:00:03.0:none <<-EOF
	drvbind: usb/1-1:1.0: usb-storage -> uas
	drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000
	drvbind: pci/0000:00:03.0: e1000 -> none
	EOF
	assert_log <<-EOF
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	bus/usb/drivers/uas/bind 1-1:1.0 -> ok
	$E1000_DEV/driver_override vfio-pci -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	bus/pci/drivers/vfio-pci/bind $E1000 -> EINVAL
	$E1000_DEV/driver_override \\n -> ok
	bus/pci/drivers/e1000/bind $E1000 -> ok
	devices/pci0000:00/0000:00:03.0/driver_override none -> ok
	bus/pci/drivers/e1000/unbind 0000:00:03.0 -> ok
	EOF
	assert_driver usb 1-1:1.0 uas
	assert_driver pci "$E1000" e1000
	assert_driver pci 0000:00:03.0 none
}

@test "with -q only failures and warnings are said: not a move, not a device already in place" {
	pci_stub_setup
	fake_device pci 0000:00:03.0 driver=pci-stub override
	run_says 1 - drvbind -q -t 0 "pci/$E1000:pci-stub" pci/0000:00:03.0:pci-stub \
		pci/0000:00:09.0:pci-stub e1000 <<-EOF
	drvbind: bad rule "e1000": no ':' before the driver
	drvbind: pci/0000:00:09.0: device not found (waited 0 s)
	EOF
	assert_driver pci "$E1000" pci-stub
}
