#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The fake kernel itself: it must answer like the 6.1 driver core, or the
# other tests prove nothing.  Writes use the shell's printf, whose error
# message names the errno ("write error: No such device").

load helper

pci_e1000() {
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci pci-stub new_id
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override "$@"
}

@test "the mount has the kernel's link shapes and hides the fake's own files" {
	pci_e1000 driver=e1000
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08
	run fake_tree
	[[ $output == *"bus/pci/devices/$E1000 -> ../../../devices/pci0000:00/$E1000"* ]]
	[[ $output == *"devices/pci0000:00/$E1000/driver -> ../../../bus/pci/drivers/e1000"* ]]
	[[ $output == *"devices/pci0000:00/$E1000/subsystem -> ../../../bus/pci"* ]]
	[[ $output == *"bus/pci/drivers/e1000/$E1000 -> ../../../../devices/pci0000:00/$E1000"* ]]
	[[ $output == *"bus/usb/devices/1-1:1.0 -> ../../../devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0"* ]]
	[[ $output == *"usb1/1-1/1-1:1.0/subsystem -> ../../../../../../bus/usb"* ]]
	[[ $output != *.fake* ]]
	[ -e "$FAKE/back/bus/pci/drivers/e1000/.fake_match" ]
	run cat "$SYS/bus/pci/drivers/e1000/.fake_match"
	[[ $output == *"No such file or directory"* ]]
	[ "$(cat "$SYS/bus/pci/devices/$E1000/driver_override")" = "(null)" ]
	assert_driver pci "$E1000" e1000
	assert_driver usb 1-1:1.0 none
}

@test "fake_device's attributes read as the kernel's, and parent= and path= put a device below its parents, as ATTRS{} walks them" {
	fake_device usb usb1 path=pci0000:00/0000:00:1d.7 idVendor=1d6b idProduct=0002 serial=0000:00:1d.7
	fake_device usb 1-1 parent=usb1 idVendor=0781 idProduct=5567 serial=4C530001230101112095
	fake_device usb 1-1:1.0 parent=1-1 class=08
	fake_device pci 0000:00:1c.0 vendor=0x8086 device=0x2940 pciclass=0x060400
	fake_device pci 0000:01:00.0 path=pci0000:00/0000:00:1c.0 vendor=0x10ec device=0x8168
	local u=$SYS/bus/usb/devices
	[ "$(cat "$u/usb1/serial")" = 0000:00:1d.7 ]
	[ "$(cat "$u/1-1/idVendor") $(cat "$u/1-1/idProduct") $(cat "$u/1-1/serial")" = "0781 5567 4C530001230101112095" ]
	[ "$(cat "$u/1-1:1.0/bInterfaceClass")" = 08 ]
	[ "$(cat "$SYS/bus/pci/devices/0000:01:00.0/vendor")" = 0x10ec ]
	[ "$(readlink "$u/1-1:1.0")" = ../../../devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0 ]
	[ "$(readlink "$SYS/bus/pci/devices/0000:01:00.0")" = ../../../devices/pci0000:00/0000:00:1c.0/0000:01:00.0 ]
	# the interface has no ids of its own: they are its device's
	[ ! -e "$u/1-1:1.0/idVendor" ]
	[ ! -e "$u/1-1:1.0/serial" ]
	# no directory of a device's path is a link
	[ -z "$(find "$SYS/devices" -mindepth 1 -type l ! -name subsystem ! -name driver)" ]
}

@test "binding an unbound matching device creates both links" {
	pci_e1000
	assert_driver pci "$E1000" none
	printf '%s\n' "$E1000" >"$SYS/bus/pci/drivers/e1000/bind"
	assert_driver pci "$E1000" e1000
	assert_log <<-EOF
	bus/pci/drivers/e1000/bind $E1000\\n -> ok
	EOF
}

@test "binding an already bound device fails with EBUSY, to the same driver too" {
	pci_e1000 driver=e1000
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/e1000/bind'"
	[ "$status" -ne 0 ]
	[[ $output == *"Device or resource busy"* ]]
	echo pci-stub >"$SYS/bus/pci/devices/$E1000/driver_override"
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/pci-stub/bind'"
	[[ $output == *"Device or resource busy"* ]]
	assert_driver pci "$E1000" e1000
	assert_log <<-EOF
	bus/pci/drivers/e1000/bind $E1000 -> EBUSY
	devices/pci0000:00/$E1000/driver_override pci-stub\\n -> ok
	bus/pci/drivers/pci-stub/bind $E1000 -> EBUSY
	EOF
}

@test "binding an unknown device or to a driver that does not match fails with ENODEV" {
	pci_e1000
	run bash -c "printf %s 0000:00:09.0 >'$SYS/bus/pci/drivers/e1000/bind'"
	[[ $output == *"No such device"* ]]
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/pci-stub/bind'"
	[[ $output == *"No such device"* ]]
	assert_driver pci "$E1000" none
	assert_log <<-EOF
	bus/pci/drivers/e1000/bind 0000:00:09.0 -> ENODEV
	bus/pci/drivers/pci-stub/bind $E1000 -> ENODEV
	EOF
}

