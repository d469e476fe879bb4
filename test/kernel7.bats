#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Linux 7.x's orderings on the fake kernel, each selected per test with
# fake_ctl kernel (test/fake/fakesys.c, part 3, "The kernel's version"):
#
#   7.1  a device may be probed only once device_add() has finished,
#        after its add uevent (a2225b6e834a, "driver core: Don't let a
#        device probe until it's ready"). In that window bind says
#        EAGAIN and drivers_probe EINVAL; then device_add probes the
#        device itself, its override first. A PCI device is added with
#        match_driver false (pci_device_add), so there no driver matches
#        in that window, on every kernel: bind says ENODEV, drivers_probe
#        binds nothing.
#   7.0  driver_override is guarded by a spinlock of its own: its store
#        no longer waits for a probe running on the device, which binds
#        the driver it matched before the override came.
#
# The window is the fake's own state: a device made with .fake_adding
# (adding) is in it until fake_ctl ready; a running probe is the fault
# action probing:DRIVER on the device's driver_override. Nothing waits a
# fixed time: the kernel's next step comes when drvbind sleeps in ppoll()
# with nothing left to read (drvbind_idle).

load helper

# as at boot: the fake over /sys, only the fake's uevents, drvbind run
# by boot_drvbind (with -r it would look every 250 ms too, and a window's
# refusal would be written again each time)
setup() {
	fake_setup_boot
}

# kernel VERSION: the fake replays that kernel's orderings
kernel() {
	fake_ctl kernel "$1"
}

