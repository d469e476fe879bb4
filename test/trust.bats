#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# drvbind(8)'s SECURITY section, an input a test or more: each attack run
# as the unprivileged user nobody (setpriv, in the test's network
# namespace, as any local account could), and what it made a root
# drvbind do: nothing.

load helper

NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)

setup() {
	fake_setup
	# A directory nobody may write (and root owns), and one that anyone
	# may: the test's own tree is root's alone, and out of nobody's reach.
	PUBLIC=$(mktemp -d /tmp/drvbind-trust.XXXXXX)
	chmod 755 "$PUBLIC"
	mkdir "$PUBLIC/tmp"
	chmod 1777 "$PUBLIC/tmp"
}

teardown() {
	fake_teardown
	rm -rf "$PUBLIC"
}

# as_nobody CMD...: CMD as nobody:nogroup without other groups, in the
# test's network namespace
as_nobody() {
	fake_ns "${NOBODY[@]}" "$@"
}

# knock NAME: as nobody, one connection to the follower's socket NAME
# (@NAME: the abstract name); its status in KNOCK, its stderr in
# $FAKE/knock.err
knock() {
	local addr=UNIX-CONNECT:$1
	[[ $1 == @* ]] && addr=ABSTRACT-CONNECT:${1#@}
	KNOCK=0
	as_nobody socat -u OPEN:/dev/null "$addr" 2>"$FAKE/knock.err" || KNOCK=$?
}

# A second NIC on e1000 beside $E1000, for the config file's rule.
NIC2=0000:00:03.0

@test "a config file nobody owns is not read: its rule is not applied, the command line's is, exit 1" {
	pci_stub_setup
	fake_device pci "$NIC2" driver=e1000 override
	as_nobody sh -c "echo 'pci/$NIC2:pci-stub' >'$PUBLIC/tmp/drvbind.conf'"
	[ "$(stat -c %u "$PUBLIC/tmp/drvbind.conf")" = 65534 ]
	fake_cmdline "drvbind=pci/$E1000:pci-stub"
	run_says 1 - drvbind -c "$PUBLIC/tmp/drvbind.conf" <<-EOF
	drvbind: $PUBLIC/tmp/drvbind.conf: owned by uid 65534, not by root; not read
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_driver pci "$NIC2" e1000
}

@test "a root config file that group or others may write is not read, whoever wrote it: the command line's rule still applies, exit 1" {
	pci_stub_setup
	fake_device pci "$NIC2" driver=e1000 override
	fake_cmdline "drvbind=pci/$E1000:pci-stub"
	for mode in 666 664 646; do
		: >"$PUBLIC/drvbind.conf"
		chmod "$mode" "$PUBLIC/drvbind.conf"
		if [[ $mode == 666 ]]; then
			as_nobody sh -c "echo 'pci/$NIC2:none' >'$PUBLIC/drvbind.conf'"
		fi
		run_says 1 - drvbind -n -c "$PUBLIC/drvbind.conf" <<-EOF
		drvbind: $PUBLIC/drvbind.conf: writable by group or others; not read
		drvbind: pci/$E1000: would move e1000 -> pci-stub
		EOF
	done
	assert_driver pci "$NIC2" e1000
}

@test "a config file that is a FIFO is not opened for reading, and holds nothing up" {
	pci_stub_setup
	mkfifo "$PUBLIC/fifo"
	fake_cmdline "drvbind=pci/$E1000:pci-stub"
	run_says 1 - timeout 5 ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$PUBLIC/fifo" -n <<-EOF
	drvbind: $PUBLIC/fifo: not a regular file; not read
	drvbind: pci/$E1000: would move e1000 -> pci-stub
	EOF
}

@test "a follower's config file made writable by others is not read again on SIGHUP, and what the follower held stays held" {
	pci_stub_setup
	fake_device pci "$NIC2" driver=e1000 override
	printf 'pci/%s:pci-stub\n' "$NIC2" >"$PUBLIC/drvbind.conf"
	follow -c "$PUBLIC/drvbind.conf" -s "$PUBLIC/follow.sock"
	until_driver pci "$NIC2" pci-stub
	chmod 666 "$PUBLIC/drvbind.conf"
	as_nobody sh -c "echo 'pci/$NIC2:none' >'$PUBLIC/drvbind.conf'"
	kill -HUP "$FOLLOW_PID"
	until grep -q 'not read' "$FAKE/follow.out"; do sleep 0.01; done
	assert_driver pci "$NIC2" pci-stub
	follow_said <<-EOF
	drvbind: pci/$NIC2: e1000 -> pci-stub
	drvbind: $PUBLIC/drvbind.conf: writable by group or others; not read
	EOF
}

@test "as nobody, a uevent to the kernel's group in the follower's namespace is refused, and nothing moves" {
	nic_followed
	: >"$FAKE/log"
	st=0
	as_nobody "$UEVENT" unbind "/$E1000_DEV" DRIVER=pci-stub 2>"$FAKE/uevent.err" || st=$?
	[ "$st" -ne 0 ]
	grep -q "Operation not permitted" "$FAKE/uevent.err"
	assert_driver pci "$E1000" pci-stub
	[ ! -s "$FAKE/log" ]
	follow_said "drvbind: pci/$E1000: e1000 -> pci-stub"
}

@test "a forged uevent, even from root, only makes the follower look: sysfs says the device is where its rule wants it, so nothing is written" {
	nic_followed
	: >"$FAKE/log"
	for action in unbind add remove bind; do
		fake_ns "$UEVENT" "$action" "/$E1000_DEV" DRIVER=e1000
	done
	fake_idle "$FOLLOW_PID" "$(fake_nlsock "$FOLLOW_PID")"
	assert_driver pci "$E1000" pci-stub
	# it looked (reads), and wrote nothing
	[ ! -s "$FAKE/log" ]
	follow_said "drvbind: pci/$E1000: e1000 -> pci-stub"
}

@test "as nobody, knocks on the follower's abstract name end nothing: the first is said at once, the others counted and said when the follower ends, and a replugged device is still put back" {
	pci_stub_setup
	follow "pci/$E1000:pci-stub"
	follow_placed
	for i in 1 2 3; do
		knock @drvbind-follow
		[ "$KNOCK" -eq 0 ]
	done
	wait_for "$FAKE/follow.out" knocked "$FOLLOW_PID"
	kill -0 "$FOLLOW_PID"
	nic_replugged pci-stub
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
	run cat "$FAKE/follow.out"
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "drvbind: pci/$E1000: e1000 -> pci-stub" ]
	[[ ${lines[1]} =~ ^drvbind:\ -f:\ uid\ 65534\ \(pid\ ([0-9]+)\)\ knocked,\ and\ may\ not\ end\ a\ follower\ of\ uid\ 0\;\ ignored$ ]]
	first=${BASH_REMATCH[1]}
	[ "${lines[2]}" = "drvbind: pci/$E1000: e1000 -> pci-stub" ]
	[[ ${lines[3]} =~ ^drvbind:\ -f:\ 2\ more\ knock\(s\)\ by\ other\ users,\ the\ last\ by\ uid\ 65534\ \(pid\ ([0-9]+)\)\;\ ignored$ ]]
	# three processes: the count names the last, not the first
	[ "${BASH_REMATCH[1]}" != "$first" ]
}