@test "unbinding from a driver the device is not bound to fails with ENODEV" {
	pci_e1000 driver=e1000
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/pci-stub/unbind'"
	[[ $output == *"No such device"* ]]
	assert_driver pci "$E1000" e1000
	printf %s "$E1000" >"$SYS/bus/pci/drivers/e1000/unbind"
	assert_driver pci "$E1000" none
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/e1000/unbind'"
	[[ $output == *"No such device"* ]]
	assert_log <<-EOF
	bus/pci/drivers/pci-stub/unbind $E1000 -> ENODEV
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	bus/pci/drivers/e1000/unbind $E1000 -> ENODEV
	EOF
}

@test "driver_override names the only driver that matches and a newline clears it" {
	pci_e1000
	echo pci-stub >"$SYS/bus/pci/devices/$E1000/driver_override"
	[ "$(cat "$SYS/bus/pci/devices/$E1000/driver_override")" = pci-stub ]
	assert_driver pci "$E1000" none
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/e1000/bind'"
	[[ $output == *"No such device"* ]]
	printf %s "$E1000" >"$SYS/bus/pci/drivers/pci-stub/bind"
	assert_driver pci "$E1000" pci-stub
	printf '\n' >"$SYS/bus/pci/devices/$E1000/driver_override"
	[ "$(cat "$SYS/bus/pci/devices/$E1000/driver_override")" = "(null)" ]
	run bash -c "head -c 4095 /dev/zero | tr '\\0' x >'$SYS/bus/pci/devices/$E1000/driver_override'"
	[[ $output == *"Invalid argument"* ]]
	head -c 4094 /dev/zero | tr '\0' x >"$SYS/bus/pci/devices/$E1000/driver_override"
	[ "$(wc -c <"$SYS/bus/pci/devices/$E1000/driver_override")" = 4095 ]
}

@test "drivers_probe binds the first driver whose probe succeeds" {
	fake_driver pci a-fails match=* probe=ENXIO
	fake_driver pci b-takes match=*
	fake_driver pci c-late match=*
	fake_device pci "$E1000" override
	printf %s "$E1000" >"$SYS/bus/pci/drivers_probe"
	assert_driver pci "$E1000" b-takes
	printf %s "$E1000" >"$SYS/bus/pci/drivers_probe"
	assert_driver pci "$E1000" b-takes
	run bash -c "printf %s 0000:00:09.0 >'$SYS/bus/pci/drivers_probe'"
	[[ $output == *"No such device"* ]]
	assert_log <<-EOF
	bus/pci/drivers_probe $E1000 -> ok
	bus/pci/drivers_probe $E1000 -> ok
	bus/pci/drivers_probe 0000:00:09.0 -> ENODEV
	EOF
}

@test "drivers_probe with an override naming no driver succeeds and binds nothing" {
	pci_e1000
	echo nosuchdrv >"$SYS/bus/pci/devices/$E1000/driver_override"
	printf %s "$E1000" >"$SYS/bus/pci/drivers_probe"
	assert_driver pci "$E1000" none
	log_has "bus/pci/drivers_probe $E1000 -> ok"
}

@test "a refusing probe's errno comes back from bind and nothing is bound" {
	fake_driver platform vfio-platform match=* probe=EINVAL
	fake_driver platform sdhci match=* probe=EAGAIN:fe300000.mmc
	fake_driver platform quiet match=* probe=silent
	fake_device platform fe300000.mmc override
	fake_device platform fe310000.mmc override
	run bash -c "printf %s fe300000.mmc >'$SYS/bus/platform/drivers/vfio-platform/bind'"
	[[ $output == *"Invalid argument"* ]]
	run bash -c "printf %s fe300000.mmc >'$SYS/bus/platform/drivers/sdhci/bind'"
	[[ $output == *"Resource temporarily unavailable"* ]]
	printf %s fe310000.mmc >"$SYS/bus/platform/drivers/sdhci/bind"
	printf %s fe300000.mmc >"$SYS/bus/platform/drivers/quiet/bind"
	assert_driver platform fe300000.mmc none
	assert_driver platform fe310000.mmc sdhci
	assert_log <<-EOF
	bus/platform/drivers/vfio-platform/bind fe300000.mmc -> EINVAL
	bus/platform/drivers/sdhci/bind fe300000.mmc -> EAGAIN
	bus/platform/drivers/sdhci/bind fe310000.mmc -> ok
	bus/platform/drivers/quiet/bind fe300000.mmc -> ok
	EOF
}

@test "new_id binds matching unbound devices at once and remove_id does not unbind" {
	fake_driver pci pci-stub new_id
	fake_driver pci e1000
	fake_device pci "$E1000" vendor=0x8086 device=0x100e
	fake_device pci 0000:00:03.0 vendor=0x8086 device=0x100e driver=e1000
	fake_device pci 0000:00:04.0 vendor=0x1af4 device=0x1000
	printf '8086 100e\n' >"$SYS/bus/pci/drivers/pci-stub/new_id"
	assert_driver pci "$E1000" pci-stub
	assert_driver pci 0000:00:03.0 e1000
	assert_driver pci 0000:00:04.0 none
	run bash -c "printf '8086 100e' >'$SYS/bus/pci/drivers/pci-stub/new_id'"
	[[ $output == *"File exists"* ]]
	run bash -c "printf 8086 >'$SYS/bus/pci/drivers/pci-stub/new_id'"
	[[ $output == *"Invalid argument"* ]]
	printf '8086 100e' >"$SYS/bus/pci/drivers/pci-stub/remove_id"
	assert_driver pci "$E1000" pci-stub
	run bash -c "printf '8086 100e' >'$SYS/bus/pci/drivers/pci-stub/remove_id'"
	[[ $output == *"No such device"* ]]
	assert_log <<-EOF
	bus/pci/drivers/pci-stub/new_id 8086 100e\\n -> ok
	bus/pci/drivers/pci-stub/new_id 8086 100e -> EEXIST
	bus/pci/drivers/pci-stub/new_id 8086 -> EINVAL
	bus/pci/drivers/pci-stub/remove_id 8086 100e -> ok
	bus/pci/drivers/pci-stub/remove_id 8086 100e -> ENODEV
	EOF
}

