#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Readiness: a follower (drvbind -f) under a service manager says when
# its first pass has settled every rule, so that units ordered after it
# find the devices where the rules put them. systemd's protocol is one
# datagram a message to $NOTIFY_SOCKET (a path, or an abstract name when
# it starts with '@'): READY=1, RELOADING=1 with MONOTONIC_USEC=,
# STOPPING=1, each with STATUS=, and STATUS= alone when the counts change.
# s6's is one newline on the fd that ./notification-fd names.
#
# The listener is socat, in the test's network namespace (where abstract
# names live); with -v it logs each datagram it receives, in order, with
# its length, and notify_said cuts them out again.

load helper

NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)

# teardown: fake_teardown, and the directory public_dir made
teardown() {
	fake_teardown
	[[ -z ${PUBLIC-} ]] || rm -rf "$PUBLIC"
}

# public_dir: PUBLIC, a directory of root's that nobody may enter (the
# test's own tree is out of nobody's reach), and PUBLIC/tmp, which
# anyone may write, as /tmp
public_dir() {
	PUBLIC=$(mktemp -d /tmp/drvbind-notify.XXXXXX)
	chmod 755 "$PUBLIC"
	mkdir "$PUBLIC/tmp"
	chmod 1777 "$PUBLIC/tmp"
}

# as_nobody CMD...: CMD as nobody:nogroup without other groups, in the
# test's network namespace
as_nobody() {
	fake_ns "${NOBODY[@]}" "$@"
}

# notify_listen PATH|@NAME: a NOTIFY_SOCKET listener, its log in
# $FAKE/notify.v; returns once it is bound
notify_listen() {
	local addr i
	case $1 in
	@*) addr=ABSTRACT-RECV:${1#@} ;;
	*) addr=UNIX-RECV:$1 ;;
	esac
	nsenter -t "$FAKE_NSPID" -n -- socat -u -v "$addr" /dev/null </dev/null 2>"$FAKE/notify.v" 3>&- &
	NOTIFY_PID=$!
	echo "$NOTIFY_PID" >>"$FAKE/pids"
	for ((i = 0; i < 500; i++)); do
		# /proc/net/unix: a path as it is, an abstract name with '@'
		grep -qE " (${1//./\\.})\$" "/proc/$NOTIFY_PID/net/unix" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "notify_listen: socat did not bind $1:"
	cat "$FAKE/notify.v"
	return 1
}

