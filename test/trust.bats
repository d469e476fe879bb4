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

# The config file's whole path: every directory from / to it, through
# every link, root's and written by no one else, as sshd's StrictModes
# takes a file. The file here holds the rule for $NIC2; the command line
# moves $E1000.

# nobodys DIR: DIR made, owned by nobody:nogroup, mode 755
nobodys() {
	mkdir -p "$1"
	chown nobody:nogroup "$1"
}

# nic2_conf FILE: FILE, root's with mode 644, holding the rule for $NIC2
nic2_conf() {
	printf 'pci/%s:pci-stub\n' "$NIC2" >"$1"
	chmod 644 "$1"
}

# conf_setup: the NICs, both on e1000, and the command line's rule
conf_setup() {
	pci_stub_setup
	fake_device pci "$NIC2" driver=e1000 override
	fake_cmdline "drvbind=pci/$E1000:pci-stub"
}

# conf_refused FILE WHY: a dry run with -c FILE refuses FILE for WHY,
# plans the command line's rule all the same, and exits 1
conf_refused() {
	run_says 1 - drvbind -n -c "$1" <<-EOF
	drvbind: $1: $2; not read
	drvbind: pci/$E1000: would move e1000 -> pci-stub
	EOF
}

# conf_read FILE: a dry run with -c FILE plans FILE's rule and the
# command line's, and exits 0
conf_read() {
	run_says 0 - drvbind -n -c "$1" <<-EOF
	drvbind: pci/$NIC2: would move e1000 -> pci-stub
	drvbind: pci/$E1000: would move e1000 -> pci-stub
	EOF
}

@test "a root config file in a directory nobody owns is not read, named with the directory, also as a path from there: the command line's rule still applies, exit 1" {
	conf_setup
	nobodys "$PUBLIC/nobody"
	nic2_conf "$PUBLIC/nobody/drvbind.conf"
	conf_refused "$PUBLIC/nobody/drvbind.conf" "directory $PUBLIC/nobody is owned by uid 65534, not by root"
	# a relative path is walked from / through the working directory
	BIN=$(realpath "$BIN")
	(cd "$PUBLIC/nobody" && conf_refused drvbind.conf "directory $PUBLIC/nobody is owned by uid 65534, not by root")
	(cd "$PUBLIC" && conf_refused nobody/../nobody/drvbind.conf "directory $PUBLIC/nobody is owned by uid 65534, not by root")
}

@test "as nobody, a root config file in nobody's directory swapped for a link to a root file of nobody's text runs none of its programs: the line names the directory, the command line's rule still applies, exit 1" {
	conf_setup
	nobodys "$PUBLIC/nobody"
	nic2_conf "$PUBLIC/nobody/drvbind.conf"
	# A root file whose text nobody chose: /proc/PID/cmdline of a
	# set-user-ID program that nobody started is one. Here root writes it.
	printf '#!/bin/sh\ntouch %s/ran\n' "$PUBLIC" >"$PUBLIC/evil"
	chmod 755 "$PUBLIC/evil"
	printf 'drvbind.modprobe=%s\npci/%s:nosuch\n' "$PUBLIC/evil" "$NIC2" >"$PUBLIC/text"
	as_nobody sh -c "rm '$PUBLIC/nobody/drvbind.conf' && ln -s '$PUBLIC/text' '$PUBLIC/nobody/drvbind.conf'"
	[ "$(stat -c '%F %u' "$PUBLIC/nobody/drvbind.conf")" = "symbolic link 65534" ]
	[ "$(stat -L -c '%u %a' "$PUBLIC/nobody/drvbind.conf")" = "0 644" ]
	# no -m: the file's drvbind.modprobe= would be the one run
	run_says 1 - fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$PUBLIC/nobody/drvbind.conf" -t 0 <<-EOF
	drvbind: $PUBLIC/nobody/drvbind.conf: directory $PUBLIC/nobody is owned by uid 65534, not by root; not read
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	[ ! -e "$PUBLIC/ran" ]
	assert_driver pci "$E1000" pci-stub
	assert_driver pci "$NIC2" e1000
}