@test "a USB interface matches new_id by its device's ids and its class" {
	fake_driver usb uas new_id
	fake_driver usb usb-storage new_id
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08
	printf '0781 5567 03' >"$SYS/bus/usb/drivers/uas/new_id"
	assert_driver usb 1-1:1.0 none
	printf '0781 5567 08' >"$SYS/bus/usb/drivers/usb-storage/new_id"
	assert_driver usb 1-1:1.0 usb-storage
	# USB's remove_id compares vendor and product only and never fails
	printf '0781 5567' >"$SYS/bus/usb/drivers/uas/remove_id"
	printf '0781 5567' >"$SYS/bus/usb/drivers/uas/remove_id"
	[ ! -s "$FAKE/back/bus/usb/drivers/uas/.fake_dynids" ]
}

@test "usbip-host takes only bus ids added to match_busid" {
	fake_driver usb usbip-host match=* match_busid
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	run bash -c "printf 1-1 >'$SYS/bus/usb/drivers/usbip-host/bind'"
	[[ $output == *"No such device"* ]]
	printf 'add 1-1' >"$SYS/bus/usb/drivers/usbip-host/match_busid"
	printf 1-1 >"$SYS/bus/usb/drivers/usbip-host/bind"
	assert_driver usb 1-1 usbip-host
	printf 'del 1-1' >"$SYS/bus/usb/drivers/usbip-host/match_busid"
	run bash -c "printf 'del 1-1' >'$SYS/bus/usb/drivers/usbip-host/match_busid'"
	[[ $output == *"No such device"* ]]
	run bash -c "printf 'put 1-1' >'$SYS/bus/usb/drivers/usbip-host/match_busid'"
	[[ $output == *"Invalid argument"* ]]
}

@test "a fault fails the next write to its path once, or always, and nothing happens" {
	pci_e1000
	fake_fault bus/pci/drivers/e1000/bind EIO
	fake_fault bus/pci/devices/$E1000/driver_override EINTR always
	run bash -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/e1000/bind'"
	[[ $output == *"Input/output error"* ]]
	assert_driver pci "$E1000" none
	printf %s "$E1000" >"$SYS/bus/pci/drivers/e1000/bind"
	assert_driver pci "$E1000" e1000
	for i in 1 2; do
		run bash -c "echo pci-stub >'$SYS/bus/pci/devices/$E1000/driver_override'"
		[[ $output == *"Interrupted system call"* ]]
	done
	[ "$(cat "$SYS/bus/pci/devices/$E1000/driver_override")" = "(null)" ]
	assert_log <<-EOF
	bus/pci/drivers/e1000/bind $E1000 -> EIO
	bus/pci/drivers/e1000/bind $E1000 -> ok
	devices/pci0000:00/$E1000/driver_override pci-stub\\n -> EINTR
	devices/pci0000:00/$E1000/driver_override pci-stub\\n -> EINTR
	EOF
}

@test "a short fault reports one byte less written and stores nothing" {
	pci_e1000
	fake_fault bus/pci/drivers/e1000/bind short
	# dd hands over the rest again, as any careful writer would
	run dd if=<(printf %s "$E1000") of="$SYS/bus/pci/drivers/e1000/bind" bs=64
	[[ $output == *"No such device"* ]]
	assert_log <<-EOF
	bus/pci/drivers/e1000/bind $E1000 -> short
	bus/pci/drivers/e1000/bind 0 -> ENODEV
	EOF
	assert_driver pci "$E1000" none
}

@test "an unplug fault does the write, then removes the device with its links" {
	fake_driver usb usb-storage match=*
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	fake_listen
	fake_fault bus/usb/drivers/usb-storage/unbind unplug:1-1
	printf 1-1:1.0 >"$SYS/bus/usb/drivers/usb-storage/unbind"
	[ ! -e "$SYS/bus/usb/devices/1-1" ]
	[ ! -e "$SYS/bus/usb/devices/1-1:1.0" ]
	[ ! -e "$SYS/devices/pci0000:00/0000:00:1d.7/usb1/1-1" ]
	[ -z "$(ls "$SYS/bus/usb/drivers/usb-storage" | grep 1-1)" ]
	wait_for "$FAKE/uevents" '^remove@.*/usb1/1-1 '
	run fake_uevents
	assert_output_is <<-EOF
	unbind@/devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0 SUBSYSTEM=usb
	remove@/devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0 SUBSYSTEM=usb
	remove@/devices/pci0000:00/0000:00:1d.7/usb1/1-1 SUBSYSTEM=usb
	EOF
}

