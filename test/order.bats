#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The fake kernel's orderings: driver_register, driver_unregister and a
# USB interface's authorized, step by step as 6.1 takes them, so that
# other tests can stop between any two.  These test the fake itself, not
# drvbind.

load helper

# names in a driver's directory through the mount, on one line
drv_ls() {
	local names
	names=$(cd "$SYS/bus/$1/drivers/$2" 2>/dev/null && LC_ALL=C ls -A) ||
		names='(no directory)'
	echo ${names:-(empty)}
}

# uevents_now: every uevent sent so far, in order: a marker goes after
# them and is waited for (the kernel sends in order, so nothing sent
# before it can come after it), and is left out
uevents_now() {
	MARK=$((${MARK:-0} + 1))
	fake_uevent change "/fake/mark$MARK" SUBSYSTEM=fake >/dev/null
	wait_for "$FAKE/uevents" "^change@/fake/mark$MARK " >/dev/null || {
		echo "marker $MARK did not come"
		return 1
	}
	fake_uevents | grep -v '^change@/fake/mark'
	return 0
}

# write VALUE PATH: as a program that does not create files (open without
# O_CREAT), so a file that is not there is ENOENT
write() {
	printf %s "$1" | dd of="$2" conv=nocreat,notrunc status=none
}

@test "a registering driver binds its devices before it has any file, and sends add after it has them" {
	fake_device pci "$E1000" vendor=0x8086 device=0x100e
	fake_listen
	fake_register pci e1000 "match=$E1000" steps=2
	assert_driver pci "$E1000" e1000
	[ "$(drv_ls pci e1000)" = "$E1000" ]
	run uevents_now
	assert_output_is "bind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci DRIVER=e1000"
	run write "$E1000" "$SYS/bus/pci/drivers/e1000/unbind"
	[ "$status" -ne 0 ]
	[[ $output == *"No such file or directory"* ]]
	assert_driver pci "$E1000" e1000
	fake_register_rest pci e1000
	[ "$(drv_ls pci e1000)" = "$E1000 bind uevent unbind" ]
	run uevents_now
	assert_output_is <<-EOF
	bind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci DRIVER=e1000
	add@/bus/pci/drivers/e1000 SUBSYSTEM=drivers
	EOF
	# driver_attach is the kernel's: the write log holds nothing
	[ ! -s "$FAKE/log" ]
}

@test "driver_register goes dir, attach, module, uevent, new_id, remove_id, unbind, bind, add" {
	fake_device pci "$E1000" vendor=0x8086 device=0x100e
	fake_listen
	fake_register pci vfio-pci "match=$E1000" new_id module=vfio_pci steps=0
	[ "$(drv_ls pci vfio-pci)" = "(no directory)" ]
	steps=()
	for i in 1 2 3 4 5 6 7 8 9; do
		fake_register_rest pci vfio-pci steps=1
		steps+=("$i: $(drv_ls pci vfio-pci)")
	done
	run printf '%s\n' "${steps[@]}"
	assert_output_is <<-EOF
	1: (empty)
	2: $E1000
	3: $E1000 module
	4: $E1000 module uevent
	5: $E1000 module new_id uevent
	6: $E1000 module new_id remove_id uevent
	7: $E1000 module new_id remove_id uevent unbind
	8: $E1000 bind module new_id remove_id uevent unbind
	9: $E1000 bind module new_id remove_id uevent unbind
	EOF
	[ "$(readlink "$SYS/bus/pci/drivers/vfio-pci/module")" = ../../../../module/vfio_pci ]
	run fake_register_rest pci vfio-pci
	[[ $output == *"no fake_register of pci/vfio-pci under way"* ]]
	run uevents_now
	assert_output_is <<-EOF
	bind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci DRIVER=vfio-pci
	add@/bus/pci/drivers/vfio-pci SUBSYSTEM=drivers
	EOF
}

