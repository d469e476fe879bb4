#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Faults that bind.bats and wait.bats do not reach: a device or a driver
# going away in the middle of a move, errors on new_id and remove_id,
# a uevent socket that cannot be had or overflows, /dev/kmsg missing or
# read-only, and sysfs roots that are not sysfs. Each asserts the final
# tree, the messages, the write log and the exit status; a device that
# had a driver keeps one, unless what it had is gone from the kernel.

load helper

# gone: the NIC is unplugged, and no driver keeps a link to it.
gone() {
	[ ! -e "$SYS/bus/pci/devices/$E1000" ] && [ ! -e "$SYS/$E1000_DEV" ] &&
		[ -z "$(find "$SYS/bus/pci/drivers" -name "$E1000")" ]
}

# unplugged_at RELPATH BIND MESSAGE: a move of the NIC to vfio-pci (which
# takes any device), the NIC hot-unplugged by the write to RELPATH, so
# that vfio-pci's bind answered BIND: exit 1 and MESSAGE, the move's
# writes alone (the rollback finds nothing to write to), and the NIC gone.
unplugged_at() {
	pci_setup match=*
	fake_fault "$1" "unplug:$E1000"
	run_says 1 "$3" drvbind "pci/$E1000:vfio-pci"
	assert_log <<<"$(vfio_writes "$2")"
	gone
}

# bind_ns SRC DST SETUP CMD...: CMD in the test's network namespace and a
# mount namespace of its own, with SRC mounted over DST and then the shell
# snippet SETUP run there.
bind_ns() {
	fake_ns unshare -m --propagation private sh -c \
		'mount --bind "$1" "$2" && eval "$3" && shift 3 && exec "$@"' - "$@"
}

# drvbind under strace, with strace's own ARGS (a fault to inject) first;
# the trace goes to $FAKE/trace. strace keeps only the last -e trace=, so
# the callers' one names ppoll, which device_after_poll waits for.
# With --sys first, the fake is mounted over /sys and there is no -r: as
# at boot, only a uevent ends a wait before the deadline, with no 250 ms
# re-scan.
drvbind_strace() {
	local sargs=() in=(fake_ns) root=(-r "$SYS")
	if [[ $1 == --sys ]]; then
		in=(bind_ns "$SYS" /sys :)
		root=()
		shift
	fi
	while [[ $1 != -- ]]; do
		sargs+=("$1")
		shift
	done
	shift
	"${in[@]}" strace -f -qq -o "$FAKE/trace" "${sargs[@]}" \
		"$BIN" "${root[@]}" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" "$@"
}

# The NIC appears, with its add uevent, once drvbind traced by
# drvbind_strace waits in ppoll(): so it is found by what follows a wait,
# not by the first look, however late drvbind started.
device_after_poll() {
	local i
	for ((i = 0; i < 1000; i++)); do
		grep -q ' ppoll(' "$FAKE/trace" 2>/dev/null && break
		sleep 0.01
	done
	grep -q ' ppoll(' "$FAKE/trace" || return 1
	fake_device pci "$E1000" override || return 1
	fake_uevent add "$FAKE_DEVPATH" SUBSYSTEM=pci
}

# drvbind as at boot: no -k, so it reads /proc/cmdline (here the fake
# command line, mounted over it in a mount namespace of its own) and
# opens /dev/kmsg, which SETUP (a shell snippet) arranges first.
drvbind_boot() {
	local setup=$1
	shift
	bind_ns "$FAKE/cmdline" /proc/cmdline "$setup" \
		"$BIN" -r "$SYS" -c "$FAKE/conf" -m "$FAKE/modprobe" "$@"
}

# ---- devices and drivers going away mid-move ----

@test "a device unplugged between unbind and bind: the bind and the rollback report it gone" {
	unplugged_at bus/pci/drivers/e1000/unbind ENODEV \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: No such device; rollback to e1000 failed at driver_override: No such file or directory"
}

@test "a device unplugged after the bind, before the check: the check finds it unbound and the rollback reports it gone" {
	unplugged_at bus/pci/drivers/vfio-pci/bind ok \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at verify: not bound; rollback to e1000 failed at driver_override: No such file or directory"
}