@test "an unregister fault does the write, then unbinds the driver's devices and removes the driver" {
	pci_e1000 driver=e1000
	fake_driver pci vfio-pci match=*
	fake_device pci 0000:00:03.0 driver=vfio-pci
	fake_listen
	fake_fault "bus/pci/devices/$E1000/driver_override" unregister:pci/vfio-pci
	printf vfio-pci >"$SYS/bus/pci/devices/$E1000/driver_override"
	[ "$(cat "$SYS/bus/pci/devices/$E1000/driver_override")" = vfio-pci ]
	[ ! -e "$SYS/bus/pci/drivers/vfio-pci" ]
	assert_driver pci 0000:00:03.0 none
	assert_driver pci "$E1000" e1000
	wait_for "$FAKE/uevents" '^remove@/bus/'
	# the host's own (a FUSE mount's bdi) reach every namespace
	run grep -v '^[a-z]*@/devices/virtual/' "$FAKE/uevents"
	assert_output_is <<-EOF
	unbind@/devices/pci0000:00/0000:00:03.0 SUBSYSTEM=pci
	remove@/bus/pci/drivers/vfio-pci SUBSYSTEM=drivers
	EOF
	run sh -c "printf %s '$E1000' >'$SYS/bus/pci/drivers/vfio-pci/bind'"
	[ "$status" -ne 0 ]
	[[ $output == *"vfio-pci/bind: Directory nonexistent" ]]
}

@test "a stop fault does the write, then stops the writer until it is let go" {
	pci_e1000
	fake_fault bus/pci/drivers/e1000/bind stop
	sh -c 'printf %s "$1" >"$2"; echo "$?" >"$3"' - "$E1000" \
		"$SYS/bus/pci/drivers/e1000/bind" "$FAKE/status" 3>&- &
	pid=$!
	fake_until "$pid" grep -q '^[0-9]* ([^)]*) T ' "/proc/$pid/stat"
	assert_driver pci "$E1000" e1000
	[ ! -e "$FAKE/status" ]
	kill -CONT "$pid"
	wait "$pid"
	[ "$(cat "$FAKE/status")" = 0 ]
	assert_log <<<"bus/pci/drivers/e1000/bind $E1000 -> ok"
}

@test "bind and unbind send uevents in the test's network namespace only" {
	pci_e1000
	fake_listen
	"$UEVENT" -l 0 500 >"$FAKE/host.uevents" 2>/dev/null &
	host=$!
	echo $host >>"$FAKE/pids"
	printf %s "$E1000" >"$SYS/bus/pci/drivers/e1000/bind"
	printf %s "$E1000" >"$SYS/bus/pci/drivers/e1000/unbind"
	fake_uevent add /bus/pci/drivers/vfio-pci SUBSYSTEM=drivers
	wait_for "$FAKE/uevents" '^add@/bus/'
	run fake_uevents
	assert_output_is <<-EOF
	bind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci DRIVER=e1000
	unbind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci
	add@/bus/pci/drivers/vfio-pci SUBSYSTEM=drivers
	EOF
	wait "$host"
	! grep -e "$E1000" -e vfio-pci "$FAKE/host.uevents"
}

@test "fake_later makes a device appear with its add uevent a moment later" {
	fake_driver pci e1000 match=*
	fake_listen
	fake_later 0.2 fake_device pci "$E1000" vendor=0x8086 device=0x100e
	[ ! -e "$SYS/bus/pci/devices/$E1000" ]
	wait_for "$FAKE/uevents" '^add@/devices/pci'
	fake_later 0.2 fake_probe pci "$E1000"
	wait_for "$FAKE/uevents" '^bind@/devices/pci'
	run fake_uevents
	assert_output_is <<-EOF
	add@/devices/pci0000:00/$E1000 SUBSYSTEM=pci
	bind@/devices/pci0000:00/$E1000 SUBSYSTEM=pci DRIVER=e1000
	EOF
	assert_driver pci "$E1000" e1000
}

@test "nothing can be created, removed or renamed through the mount" {
	pci_e1000 driver=e1000
	run mkdir "$SYS/bus/pci/drivers/vfio-pci"
	[[ $output == *"Operation not permitted"* ]]
	run ln -s ../../../bus/pci/drivers/e1000 "$SYS/devices/pci0000:00/$E1000/x"
	[[ $output == *"Operation not permitted"* ]]
	run rm "$SYS/devices/pci0000:00/$E1000/driver"
	[[ $output == *"Operation not permitted"* ]]
	run rmdir "$SYS/bus/pci/drivers/pci-stub"
	[[ $output == *"Operation not permitted"* ]]
	run mv "$SYS/bus/pci/drivers/e1000" "$SYS/bus/pci/drivers/e1001"
	[[ $output == *"Operation not permitted"* ]]
	run bash -c "echo 1 >'$SYS/bus/pci/drivers/e1000/new_file'"
	[[ $output == *"Permission denied"* ]]
	assert_driver pci "$E1000" e1000
	[ ! -e "$FAKE/back/bus/pci/drivers/e1000/new_file" ]
}