@test "a link in a root directory that leads through a directory nobody owns is not read, and the line names that directory" {
	conf_setup
	nobodys "$PUBLIC/nobody"
	nic2_conf "$PUBLIC/nobody/drvbind.conf"
	ln -s "$PUBLIC/nobody/drvbind.conf" "$PUBLIC/absolute"
	ln -s nobody/drvbind.conf "$PUBLIC/relative"
	ln -s nobody "$PUBLIC/dir"
	for f in absolute relative dir/drvbind.conf; do
		conf_refused "$PUBLIC/$f" "directory $PUBLIC/nobody is owned by uid 65534, not by root"
	done
}

@test "a chain of links, relative and absolute, through root's directories alone is read; once a directory on it is nobody's, it is not" {
	conf_setup
	mkdir -p "$PUBLIC/a" "$PUBLIC/b/c" "$PUBLIC/etc"
	nic2_conf "$PUBLIC/b/c/drvbind.conf"
	ln -s ../b "$PUBLIC/a/up"
	# up/.. is b's parent, as the kernel walks it: not a
	ln -s "$PUBLIC/a/./up/../b/c/drvbind.conf" "$PUBLIC/etc/step"
	ln -s step "$PUBLIC/etc/drvbind.conf"
	conf_read "$PUBLIC/etc/drvbind.conf"
	chown nobody "$PUBLIC/b"
	conf_refused "$PUBLIC/etc/drvbind.conf" "directory $PUBLIC/b is owned by uid 65534, not by root"
}

@test "a root directory on the way that group or others may write is not read through, however far up: the line names it" {
	conf_setup
	mkdir -p "$PUBLIC/w/sub"
	nic2_conf "$PUBLIC/w/sub/drvbind.conf"
	for mode in 775 757 777; do
		chmod "$mode" "$PUBLIC/w"
		conf_refused "$PUBLIC/w/sub/drvbind.conf" "directory $PUBLIC/w is writable by group or others"
	done
}

@test "a root sticky directory on the way, as /tmp, is trusted: root's files below it are read, but not through a link or a directory nobody put there" {
	conf_setup
	[ "$(stat -c '%u %a' "$PUBLIC/tmp")" = "0 1777" ]
	mkdir "$PUBLIC/tmp/root"
	nic2_conf "$PUBLIC/tmp/root/drvbind.conf"
	nic2_conf "$PUBLIC/tmp/drvbind.conf"
	conf_read "$PUBLIC/tmp/root/drvbind.conf"
	conf_read "$PUBLIC/tmp/drvbind.conf"
	as_nobody ln -s "$PUBLIC/tmp/root/drvbind.conf" "$PUBLIC/tmp/link"
	conf_refused "$PUBLIC/tmp/link" "link $PUBLIC/tmp/link is owned by uid 65534, not by root"
	as_nobody mkdir "$PUBLIC/tmp/mine"
	nic2_conf "$PUBLIC/tmp/mine/drvbind.conf"
	conf_refused "$PUBLIC/tmp/mine/drvbind.conf" "directory $PUBLIC/tmp/mine is owned by uid 65534, not by root"
	# the sticky bit counts on the way only: a file there is the file's own
	chmod 1777 "$PUBLIC/tmp/root"
	conf_read "$PUBLIC/tmp/root/drvbind.conf"
}