@test "the target driver unregistering after the unbind: its bind, opened before, answers ENODEV and the device goes back on its driver" {
	pci_setup match=*
	fake_fault bus/pci/drivers/e1000/unbind unregister:pci/vfio-pci
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: No such device; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_rollback_log ENODEV
	nic_is e1000 "(null)"
}

@test "the target driver unregistering right after the bind: the check finds the device unbound and it goes back on its driver" {
	pci_setup match=*
	fake_fault bus/pci/drivers/vfio-pci/bind unregister:pci/vfio-pci
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at verify: not bound; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_rollback_log ok
	nic_is e1000 "(null)"
	[ ! -e "$SYS/bus/pci/drivers/vfio-pci" ]
}

@test "the old driver unregistering while the target refuses: both failures are reported and the override is cleared" {
	pci_setup match=* probe=EINVAL
	fake_fault bus/pci/drivers/e1000/unbind unregister:pci/e1000
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; rollback to e1000 failed at bind: No such file or directory" \
		drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$(vfio_writes EINVAL)
	$E1000_DEV/driver_override \\n -> ok
	EOF
	# e1000 is gone from the kernel: no driver is left to give it back
	[ ! -e "$SYS/bus/pci/drivers/e1000" ]
	nic_is none "(null)"
}

@test "the old driver refusing the rollback after a silent probe: both are reported and the override is cleared" {
	rollback_refused silent ENODEV ok \
		"drvbind: pci/$E1000: e1000 -> vfio-pci failed at verify: not bound; rollback to e1000 failed at bind: No such device"
}

# ---- errors on attributes ----

@test "EINTR on bind is a failure and is rolled back" {
	pci_setup match=*
	fake_fault bus/pci/drivers/vfio-pci/bind EINTR
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Interrupted system call; back on e1000" \
		drvbind "pci/$E1000:vfio-pci"
	assert_rollback_log EINTR
	nic_is e1000 "(null)"
}

@test "EIO on new_id is reported as the new_id step and rolled back" {
	pci_new_id_setup
	fake_fault bus/pci/drivers/pci-stub/new_id EIO
	run_says 1 "drvbind: pci/$E1000: e1000 -> pci-stub failed at new_id: I/O error; back on e1000" \
		drvbind "pci/$E1000:pci-stub"
	assert_log <<-EOF
	bus/pci/drivers/e1000/unbind $E1000 -> ok
	bus/pci/drivers/pci-stub/bind $E1000 -> ENODEV
	bus/pci/drivers/pci-stub/new_id 8086 100e -> EIO
	bus/pci/drivers/e1000/bind $E1000 -> ok
	EOF
	assert_driver pci "$E1000" e1000
}

@test "EIO on remove_id is a warning: the device stays on the driver it was taught" {
	pci_new_id_setup
	fake_fault bus/pci/drivers/pci-stub/remove_id EIO
	run_says 0 - drvbind "pci/$E1000:pci-stub" <<-EOF
	drvbind: pci/$E1000: pci-stub/remove_id "8086 100e": I/O error
	drvbind: pci/$E1000: e1000 -> pci-stub (new_id "8086 100e")
	EOF
	assert_log <<<"$(stub_taught_writes EIO)"
	assert_driver pci "$E1000" pci-stub
}

@test "a short write clearing the override in the rollback is reported with the rollback's step" {
	pci_setup match=* probe=EINVAL
	fake_fault "$E1000_DEV/driver_override" pass
	fake_fault "$E1000_DEV/driver_override" short
	run_says 1 "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; rollback to e1000 failed at driver_override: short write" \
		drvbind "pci/$E1000:vfio-pci"
	assert_log <<-EOF
	$(vfio_writes EINVAL)
	$E1000_DEV/driver_override \\n -> short
	EOF
	# the override still names vfio-pci, which refuses it: e1000 could
	# not take it either, and the message says the rollback failed
	override_is vfio-pci
	assert_driver pci "$E1000" none
}

# ---- the uevent socket ----

@test "a uevent socket that cannot be opened: a device that appears later is found by the re-scan" {
	fake_driver pci pci-stub match=*
	fake_later 0 device_after_poll
	SECONDS=0
	run drvbind_strace -e trace=socket,ppoll -e inject=socket:error=EMFILE -- -t 60 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	# long before the deadline: the re-scan found it, not the last look
	((SECONDS < 30))
	assert_output_is "drvbind: pci/$E1000: none -> pci-stub"
	grep -q ' socket(AF_NETLINK, .* = -1 EMFILE .*(INJECTED)' "$FAKE/trace"
	assert_driver pci "$E1000" pci-stub
	assert_log <<<"$UNBOUND_TO_STUB"
}