@test "an attribute without a store refuses to open for writing with EACCES, root or not, as kernfs does" {
	pci_e1000
	chmod 444 "$FAKE/back/$E1000_DEV/vendor"
	run bash -c "echo 0x1234 >'$SYS/$E1000_DEV/vendor'"
	[ "$status" -ne 0 ]
	[[ $output == *"Permission denied"* ]]
	[ "$(cat "$SYS/$E1000_DEV/vendor")" = 0x8086 ]
	# no store is called: nothing logged
	[ ! -s "$FAKE/log" ]
}

@test "a write to any other attribute lands in the file and is logged" {
	pci_e1000
	printf 'add\n' >"$SYS/devices/pci0000:00/$E1000/uevent"
	[ "$(cat "$FAKE/back/devices/pci0000:00/$E1000/uevent")" = add ]
	assert_log <<-EOF
	devices/pci0000:00/$E1000/uevent add\\n -> ok
	EOF
}

# SR-IOV, as measured on Debian's 6.1 under QEMU 7.2 (FACTS.md) and as
# drivers/pci/iov.c answers. QEMU's NVMe controller, a PF of two VFs in
# IOMMU group 3, on nvme, whose remove leaves SR-IOV enabled.
NVME=0000:00:03.0
NVME_DEV=devices/pci0000:00/$NVME

# nvme_pf [ARG...]: that PF, its nvme taking it alone (ARGs go to nvme's
# fake_driver: match=..., and they add to it)
nvme_pf() {
	fake_driver pci nvme "match=$NVME" sriov=keep "$@"
	fake_device pci "$NVME" vendor=0x1b36 device=0x0010 pciclass=0x010802 override \
		group=3 sriov=2 driver=nvme
}

# An Intel 82599 behind a root port, on ixgbe, whose remove disables
# SR-IOV: its VFs start at devfn 0x80, two apart, device 10ed, and
# ixgbevf's table has the first two.
IXGBE=0000:01:00.0
IXGBE_DEV=devices/pci0000:00/0000:00:1c.0/$IXGBE

# ixgbe_pf [ARG...]: that PF, ixgbevf beside it (ARGs go to the PF's
# fake_device: group=N, ...)
ixgbe_pf() {
	fake_driver pci ixgbe "match=$IXGBE" sriov=disable
	fake_driver pci ixgbevf match=0000:01:10.0,0000:01:10.2
	fake_device pci "$IXGBE" path=pci0000:00/0000:00:1c.0 vendor=0x8086 device=0x10fb \
		sriov=63 sriov_offset=128 sriov_stride=2 sriov_vf_device=10ed driver=ixgbe "$@"
}

# ixgbe_vfs_went: the uevents of the 82599's two VFs as they go, each
# unbound from ixgbevf, then removed, in the order of their numbers
ixgbe_vfs_went() {
	local vf
	for vf in 0000:01:10.0 0000:01:10.2; do
		printf '%s@/devices/pci0000:00/0000:00:1c.0/%s SUBSYSTEM=pci\n' unbind "$vf" remove "$vf"
	done
}

# sys_write FILE VALUE: VALUE written to FILE below $SYS in one write
# (the shell's printf writes a line at a time), as bats's run: dd's
# status, and its message naming the errno, in $output
sys_write() {
	run dd of="$SYS/$1" bs=4096 iflag=fullblock status=none < <(printf %s "$2")
}

@test "a PF's SR-IOV files read as sriov_init leaves them, and the read-only ones refuse a write with EACCES" {
	nvme_pf
	local f pf=$SYS/bus/pci/devices/$NVME
	for f in totalvfs:2 numvfs:0 drivers_autoprobe:1 offset:1 stride:1 vf_device:10; do
		[ "$(cat "$pf/sriov_${f%%:*}")" = "${f#*:}" ]
	done
	sys_write "bus/pci/devices/$NVME/sriov_totalvfs" 4
	[[ $output == *"Permission denied"* ]]
	[ "$(cat "$pf/sriov_totalvfs")" = 2 ]
	sys_write "bus/pci/devices/$NVME/sriov_drivers_autoprobe" maybe
	[[ $output == *"Invalid argument"* ]]
	printf off >"$pf/sriov_drivers_autoprobe"
	[ "$(cat "$pf/sriov_drivers_autoprobe")" = 0 ]
	printf 'y\n' >"$pf/sriov_drivers_autoprobe"
	[ "$(cat "$pf/sriov_drivers_autoprobe")" = 1 ]
	# no store is called for an open that fails: nothing logged
	assert_log <<-EOF
	$NVME_DEV/sriov_drivers_autoprobe maybe -> EINVAL
	$NVME_DEV/sriov_drivers_autoprobe off -> ok
	$NVME_DEV/sriov_drivers_autoprobe y\\n -> ok
	EOF
}

