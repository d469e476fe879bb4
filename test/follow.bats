#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Follow mode (-f, drvbind.follow=1): after the first pass drvbind stays
# on its uevent socket and applies a rule again whenever its device is
# added, bound or unbound, or its driver is added; SIGHUP reads the rules
# again, SIGINT and SIGTERM end it with status 0. The fake kernel replays
# what the real one does on a replug (a PCI remove and rescan, a USB
# device re-created) and on a driver's unload and reload, in the
# kernel's order.

load helper

@test "a follower moves a PCI device again after a remove and a rescan give it back to its native driver" {
	nic_followed
	nic_moved_again
}

@test "a follower puts a device back on its rule's driver after that driver is unloaded and loaded again, and a reload of the native driver changes nothing" {
	nic_followed
	# rmmod pci-stub: the device is unbound; the override keeps e1000 off
	stopped fake_unregister pci pci-stub
	until_driver pci "$E1000" none
	# modprobe pci-stub: it binds the device as it registers
	fake_register pci pci-stub 'match=*'
	until_driver pci "$E1000" pci-stub
	fake_unregister pci e1000
	fake_register pci e1000 'match=*'
	nic_is pci-stub pci-stub
	follow_said <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: none -> pci-stub
	EOF
}

# stick_followed: stick_on_storage, and a follower of the rule that
# keeps the stick's interface without a driver, which it has done
stick_followed() {
	stick_on_storage
	follow "usb/$USB_IF:none"
	until_driver usb "$USB_IF" none
}

# stick_held_again: the stick's interface made anew by a replug of its
# device (authorized 0 then 1 on 1-1: its interfaces go and come back,
# probed), which the follower holds again: no driver, authorized 0
stick_held_again() {
	replug usb "$USB_IF" parent=1-1 class=08
	until_driver usb "$USB_IF" none && authorized_is 0
}

@test "a follower holds a USB interface that a replug of its device re-creates with authorized 0 again" {
	stick_followed
	stick_held_again
	follow_said <<-EOF
	drvbind: usb/$USB_IF: usb-storage -> none
	drvbind: usb/$USB_IF: usb-storage -> none
	EOF
}

@test "a follower says one line for a re-created USB interface whichever way usb-storage's probe raced its look: held by authorized 0 when it looked first, usb-storage -> none when the driver bound first" {
	stick_followed
	# the interface made anew, its add uevent seen before device_add's
	# probe: the follower finds it unbound and holds it, and the probe
	# then passes it over
	stopped fake_unplug usb "$USB_IF"
	stopped fake_device usb "$USB_IF" parent=1-1 class=08
	fake_uevent add "$FAKE_DEVPATH" SUBSYSTEM=usb
	idle
	authorized_is 0
	fake_ctl probe usb "$USB_IF"
	idle
	assert_driver usb "$USB_IF" none
	# made anew again, probed before the follower looks: usb-storage has
	# it, and authorized 0 unbinds it
	stick_held_again
	follow_said <<-EOF
	drvbind: usb/$USB_IF: usb-storage -> none
	drvbind: usb/$USB_IF: unbound; held by authorized 0
	drvbind: usb/$USB_IF: usb-storage -> none
	EOF
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0 -> ok
	$USB_IF_DEV/authorized 0 -> ok
	$USB_IF_DEV/authorized 0 -> ok
	EOF
}

@test "a follower does not start a failed rule over on the bind its own rollback made, only on its device's next add" {
	fake_driver pci e1000 'match=*'
	fake_driver pci vfio-pci 'match=*' probe=EINVAL
	fake_device pci "$E1000" override driver=e1000
	follow "pci/$E1000:vfio-pci"
	until_driver pci "$E1000" e1000
	idle
	# one try: the rollback's bind of e1000 did not start it again
	[ "$(grep -c "vfio-pci/bind" "$FAKE/log")" -eq 1 ]
	nic_replugged e1000
	idle
	[ "$(grep -c "vfio-pci/bind" "$FAKE/log")" -eq 2 ]
	follow_said <<-EOF
	drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000
	drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000
	EOF
}

@test "SIGHUP makes a follower read its config file again and apply the rules it finds there" {
	pci_stub_setup
	fake_conf ""
	follow
	fake_conf "pci/$E1000:pci-stub"
	idle
	assert_driver pci "$E1000" e1000
	kill -HUP "$FOLLOW_PID"
	until_driver pci "$E1000" pci-stub
	fake_conf "pci/$E1000:none"
	kill -HUP "$FOLLOW_PID"
	until_driver pci "$E1000" none
	follow_said <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: pci-stub -> none
	EOF
}