@test "as nobody, knocks in a stream from four processes at once keep the follower from nothing: a replug meanwhile is put back, and the knocks are one line and a count" {
	pci_stub_setup
	follow "pci/$E1000:pci-stub"
	follow_placed
	for i in 1 2 3 4; do
		as_nobody sh -c 'while :; do socat -u OPEN:/dev/null ABSTRACT-CONNECT:drvbind-follow 2>/dev/null; done' \
			</dev/null >/dev/null 2>&1 3>&- &
		echo "$!" >>"$FAKE/pids"
	done
	wait_for "$FAKE/follow.out" knocked "$FOLLOW_PID"
	nic_replugged pci-stub
	kill -0 "$FOLLOW_PID"
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
	[ "$(grep -c 'e1000 -> pci-stub' "$FAKE/follow.out")" -eq 2 ]
	[ "$(grep -c 'knocked, and may not end a follower of uid 0; ignored$' "$FAKE/follow.out")" -eq 1 ]
	[ "$(grep -c 'more knock(s) by other users, the last by uid 65534 (pid [0-9]*); ignored$' "$FAKE/follow.out")" -eq 1 ]
	! grep -v -e 'e1000 -> pci-stub$' -e 'knocked, and may not end a follower of uid 0; ignored$' \
		-e 'more knock(s) by other users, the last by uid 65534 (pid [0-9]*); ignored$' "$FAKE/follow.out" || false
}