@test "VFs made with sriov_drivers_autoprobe 0 stay unbound, each beside its PF with its ids, an IOMMU group of its own and links both ways" {
	nvme_pf
	fake_driver pci vfio-pci
	fake_listen
	local pf=$SYS/bus/pci/devices/$NVME vf i
	echo 0 >"$pf/sriov_drivers_autoprobe"
	echo 2 >"$pf/sriov_numvfs"
	[ "$(cat "$pf/sriov_numvfs")" = 2 ]
	for i in 0 1; do
		vf=0000:00:03.$((i + 1))
		[ "$(readlink "$SYS/bus/pci/devices/$vf")" = "../../../devices/pci0000:00/$vf" ]
		assert_driver pci "$vf" none
		[ "$(readlink "$pf/virtfn$i")" = "../$vf" ]
		[ "$(readlink "$SYS/bus/pci/devices/$vf/physfn")" = "../$NVME" ]
		[ "$(cat "$SYS/bus/pci/devices/$vf/vendor") $(cat "$SYS/bus/pci/devices/$vf/device")" = "0x1b36 0x0010" ]
		[ "$(cat "$SYS/bus/pci/devices/$vf/class")" = 0x010802 ]
		[ "$(cat "$SYS/bus/pci/devices/$vf/driver_override")" = "(null)" ]
		# the lowest group numbers free, as ida_alloc gives them
		[ "$(readlink "$SYS/bus/pci/devices/$vf/iommu_group")" = "../../../kernel/iommu_groups/$i" ]
		[ "$(readlink "$SYS/kernel/iommu_groups/$i/devices/$vf")" = "../../../../devices/pci0000:00/$vf" ]
	done
	[ ! -e "$pf/virtfn2" ]
	[ "$(ls "$SYS/kernel/iommu_groups/3/devices")" = "$NVME" ]
	wait_for "$FAKE/uevents" "^change@/$NVME_DEV "
	run fake_uevents
	assert_output_is <<-EOF
	add@/devices/pci0000:00/0000:00:03.1 SUBSYSTEM=pci
	change@/devices/pci0000:00/0000:00:03.1 SUBSYSTEM=pci
	add@/devices/pci0000:00/0000:00:03.2 SUBSYSTEM=pci
	change@/devices/pci0000:00/0000:00:03.2 SUBSYSTEM=pci
	change@/$NVME_DEV SUBSYSTEM=pci
	EOF
}

@test "with sriov_drivers_autoprobe 1 a VF driver whose table has the VFs binds each as it is made, at the PF's offset and stride" {
	ixgbe_pf
	fake_listen
	printf 2 >"$SYS/bus/pci/devices/$IXGBE/sriov_numvfs"
	assert_driver pci 0000:01:10.0 ixgbevf
	assert_driver pci 0000:01:10.2 ixgbevf
	[ "$(readlink "$SYS/bus/pci/devices/0000:01:10.2")" = ../../../devices/pci0000:00/0000:00:1c.0/0000:01:10.2 ]
	[ "$(readlink "$SYS/bus/pci/devices/$IXGBE/virtfn1")" = ../0000:01:10.2 ]
	[ "$(cat "$SYS/bus/pci/devices/0000:01:10.0/device")" = 0x10ed ]
	# no IOMMU, no groups
	[ ! -e "$SYS/bus/pci/devices/0000:01:10.0/iommu_group" ]
	wait_for "$FAKE/uevents" "^change@/$IXGBE_DEV "
	run fake_uevents
	assert_output_is <<-EOF
	add@/devices/pci0000:00/0000:00:1c.0/0000:01:10.0 SUBSYSTEM=pci
	change@/devices/pci0000:00/0000:00:1c.0/0000:01:10.0 SUBSYSTEM=pci
	bind@/devices/pci0000:00/0000:00:1c.0/0000:01:10.0 SUBSYSTEM=pci DRIVER=ixgbevf
	add@/devices/pci0000:00/0000:00:1c.0/0000:01:10.2 SUBSYSTEM=pci
	change@/devices/pci0000:00/0000:00:1c.0/0000:01:10.2 SUBSYSTEM=pci
	bind@/devices/pci0000:00/0000:00:1c.0/0000:01:10.2 SUBSYSTEM=pci DRIVER=ixgbevf
	change@/$IXGBE_DEV SUBSYSTEM=pci
	EOF
	assert_log <<<"$IXGBE_DEV/sriov_numvfs 2 -> ok"
}

@test "a count kstrtou16 does not take is EINVAL, one above sriov_totalvfs ERANGE, and both change nothing" {
	nvme_pf
	local v
	for v in abc -1 70000 0x '2 2' $'2\n\n'; do
		sys_write "bus/pci/devices/$NVME/sriov_numvfs" "$v"
		[[ $output == *"Invalid argument"* ]]
	done
	sys_write "bus/pci/devices/$NVME/sriov_numvfs" 3
	[[ $output == *"Numerical result out of range"* ]]
	[ "$(cat "$SYS/bus/pci/devices/$NVME/sriov_numvfs")" = 0 ]
	[ ! -e "$SYS/bus/pci/devices/0000:00:03.1" ]
	# base 0: hex, and a newline may end it
	printf '0x2\n' >"$SYS/bus/pci/devices/$NVME/sriov_numvfs"
	[ "$(cat "$SYS/bus/pci/devices/$NVME/sriov_numvfs")" = 2 ]
	assert_log <<-EOF
	$NVME_DEV/sriov_numvfs abc -> EINVAL
	$NVME_DEV/sriov_numvfs -1 -> EINVAL
	$NVME_DEV/sriov_numvfs 70000 -> EINVAL
	$NVME_DEV/sriov_numvfs 0x -> EINVAL
	$NVME_DEV/sriov_numvfs 2 2 -> EINVAL
	$NVME_DEV/sriov_numvfs 2\\n\\n -> EINVAL
	$NVME_DEV/sriov_numvfs 3 -> ERANGE
	$NVME_DEV/sriov_numvfs 0x2\\n -> ok
	EOF
}