@test "a uevent socket that overflows (ENOBUFS) while a device appears: the look at every rule after it still moves the device" {
	fake_driver pci pci-stub match=*
	fake_later 0 device_after_poll
	SECONDS=0
	run drvbind_strace --sys -e trace=recvfrom,ppoll -e inject=recvfrom:error=ENOBUFS:when=1..3 -- -t 60 "pci/$E1000:pci-stub"
	[ "$status" -eq 0 ]
	# long before the deadline, and with no re-scan: the wake on the uevent
	# that came with the ENOBUFS found it
	((SECONDS < 30))
	assert_output_is "drvbind: pci/$E1000: none -> pci-stub"
	[ "$(grep -c 'ENOBUFS .*(INJECTED)' "$FAKE/trace")" -eq 3 ]
	assert_driver pci "$E1000" pci-stub
}

# ---- /dev/kmsg ----

@test "at boot the lines go to /dev/kmsg with their priority and to stderr" {
	pci_stub_setup
	fake_cmdline "drvbind=$E1000:pci-stub drvbind=e1000"
	: >"$FAKE/kmsg"
	run_says 1 - drvbind_boot "mount --bind '$FAKE/kmsg' /dev/kmsg" -t 0 <<-EOF
	drvbind: bad rule "e1000": no ':' before the driver
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	run cat "$FAKE/kmsg"
	assert_output_is <<-EOF
	<3>drvbind: bad rule "e1000": no ':' before the driver
	<6>drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_driver pci "$E1000" pci-stub
}

@test "at boot without /dev/kmsg, or with it read-only, every line still reaches stderr" {
	pci_stub_setup
	fake_cmdline "drvbind=$E1000:pci-stub drvbind=e1000"
	run_says 1 - drvbind_boot "mount -t tmpfs none /dev" -t 0 <<-EOF
	drvbind: bad rule "e1000": no ':' before the driver
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_driver pci "$E1000" pci-stub

	fake_cmdline "drvbind=$E1000:e1000 drvbind=e1000"
	: >"$FAKE/kmsg"
	run_says 1 - drvbind_boot "mount --bind '$FAKE/kmsg' /dev/kmsg && mount -o remount,bind,ro /dev/kmsg" -t 0 <<-EOF
	drvbind: bad rule "e1000": no ':' before the driver
	drvbind: pci/$E1000: pci-stub -> e1000
	EOF
	[ ! -s "$FAKE/kmsg" ]
	assert_driver pci "$E1000" e1000
}

# ---- the sysfs root ----

@test "a sysfs root that is a file, or whose bus is not a directory, is a clear error, exit 1, for rules and for -l" {
	: >"$BATS_TEST_TMPDIR/file"
	mkdir "$BATS_TEST_TMPDIR/busfile"
	: >"$BATS_TEST_TMPDIR/busfile/bus"
	run_says 1 "drvbind: $BATS_TEST_TMPDIR/file: not a sysfs tree: Not a directory" \
		"$BIN" -r "$BATS_TEST_TMPDIR/file" -t 0 "$E1000:pci-stub"
	run_says 1 "drvbind: $BATS_TEST_TMPDIR/file: not a sysfs tree: Not a directory" \
		"$BIN" -r "$BATS_TEST_TMPDIR/file" -l
	run_says 1 "drvbind: $BATS_TEST_TMPDIR/busfile: not a sysfs tree: No such file or directory" \
		"$BIN" -r "$BATS_TEST_TMPDIR/busfile" -t 0 "$E1000:pci-stub"
	run_says 1 "drvbind: $BATS_TEST_TMPDIR/busfile: not a sysfs tree: No such file or directory" \
		"$BIN" -r "$BATS_TEST_TMPDIR/busfile" -l
}

@test "/proc as the sysfs root: its bus has no devices, so a rule times out and -l names the bus it cannot read" {
	run_says 1 "drvbind: $E1000: device not found (waited 0 s)" \
		"$BIN" -r /proc -t 0 "$E1000:pci-stub"
	run_says 1 "drvbind: pci: no such bus: Not a directory" "$BIN" -r /proc -l pci
}