# knock_streams: as nobody, four processes that knock on the abstract
# name in a loop, each knock a socat, a process of its own
knock_streams() {
	local i
	for i in 1 2 3 4; do
		as_nobody sh -c 'while :; do socat -u OPEN:/dev/null ABSTRACT-CONNECT:drvbind-follow 2>/dev/null; done' \
			</dev/null >/dev/null 2>&1 3>&- &
		echo "$!" >>"$FAKE/pids"
	done
}

# follow_boot: follow, as at boot: the rules from /proc/cmdline (the
# fake command line mounted over it), and every line also written to
# /dev/kmsg ($FAKE/kmsg mounted over it), in a mount namespace of its own
follow_boot() {
	: >"$FAKE/kmsg"
	(
		exec nsenter -t "$FAKE_NSPID" -n -- unshare -m --propagation private sh -c \
			'mount --bind "$1" /proc/cmdline && mount --bind "$2" /dev/kmsg && shift 2 && exec "$@"' - \
			"$FAKE/cmdline" "$FAKE/kmsg" ${RUN:+"$RUN"} "$BIN" -r "$SYS" -c "$FAKE/conf" -m "$FAKE/modprobe" \
			-s "$FAKE/follow.sock" -f
	) </dev/null >"$FAKE/follow.out" 2>&1 3>&- &
	FOLLOW_PID=$!
	echo "$FOLLOW_PID" >>"$FAKE/pids"
	follow_ready
}

# The kernel keeps about ten lines of one /dev/kmsg writer in five
# seconds and drops the rest: a line a knocker would crowd a move out.
@test "as nobody, five seconds of knocks from new processes cost the kernel log one line, and a count when the follower ends: a move meanwhile still reaches it" {
	pci_stub_setup
	fake_cmdline "drvbind=pci/$E1000:pci-stub"
	follow_boot
	until_driver pci "$E1000" pci-stub
	t0=$SECONDS
	knock_streams
	wait_for "$FAKE/kmsg" knocked "$FOLLOW_PID"
	sleep 2
	nic_replugged pci-stub
	while ((SECONDS - t0 < 5)); do sleep 0.1; done
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
	run cat "$FAKE/kmsg"
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "<6>drvbind: pci/$E1000: e1000 -> pci-stub" ]
	[[ ${lines[1]} =~ ^\<4\>drvbind:\ -f:\ uid\ 65534\ \(pid\ [0-9]+\)\ knocked,\ and\ may\ not\ end\ a\ follower\ of\ uid\ 0\;\ ignored$ ]]
	[ "${lines[2]}" = "<6>drvbind: pci/$E1000: e1000 -> pci-stub" ]
	[[ ${lines[3]} =~ ^\<4\>drvbind:\ -f:\ [0-9]+\ more\ knock\(s\)\ by\ other\ users,\ the\ last\ by\ uid\ 65534\ \(pid\ [0-9]+\)\;\ ignored$ ]]
}