@test "a new count while VFs are enabled is EBUSY, the same count succeeds, and 0 removes every VF, unbound first, with its links and group" {
	ixgbe_pf group=5
	local pf=$SYS/bus/pci/devices/$IXGBE
	printf 2 >"$pf/sriov_numvfs"
	sys_write "bus/pci/devices/$IXGBE/sriov_numvfs" 1
	[[ $output == *"Device or resource busy"* ]]
	printf 2 >"$pf/sriov_numvfs"
	assert_driver pci 0000:01:10.0 ixgbevf
	[ "$(ls "$SYS/kernel/iommu_groups")" = "$(printf '0\n1\n5')" ]
	fake_listen
	printf 0 >"$pf/sriov_numvfs"
	[ "$(cat "$pf/sriov_numvfs")" = 0 ]
	for vf in 0000:01:10.0 0000:01:10.2; do
		[ ! -e "$SYS/bus/pci/devices/$vf" ]
		[ ! -e "$SYS/devices/pci0000:00/0000:00:1c.0/$vf" ]
		[ ! -e "$SYS/bus/pci/drivers/ixgbevf/$vf" ]
	done
	[ -z "$(ls "$pf" | grep virtfn)" ]
	[ "$(ls "$SYS/kernel/iommu_groups")" = 5 ]
	assert_driver pci "$IXGBE" ixgbe
	wait_for "$FAKE/uevents" '^remove@.*0000:01:10.2 '
	run fake_uevents
	assert_output_is <<-EOF
	$(ixgbe_vfs_went)
	EOF
	assert_log <<-EOF
	$IXGBE_DEV/sriov_numvfs 2 -> ok
	$IXGBE_DEV/sriov_numvfs 1 -> EBUSY
	$IXGBE_DEV/sriov_numvfs 2 -> ok
	$IXGBE_DEV/sriov_numvfs 0 -> ok
	EOF
}

@test "a PF without a driver, or on one without sriov_configure, answers a new count with ENOENT and changes nothing" {
	fake_driver pci pci-stub
	fake_device pci "$NVME" vendor=0x1b36 device=0x0010 override sriov=2
	local pf=$SYS/bus/pci/devices/$NVME
	sys_write "bus/pci/devices/$NVME/sriov_numvfs" 1
	[[ $output == *"No such file or directory"* ]]
	# the count it has already comes before the driver
	printf 0 >"$pf/sriov_numvfs"
	printf pci-stub >"$pf/driver_override"
	printf %s "$NVME" >"$SYS/bus/pci/drivers/pci-stub/bind"
	sys_write "bus/pci/devices/$NVME/sriov_numvfs" 1
	[[ $output == *"No such file or directory"* ]]
	[ "$(cat "$pf/sriov_numvfs")" = 0 ]
	[ ! -e "$SYS/bus/pci/devices/0000:00:03.1" ]
	assert_log <<-EOF
	$NVME_DEV/sriov_numvfs 1 -> ENOENT
	$NVME_DEV/sriov_numvfs 0 -> ok
	$NVME_DEV/driver_override pci-stub -> ok
	bus/pci/drivers/pci-stub/bind $NVME -> ok
	$NVME_DEV/sriov_numvfs 1 -> ENOENT
	EOF
}

@test "a network PF driver's unbind removes its VFs before the PF's own unbind uevent" {
	ixgbe_pf
	printf 2 >"$SYS/bus/pci/devices/$IXGBE/sriov_numvfs"
	fake_listen
	printf %s "$IXGBE" >"$SYS/bus/pci/drivers/ixgbe/unbind"
	assert_driver pci "$IXGBE" none
	[ "$(cat "$SYS/bus/pci/devices/$IXGBE/sriov_numvfs")" = 0 ]
	[ ! -e "$SYS/bus/pci/devices/0000:01:10.0" ]
	[ ! -e "$SYS/bus/pci/devices/$IXGBE/virtfn0" ]
	wait_for "$FAKE/uevents" "^unbind@/$IXGBE_DEV "
	run fake_uevents
	assert_output_is <<-EOF
	$(ixgbe_vfs_went)
	unbind@/$IXGBE_DEV SUBSYSTEM=pci
	EOF
}

@test "a network PF unplugged takes its VFs with it, and replugged it starts again with none and autoprobe 1" {
	ixgbe_pf
	local pf=$SYS/bus/pci/devices/$IXGBE
	echo 0 >"$pf/sriov_drivers_autoprobe"
	echo 2 >"$pf/sriov_numvfs"
	fake_listen
	fake_ctl unplug pci "$IXGBE"
	[ ! -e "$SYS/bus/pci/devices/0000:01:10.0" ]
	[ ! -e "$SYS/devices/pci0000:00/0000:00:1c.0/0000:01:10.2" ]
	fake_ctl replug pci "$IXGBE"
	assert_driver pci "$IXGBE" ixgbe
	[ "$(cat "$pf/sriov_numvfs") $(cat "$pf/sriov_drivers_autoprobe")" = "0 1" ]
	[ -z "$(ls "$pf" | grep virtfn)" ]
	sys_write "bus/pci/devices/$IXGBE/sriov_totalvfs" 1
	[[ $output == *"Permission denied"* ]]
	wait_for "$FAKE/uevents" "^bind@/$IXGBE_DEV "
	run fake_uevents
	assert_output_is <<-EOF
	remove@/devices/pci0000:00/0000:00:1c.0/0000:01:10.0 SUBSYSTEM=pci
	remove@/devices/pci0000:00/0000:00:1c.0/0000:01:10.2 SUBSYSTEM=pci
	unbind@/$IXGBE_DEV SUBSYSTEM=pci
	remove@/$IXGBE_DEV SUBSYSTEM=pci
	add@/$IXGBE_DEV SUBSYSTEM=pci
	bind@/$IXGBE_DEV SUBSYSTEM=pci DRIVER=ixgbe
	EOF
}