@test "a follower whose uevent socket overflowed (ENOBUFS) looks at every rule again, and finds the device that changed unseen" {
	nic_followed
	halt "$FOLLOW_PID"
	# e1000 takes the device, and its bind uevent is lost in a burst that
	# fills the socket (1 MiB) while drvbind sleeps
	dev=devices/pci0000:00/$E1000
	rm "$FAKE/back/$dev/driver" "$FAKE/back/bus/pci/drivers/pci-stub/$E1000"
	ln -s ../../../bus/pci/drivers/e1000 "$FAKE/back/$dev/driver"
	ln -s "../../../../$dev" "$FAKE/back/bus/pci/drivers/e1000/$E1000"
	fake_ns "$UEVENT" -n 2000 change /devices/virtual/misc/burst "PAD=$(printf '%01000d' 0)"
	kill -CONT "$FOLLOW_PID"
	until_driver pci "$E1000" pci-stub
	follow_said <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

@test "SIGTERM ends a follower that waits for a driver with status 0, and hands its held device back" {
	fake_driver pci e1000 'match=*'
	fake_device pci "$E1000" override
	follow -t 60 "pci/$E1000:vfio-pci"
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
	assert_driver pci "$E1000" e1000
}

# status_of KEY: a line of the follower's /proc status, in kB or a count
status_of() {
	local k v _
	while read -r k v _; do
		[[ $k == "$1:" ]] && echo "$v" && return 0
	done <"/proc/$FOLLOW_PID/status"
	return 1
}

fds_of() {
	local -a f=(/proc/"$FOLLOW_PID"/fd/*)
	echo "${#f[@]}"
}

# until_on B ID D: without a fork, the follower is idle and the device on D
until_on() {
	idle || return 1
	[[ -e $SYS/bus/$1/drivers/$3/$2 ]] && return 0
	until_driver "$@"
}

@test "a follower keeps its rule through ${FOLLOW_CYCLES:-1000} replugs and ${FOLLOW_CYCLES:-1000} driver reloads, with unrelated uevents, overflows and SIGHUPs between them, in the same memory and files" {
	local n=${FOLLOW_CYCLES:-1000} i rss0 fds0 sw0 sw1 events rss fds
	# fake_nap's pipe, opened now: not by the loop's first nap
	fake_nap 0
	pci_stub_setup
	fake_conf "pci/$E1000:pci-stub"
	follow
	until_driver pci "$E1000" pci-stub
	rss0=$(status_of VmRSS) fds0=$(fds_of)
	# idle: every wake-up is a uevent that came
	fake_listen
	sw0=$(status_of voluntary_ctxt_switches)
	sleep 2
	sw1=$(status_of voluntary_ctxt_switches)
	events=$(wc -l <"$FAKE/uevents")
	echo "# idle 2 s: $((sw1 - sw0)) wake-ups, $events uevents" >&3
	((sw1 - sw0 <= events))
	# the fake's own verbs (.fake_ctl), and no fork in the loop but the
	# uevents between cycles; the follower is let finish each step (a
	# replug in the middle of a move is explore.bats's)
	for ((i = 1; i <= n; i++)); do
		fake_ctl unplug pci "$E1000"
		idle
		fake_ctl replug pci "$E1000"
		until_on pci "$E1000" pci-stub || { echo "replug $i"; return 1; }
		fake_ctl rmmod pci pci-stub
		idle
		fake_ctl insmod pci pci-stub
		until_on pci "$E1000" pci-stub || { echo "reload $i"; return 1; }
		((i % 10)) || fake_uevent add /devices/virtual/misc/other SUBSYSTEM=misc
		((i % 100)) || fake_ns "$UEVENT" -n 2000 change /devices/virtual/misc/burst "PAD=$(printf '%01000d' 0)"
		((i % 250)) || kill -HUP "$FOLLOW_PID"
	done
	until_driver pci "$E1000" pci-stub
	rss=$(status_of VmRSS) fds=$(fds_of)
	echo "# after $n replugs and $n reloads: RSS $rss0 -> $rss kB, fds $fds0 -> $fds," \
		"$(status_of voluntary_ctxt_switches) context switches (each access through FUSE is one)" >&3
	[ "$rss" -eq "$rss0" ]
	[ "$fds" -eq "$fds0" ]
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
	# the first move, then one a replug and one a reload, and nothing else
	run grep -c -x -e "drvbind: pci/$E1000: e1000 -> pci-stub" "$FAKE/follow.out"
	[ "$output" -eq $((n + 1)) ]
	run grep -c -x -e "drvbind: pci/$E1000: none -> pci-stub" "$FAKE/follow.out"
	[ "$output" -eq "$n" ]
	run grep -v -x -e "drvbind: pci/$E1000: e1000 -> pci-stub" -e "drvbind: pci/$E1000: none -> pci-stub" "$FAKE/follow.out"
	[ -z "$output" ]
}

@test "drvbind.follow=1 on the kernel command line with -b: the parent returns after the first pass, and its background child follows" {
	pci_stub_setup
	fake_cmdline "drvbind=pci/$E1000:pci-stub drvbind.follow=1"
	follow_bg
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: following 1 rule(s) in the background
	EOF
	follow_ready
	nic_replugged pci-stub
	follow_term
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: following 1 rule(s) in the background
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

@test "drvbind.follow= takes 0 or 1, and anything else is refused by name" {
	pci_stub_setup
	fake_cmdline "drvbind=pci/$E1000:pci-stub drvbind.follow=yes"
	run_says 1 - drvbind <<-EOF
	drvbind: bad "drvbind.follow"="yes": not 0 or 1
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

@test "a second follower takes the place of the first, which ends with status 0, so that two never fight" {
	pci_stub_setup
	follow "pci/$E1000:pci-stub"
	taken_over "pci/$E1000:vfio-pci" <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: another follower takes over
	EOF
	# the second one follows: a replug goes to its rule's driver
	fake_driver pci vfio-pci 'match=*'
	nic_replugged vfio-pci
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
}

# dry_run_beside ARG...: drvbind -n ARG... on this test's tree, beside
# the follower of nic_followed, within 5 s: its plan for the rule of
# the command line (pci-stub -> none) said, status 0; then the follower
# is still there, at both its places, and still moves a replugged NIC
dry_run_beside() {
	run_says 0 "drvbind: pci/$E1000: would move pci-stub -> none" fake_ns timeout 5 ${RUN:+"$RUN"} "$BIN" \
		-r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" -s "$FAKE/follow.sock" -n "$@"
	kill -0 "$FOLLOW_PID"
	follow_placed "$FAKE/follow.sock"
	follow_placed
	assert_driver pci "$E1000" pci-stub
	nic_moved_again
}

@test "a dry run with drvbind.follow=1 on the command line says its plan and exits: it knocks on no follower, and the one running keeps its place" {
	nic_followed
	fake_cmdline "drvbind=pci/$E1000:none drvbind.follow=1"
	dry_run_beside
}

@test "a dry run with -f says its plan and exits: it knocks on no follower, and the one running keeps its place" {
	nic_followed
	fake_cmdline "drvbind=pci/$E1000:none"
	dry_run_beside -f
}

@test "a newcomer whose follower before it neither answers nor ends (stopped) does not follow beside it: it says so, moves nothing, exits 1, and the SIGTERM it sent ends that follower once it runs again" {
	nic_followed
	halt "$FOLLOW_PID"
	run_says 1 "drvbind: -f: the follower at $FAKE/follow.sock (pid $FOLLOW_PID) did not end; not following" \
		fake_ns timeout 10 ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" \
		-s "$FAKE/follow.sock" -f "pci/$E1000:none"
	assert_driver pci "$E1000" pci-stub
	# a supervisor starts the newcomer again (Restart=on-failure, runit,
	# respawn): by then the follower before it has ended
	kill -CONT "$FOLLOW_PID"
	ended "$FOLLOW_PID"
	wait "$FOLLOW_PID"
	# the newcomer's knock waited in its queue, and is answered first
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: another follower takes over
	EOF
}

@test "a follower whose device is removed in the middle of a move says nothing of it, and takes the device added again" {
	pci_stub_setup
	# pci-stub's bind happens, then the device is removed (its driver
	# released, its links, the remove uevent): the check finds it gone
	fake_fault bus/pci/drivers/pci-stub/bind "unplug:$E1000"
	follow -t 1 "pci/$E1000:pci-stub"
	[ ! -e "$SYS/bus/pci/devices/$E1000" ]
	sleep 1.5
	stopped fake_plug pci "$E1000" override
	until_driver pci "$E1000" pci-stub
	follow_said "drvbind: pci/$E1000: e1000 -> pci-stub"
}

# runit (or s6) runs the follower from the one-file service directory
# make install puts in DATADIR/runit: here with its @SBINDIR@ filled in
# with a drvbind that reaches this test's tree, and a finish script of
# the test's own, which runsv gives the follower's exit status and signal.
@test "runsv keeps the runit service's follower on the rules: a replug is taken, sv hup reads the config again, a killed follower is started again, and sv down ends it with status 0" {
	command -v runsv >/dev/null || { echo "runsv is missing: make deps installs runit"; false; }
	pci_stub_setup
	fake_device pci 0000:00:03.0 driver=e1000 override
	fake_conf "pci/$E1000:pci-stub"
	mkdir -p "$FAKE/bin" "$FAKE/sv"
	cp -R "$TOP/initramfs/runit/drvbind-follow" "$FAKE/sv/"
	svc=$FAKE/sv/drvbind-follow
	sed "s|@SBINDIR@|$FAKE/bin|g" "$TOP/initramfs/runit/drvbind-follow/run" >"$svc/run"
	grep -qx "exec $FAKE/bin/drvbind -f" "$svc/run"
	cat >"$FAKE/bin/drvbind" <<-SH
	#!/bin/sh
	exec nsenter -t $FAKE_NSPID -n -- ${RUN:+$RUN }$BIN -r $SYS -k $FAKE/cmdline -c $FAKE/conf -m $FAKE/modprobe -s $FAKE/follow.sock "\$@"
	SH
	printf '#!/bin/sh\necho "$1 $2" >>%s\n' "$FAKE/finished" >"$svc/finish"
	chmod 755 "$FAKE/bin/drvbind" "$svc/run" "$svc/finish"
	runsv "$svc" </dev/null >"$FAKE/follow.out" 2>&1 3>&- &
	echo "$!" >>"$FAKE/pids"
	# follower PID: the one runsv started, once it follows
	sv_pid() {
		local i p
		for ((i = 0; i < 500; i++)); do
			p=$(cat "$svc/supervise/pid" 2>/dev/null) || p=
			[[ -n $p && $p != "${1-}" ]] && FOLLOW_PID=$p && follow_ready && return 0
			sleep 0.01
		done
		echo "runsv started no follower; it said:"
		cat "$FAKE/follow.out"
		return 1
	}
	sv_pid
	until_driver pci "$E1000" pci-stub
	nic_replugged pci-stub
	fake_conf "pci/$E1000:pci-stub" "pci/0000:00:03.0:pci-stub"
	sv hup "$svc"
	until_driver pci 0000:00:03.0 pci-stub
	first=$FOLLOW_PID
	kill -KILL "$first"
	sv_pid "$first"
	nic_replugged pci-stub
	run sv -w 5 down "$svc"
	[ "$status" -eq 0 ]
	! kill -0 "$FOLLOW_PID" 2>/dev/null || false
	# runsv's finish: status 0 after the SIGTERM; -1 9 for the SIGKILL
	run cat "$FAKE/finished"
	assert_output_is <<-EOF
	-1 9
	0 0
	EOF
	# the restarted follower's first pass reports as any run does
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/0000:00:03.0: e1000 -> pci-stub
	drvbind: pci/$E1000: already on pci-stub
	drvbind: pci/0000:00:03.0: already on pci-stub
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	sv exit "$svc"
}

@test "a follower takes into its set a device that comes later, puts a replugged member back, and says the set's line each time" {
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	fake_device pci 0000:01:00.0 driver=e1000 override
	follow "pci/0000:01:00.*:pci-stub"
	until_driver pci 0000:01:00.0 pci-stub
	stopped fake_plug pci 0000:01:00.1 override
	until_driver pci 0000:01:00.1 pci-stub
	replug pci 0000:01:00.0 override
	until_driver pci 0000:01:00.0 pci-stub
	follow_said <<-EOF
	drvbind: pci/0000:01:00.*: 0000:01:00.0 on pci-stub
	drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 on pci-stub
	drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 on pci-stub
	EOF
}

@test "a follower's set leaves a device plugged in where a member was to its driver unless it matches: a keyboard in the port a stick left keeps usbhid" {
	fake_driver usb usbhid "match=$USB_IF"
	usb_stick
	follow "usb/*,bInterfaceClass=08:none"
	idle
	authorized_is 0
	# the stick goes, and a keyboard comes in its port: the same bus ids
	stopped fake_unplug usb "$USB_IF"
	stopped fake_unplug usb 1-1
	stopped fake_device usb 1-1 idVendor=046d idProduct=c31c
	stopped fake_plug usb "$USB_IF" parent=1-1 class=03
	until_driver usb "$USB_IF" usbhid
	idle
	assert_driver usb "$USB_IF" usbhid
	[ "$(cat "$SYS/bus/usb/devices/$USB_IF/authorized")" = 1 ]
	# the stick comes back in another port: the set takes it, and names it alone
	stopped fake_device usb 1-2 idVendor=0781 idProduct=5567
	stopped fake_plug usb 1-2:1.0 parent=1-2 class=08
	idle
	[ "$(cat "$SYS/bus/usb/devices/1-2:1.0/authorized")" = 0 ]
	assert_driver usb "$USB_IF" usbhid
	follow_said <<-EOF
	drvbind: usb/*,bInterfaceClass=08: $USB_IF on none
	drvbind: usb/*,bInterfaceClass=08: 1-2:1.0 on none
	EOF
}

@test "a follower whose set loses a device for good keeps the rest of the set on its driver, and names only the devices there" {
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	fake_device pci 0000:01:00.0 driver=e1000 override
	fake_device pci 0000:01:00.1 driver=e1000 override
	follow -t 1 "pci/0000:01:00.*:pci-stub"
	until_driver pci 0000:01:00.1 pci-stub
	stopped fake_unplug pci 0000:01:00.1
	# past the deadline of the look its unbind brought; an add
	# elsewhere concerns none of the set's devices, and costs no look
	sleep 1.5
	fake_uevent add /devices/virtual/misc/other SUBSYSTEM=misc
	sleep 1.5
	until_on pci 0000:01:00.0 pci-stub
	# the set's line after a replug of the device left names it alone
	replug pci 0000:01:00.0 override
	until_driver pci 0000:01:00.0 pci-stub
	follow_said <<-EOF
	drvbind: pci/0000:01:00.*: 0000:01:00.0 0000:01:00.1 on pci-stub
	drvbind: pci/0000:01:00.*: 0000:01:00.0 on pci-stub
	EOF
	assert_driver pci 0000:01:00.0 pci-stub
}

@test "a follower's set on a stick's serial, which its USB device has, takes the stick's interface again when it comes back in another port, and leaves another stick in the old port on usb-storage" {
	local a=4C530001230101112095 b=4C530001240101112096
	# usb-storage's table has the interfaces, not the USB devices
	fake_driver usb usb-storage match=1-1:1.0,1-3:1.0
	fake_device usb 1-1 idVendor=0781 idProduct=5567 serial=$a
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	follow "usb/*:*,serial=$a:none"
	until_driver usb 1-1:1.0 none
	# the stick goes from port 1, and comes in port 3: new bus ids,
	# probed by usb-storage before the follower looks
	stopped fake_unplug usb 1-1:1.0
	stopped fake_unplug usb 1-1
	stopped fake_plug usb 1-3 idVendor=0781 idProduct=5567 serial=$a
	stopped fake_plug usb 1-3:1.0 parent=1-3 class=08
	until_driver usb 1-3:1.0 none
	[ "$(cat "$SYS/bus/usb/devices/1-3:1.0/authorized")" = 0 ]
	# another stick of the same model in port 1: not the set's
	stopped fake_plug usb 1-1 idVendor=0781 idProduct=5567 serial=$b
	stopped fake_plug usb 1-1:1.0 parent=1-1 class=08
	until_driver usb 1-1:1.0 usb-storage
	idle
	assert_driver usb 1-1:1.0 usb-storage
	[ "$(cat "$SYS/bus/usb/devices/1-1:1.0/authorized")" = 1 ]
	assert_driver usb 1-3:1.0 none
	assert_driver usb 1-3 none
	follow_said <<-EOF
	drvbind: usb/*:*,serial=$a: 1-1:1.0 on none
	drvbind: usb/*:*,serial=$a: 1-3:1.0 on none
	EOF
	assert_log <<-EOF
	$USB_IF_DEV/authorized 0 -> ok
	devices/pci0000:00/0000:00:1d.7/usb1/1-3/1-3:1.0/authorized 0 -> ok
	EOF
}

@test "a follower rolls a replugged device back to the override it had, not to the override of the device it replaced" {
	pci_setup match=*
	echo e1000 >"$FAKE/back/$E1000_DEV/driver_override"
	follow "pci/$E1000:vfio-pci"
	until_driver pci "$E1000" vfio-pci
	fake_fault bus/pci/drivers/vfio-pci/bind EIO
	nic_replugged e1000
	idle
	[ "$(cat "$SYS/$E1000_DEV/driver_override")" = "(null)" ]
	follow_said <<-EOF
	drvbind: pci/$E1000: e1000 -> vfio-pci
	drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: I/O error; back on e1000
	EOF
}