@test "a loop of links is refused with a line that says so; forty links are followed, as the kernel follows them, and a forty-first is refused" {
	conf_setup
	ln -s loop2 "$PUBLIC/loop1"
	ln -s loop1 "$PUBLIC/loop2"
	conf_refused "$PUBLIC/loop1" "symbolic link loop (more than 40 links)"
	nic2_conf "$PUBLIC/drvbind.conf"
	ln -s drvbind.conf "$PUBLIC/l40"
	for ((i = 39; i >= 0; i--)); do
		ln -s "l$((i + 1))" "$PUBLIC/l$i"
	done
	# the kernel's count: l1 opens, l0 is one link too many
	cat "$PUBLIC/l1" >/dev/null
	! cat "$PUBLIC/l0" 2>/dev/null || false
	conf_read "$PUBLIC/l1"
	conf_refused "$PUBLIC/l0" "symbolic link loop (more than 40 links)"
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
	wait_for "$FAKE/follow.out" 'not read' "$FOLLOW_PID"
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

# flood_place [N]: as nobody, N processes (2) that keep the follower's
# abstract name's queue of connections full: each connects without
# waiting, again as soon as the queue has room, and lets its oldest
# connections go
flood_place() {
	local i
	for ((i = 0; i < ${1:-2}; i++)); do
		as_nobody perl -MSocket -MFcntl -e '
			my $a = pack_sockaddr_un("\0drvbind-follow");
			my @open;
			for (;;) {
				socket(my $s, PF_UNIX, SOCK_STREAM, 0) or next;
				fcntl($s, F_SETFL, O_NONBLOCK);
				# full: a millisecond for the follower to take some
				connect($s, $a) or $!{EAGAIN} && select(undef, undef, undef, 0.001);
				push @open, $s;
				shift @open while @open > 64;
			}' </dev/null >/dev/null 2>&1 3>&- &
		echo "$!" >>"$FAKE/pids"
	done
}

# queue_full PID: the abstract name's queue (ss: Recv-Q of the listener)
# holds as many connections as its backlog (Send-Q), within 5 s and
# while the follower PID lives
queue_full() {
	local i
	local -a w
	for ((i = 0; i < 500; i++)); do
		while read -r -a w; do
			[[ ${w[4]-} == @drvbind-follow ]] && ((w[2] >= w[3])) && return 0
		done < <(fake_ns ss -xlnH)
		kill -0 "$1" 2>/dev/null || break
		sleep 0.01
	done
	echo "the queue of @drvbind-follow never filled; the follower said:"
	cat "$FAKE/follow.out"
	return 1
}

# cont_on_term PID: in the background, SIGCONT to the stopped process PID
# once a SIGTERM waits for it (ShdPnd of its status, bit 15), or after
# 5 s without one
cont_on_term() {
	(
		for ((i = 0; i < 500; i++)); do
			while read -r k v; do
				[[ $k == ShdPnd: ]] && ((0x$v & 0x4000)) && break 2
			done <"/proc/$1/status"
			sleep 0.01
		done
		kill -CONT "$1"
	) </dev/null >/dev/null 2>&1 3>&- &
	echo "$!" >>"$FAKE/pids"
}

# In odd rounds the follower is stopped, as one busy elsewhere: the flood
# fills its queue, so the newcomer's knock cannot get in (EAGAIN), and
# the follower runs again once the newcomer's SIGTERM waits for it. In
# even rounds it runs, and the knock gets in or not as the flood has it.
@test "as nobody, a flood that keeps the abstract name's queue full keeps no root newcomer out: 20 times out of 20 the follower before it has ended when its first pass is over, and it alone follows" {
	pci_stub_setup
	follow -s "" "pci/$E1000:pci-stub"
	follow_placed
	flood_place
	queue_full "$FOLLOW_PID"
	signalled=0
	for ((i = 1; i <= 20; i++)); do
		prev=$FOLLOW_PID
		mv "$FAKE/follow.out" "$FAKE/prev.out"
		drv=none
		((i % 2)) || drv=pci-stub
		if ((i % 2)); then
			kill -STOP "$prev"
			queue_full "$prev"
			cont_on_term "$prev"
		fi
		follow -s "" "pci/$E1000:$drv"
		if ! ended "$prev" 1; then
			echo "round $i: the follower $prev goes on beside $FOLLOW_PID; they said:"
			kill -CONT "$prev"
			cat "$FAKE/prev.out" "$FAKE/follow.out"
			false
		fi
		wait "$prev"
		follow_placed
		until_driver pci "$E1000" "$drv"
		if grep -e 'without it' -e 'not following' "$FAKE/follow.out"; then
			echo "round $i"
			false
		fi
		grep -q 'did not answer, and was ended$' "$FAKE/follow.out" && ((++signalled))
	done
	echo "# $signalled of 20 newcomers could not knock, and ended the follower by a signal" >&3
	((signalled >= 10))
	queue_full "$FOLLOW_PID"
	# one follower: a replug is moved once, to the last newcomer's driver
	: >"$FAKE/log"
	nic_replugged pci-stub
	idle
	[ "$(grep -c "pci-stub/bind" "$FAKE/log")" -eq 1 ]
	follow_end
	[ "$FOLLOW_STATUS" -eq 0 ]
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
	fake_driver pci vfio-pci 'match=*'
	taken_over -s "$PUBLIC/follow.sock" "pci/$E1000:vfio-pci" <<-EOF
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
	drvbind: -f: $PUBLIC/tmp/follow.sock: directory $PUBLIC/tmp is writable by group or others; no socket there
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

@test "a socket path through a directory another user owns is refused by name, and a file there that a link of theirs points to is not removed" {
	pci_stub_setup
	mkdir "$PUBLIC/victim"
	: >"$PUBLIC/victim/follow.sock"
	as_nobody mkdir "$PUBLIC/tmp/nd"
	as_nobody ln -s "$PUBLIC/victim" "$PUBLIC/tmp/nd/r"
	follow -s "$PUBLIC/tmp/nd/r/follow.sock" "pci/$E1000:pci-stub"
	follow_placed
	[ -f "$PUBLIC/victim/follow.sock" ]
	follow_said <<-EOF
	drvbind: -f: $PUBLIC/tmp/nd/r/follow.sock: directory $PUBLIC/tmp/nd is owned by uid 65534, not by root; no socket there
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

# What a USB stick's descriptor may give as its serial, which sysfs shows
# as it came: a newline and the rest of a forged -l line saying that a
# device is held, an escape sequence that hides what follows on a
# terminal, and a backslash that would pass "\x0a" off as an escaped
# newline.
FORGED=$'4C53\nusb/1-1:1.0 none rule=none held\e[8m\\x0a'

@test "-l shows a device's strings escaped, a line a device, to root and to nobody: a serial's newline forges no line, an escape sequence hides nothing" {
	local want
	fake_driver pci pci-stub
	fake_device usb 1-1 idVendor=0781 idProduct=$'5567\r' serial="$FORGED"
	fake_device usb $'1-1:1.0\e[2K' parent=1-1 class=$'08\x7f' driver=$'usb-storage\n\e[1A\e[2K'
	printf '0\001\n' >"$FAKE/back/devices/pci0000:00/0000:00:1d.7/usb1/1-1/"$'1-1:1.0\e[2K'/authorized
	# C1's CSI (0x9b) raw, and as UTF-8 encodes it
	fake_device pci 0000:00:04.0 vendor=$'0x8086\b\b\b\b\b\b' device=$'\x9b31m\xc2\x9b0m' override
	printf '\e]0;owned\a\n' >"$FAKE/back/devices/pci0000:00/0000:00:04.0/driver_override"
	: >"$FAKE/log"
	want='pci/0000:00:04.0 none vendor=0x8086\x08\x08\x08\x08\x08\x08 device=\x9b31m\xc2\x9b0m override=\x1b]0;owned\x07
usb/1-1 none idVendor=0781 idProduct=5567\x0d serial=4C53\x0ausb/1-1:1.0 none rule=none held\x1b[8m\x5cx0a
usb/1-1:1.0\x1b[2K usb-storage\x0a\x1b[1A\x1b[2K bInterfaceClass=08\x7f authorized=0\x01'
	run_says 0 "$want" drvbind -l
	# nothing but printable ASCII reaches the terminal
	[ -z "$(LC_ALL=C tr -d '\n -~' <<<"$output")" ]
	assert_log </dev/null
	# nobody, who may not enter the fake's mount, lists a copy of its tree
	cp -a "$FAKE/back" "$PUBLIC/sys"
	cp "$BIN" "$PUBLIC/drvbind"
	chmod 755 "$PUBLIC/drvbind"
	: >"$PUBLIC/cmdline"
	: >"$PUBLIC/conf"
	run_says 0 "$want" as_nobody ${RUN:+"$RUN"} "$PUBLIC/drvbind" -r "$PUBLIC/sys" -k "$PUBLIC/cmdline" \
		-c "$PUBLIC/conf" -l
}