@test "nvme's unbind leaves its VFs enabled, and sriov_numvfs answers ENOENT until a driver is bound again" {
	nvme_pf
	local pf=$SYS/bus/pci/devices/$NVME
	echo 0 >"$pf/sriov_drivers_autoprobe"
	echo 2 >"$pf/sriov_numvfs"
	printf %s "$NVME" >"$SYS/bus/pci/drivers/nvme/unbind"
	assert_driver pci "$NVME" none
	[ "$(cat "$pf/sriov_numvfs")" = 2 ]
	[ "$(readlink "$pf/virtfn1")" = ../0000:00:03.2 ]
	assert_driver pci 0000:00:03.2 none
	sys_write "bus/pci/devices/$NVME/sriov_numvfs" 0
	[[ $output == *"No such file or directory"* ]]
	printf 2 >"$pf/sriov_numvfs"
	printf %s "$NVME" >"$SYS/bus/pci/drivers/nvme/bind"
	printf 0 >"$pf/sriov_numvfs"
	[ ! -e "$SYS/bus/pci/devices/0000:00:03.1" ]
	[ ! -e "$pf/virtfn0" ]
	assert_log <<-EOF
	$NVME_DEV/sriov_drivers_autoprobe 0\\n -> ok
	$NVME_DEV/sriov_numvfs 2\\n -> ok
	bus/pci/drivers/nvme/unbind $NVME -> ok
	$NVME_DEV/sriov_numvfs 0 -> ENOENT
	$NVME_DEV/sriov_numvfs 2 -> ok
	bus/pci/drivers/nvme/bind $NVME -> ok
	$NVME_DEV/sriov_numvfs 0 -> ok
	EOF
}

@test "while sriov_drivers_autoprobe is 0 a VF binds only with a driver_override, and drivers_probe passes it over" {
	# nvme's table has the VFs too: they share the PF's ids
	nvme_pf match=0000:00:03.1,0000:00:03.2
	fake_driver pci vfio-pci
	local pf=$SYS/bus/pci/devices/$NVME
	echo 0 >"$pf/sriov_drivers_autoprobe"
	echo 2 >"$pf/sriov_numvfs"
	assert_driver pci 0000:00:03.1 none
	sys_write bus/pci/drivers/nvme/bind 0000:00:03.1
	[[ $output == *"No such device"* ]]
	printf 0000:00:03.1 >"$SYS/bus/pci/drivers_probe"
	assert_driver pci 0000:00:03.1 none
	printf vfio-pci >"$SYS/bus/pci/devices/0000:00:03.1/driver_override"
	printf 0000:00:03.1 >"$SYS/bus/pci/drivers/vfio-pci/bind"
	assert_driver pci 0000:00:03.1 vfio-pci
	# autoprobe on again: the next probe of a VF goes through
	echo 1 >"$pf/sriov_drivers_autoprobe"
	printf 0000:00:03.2 >"$SYS/bus/pci/drivers_probe"
	assert_driver pci 0000:00:03.2 nvme
	assert_log <<-EOF
	$NVME_DEV/sriov_drivers_autoprobe 0\\n -> ok
	$NVME_DEV/sriov_numvfs 2\\n -> ok
	bus/pci/drivers/nvme/bind 0000:00:03.1 -> ENODEV
	bus/pci/drivers_probe 0000:00:03.1 -> ok
	devices/pci0000:00/0000:00:03.1/driver_override vfio-pci -> ok
	bus/pci/drivers/vfio-pci/bind 0000:00:03.1 -> ok
	$NVME_DEV/sriov_drivers_autoprobe 1\\n -> ok
	bus/pci/drivers_probe 0000:00:03.2 -> ok
	EOF
}

@test "a fault on sriov_numvfs fails the write like any other's, and no VF is made" {
	nvme_pf
	fake_fault "bus/pci/devices/$NVME/sriov_numvfs" EIO
	sys_write "bus/pci/devices/$NVME/sriov_numvfs" 2
	[[ $output == *"Input/output error"* ]]
	[ "$(cat "$SYS/bus/pci/devices/$NVME/sriov_numvfs")" = 0 ]
	[ ! -e "$SYS/bus/pci/devices/0000:00:03.1" ]
	printf 2 >"$SYS/bus/pci/devices/$NVME/sriov_numvfs"
	assert_driver pci 0000:00:03.1 none
	assert_log <<-EOF
	$NVME_DEV/sriov_numvfs 2 -> EIO
	$NVME_DEV/sriov_numvfs 2 -> ok
	EOF
}
