#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Waiting: devices and drivers that are not there yet, the uevents that
# announce them, the one deadline for the whole run, and the background
# child that keeps waiting while boot goes on.

load helper

# The Intel NIC that e1000 takes natively and that people move to
# pci-stub (or vfio-pci) to keep it away from the host.
pci_e1000() {
	fake_driver pci e1000 "match=$E1000"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override "$@"
}

# device_add() in the kernel's order: the device's attributes, its
# driver_override among them, exist before its link in bus/B/devices, and
# the add uevent follows at once. Built aside, then renamed into place.
device_appears() {
	local real=$FAKE dev
	FAKE=$real/stage fake_device "$@" || return 1
	dev=${FAKE_DEVPATH#/}
	mkdir -p "$real/back/${dev%/*}"
	mv -T "$real/stage/back/$dev" "$real/back/$dev"
	fake_bus "$1"
	fake_ns sh -c 'mv -T "$1" "$2" && exec "$3" add "$4" "SUBSYSTEM=$5"' - \
		"$real/stage/back/bus/$1/devices/$2" "$real/back/bus/$1/devices/$2" \
		"$UEVENT" "$FAKE_DEVPATH" "$1"
}

# pci-stub registers; what the device's driver_override said just before
# is kept, so a test can tell whether the device was held for it.
driver_arrives() {
	cat "$SYS/bus/pci/devices/$E1000/driver_override" >"$FAKE/override.seen"
	driver_registers pci pci-stub
}

# Unrelated devices announce themselves, as at coldplug, then ours
# appears (fake_later idle: once drvbind waits, so that it hears the
# whole burst).
burst_then_device() {
	fake_ns bash -c 'for ((i = 0; i < $2; i++)); do
		"$1" add "/devices/virtual/misc/noise$i" SUBSYSTEM=misc || exit 1
	done' - "$UEVENT" "$1" || return 1
	device_appears pci "$E1000" vendor=0x8086 device=0x100e override
}

# The writes for a device held for pci-stub, which never came: the
# override set, then at the deadline cleared and the kernel asked to
# probe, so that its native driver, if any, takes it back.
HELD_THEN_RELEASED="$E1000_DEV/driver_override pci-stub -> ok
$E1000_DEV/driver_override \\n -> ok
bus/pci/drivers_probe $E1000 -> ok"

# drvbind without -m: the command line alone says which modprobe runs.
drvbind_no_m() {
	fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" "$@"
}

# moved_without_modprobe COMMAND...: COMMAND, a drvbind -v whose rule
# takes the unbound NIC to pci-stub, registering 0.6 s in
# (driver_arrives), exits 0 without asking for the driver: -v says no
# "asking", its last line is the move, no modprobe ran, and the NIC is on
# pci-stub.
moved_without_modprobe() {
	run "$@"
	[ "$status" -eq 0 ]
	[[ $output != *asking* ]]
	[[ $(tail -n 1 <<<"$output") == "drvbind: pci/$E1000: none -> pci-stub" ]]
	[ ! -e "$FAKE/modprobe.log" ]
	assert_driver pci "$E1000" pci-stub
}

@test "a device that appears later is moved once it appears" {
	fake_driver pci pci-stub
	fake_later idle device_appears pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" drvbind -t 5 "pci/$E1000:pci-stub"
	assert_driver pci "$E1000" pci-stub
	assert_log <<<"$UNBOUND_TO_STUB"
}

@test "with -v the add uevent is shown before the move it woke" {
	# As at boot (the test's fake made again so): no re-scan every 250 ms,
	# which -r brings, and no uevent but the fake's. Once drvbind waits,
	# the add uevent, sent as the device appears, is all that wakes it.
	fake_teardown || :
	fake_setup_boot
	fake_driver pci pci-stub
	fake_later idle device_appears pci "$E1000" vendor=0x8086 device=0x100e override
	run boot_drvbind -v -t 5 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	assert_driver pci "$E1000" pci-stub
	add=$(grep -nx "drvbind: uevent add /$E1000_DEV" <<<"$output" | cut -d: -f1)
	write=$(grep -nx "drvbind: write bus/pci/devices/$E1000/driver_override \"pci-stub\"" <<<"$output" | cut -d: -f1)
	moved=$(grep -nx "drvbind: pci/$E1000: none -> pci-stub" <<<"$output" | cut -d: -f1)
	[ -n "$add" ]
	[ -n "$write" ]
	[ -n "$moved" ]
	((add < write && write < moved))
}

@test "a driver that appears later is asked of modprobe once, holds the device by driver_override, then takes it" {
	pci_e1000
	fake_later idle driver_arrives
	run drvbind -v -t 5 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	[[ $output == *"drvbind: asking $FAKE/modprobe for pci-stub"* ]]
	[[ $output == *"drvbind: pci/$E1000: held for pci-stub by driver_override"* ]]
	[[ $(tail -n 1 <<<"$output") == "drvbind: pci/$E1000: none -> pci-stub" ]]
	# several re-scans passed while the driver was missing: still one request
	run cat "$FAKE/modprobe.log"
	assert_output_is 'modprobe -q -- pci-stub'
	run cat "$FAKE/override.seen"
	assert_output_is 'pci-stub'
	nic_is pci-stub pci-stub
	# the override that held the device is not written again
	assert_log <<-EOF
	$E1000_DEV/driver_override pci-stub -> ok
	bus/pci/drivers/pci-stub/bind $E1000 -> ok
	EOF
}

@test "rules waiting for the same missing driver ask modprobe for it once between them" {
	local d
	fake_driver pci e1000 'match=*'
	for d in 0000:00:03.0 0000:00:04.0 0000:00:05.0 0000:00:06.0; do
		fake_device pci "$d" driver=e1000 override
	done
	fake_later idle driver_registers pci pci-stub
	run drvbind -t 5 pci/0000:00:03.0:pci-stub pci/0000:00:04.0:pci-stub pci/0000:00:05.0:pci-stub \
		pci/0000:00:06.0:nosuch
	[ "$status" -eq 1 ]
	# a boot with a rule a device for 64 devices would start 64 at once
	run sort "$FAKE/modprobe.log"
	assert_output_is "modprobe -q -- nosuch
modprobe -q -- pci-stub"
	for d in 0000:00:03.0 0000:00:04.0 0000:00:05.0; do
		assert_driver pci "$d" pci-stub
	done
}

@test "a device on its native driver is left there while its new driver loads, then moved" {
	pci_e1000 driver=e1000
	fake_later idle driver_arrives
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub" drvbind -t 5 "pci/$E1000:pci-stub"
	# not held: a bound device keeps working until the driver is there
	run cat "$FAKE/override.seen"
	assert_output_is '(null)'
	run cat "$FAKE/modprobe.log"
	assert_output_is 'modprobe -q -- pci-stub'
	nic_stubbed
}

@test "a driver whose directory shows up before its bind file is waited for, not failed" {
	pci_e1000
	# bus_add_driver() makes the directory, attaches, then adds bind and
	# unbind; only then comes the add uevent
	fake_later idle mkdir "$FAKE/back/bus/pci/drivers/pci-stub" \; driver_arrives
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" drvbind -t 5 "pci/$E1000:pci-stub"
	run cat "$FAKE/override.seen"
	assert_output_is 'pci-stub'
	nic_is pci-stub pci-stub
}

@test "-m '' runs no modprobe for a missing driver" {
	pci_e1000
	fake_later idle driver_arrives
	moved_without_modprobe drvbind -m '' -v -t 5 "pci/$E1000:pci-stub"
}

@test "drvbind.modprobe= on the command line names the program asked for a missing driver" {
	pci_e1000
	fake_cmdline "quiet drvbind=pci/$E1000:pci-stub drvbind.modprobe=$FAKE/modprobe"
	fake_later idle driver_arrives
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" drvbind_no_m -t 5
	run cat "$FAKE/modprobe.log"
	assert_output_is 'modprobe -q -- pci-stub'
	assert_driver pci "$E1000" pci-stub
}

@test "drvbind.modprobe= empty on the command line runs no modprobe" {
	pci_e1000
	# the last occurrence wins: the fake one named first must not run
	fake_cmdline "drvbind.modprobe=$FAKE/modprobe drvbind=pci/$E1000:pci-stub drvbind.modprobe="
	fake_later idle driver_arrives
	moved_without_modprobe drvbind_no_m -v -t 5
}

@test "a device that never appears times out and the other rules are still applied" {
	pci_e1000
	fake_driver pci pci-stub
	start=$SECONDS
	run drvbind -t 1 0000:00:09.0:pci-stub "pci/$E1000:pci-stub" pci/0000:00:0a.0:pci-stub
	[ "$status" -eq 1 ]
	((SECONDS - start < 8))
	assert_output_is <<-EOF
	drvbind: pci/$E1000: none -> pci-stub
	drvbind: 0000:00:09.0: device not found (waited 1 s)
	drvbind: pci/0000:00:0a.0: device not found (waited 1 s)
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_log <<<"$UNBOUND_TO_STUB"
}

@test "a driver that never appears: the held override is cleared and drivers_probe gives the device its native driver back" {
	pci_e1000
	run_says 1 "drvbind: pci/$E1000: driver pci-stub not found; now on e1000 (waited 1 s)" \
		drvbind -t 1 "pci/$E1000:pci-stub"
	nic_is e1000 '(null)'
	assert_log <<<"$HELD_THEN_RELEASED"
}

@test "a new device that bind refuses with ENODEV, as PCI does until the bus has added it, is bound on the next look" {
	fake_driver pci pci-stub
	# the add uevent comes before the bus lets drivers match the device
	fake_fault bus/pci/drivers/pci-stub/bind ENODEV
	fake_later idle device_appears pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" drvbind -t 5 "pci/$E1000:pci-stub"
	assert_driver pci "$E1000" pci-stub
	# no new_id: the override matches whatever the ids
	assert_log <<-EOF
	$E1000_DEV/driver_override pci-stub -> ok
	bus/pci/drivers/pci-stub/bind $E1000 -> ENODEV
	bus/pci/drivers/pci-stub/bind $E1000 -> ok
	EOF
}

@test "a new device that bind keeps refusing stays held by its override until the kernel's own probe binds it" {
	fake_driver pci pci-stub new_id
	fake_fault bus/pci/drivers/pci-stub/bind ENODEV always
	fake_later idle device_appears pci "$E1000" vendor=0x8086 device=0x100e override \; fake_probe pci "$E1000"
	run_says 0 "drvbind: pci/$E1000: none -> pci-stub" drvbind -t 5 "pci/$E1000:pci-stub"
	assert_driver pci "$E1000" pci-stub
	log_has "bus/pci/drivers/pci-stub/bind $E1000 -> ENODEV"
	! grep -q new_id "$FAKE/log"
}

@test "a new device that bind refuses with ENODEV to the deadline is handed back with its override cleared" {
	fake_driver pci pci-stub
	fake_fault bus/pci/drivers/pci-stub/bind ENODEV always
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 1 "drvbind: pci/$E1000: none -> pci-stub failed at bind: No such device; left unbound" \
		drvbind -t 1 "pci/$E1000:pci-stub"
	nic_is none '(null)'
	# the rollback of a held device: override cleared, the kernel asked to probe
	run tail -n 2 "$FAKE/log"
	assert_output_is <<-EOF
	$E1000_DEV/driver_override \\n -> ok
	bus/pci/drivers_probe $E1000 -> ok
	EOF
}

@test "a driver that never appears for a device no driver wants leaves it unbound with its override cleared" {
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override
	run_says 1 "drvbind: pci/$E1000: driver pci-stub not found; now unbound (waited 1 s)" \
		drvbind -t 1 "pci/$E1000:pci-stub"
	nic_is none '(null)'
	assert_log <<<"$HELD_THEN_RELEASED"
}

@test "a driver that never appears leaves a bound device untouched on its driver" {
	pci_e1000 driver=e1000
	run_says 1 "drvbind: pci/$E1000: driver pci-stub not found; stays on e1000 (waited 1 s)" \
		drvbind -t 1 "pci/$E1000:pci-stub"
	nic_is e1000 '(null)'
	assert_log </dev/null
	run cat "$FAKE/modprobe.log"
	assert_output_is 'modprobe -q -- pci-stub'
}

@test "drvbind exits as soon as every rule is settled, long before the timeout" {
	fake_driver pci e1000 "match=$E1000"
	fake_later idle device_appears pci "$E1000" vendor=0x8086 device=0x100e override \; driver_arrives
	start=$SECONDS
	run drvbind -t 30 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	((SECONDS - start < 8))
	assert_output_is "drvbind: pci/$E1000: none -> pci-stub"
	assert_driver pci "$E1000" pci-stub
}

@test "-t 0 acts only on what is present" {
	pci_e1000
	fake_driver pci pci-stub
	# 0000:00:09.0 appears should drvbind wait (drvbind_idle: a drvbind
	# that has exited is done with every uevent too)
	fake_later idle device_appears pci 0000:00:09.0 vendor=0x8086 device=0x100e override
	start=$SECONDS
	run drvbind -t 0 "pci/$E1000:pci-stub" pci/0000:00:09.0:pci-stub
	[ "$status" -eq 1 ]
	((SECONDS - start < 8))
	assert_output_is <<-EOF
	drvbind: pci/$E1000: none -> pci-stub
	drvbind: pci/0000:00:09.0: device not found (waited 0 s)
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_log <<<"$UNBOUND_TO_STUB"
}

@test "drvbind.timeout= on the command line is honoured" {
	fake_driver pci pci-stub
	fake_cmdline "ro drvbind.timeout=1 drvbind=pci/$E1000:pci-stub"
	start=$SECONDS
	run drvbind
	[ "$status" -eq 1 ]
	((SECONDS - start < 8))
	assert_output_is "drvbind: pci/$E1000: device not found (waited 1 s)"
}

@test "-t overrides drvbind.timeout= from the command line and the config file" {
	fake_driver pci pci-stub
	fake_cmdline "drvbind.timeout=30 drvbind=pci/$E1000:pci-stub"
	fake_conf drvbind.timeout=20
	start=$SECONDS
	run drvbind -t 1
	[ "$status" -eq 1 ]
	((SECONDS - start < 8))
	assert_output_is "drvbind: pci/$E1000: device not found (waited 1 s)"
}

@test "none holds a USB interface that appears while drvbind waits, so the native probe a moment later binds nothing" {
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_driver usb usb-storage match=1-1:1.0
	fake_later idle fake_device usb 1-1:1.0 parent=1-1 class=08 \; fake_probe usb 1-1:1.0
	run drvbind -t 5 usb/1-1:1.0:none
	[ "$status" -eq 0 ]
	# drvbind looked at the add uevent, before the probe: it found the
	# interface unbound, and its authorized 0 is what keeps the probe off
	assert_output_is "drvbind: usb/1-1:1.0: unbound; held by authorized 0"
	wait_for "$FAKE/log" '^bus/usb/drivers_probe '
	assert_driver usb 1-1:1.0 none
	assert_log <<-EOF
	devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0/authorized 0 -> ok
	bus/usb/drivers_probe 1-1:1.0 -> ok
	EOF
}

@test "none on a USB interface without authorized (before Linux 4.4) unbinds the native driver that probes it while drvbind watches" {
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_driver usb usb-storage match=1-1:1.0
	fake_later idle fake_device usb 1-1:1.0 parent=1-1 class=08 noauth \; fake_probe usb 1-1:1.0
	# the watch lasts to the deadline: room for both steps when loaded
	run_says 0 - drvbind -t 4 usb/1-1:1.0:none <<-EOF
	drvbind: usb/1-1:1.0: already unbound
	drvbind: usb/1-1:1.0: usb-storage bound it; unbound again
	EOF
	assert_driver usb 1-1:1.0 none
	assert_log <<-EOF
	bus/usb/drivers_probe 1-1:1.0 -> ok
	bus/usb/drivers/usb-storage/unbind 1-1:1.0 -> ok
	EOF
}

@test "none on an unbound device nothing can hold watches it until the deadline, then says already unbound" {
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08 noauth
	fake_driver usb usb-storage
	t0=$(date +%s%N)
	run drvbind -t 1 usb/1-1:1.0:none
	t1=$(date +%s%N)
	[ "$status" -eq 0 ]
	assert_output_is "drvbind: usb/1-1:1.0: already unbound"
	# the deadline is a lower bound and cannot flake; the upper one is generous
	(((t1 - t0) / 1000000 >= 1000))
	(((t1 - t0) / 1000000 < 4000))
	assert_driver usb 1-1:1.0 none
	assert_log </dev/null
}

@test "in the background the parent returns at once and the child applies the rule when the device appears" {
	fake_driver pci pci-stub
	# the child keeps stderr: a file, not bats' pipe, which would wait for it
	st=0
	fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" \
		-b -t 5 "pci/$E1000:pci-stub" </dev/null >"$FAKE/bg.out" 2>"$FAKE/bg.err" 3>&- || st=$?
	# back with status 0 though the device is not there (a parent that
	# waited for it would have said "device not found", status 1)
	[ "$st" -eq 0 ]
	run cat "$FAKE/bg.err"
	assert_output_is 'drvbind: waiting in the background for 1 rule(s)'
	device_appears pci "$E1000" vendor=0x8086 device=0x100e override
	wait_for "$FAKE/bg.err" "none -> pci-stub"
	assert_driver pci "$E1000" pci-stub
	run cat "$FAKE/bg.err"
	assert_output_is <<-EOF
	drvbind: waiting in the background for 1 rule(s)
	drvbind: pci/$E1000: none -> pci-stub
	EOF
	[ ! -s "$FAKE/bg.out" ]
	assert_log <<<"$UNBOUND_TO_STUB"
}

@test "in the background what is present is applied before the parent returns" {
	pci_e1000 driver=e1000
	fake_driver pci pci-stub
	st=0
	fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" \
		-b -t 5 "pci/$E1000:pci-stub" pci/0000:00:09.0:pci-stub \
		</dev/null >/dev/null 2>"$FAKE/bg.err" 3>&- || st=$?
	[ "$st" -eq 0 ]
	assert_driver pci "$E1000" pci-stub
	run cat "$FAKE/bg.err"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: waiting in the background for 1 rule(s)
	EOF
	device_appears pci 0000:00:09.0 vendor=0x8086 device=0x100e override
	wait_for "$FAKE/bg.err" "0000:00:09.0: none -> pci-stub"
	assert_driver pci 0000:00:09.0 pci-stub
}

@test "the background child still honours the deadline for a device that never appears" {
	fake_driver pci pci-stub
	st=0
	fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" \
		-b -t 1 "pci/$E1000:pci-stub" </dev/null >/dev/null 2>"$FAKE/bg.err" 3>&- || st=$?
	[ "$st" -eq 0 ]
	wait_for "$FAKE/bg.err" "device not found"
	run cat "$FAKE/bg.err"
	assert_output_is <<-EOF
	drvbind: waiting in the background for 1 rule(s)
	drvbind: pci/$E1000: device not found (waited 1 s)
	EOF
}

@test "a device that appears after a burst of unrelated uevents still gets handled" {
	fake_driver pci pci-stub
	fake_later idle burst_then_device 300
	# 300 uevents from 300 processes take seconds on a loaded machine:
	# the deadline is only how long a wrong run waits
	run drvbind -v -t 30 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	[[ $output == *"drvbind: uevent add /devices/virtual/misc/noise0"* ]]
	[[ $(tail -n 1 <<<"$output") == "drvbind: pci/$E1000: none -> pci-stub" ]]
	assert_driver pci "$E1000" pci-stub
	assert_log <<<"$UNBOUND_TO_STUB"
}

@test "with -v a uevent's control bytes show escaped, and a DEVPATH too long for a line is cut after its last whole escape" {
	local long line
	long=/devices/$(printf '\e%.0s' {1..300})
	fake_driver pci pci-stub
	fake_later idle fake_uevent add $'/devices/pci0000:00/0000:00:04.0\e[2K\nforged' SUBSYSTEM=pci \; \
		fake_uevent add "$long" SUBSYSTEM=pci \; \
		device_appears pci "$E1000" vendor=0x8086 device=0x100e override
	run drvbind -v -t 5 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	grep -Fxq 'drvbind: uevent add /devices/pci0000:00/0000:00:04.0\x1b[2K\x0aforged' <<<"$output"
	line=$(grep '^drvbind: uevent add /devices/\\x1b' <<<"$output")
	# within log.c's LINE_SZ (960), as /dev/kmsg takes a record, and no
	# escape cut in two
	((${#line} < 960))
	[[ $line =~ ^drvbind:\ uevent\ add\ /devices/(\\x1b)+\.\.\.$ ]]
	# nothing but printable ASCII reaches the terminal
	[ -z "$(LC_ALL=C tr -d '\n -~' <<<"$output")" ]
	[[ $(tail -n 1 <<<"$output") == "drvbind: pci/$E1000: none -> pci-stub" ]]
	assert_driver pci "$E1000" pci-stub
}