# notify_said: each datagram the listener received, one a line, in
# order, its newlines shown as \n and MONOTONIC_USEC's value as N (kept
# in $FAKE/usec, one a line); one socat is still writing is left out.
# NOTIFY_STAMPS=1: each line begins with socat's stamp and a tab
notify_said() {
	local v re len m stamp
	v=$(cat "$FAKE/notify.v"; echo x)
	v=${v%x}
	: >"$FAKE/usec"
	re=$'^> ([0-9/]+) ([0-9:.]+)  length=([0-9]+) from=[0-9]+ to=[0-9]+\n'
	while [[ $v =~ $re ]]; do
		stamp="${BASH_REMATCH[1]//\//-} ${BASH_REMATCH[2]}"
		len=${BASH_REMATCH[3]}
		v=${v:${#BASH_REMATCH[0]}}
		((${#v} >= len)) || return 0
		m=${v:0:len}
		v=${v:len}
		if [[ $m =~ MONOTONIC_USEC=([0-9]+) ]]; then
			echo "${BASH_REMATCH[1]}" >>"$FAKE/usec"
			m=${m/MONOTONIC_USEC=${BASH_REMATCH[1]}/MONOTONIC_USEC=N}
		fi
		m=${m//$'\n'/\\n}
		printf '%s\n' "${NOTIFY_STAMPS:+$stamp$'\t'}$m"
	done
	# what is left: nothing, or a header socat is still writing
	[[ -z $v || $v == '>'* && $v != *$'\n'* ]] && return 0
	echo "notify_said: not a datagram in socat's log: $v"
	return 1
}

# notify_is [TEXT] (or stdin): the datagrams so far are TEXT exactly
notify_is() {
	run notify_said
	assert_output_is "$@"
}

# until_said PATTERN: a datagram matching PATTERN (an extended regex on
# notify_said's lines) within 5 s
until_said() {
	local i
	for ((i = 0; i < 500; i++)); do
		notify_said 2>/dev/null | grep -qE -- "$1" && return 0
		sleep 0.01
	done
	echo "no datagram matching '$1'; the listener has:"
	notify_said
	echo "drvbind said:"
	cat "$FAKE/follow.out"
	return 1
}

# monotonic_us: CLOCK_MONOTONIC now, in µs (the timer list's "now at")
monotonic_us() {
	local w
	while read -r -a w; do
		[[ ${w[0]-} == now && ${w[1]-} == at ]] && echo $((w[2] / 1000)) && return 0
	done </proc/timer_list
	return 1
}

# received_us TEXT: when socat received the first datagram holding
# TEXT, in µs since the epoch. Its -v stamp is the local wall clock,
# the seconds then the µs (zero-padded to nine digits by socat 1.7).
received_us() {
	local line stamp
	line=$(NOTIFY_STAMPS=1 notify_said | grep -m 1 -F -- "$1") ||
		{ echo "received_us: no datagram with $1"; return 1; }
	stamp=${line%%$'\t'*}
	echo $(($(date -d "${stamp%.*}" +%s) * 1000000 + 10#${stamp##*.} % 1000000))
}

# late_stub: pci_stub_setup's NIC on e1000, without pci-stub, which
# its rule names: stub_registers registers it, when the test has seen
# the rule wait. Its tests give the follower -t 60: a loaded machine
# may take more than the default 10 s to get there, and the rule would
# fail at its deadline first
late_stub() {
	fake_driver pci e1000 'match=*'
	fake_device pci "$E1000" driver=e1000 override
}

# stub_registers: pci-stub registers, with its add uevent
stub_registers() {
	driver_registers pci pci-stub 'match=*'
}

# waits_quietly: the follower is idle, its rule waiting, and stays so
# for half a second more: nothing is coming that it has not had
waits_quietly() {
	idle || return 1
	sleep 0.5
	idle
}

# What NOTIFY_SOCKET hears from a follower whose rule waits for
# pci-stub, then holds, and which then ends: one datagram a line
WAITED_HELD_STOPPED='STATUS=held 0, waiting 1, failed 0, absent 0
READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
STOPPING=1\nSTATUS=held 1, waiting 0, failed 0, absent 0'

# registers_then_ready: NOTIFY_SOCKET has heard only that the rule
# waits; then pci-stub registers, and READY=1 comes
registers_then_ready() {
	notify_is 'STATUS=held 0, waiting 1, failed 0, absent 0'
	stub_registers
	until_said '^READY=1'
}

@test "a follower whose rule waits for its driver tells NOTIFY_SOCKET only its status, and READY=1 once the driver registered and the device is on it" {
	late_stub
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow -t 60 "pci/$E1000:pci-stub"
	waits_quietly
	# the rule waits for pci-stub: no READY=1
	assert_driver pci "$E1000" e1000
	registers_then_ready
	# when READY=1 has come, the device is where the rule puts it
	assert_driver pci "$E1000" pci-stub
	notify_is <<-'EOF'
	STATUS=held 0, waiting 1, failed 0, absent 0
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	EOF
	follow_end_ok
	# socat writes what it received in its own time
	until_said '^STOPPING=1'
	notify_is "$WAITED_HELD_STOPPED"
	run cat "$FAKE/follow.out"
	assert_output_is "drvbind: pci/$E1000: e1000 -> pci-stub"
}

@test "a follower whose rules hold at once says READY=1 once, with every rule counted held" {
	pci_stub_setup
	fake_device pci 0000:00:03.0 driver=e1000 override
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow "pci/$E1000:pci-stub" "pci/0000:00:03.0:none"
	until_said '^READY=1'
	waits_quietly
	assert_driver pci "$E1000" pci-stub
	assert_driver pci 0000:00:03.0 none
	notify_is 'READY=1\nSTATUS=held 2, waiting 0, failed 0, absent 0'
	follow_end_ok
}

@test "a rule that times out keeps READY=1 back until its deadline, then lets it come, counted failed beside the one that held" {
	pci_stub_setup
	fake_device pci 0000:00:03.0 driver=e1000 override
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	# vfio-pci never registers; the deadline is 2 s after drvbind starts.
	# socat stamps each datagram as it receives it, so however late the
	# test looks, READY=1 stamped before t0 + 2 s came too early.
	t0=$(date +%s%6N)
	follow -t 2 "pci/$E1000:pci-stub" "pci/0000:00:03.0:vfio-pci"
	until_said '^READY=1'
	t=$(received_us READY=1)
	echo "# READY=1 received $(((t - t0) / 1000)) ms after the start" >&3
	((t - t0 >= 2000000))
	# and it came: within 5 s of the start
	((t - t0 < 5000000))
	notify_is <<-'EOF'
	STATUS=held 1, waiting 1, failed 0, absent 0
	READY=1\nSTATUS=held 1, waiting 0, failed 1, absent 0
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_driver pci 0000:00:03.0 e1000
	follow_end_ok
}

@test "a rule whose bind fails and is rolled back lets READY=1 come, counted failed" {
	pci_setup probe=EINVAL
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow "pci/$E1000:vfio-pci"
	until_said '^READY=1'
	waits_quietly
	assert_driver pci "$E1000" e1000
	notify_is 'READY=1\nSTATUS=held 0, waiting 0, failed 1, absent 0'
	follow_end_ok
	run cat "$FAKE/follow.out"
	assert_output_is "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000"
}

@test "SIGHUP makes a follower say RELOADING=1 with the monotonic time, its status while the new rule waits, and READY=1 again once it holds" {
	pci_stub_setup
	fake_conf "pci/$E1000:pci-stub"
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow
	until_said '^READY=1'
	# the new rule's driver is not registered yet
	fake_conf "pci/$E1000:vfio-pci"
	t0=$(monotonic_us)
	kill -HUP "$FOLLOW_PID"
	until_said '^STATUS=held 0, waiting 1'
	t1=$(monotonic_us)
	waits_quietly
	assert_driver pci "$E1000" pci-stub
	notify_is <<-'EOF'
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	RELOADING=1\nMONOTONIC_USEC=N\nSTATUS=held 1, waiting 0, failed 0, absent 0
	STATUS=held 0, waiting 1, failed 0, absent 0
	EOF
	# the time of the reload, on CLOCK_MONOTONIC in µs, as systemd takes it
	usec=$(cat "$FAKE/usec")
	((t0 <= usec && usec <= t1))
	driver_registers pci vfio-pci 'match=*'
	until_said '^READY=1.*waiting 0.*'
	until_driver pci "$E1000" vfio-pci
	notify_is <<-'EOF'
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	RELOADING=1\nMONOTONIC_USEC=N\nSTATUS=held 1, waiting 0, failed 0, absent 0
	STATUS=held 0, waiting 1, failed 0, absent 0
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	EOF
	follow_end_ok
}

@test "SIGHUP with nothing changed: RELOADING=1, then READY=1 at once, and no STATUS= between them" {
	pci_stub_setup
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow "pci/$E1000:pci-stub"
	until_said '^READY=1'
	kill -HUP "$FOLLOW_PID"
	until_said '^RELOADING=1'
	waits_quietly
	follow_end_ok
	# socat writes what it received in its own time
	until_said '^STOPPING=1'
	notify_is <<-'EOF'
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	RELOADING=1\nMONOTONIC_USEC=N\nSTATUS=held 1, waiting 0, failed 0, absent 0
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	STOPPING=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	EOF
}

@test "a follower tells STATUS= alone when a replug puts its rule back to waiting and when it holds again, and STOPPING=1 on SIGTERM" {
	pci_stub_setup
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow "pci/$E1000:pci-stub"
	until_said '^READY=1'
	fake_unplug pci "$E1000"
	until_said '^STATUS=held 0, waiting 1'
	waits_quietly
	fake_plug pci "$E1000" override
	until_driver pci "$E1000" pci-stub
	until_said '^STATUS=held 1'
	waits_quietly
	follow_end_ok
	# socat writes what it received in its own time
	until_said '^STOPPING=1'
	notify_is <<-'EOF'
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	STATUS=held 0, waiting 1, failed 0, absent 0
	STATUS=held 1, waiting 0, failed 0, absent 0
	STOPPING=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	EOF
}

@test "NOTIFY_SOCKET=@NAME reaches an abstract socket of the follower's network namespace" {
	late_stub
	NOTIFY=@drvbind-notify-$BATS_TEST_NUMBER-$$
	notify_listen "$NOTIFY"
	follow -t 60 "pci/$E1000:pci-stub"
	waits_quietly
	registers_then_ready
	assert_driver pci "$E1000" pci-stub
	follow_end_ok
	# socat writes what it received in its own time
	until_said '^STOPPING=1'
	notify_is "$WAITED_HELD_STOPPED"
}

@test "a NOTIFY_SOCKET no one listens on draws one warning, and the follower keeps its rules all the same" {
	pci_stub_setup
	NOTIFY=$FAKE/nobody.sock
	follow "pci/$E1000:pci-stub"
	until_driver pci "$E1000" pci-stub
	follow_end_ok
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: NOTIFY_SOCKET=$FAKE/nobody.sock: No such file or directory; not notifying
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

# s6_fifo: fd 5 for the follower (FOLLOW_FD5), a FIFO with a reader
# (S6_PID) that copies what comes to $FAKE/s6.out
s6_fifo() {
	mkfifo "$FAKE/s6.fifo"
	cat "$FAKE/s6.fifo" >"$FAKE/s6.out" 3>&- &
	S6_PID=$!
	echo "$S6_PID" >>"$FAKE/pids"
	FOLLOW_FD5=$FAKE/s6.fifo
}

# s6_svc: a service directory whose notification-fd names fd 5, and a
# FIFO with a reader (S6_PID) that copies what comes to $FAKE/s6.out
# until the last writer closes it; the follower gets the FIFO on fd 5
# (read-write: the open waits for no one), the only writer there is
s6_svc() {
	mkdir -p "$FAKE/svc"
	echo 5 >"$FAKE/svc/notification-fd"
	s6_fifo
	FOLLOW_DIR=$FAKE/svc
}

# s6_said: the reader ended (drvbind closed the FIFO's write end), after
# exactly one newline
s6_said() {
	local i
	for ((i = 0; i < 500; i++)); do
		kill -0 "$S6_PID" 2>/dev/null || break
		sleep 0.01
	done
	if kill -0 "$S6_PID" 2>/dev/null; then
		echo "the notification fd is still open"
		return 1
	fi
	[[ $(od -An -c "$FAKE/s6.out" | tr -d ' ') == '\n' ]] && return 0
	echo "the notification fd got: $(od -An -c "$FAKE/s6.out")"
	return 1
}

@test "under s6, a follower writes one newline to the notification fd once its rule holds, not before, and closes it" {
	late_stub
	s6_svc
	follow -t 60 "pci/$E1000:pci-stub"
	waits_quietly
	[ ! -s "$FAKE/s6.out" ]
	kill -0 "$S6_PID"
	stub_registers
	until_driver pci "$E1000" pci-stub
	s6_said
	[ ! -e "/proc/$FOLLOW_PID/fd/5" ]
	follow_end_ok
}

@test "under s6 with NOTIFY_SOCKET set too, the follower gives both the newline and READY=1, and neither before its rule holds" {
	late_stub
	s6_svc
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow -t 60 "pci/$E1000:pci-stub"
	waits_quietly
	[ ! -s "$FAKE/s6.out" ]
	registers_then_ready
	s6_said
	follow_end_ok
	# socat writes what it received in its own time
	until_said '^STOPPING=1'
	notify_is "$WAITED_HELD_STOPPED"
}

@test "a notification-fd naming an fd that is not a pipe gets nothing written to it, and the fd is left open" {
	pci_stub_setup
	mkdir -p "$FAKE/svc"
	echo 5 >"$FAKE/svc/notification-fd"
	: >"$FAKE/fd5"
	FOLLOW_DIR=$FAKE/svc FOLLOW_FD5=$FAKE/fd5
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	follow "pci/$E1000:pci-stub"
	until_said '^READY=1'
	waits_quietly
	[ ! -s "$FAKE/fd5" ]
	[ "$(readlink "/proc/$FOLLOW_PID/fd/5")" = "$FAKE/fd5" ]
	follow_end_ok
}

@test "with -b neither the parent nor the follower it leaves in the background tells NOTIFY_SOCKET anything" {
	pci_stub_setup
	fake_cmdline "drvbind=pci/$E1000:pci-stub drvbind.follow=1"
	NOTIFY=$FAKE/notify.sock
	notify_listen "$NOTIFY"
	NOTIFY_SOCKET=$NOTIFY follow_bg
	wait_signalfd "$FOLLOW_PID"
	waits_quietly
	assert_driver pci "$E1000" pci-stub
	follow_term
	notify_is ''
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: following 1 rule(s) in the background
	EOF
}

# notify_full PATH: a NOTIFY_SOCKET at PATH that anyone may write to, as
# systemd's is, whose listener (FULL_PID) reads nothing until SIGUSR1,
# then every datagram, one a line in $FAKE/full.out, its newlines shown
# as \n; before that, nobody fills its queue until the kernel answers
# EAGAIN, and FULL_COUNT is how many datagrams it took
notify_full() {
	local i
	perl -MSocket -e '
		socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
		bind($s, pack_sockaddr_un($ARGV[0])) or die "bind: $!";
		chmod 0666, $ARGV[0];
		$SIG{USR1} = sub { $go = 1 };
		sleep 1 until $go;
		$| = 1;
		while (defined recv($s, my $m, 4096, 0)) {
			$m =~ s/\n/\\n/g;
			print "$m\n";
		}' "$1" </dev/null >"$FAKE/full.out" 2>&1 3>&- &
	FULL_PID=$!
	echo "$FULL_PID" >>"$FAKE/pids"
	for ((i = 0; i < 500; i++)); do
		[[ -S $1 && $(stat -c %a "$1") == 666 ]] && break
		sleep 0.01
	done
	FULL_COUNT=$(as_nobody perl -MSocket -e '
		socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
		my $a = pack_sockaddr_un($ARGV[0]);
		my $n = 0;
		$n++ while send($s, "x", MSG_DONTWAIT, $a);
		$!{EAGAIN} or die "send: $!";
		print "$n\n"' "$1")
	((FULL_COUNT > 0))
}

@test "as nobody, a NOTIFY_SOCKET filled to the brim stalls no follower: it follows a replug, ends at once on SIGTERM, and its READY=1 goes as soon as there is room" {
	# made again with only the fake's uevents: once the follower is idle,
	# nothing but room on the socket wakes it (teardown's status is
	# that of the processes it ended)
	fake_teardown || :
	fake_setup_boot
	pci_stub_setup
	public_dir
	notify_full "$PUBLIC/notify.sock"
	NOTIFY=$PUBLIC/notify.sock
	follow "pci/$E1000:pci-stub"
	until_driver pci "$E1000" pci-stub
	nic_replugged pci-stub
	idle
	# the listener reads: room, and READY=1 with the counts of now,
	# with nothing else to wake the follower
	kill -USR1 "$FULL_PID"
	wait_for "$FAKE/full.out" '^READY=1'
	follow_end_ok
	wait_for "$FAKE/full.out" '^STOPPING=1'
	run cat "$FAKE/full.out"
	assert_output_is <<-EOF
	$(for ((i = 0; i < FULL_COUNT; i++)); do echo x; done)
	READY=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	STOPPING=1\nSTATUS=held 1, waiting 0, failed 0, absent 0
	EOF
	run cat "$FAKE/follow.out"
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

# s6_refused: a follower of the NIC's rule, started in FOLLOW_DIR with
# fd 5 the FIFO (s6_fifo), moves the NIC and says its notification-fd
# was not read; fd 5 stays open, and nothing was written to it
s6_refused() {
	follow "pci/$E1000:pci-stub"
	until_driver pci "$E1000" pci-stub || return 1
	idle || return 1
	[[ $(readlink "/proc/$FOLLOW_PID/fd/5") == "$FAKE/s6.fifo" ]] || {
		echo "fd 5 is not the FIFO"
		return 1
	}
	follow_said <<-EOF || return 1
	drvbind: notification-fd: it or its directory is not root's alone; not read
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	[[ ! -s $FAKE/s6.out ]] || {
		echo "the FIFO got: $(cat "$FAKE/s6.out")"
		return 1
	}
}

@test "as nobody, a notification-fd put in a directory anyone may write is not read: the follower says so, and writes nothing to the pipe it names nor closes it" {
	pci_stub_setup
	public_dir
	s6_fifo
	as_nobody sh -c "echo 5 >'$PUBLIC/tmp/notification-fd'"
	FOLLOW_DIR=$PUBLIC/tmp s6_refused
}

@test "a notification-fd of root's that group may write, in a directory of root's, is not read either" {
	pci_stub_setup
	s6_svc
	chmod 664 "$FAKE/svc/notification-fd"
	s6_refused
}

@test "as nobody, a FIFO named notification-fd where the follower starts holds it up not at all: it is not read, and the follower says so" {
	pci_stub_setup
	public_dir
	as_nobody mkfifo "$PUBLIC/tmp/notification-fd"
	FOLLOW_DIR=$PUBLIC/tmp follow "pci/$E1000:pci-stub"
	until_driver pci "$E1000" pci-stub
	follow_said <<-EOF
	drvbind: notification-fd: not a regular file; not read
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}