@test "driver_register's module step makes the module link wherever module= stands among the driver's arguments" {
	fake_device pci "$E1000" vendor=0x8086 device=0x100e
	fake_register pci vfio-pci module=vfio_pci "match=$E1000" new_id steps=module
	[ "$(readlink "$SYS/bus/pci/drivers/vfio-pci/module")" = ../../../../module/vfio_pci ]
	fake_register_rest pci vfio-pci
	[ "$(readlink "$SYS/bus/pci/drivers/vfio-pci/module")" = ../../../../module/vfio_pci ]
	[ "$(drv_ls pci vfio-pci)" = "$E1000 bind module new_id remove_id uevent unbind" ]
}

@test "a USB driver gets new_id after its add uevent, and usbip-host match_busid" {
	usb_stick
	fake_listen
	fake_register usb usb-storage new_id steps=add
	[ "$(drv_ls usb usb-storage)" = "bind uevent unbind" ]
	run uevents_now
	assert_output_is "add@/bus/usb/drivers/usb-storage SUBSYSTEM=drivers"
	fake_register_rest usb usb-storage steps=new_id
	[ "$(drv_ls usb usb-storage)" = "bind new_id uevent unbind" ]
	fake_register_rest usb usb-storage
	[ "$(drv_ls usb usb-storage)" = "bind new_id remove_id uevent unbind" ]
	fake_register usb usbip-host 'match=*' match_busid steps=add
	[ "$(drv_ls usb usbip-host)" = "bind uevent unbind" ]
	fake_register_rest usb usbip-host
	[ "$(drv_ls usb usbip-host)" = "bind match_busid uevent unbind" ]
	# usbip-host's probe took nothing at registration: no bus id was added
	assert_driver usb 1-1 none
}

@test "a driver registering while drivers_autoprobe is 0 binds nothing" {
	fake_bus pci
	echo 0 >"$FAKE/back/bus/pci/drivers_autoprobe"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e
	fake_register pci e1000 'match=*'
	assert_driver pci "$E1000" none
	fake_ctl probe pci "$E1000"
	assert_driver pci "$E1000" none
	printf %s "$E1000" >"$SYS/bus/pci/drivers/e1000/bind"
	assert_driver pci "$E1000" e1000
}

@test "driver_attach at registration binds only devices that match, probe and have no driver" {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci 0000:00:01.0 driver=e1000
	fake_device pci "$E1000"
	fake_device pci 0000:00:03.0
	fake_device pci 0000:00:04.0
	fake_listen
	fake_register pci pci-stub 'match=*' probe=ENXIO:0000:00:04.0 steps=attach
	assert_driver pci 0000:00:01.0 e1000
	assert_driver pci "$E1000" pci-stub
	assert_driver pci 0000:00:03.0 pci-stub
	assert_driver pci 0000:00:04.0 none
	run uevents_now
	assert_output_is <<-EOF
	bind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci DRIVER=pci-stub
	bind@/devices/pci0000:00/0000:00:03.0 SUBSYSTEM=pci DRIVER=pci-stub
	EOF
}

@test "an unregistering driver loses its files, then unbinds its devices, then its module link, then sends remove, then goes" {
	fake_driver pci e1000 'match=*' new_id module=e1000
	fake_device pci "$E1000" driver=e1000
	fake_device pci 0000:00:03.0 driver=e1000
	fake_listen
	steps=()
	fake_unregister pci e1000 steps=0
	for i in 1 2 3 4 5 6 7 8 9; do
		fake_unregister_rest pci e1000 steps=1
		steps+=("$i: $(drv_ls pci e1000)")
	done
	run printf '%s\n' "${steps[@]}"
	assert_output_is <<-EOF
	1: $E1000 0000:00:03.0 module new_id remove_id uevent unbind
	2: $E1000 0000:00:03.0 module new_id remove_id uevent
	3: $E1000 0000:00:03.0 module remove_id uevent
	4: $E1000 0000:00:03.0 module uevent
	5: $E1000 0000:00:03.0 module
	6: module
	7: (empty)
	8: (empty)
	9: (no directory)
	EOF
	assert_driver pci "$E1000" none
	assert_driver pci 0000:00:03.0 none
	run uevents_now
	assert_output_is <<-EOF
	unbind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci
	unbind@/devices/pci0000:00/0000:00:03.0 SUBSYSTEM=pci
	remove@/bus/pci/drivers/e1000 SUBSYSTEM=drivers
	EOF
	[ ! -s "$FAKE/log" ]
}

