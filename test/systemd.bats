#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# drvbind-follow.service under a real systemd as PID 1: the unit as `make
# install` ships it, enabled by `systemctl enable`, in a root disk that
# holds this machine's systemd (test/qemu/systemd.sh builds and boots it,
# once, under QEMU with TCG; see there). The root's /etc/drvbind.conf
# sends the e1000 at 0000:00:05.0, which nothing else binds, to pci-stub,
# whose module drvbind must ask modprobe for, and that modprobe takes 2 s:
# the rule holds seconds after the follower starts. drvbind-probe.service,
# ordered After=drvbind-follow.service (and Wants= it) and after nothing
# else, reports what it finds when it starts ("probe.*"), then reloads
# the follower ("reload.*") and stops it ("stop.*").
#
# Results are lines "KEY VALUE" in build/systemd/out/follow/results; the
# console (systemd's own status lines too) in console.log beside it.
# DRVBIND=FILE boots another binary, FOLLOW_UNIT=FILE another unit: with
# a copy of the unit set to Type=exec the tests below fail.

load qemu/results

setup_file() {
	boot_all test/qemu/systemd.sh build/systemd
	export QEMU_OUT
}

# mono KEY: a timestamp systemd gave, in µs of CLOCK_MONOTONIC
mono() {
	local v
	v=$(val follow "$1")
	[[ $v =~ ^[0-9]+$ ]] || {
		echo "$1: not a timestamp: '$v'" >&2
		return 1
	}
	echo "$v"
}

@test "systemd boots the root, with drvbind-follow.service as make install put it, Type=notify, and enabled by systemctl enable" {
	booted follow
	has follow probe.enabled enabled
	has follow probe.follow.Type notify
	has follow probe.follow.NotifyAccess main
}

@test "a unit ordered after drvbind-follow.service starts with 0000:00:05.0 already on pci-stub, the module drvbind asked modprobe for" {
	booted follow
	has follow probe.link "pci/0000:00:05.0 pci-stub"
	has follow probe.override "pci/0000:00:05.0 pci-stub"
	# the module was not loaded until drvbind asked for it
	grep -qE '^probe\.modprobe [0-9.]+ modprobe -q -- pci-stub$' "$QEMU_OUT/follow/results"
}

@test "systemd calls the follower started only when its first pass has settled, 2 s after it ran it, and the unit after it starts later still" {
	booted follow
	local run active probe
	run=$(mono probe.follow.ExecMainStartTimestampMonotonic)
	active=$(mono probe.follow.ActiveEnterTimestampMonotonic)
	probe=$(mono probe.self.ExecMainStartTimestampMonotonic)
	echo "# follower run at $run µs, active at $active, the unit after it at $probe" >&3
	# the modprobe of pci-stub sleeps 2 s before it loads the module
	((active - run >= 2000000))
	((probe >= active))
}

@test "systemd shows the follower's STATUS: its rule held, none waiting or failed" {
	booted follow
	has follow probe.follow.ActiveState active
	has follow probe.follow.SubState running
	has follow probe.follow.StatusText "held 1, waiting 0, failed 0, absent 0"
}

@test "systemctl reload sends the follower SIGHUP and finds it running again, its rule still held" {
	booted follow
	has follow probe.reload 0
	has follow reload.ActiveState active
	has follow reload.SubState running
	has follow reload.StatusText "held 1, waiting 0, failed 0, absent 0"
}

@test "systemctl stop ends the follower with status 0, a success to systemd" {
	booted follow
	has follow probe.stop 0
	has follow stop.ActiveState inactive
	has follow stop.SubState dead
	has follow stop.Result success
	has follow stop.ExecMainStatus 0
}

@test "the follower said one line in all: the move it made, once, not again on the reload" {
	booted follow
	is messages "$(awk '$1 == "probe.log" { sub(/^probe\.log /, ""); print }' "$QEMU_OUT/follow/results")" \
		"drvbind: pci/0000:00:05.0: none -> pci-stub"
}