@test "as nobody, knocks after the first are said as one count a minute after the first line, with nothing else to wake the follower" {
	# made again with only the fake's uevents: once the follower is idle,
	# only the minute's end wakes it (teardown's status is that of the
	# processes it ended)
	fake_teardown || :
	fake_setup_boot
	pci_stub_setup
	follow "pci/$E1000:pci-stub"
	follow_placed
	for i in 1 2 3; do
		knock @drvbind-follow
	done
	wait_for "$FAKE/follow.out" knocked "$FOLLOW_PID"
	t0=$SECONDS
	idle
	[ "$(grep -c knocked "$FAKE/follow.out")" -eq 1 ]
	while ((SECONDS - t0 < 70)) && ! grep -q 'more knock' "$FAKE/follow.out"; do
		sleep 0.2
	done
	echo "# the count came $((SECONDS - t0)) s after the first line" >&3
	((SECONDS - t0 >= 55))
	run cat "$FAKE/follow.out"
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[1]} == *' knocked, and may not end a follower of uid 0; ignored' ]]
	[[ ${lines[2]} =~ ^drvbind:\ -f:\ 2\ more\ knock\(s\)\ by\ other\ users,\ the\ last\ by\ uid\ 65534\ \(pid\ [0-9]+\)\;\ ignored$ ]]
	# said: nothing more at the end
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
	[ "$(wc -l <"$FAKE/follow.out")" -eq 3 ]
}

@test "as nobody, the follower's path socket cannot even be connected to" {
	pci_stub_setup
	follow -s "$PUBLIC/follow.sock" "pci/$E1000:pci-stub"
	follow_placed
	[ -S "$PUBLIC/follow.sock" ]
	[ "$(stat -c '%u %a' "$PUBLIC/follow.sock")" = "0 700" ]
	knock "$PUBLIC/follow.sock"
	[ "$KNOCK" -ne 0 ]
	grep -q "Permission denied" "$FAKE/knock.err"
	kill -0 "$FOLLOW_PID"
	follow_said "drvbind: pci/$E1000: e1000 -> pci-stub"
}

@test "the abstract name held first by nobody neither stops a root follower nor hides it: it says who holds it, and a second root follower takes over at the path" {
	pci_stub_setup
	as_nobody socat ABSTRACT-LISTEN:drvbind-follow,fork OPEN:/dev/null </dev/null >/dev/null 2>&1 3>&- &
	echo "$!" >>"$FAKE/pids"
	for ((i = 0; i < 500; i++)); do
		fake_ns grep -q ' @drvbind-follow$' /proc/net/unix && break
		sleep 0.01
	done
	squatter=$(fake_ns ss -xlpn | sed -n 's/.*@drvbind-follow .*pid=\([0-9]*\).*/\1/p')
	[ -n "$squatter" ]
	follow -s "$PUBLIC/follow.sock" "pci/$E1000:pci-stub"
	follow_placed "$PUBLIC/follow.sock"
	# said before its first pass was over, and so before follow returned
	grep -q 'held by' "$FAKE/follow.out"
	first=$FOLLOW_PID
	mv "$FAKE/follow.out" "$FAKE/first.out"
	fake_driver pci vfio-pci 'match=*'
	follow -s "$PUBLIC/follow.sock" "pci/$E1000:vfio-pci"
	ended "$first"
	st=0
	wait "$first" || st=$?
	[ "$st" -eq 0 ]
	run cat "$FAKE/first.out"
	assert_output_is <<-EOF
	drvbind: -f: @drvbind-follow is held by uid 65534 (pid $squatter); following without it
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: another follower takes over
	EOF
	until_driver pci "$E1000" vfio-pci
	follow_said <<-EOF
	drvbind: -f: @drvbind-follow is held by uid 65534 (pid $squatter); following without it
	drvbind: pci/$E1000: pci-stub -> vfio-pci
	EOF
}