@test "an unregistering driver's devices stay bound after its files went, and its unbind is ENOENT" {
	fake_driver pci e1000 'match=*'
	fake_device pci "$E1000" driver=e1000
	fake_listen
	# a writer that opened bind before it went: kernfs answers ENODEV
	exec 5>"$SYS/bus/pci/drivers/e1000/bind"
	fake_unregister pci e1000 steps=uevent
	[ "$(drv_ls pci e1000)" = "$E1000" ]
	assert_driver pci "$E1000" e1000
	run write "$E1000" "$SYS/bus/pci/drivers/e1000/unbind"
	[[ $output == *"No such file or directory"* ]]
	run bash -c "printf %s '$E1000' >&5"
	[[ $output == *"No such device"* ]]
	exec 5>&-
	run uevents_now
	assert_output_is ""
	fake_unregister_rest pci e1000 steps=remove
	[ -d "$SYS/bus/pci/drivers/e1000" ]
	run uevents_now
	assert_output_is <<-EOF
	unbind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci
	remove@/bus/pci/drivers/e1000 SUBSYSTEM=drivers
	EOF
	fake_unregister_rest pci e1000
	[ ! -e "$SYS/bus/pci/drivers/e1000" ]
	assert_log <<-EOF
	bus/pci/drivers/e1000/bind $E1000 -> ENODEV
	EOF
}

@test "a USB driver loses new_id first, and usbip-host match_busid before that" {
	fake_driver usb usb-storage 'match=*' new_id
	fake_driver usb usbip-host match_busid
	fake_unregister usb usb-storage steps=2
	[ "$(drv_ls usb usb-storage)" = "bind uevent unbind" ]
	fake_unregister usb usbip-host steps=1
	[ "$(drv_ls usb usbip-host)" = "bind uevent unbind" ]
	fake_unregister_rest usb usb-storage
	fake_unregister_rest usb usbip-host
	[ "$(ls -A "$SYS/bus/usb/drivers")" = "" ]
}

@test "a USB interface reads authorized 1, and a kernel before 4.4 has none" {
	usb_stick
	fake_device usb 2-1 idVendor=0781 idProduct=5567
	fake_device usb 2-1:1.0 parent=2-1 class=08 noauth
	[ "$(cat "$SYS/$USB_IF_DEV/authorized")" = 1 ]
	[ ! -e "$SYS/bus/usb/devices/1-1/authorized" ]
	[ ! -e "$SYS/bus/usb/devices/2-1:1.0/authorized" ]
	fake_driver usb usb-storage 'match=*'
	printf 2-1:1.0 >"$SYS/bus/usb/drivers/usb-storage/bind"
	assert_driver usb 2-1:1.0 usb-storage
}

@test "deauthorizing a bound interface unbinds it with an unbind uevent, and bind then answers ENODEV" {
	fake_driver usb usb-storage "match=$USB_IF"
	fake_driver usb uas new_id
	usb_stick driver=usb-storage
	fake_listen
	printf '0\n' >"$SYS/$USB_IF_DEV/authorized"
	[ "$(cat "$SYS/$USB_IF_DEV/authorized")" = 0 ]
	assert_driver usb "$USB_IF" none
	run bash -c "printf %s '$USB_IF' >'$SYS/bus/usb/drivers/usb-storage/bind'"
	[[ $output == *"No such device"* ]]
	printf %s "$USB_IF" >"$SYS/bus/usb/drivers_probe"
	printf '0781 5567 08' >"$SYS/bus/usb/drivers/uas/new_id"
	fake_ctl probe usb "$USB_IF"
	fake_ctl attach usb usb-storage
	assert_driver usb "$USB_IF" none
	# again: already 0, nothing happens
	printf 0 >"$SYS/$USB_IF_DEV/authorized"
	run uevents_now
	assert_output_is "unbind@/$USB_IF_DEV SUBSYSTEM=usb"
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0\\n -> ok
	bus/usb/drivers/usb-storage/bind $USB_IF -> ENODEV
	bus/usb/drivers_probe $USB_IF -> ok
	bus/usb/drivers/uas/new_id 0781 5567 08 -> ok
	$USB_IF_DEV/authorized 0 -> ok
	EOF
}