# adding B ID [fake_device's ARGs...]: device_add() up to its add
# uevent, not finished: the device built aside with .fake_adding, moved
# into place with its bus link, then the add uevent. A USB interface
# takes path=, not parent= (its device is not in the aside tree).
adding() {
	local real=$FAKE dev
	FAKE=$real/stage fake_device "$@" || return 1
	dev=${FAKE_DEVPATH#/}
	: >"$real/stage/back/$dev/.fake_adding"
	mkdir -p "$real/back/${dev%/*}"
	mv -T "$real/stage/back/$dev" "$real/back/$dev" &&
		fake_bus "$1" &&
		mv -T "$real/stage/back/bus/$1/devices/$2" "$real/back/bus/$1/devices/$2" &&
		fake_uevent add "$FAKE_DEVPATH" "SUBSYSTEM=$1"
}

# appears_then_ready B ID [fake_device's ARGs...]: while drvbind waits
# for it, the device appears in 7.1's window (adding); once drvbind has
# done with its add uevent, device_add finishes (fake_ctl ready). For
# fake_later, as the kernel's own hand.
appears_then_ready() {
	when_idle adding "$@" && when_idle fake_ctl ready "$1" "$2"
}

# dev_of B ID: the directory below the root of device ID of bus B
dev_of() {
	local dev
	dev=$(readlink "$FAKE/back/bus/$1/devices/$2") || return 1
	echo "${dev#../../../}"
}

# held_through_window B ID D BIND [fake_device's ARGs...]: device ID of
# bus B appears in 7.1's window while drvbind waits with its rule to D
# (appears_then_ready); drvbind holds it by its override, D's bind
# answers BIND, and once the kernel probes it the device is on D, said
# as a move, with nothing written again
held_through_window() {
	local dev
	fake_later 0 appears_then_ready "$1" "$2" "${@:5}"
	run_says 0 "drvbind: $1/$2: none -> $3" boot_drvbind -t 5 "$1/$2:$3" || return 1
	assert_driver "$1" "$2" "$3" && override_of "$1" "$2" "$3" || return 1
	dev=$(dev_of "$1" "$2") || return 1
	assert_log <<-EOF
	$dev/driver_override $3 -> ok
	bus/$1/drivers/$3/bind $2 -> $4
	EOF
}

# handed_back B ID D BIND PROBE NATIVE: device ID of bus B, left in
# 7.1's window (adding) by a rule to D that timed out, had its override
# written, D's bind answer BIND at the first look and at the last, at
# the deadline, then its override cleared and drivers_probe answer
# PROBE; it is left unbound until the kernel has added it (fake_ctl
# ready), and then NATIVE takes it, the override still clear
handed_back() {
	local dev
	dev=$(dev_of "$1" "$2") || return 1
	assert_log <<-EOF || return 1
	$dev/driver_override $3 -> ok
	bus/$1/drivers/$3/bind $2 -> $4
	bus/$1/drivers/$3/bind $2 -> $4
	$dev/driver_override \\n -> ok
	bus/$1/drivers_probe $2 -> $5
	EOF
	assert_driver "$1" "$2" none || return 1
	fake_ctl ready "$1" "$2"
	assert_driver "$1" "$2" "$6" && override_of "$1" "$2" "(null)"
}

# platform_setup: a platform device with driver_override (platform has
# it since 3.16), the Ethernet controller fff51000.ethernet of a board,
# whose native driver dwmac matches it, and vfio-platform beside it
PLAT=fff51000.ethernet
PLAT_DEV=devices/platform/$PLAT
platform_setup() {
	fake_driver platform dwmac "match=$PLAT"
	fake_driver platform vfio-platform
}

# ---- 7.1: the window between the add uevent and the end of device_add ----

@test "a device in 7.1's window answers bind EAGAIN and drivers_probe EINVAL, new_id binds nothing, and ready probes it, override first" {
	kernel 7.1
	platform_setup
	fake_driver pci e1000 "match=$E1000" new_id
	fake_listen
	adding platform "$PLAT" override
	adding pci "$E1000" vendor=0x8086 device=0x100e
	echo vfio-platform >"$SYS/$PLAT_DEV/driver_override"
	run fake_ns sh -c "printf %s $PLAT >$SYS/bus/platform/drivers/vfio-platform/bind"
	((status != 0))
	run fake_ns sh -c "printf %s $PLAT >$SYS/bus/platform/drivers_probe"
	((status != 0))
	# PCI: match_driver is false until the bus has added the device
	run fake_ns sh -c "printf %s $E1000 >$SYS/bus/pci/drivers/e1000/bind"
	((status != 0))
	printf '8086 100e' >"$SYS/bus/pci/drivers/e1000/new_id"
	printf %s "$E1000" >"$SYS/bus/pci/drivers_probe"
	assert_driver platform "$PLAT" none
	assert_driver pci "$E1000" none
	fake_ctl ready platform "$PLAT"
	fake_ctl ready pci "$E1000"
	assert_driver platform "$PLAT" vfio-platform
	assert_driver pci "$E1000" e1000
	assert_log <<-EOF
	$PLAT_DEV/driver_override vfio-platform\\n -> ok
	bus/platform/drivers/vfio-platform/bind $PLAT -> EAGAIN
	bus/platform/drivers_probe $PLAT -> EINVAL
	bus/pci/drivers/e1000/bind $E1000 -> ENODEV
	bus/pci/drivers/e1000/new_id 8086 100e -> ok
	bus/pci/drivers_probe $E1000 -> ok
	EOF
	run fake_uevents
	assert_output_is <<-EOF
	add@/$PLAT_DEV SUBSYSTEM=platform
	add@/$E1000_DEV SUBSYSTEM=pci
	bind@/$PLAT_DEV SUBSYSTEM=platform DRIVER=vfio-platform
	bind@/$E1000_DEV SUBSYSTEM=pci DRIVER=e1000
	EOF
}

@test "before 7.1 a bind in the same window binds at once, and ready finds the device bound" {
	platform_setup
	adding platform "$PLAT" override
	echo vfio-platform >"$SYS/$PLAT_DEV/driver_override"
	printf %s "$PLAT" >"$SYS/bus/platform/drivers/vfio-platform/bind"
	assert_driver platform "$PLAT" vfio-platform
	fake_ctl ready platform "$PLAT"
	assert_driver platform "$PLAT" vfio-platform
	assert_log <<-EOF
	$PLAT_DEV/driver_override vfio-platform\\n -> ok
	bus/platform/drivers/vfio-platform/bind $PLAT -> ok
	EOF
}

@test "a new platform device held by its override through 7.1's window, where bind says EAGAIN, ends on the rule's driver once the kernel probes it" {
	kernel 7.1
	platform_setup
	held_through_window platform "$PLAT" vfio-platform EAGAIN override
}

@test "a new PCI device held by its override through 7.1's window, where bind says ENODEV (match_driver), ends on the rule's driver once the kernel probes it" {
	kernel 7.1
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci pci-stub
	held_through_window pci "$E1000" pci-stub ENODEV vendor=0x8086 device=0x100e override
}

@test "a platform device still in 7.1's window at the deadline is handed back, its override cleared, drivers_probe EINVAL, and its native driver takes it once it is ready" {
	kernel 7.1
	platform_setup
	adding platform "$PLAT" override
	run_says 1 "drvbind: platform/$PLAT: none -> vfio-platform failed at bind: Resource temporarily unavailable; left unbound" \
		boot_drvbind -t 1 "platform/$PLAT:vfio-platform"
	handed_back platform "$PLAT" vfio-platform EAGAIN EINVAL dwmac
}

@test "a PCI device still in 7.1's window at the deadline is handed back, its override cleared, and e1000 takes it once the bus has added it" {
	kernel 7.1
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci pci-stub
	adding pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 1 "drvbind: pci/$E1000: none -> pci-stub failed at bind: No such device; left unbound" \
		boot_drvbind -t 1 "pci/$E1000:pci-stub"
	handed_back pci "$E1000" pci-stub ENODEV ok e1000
}

@test "a new USB interface through 7.1's window, where uas's bind says EAGAIN after new_id, ends on uas once usb-storage has it" {
	kernel 7.1
	fake_driver usb usb-storage "match=$USB_IF"
	fake_driver usb uas new_id
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_later 0 appears_then_ready usb "$USB_IF" path=pci0000:00/0000:00:1d.7/usb1/1-1 class=08
	run_says 0 "drvbind: usb/$USB_IF: usb-storage -> uas (new_id \"0781 5567 08\")" boot_drvbind -t 5 "usb/$USB_IF:uas"
	assert_driver usb "$USB_IF" uas
	assert_log <<-EOF
	bus/usb/drivers/uas/bind $USB_IF -> ENODEV
	bus/usb/drivers/uas/new_id 0781 5567 08 -> ok
	bus/usb/drivers/uas/bind $USB_IF -> EAGAIN
	bus/usb/drivers/uas/remove_id 0781 5567 08 -> ok
	bus/usb/drivers/usb-storage/unbind $USB_IF -> ok
	bus/usb/drivers/uas/bind $USB_IF -> ENODEV
	bus/usb/drivers/uas/new_id 0781 5567 08 -> ok
	bus/usb/drivers/uas/remove_id 0781 5567 08 -> ok
	EOF
}

@test "none holds a new USB interface in 7.1's window with authorized 0, and the kernel's probe then passes it over" {
	kernel 7.1
	fake_driver usb usb-storage "match=$USB_IF"
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_later idle adding usb "$USB_IF" path=pci0000:00/0000:00:1d.7/usb1/1-1 class=08
	run_says 0 "drvbind: usb/$USB_IF: unbound; held by authorized 0" boot_drvbind -t 5 "usb/$USB_IF:none"
	# device_add finishes after drvbind's look
	fake_ctl ready usb "$USB_IF"
	assert_driver usb "$USB_IF" none
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0 -> ok
	EOF
}

# ---- 7.0: a driver_override store that does not wait for a probe ----

@test "before 7.0 an override store waits for e1000's running probe, which binds the NIC, and the move takes it off e1000" {
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci pci-stub
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	fake_fault "bus/pci/devices/$E1000/driver_override" probing:e1000
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub" boot_drvbind "pci/$E1000:pci-stub"
	nic_is pci-stub pci-stub
	assert_log <<<"$E1000_TO_STUB"
}

@test "a device that the rule's own driver binds during the override store, as the bus attaches it, was moved from none, not found held unbound" {
	fake_driver pci e1000
	fake_driver pci pci-stub
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	# the bus's attach, after the add uevent, matches the override just
	# written (seen on 6.12): pci-stub's probe binds the device
	fake_fault "bus/pci/devices/$E1000/driver_override" probing:pci-stub
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" boot_drvbind "pci/$E1000:pci-stub"
	nic_is pci-stub pci-stub
	assert_log <<-EOF
	$E1000_DEV/driver_override pci-stub -> ok
	EOF
}

@test "a 7.0 override store that does not wait for e1000's running probe meets it at bind, EBUSY, and the retry ends on pci-stub" {
	kernel 7.0
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci pci-stub
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	fake_fault "bus/pci/devices/$E1000/driver_override" probing:e1000
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" boot_drvbind "pci/$E1000:pci-stub"
	nic_is pci-stub pci-stub
	assert_log <<-EOF
	$E1000_DEV/driver_override pci-stub -> ok
	bus/pci/drivers/pci-stub/bind $E1000 -> EBUSY
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	bus/pci/drivers/pci-stub/bind $E1000 -> ok
	EOF
}

@test "a 7.0 override store that does not wait for a running probe leaves it to end on its own, binding the driver it matched" {
	kernel 7.0
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	fake_fault "bus/pci/devices/$E1000/driver_override" probing:e1000
	fake_listen
	echo pci-stub >"$SYS/$E1000_DEV/driver_override"
	nic_is none pci-stub
	fake_ctl probed pci "$E1000"
	nic_is e1000 pci-stub
	run fake_uevents
	assert_output_is "bind@/$E1000_DEV SUBSYSTEM=pci DRIVER=e1000"
}

# none_meets_probe [VERSION]: none on the NIC while e1000's probe runs,
# on that kernel's ordering: the device is seen bound, and unbound.
# Before 7.0 the override store waits for the probe (seen on 6.1); from
# 7.0 it does not, and drivers_probe, which takes the device lock, does.
none_meets_probe() {
	[[ -z ${1-} ]] || kernel "$1"
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	fake_fault "bus/pci/devices/$E1000/driver_override" probing:e1000
	run_says 0 "drvbind: pci/$E1000: e1000 -> none" boot_drvbind "pci/$E1000:none"
	nic_is none none
	assert_log <<-EOF
	$E1000_DEV/driver_override none -> ok
	bus/pci/drivers_probe $E1000 -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	EOF
}

@test "before 7.0 a none rule's override store waits for e1000's running probe, and the NIC is seen bound and unbound" {
	none_meets_probe
}

@test "a 7.0 none rule whose override store does not wait for e1000's running probe waits for it through drivers_probe, and takes the NIC off e1000" {
	none_meets_probe 7.0
}