@test "a socket path in a directory others may write is refused by name, and the follower listens at the abstract name alone" {
	pci_stub_setup
	follow -s "$PUBLIC/tmp/follow.sock" "pci/$E1000:pci-stub"
	follow_placed
	[ ! -e "$PUBLIC/tmp/follow.sock" ]
	follow_said <<-EOF
	drvbind: -f: $PUBLIC/tmp/follow.sock: its directory is not root's alone; no socket there
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

@test "a socket path too long for a unix address, or without a directory, is refused by name, and the follower listens at the abstract name" {
	pci_stub_setup
	long=$PUBLIC/$(printf '%0100d' 0).sock
	follow -s "$long" "pci/$E1000:pci-stub"
	follow_placed
	mv "$FAKE/follow.out" "$FAKE/first.out"
	follow -s follow.sock "pci/$E1000:pci-stub"
	follow_placed
	follow_said <<-EOF
	drvbind: -f: follow.sock: not a path with a directory; no socket there
	drvbind: pci/$E1000: already on pci-stub
	EOF
	run cat "$FAKE/first.out"
	assert_output_is <<-EOF
	drvbind: -f: $long: longer than 107 bytes; no socket there
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: another follower takes over
	EOF
}

@test "as nobody, SIGTERM, SIGINT and SIGHUP to a root follower are refused, and it keeps following" {
	pci_stub_setup
	follow "pci/$E1000:pci-stub"
	for sig in TERM INT HUP KILL; do
		st=0
		as_nobody kill -s "$sig" "$FOLLOW_PID" 2>/dev/null || st=$?
		[ "$st" -ne 0 ]
	done
	kill -0 "$FOLLOW_PID"
	nic_moved_again
}

@test "as nobody, drvbind pointed at root's sysfs with -r, -k, -c, -s and -m gets nothing there: the installed binary is not set-user-ID" {
	pci_stub_setup
	make -C "$TOP" -s install DESTDIR="$PUBLIC/root" PREFIX=/usr >/dev/null
	bin=$PUBLIC/root/usr/sbin/drvbind
	[ "$(stat -c %a "$bin")" = 755 ]
	[ ! -u "$bin" ]
	cp "$BIN" "$PUBLIC/drvbind"
	chmod 755 "$PUBLIC/drvbind"
	printf '#!/bin/sh\ntouch %s/ran.$(id -u)\n' "$PUBLIC/tmp" >"$PUBLIC/modprobe"
	chmod 755 "$PUBLIC/modprobe"
	: >"$PUBLIC/cmdline"
	: >"$PUBLIC/conf"
	: >"$FAKE/log"
	st=0
	as_nobody ${RUN:+"$RUN"} "$PUBLIC/drvbind" -r "$SYS" -k "$PUBLIC/cmdline" -c "$PUBLIC/conf" -s "$PUBLIC/s" \
		-m "$PUBLIC/modprobe" -t 0 "pci/$E1000:pci-stub" 2>"$FAKE/nobody.err" || st=$?
	[ "$st" -eq 1 ]
	grep -qx "drvbind: $SYS: not a sysfs tree: Permission denied" "$FAKE/nobody.err"
	[ ! -s "$FAKE/log" ]
	assert_driver pci "$E1000" e1000
}

@test "as nobody, the kernel command line cannot be written, and a drvbind= in the environment is no rule" {
	st=0
	as_nobody sh -c 'echo drvbind=x:y >/proc/cmdline' 2>/dev/null || st=$?
	[ "$st" -ne 0 ]
	pci_stub_setup
	fake_cmdline "quiet"
	run env "drvbind=pci/$E1000:pci-stub" ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -t 0
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	assert_driver pci "$E1000" e1000
}

@test "a NOTIFY_SOCKET nobody listens on costs a warning, and the follower follows" {
	pci_stub_setup
	NOTIFY=$PUBLIC/none follow "pci/$E1000:pci-stub"
	nic_replugged pci-stub
	follow_said <<-EOF
	drvbind: NOTIFY_SOCKET=$PUBLIC/none: No such file or directory; not notifying
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}