@test "a bind to a bound interface answers EBUSY even when it is not authorized" {
	fake_driver usb usb-storage 'match=*'
	usb_stick driver=usb-storage
	# bound while not authorized: usb_driver_claim_interface skips probe
	echo 0 >"$FAKE/back/$USB_IF_DEV/authorized"
	run bash -c "printf %s '$USB_IF' >'$SYS/bus/usb/drivers/usb-storage/bind'"
	[[ $output == *"Device or resource busy"* ]]
	log_has "bus/usb/drivers/usb-storage/bind $USB_IF -> EBUSY"
}

@test "authorizing an interface again binds nothing until something probes it" {
	fake_driver usb usb-storage "match=$USB_IF"
	usb_stick driver=usb-storage
	fake_listen
	printf 0 >"$SYS/$USB_IF_DEV/authorized"
	printf 1 >"$SYS/$USB_IF_DEV/authorized"
	[ "$(cat "$SYS/$USB_IF_DEV/authorized")" = 1 ]
	assert_driver usb "$USB_IF" none
	run uevents_now
	assert_output_is "unbind@/$USB_IF_DEV SUBSYSTEM=usb"
	printf %s "$USB_IF" >"$SYS/bus/usb/drivers_probe"
	assert_driver usb "$USB_IF" usb-storage
}

@test "authorized takes what kstrtobool takes and answers EINVAL to anything else" {
	usb_stick
	for v in off on n y Nope Yes f t false true OFF ON 0 1 10 01; do
		printf %s "$v" >"$SYS/$USB_IF_DEV/authorized"
		echo "$v $(cat "$SYS/$USB_IF_DEV/authorized")" >>"$FAKE/got"
	done
	run cat "$FAKE/got"
	assert_output_is <<-EOF
	off 0
	on 1
	n 0
	y 1
	Nope 0
	Yes 1
	f 0
	t 1
	false 0
	true 1
	OFF 0
	ON 1
	0 0
	1 1
	10 1
	01 0
	EOF
	for v in o 2 x oX ' 1' '\n'; do
		run bash -c "printf '$v' >'$SYS/$USB_IF_DEV/authorized'"
		[[ $output == *"Invalid argument"* ]]
	done
	[ "$(cat "$SYS/$USB_IF_DEV/authorized")" = 0 ]
}

@test "driver_attach at registration passes over an interface that is not authorized, silently" {
	usb_stick
	fake_device usb 1-1:1.1 parent=1-1 class=08
	echo 0 >"$FAKE/back/$USB_IF_DEV/authorized"
	fake_listen
	fake_register usb usb-storage "match=$USB_IF,1-1:1.1" steps=attach
	assert_driver usb "$USB_IF" none
	assert_driver usb 1-1:1.1 usb-storage
	run uevents_now
	assert_output_is "bind@/${USB_IF_DEV%.0}.1 SUBSYSTEM=usb DRIVER=usb-storage"
	[ ! -s "$FAKE/log" ]
}

@test "the control file is written by its path, never listed, never logged, and refuses what it does not know" {
	fake_driver pci e1000 'match=*'
	fake_device pci "$E1000"
	[ -e "$SYS/.fake_ctl" ]
	run ls -A "$SYS"
	[[ $output != *.fake* ]]
	fake_ctl probe pci "$E1000"
	assert_driver pci "$E1000" e1000
	fake_ctl detach pci e1000
	assert_driver pci "$E1000" none
	fake_ctl attach pci e1000
	assert_driver pci "$E1000" e1000
	run fake_ctl attach pci nosuchdrv
	[[ $output == *"No such device"* ]]
	run fake_ctl probe pci 0000:00:09.0
	[[ $output == *"No such device"* ]]
	run fake_ctl bind pci e1000
	[[ $output == *"Invalid argument"* ]]
	run fake_ctl attach pci e1000 extra
	[[ $output == *"Invalid argument"* ]]
	[ ! -s "$FAKE/log" ]
}
