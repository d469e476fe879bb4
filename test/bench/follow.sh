# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# shellcheck disable=SC2154 # live, work, data and the rest are bench.sh's
# Sourced by bench.sh: keeping a rule across replugs. The same replug of
# the fake kernel's PCI device (its own unplug and replug: the driver
# released, the remove uevent, a new device added, the add uevent, e1000
# bound by the probe) is answered once by drvbind's follower, `drvbind -f
# pci/DEV:vfio-pci`, and once by what driverctl's udev rule has systemd
# start for it, `driverctl load-override pci/DEV`. Per replug: system
# calls (strace) and instructions (callgrind), each replug checked to end
# on vfio-pci; and the follower at rest: wake-ups and system calls over a
# quiet time, RSS and open files, before and after the replugs.
#
# Uses bench.sh's live fake kernel (mounted over /sys), its trees (pci-1),
# load, fail and say. Writes $data/follow and $data/strace-replug.
#
# Measuring a follower that keeps running calls for windows, not runs: a
# tracer attached to it (strace -p) over N replugs minus the same over
# none, and the whole follower under callgrind with N replugs minus one
# with none; what is left is what the replugs cost, divided by N.

FDEV=$(pci_id 0)
FRULE=pci/$FDEV:vfio-pci
FCTL=$live/sys/.fake_ctl

# fake_nap's pipe, opened here once: not by a first nap in a replug, nor
# in a subshell ($(fquiet)), which would open its own
fake_nap 0

# fload: the tree with the one device on e1000, and the fake's control
# file, which load removes with the rest of the tree
fload() {
	load pci-1
	: >"$live/back/.fake_ctl"
}

# fstart_with CHECK CMD...: a follower in the background, in FPID, once
# its first pass is over (its signalfd is open) and CHECK, a function,
# says it is done (fon: idle, the device on vfio-pci). It starts with
# stdin, stdout and stderr alone, as a service manager starts it: its
# files are then its own.
fstart_with() {
	local f check=$1
	shift
	(
		for f in /proc/"$BASHPID"/fd/*; do
			f=${f##*/}
			((f > 2)) && eval "exec $f>&-"
		done
		exec "$@"
	) </dev/null >>"$work/follow.out" 2>&1 &
	FPID=$! FINO=
	wait_signalfd "$FPID" 3000
	# the uevent socket
	FINO=$(fake_nlsock "$FPID") && "$check" && return 0
	fail "follow: no follower started: $*"
	fstop
	return 1
}

# fstart CMD...: fstart_with fon
fstart() {
	fstart_with fon "$@"
}

# fidle: without a fork, the follower sleeps in ppoll() with nothing
# left to read on its uevent socket (fake_idle): it has done with every
# event so far (the fake kernel sends its uevents before its .fake_ctl
# write returns)
fidle() {
	fake_idle "$FPID" "$FINO" 20000
}

# fon: the follower is idle and the device on vfio-pci
fon() {
	local i
	for ((i = 0; i < 1000; i++)); do
		fidle || return 1
		[[ -L $live/back/bus/pci/drivers/vfio-pci/$FDEV ]] && return 0
		fake_nap
	done
	return 1
}

# freplug [WHO]: one replug; a follower (WHO empty) is let finish each
# step and must end on vfio-pci; for WHO=driverctl the device ends on
# e1000, where the replug leaves it. FOK counts the replugs that ended so.
freplug() {
	printf 'unplug pci %s' "$FDEV" >"$FCTL" || return 1
	[[ -n ${1-} ]] || fidle || return 1
	printf 'replug pci %s' "$FDEV" >"$FCTL" || return 1
	if [[ -n ${1-} ]]; then
		[[ $(readlink "$live/back/bus/pci/devices/$FDEV/driver") == */e1000 ]]
	else
		fon && FOK=$((FOK + 1))
	fi
}

# fstop: SIGTERM, and the follower's exit status checked
fstop() {
	local st=0
	kill -TERM "$FPID" 2>/dev/null
	wait "$FPID" || st=$?
	FPID=
	((st == 0)) || fail "follow: the follower ended with status $st"
}

# fstatus KEY...: the sum of those lines of the follower's /proc status
fstatus() {
	local k v n=0 key _
	while read -r k v _; do
		for key; do [[ $k == "$key:" ]] && n=$((n + v)); done
	done <"/proc/$FPID/status"
	echo "$n"
}

ffds() {
	local -a f=(/proc/"$FPID"/fd/*)
	echo "${#f[@]}"
}

# ftrace OUT ARGS...: strace ARGS -o OUT -p the follower in the
# background, in FTRACER, once attached
ftrace() {
	local out=$1 i
	shift
	strace -qq "$@" -o "$out" -p "$FPID" 2>/dev/null &
	FTRACER=$!
	for ((i = 0; i < 500; i++)); do
		[[ $(fstatus TracerPid) != 0 ]] && return 0
		sleep 0.01
	done
	fail "follow: strace did not attach"
}

# funtrace: the tracer detaches (its summary is written then)
funtrace() {
	kill -INT "$FTRACER"
	wait "$FTRACER"
	while [[ $(fstatus TracerPid) != 0 ]]; do fake_nap; done
}

calls() { awk '$NF == "total" { n = $4 } END { print n + 0 }' "$1"; }

# fquiet SECONDS: the idle follower over SECONDS twice: its context
# switches, untraced (voluntary: it went to sleep again, once a wake-up;
# involuntary: preempted while awake); then every system call it makes
# (strace -p), and which of its ppoll() calls returned on a descriptor
# and which on a timeout. And the uevents that reached the namespace in
# each window: the host kernel's own reach every network namespace of
# the initial user namespace (a FUSE mount's bdi, a loop device), and
# each one wakes the follower, which must look at it. Prints "VOLUNTARY
# INVOLUNTARY UEVENTS CALLS WOKEN TIMEOUTS UEVENTS".
fquiet() {
	local s=$1 v0 v1 n0 n1 lis
	"$UEVENT" -l >"$work/quiet.ev" 2>"$work/quiet.lis" &
	lis=$!
	until grep -q listening "$work/quiet.lis"; do fake_nap; done
	v0=$(fstatus voluntary_ctxt_switches) n0=$(fstatus nonvoluntary_ctxt_switches)
	sleep "$s"
	v1=$(fstatus voluntary_ctxt_switches) n1=$(fstatus nonvoluntary_ctxt_switches)
	printf '%s %s %s ' "$((v1 - v0))" "$((n1 - n0))" "$(wc -l <"$work/quiet.ev")"
	: >"$work/quiet.ev"
	ftrace "$work/quiet.st"
	sleep "$s"
	funtrace
	kill "$lis"
	wait "$lis" 2>/dev/null
	# the last line: the ppoll() it still sleeps in, cut short by the detach
	echo "$(grep -vc '<detached \.\.\.>$' "$work/quiet.st") $(grep -c '^ppoll(.*) = [1-9]' "$work/quiet.st")" \
		"$(grep -c '^ppoll(.*) = 0 (Timeout)' "$work/quiet.st") $(wc -l <"$work/quiet.ev")"
}

# follow_bench REPLUGS DRIVERCTL_RUNS DRIVERCTL_CG_RUNS QUIET_SECONDS
follow_bench() {
	local n=$1 dn=$2 dcn=$3 q=$4 i rss0 fds0 rss1 fds1 q0 q1 sc0 scn ir0 irn ok dsc=0 dir=0 dok=0 f
	: >"$work/follow.out"
	FOK=0

	say "bench: the follower at rest, and through $n replugs"
	fload
	fstart "$BIN" -f -s "$work/follow.sock" "$FRULE" || return
	rss0=$(fstatus VmRSS) fds0=$(ffds)
	q0=$(fquiet "$q")
	for ((i = 1; i <= n; i++)); do freplug || break; done
	rss1=$(fstatus VmRSS) fds1=$(ffds)
	q1=$(fquiet "$q")
	fstop

	say "bench: the follower's system calls per replug (strace -p, $n replugs)"
	fload
	fstart "$BIN" -f -s "$work/follow.sock" "$FRULE" || return
	ftrace "$work/sc.0" -c
	funtrace
	# every call of one replug, for RESULTS.md
	ftrace "$data/strace-replug"
	freplug
	funtrace
	ftrace "$work/sc.n" -c
	for ((i = 1; i <= n; i++)); do freplug || break; done
	funtrace
	sc0=$(calls "$work/sc.0") scn=$(calls "$work/sc.n")
	fstop

	say "bench: the follower's instructions per replug (callgrind, 0 and $n replugs)"
	for f in 0 "$n"; do
		fload
		fstart valgrind -q --tool=callgrind --callgrind-out-file="$work/cg.follow.$f" "$BIN" -f -s "$work/follow.sock" "$FRULE" || return
		for ((i = 1; i <= f; i++)); do freplug || break; done
		fstop
	done
	ir0=$(awk '/^summary:/ { print $2 }' "$work/cg.follow.0")
	irn=$(awk '/^summary:/ { print $2 }' "$work/cg.follow.$n")
	# the first pass of each follower moved the device too
	f="drvbind: pci/$FDEV: e1000 -> vfio-pci"
	ok=$(grep -c -x -e "$f" "$work/follow.out")
	# one line a move: a follower's first pass, then each replug
	((ok == FOK + 4)) || fail "follow: $ok moves said for $((FOK + 4))"
	[[ $(grep -c -v -x -e "$f" "$work/follow.out") == 0 ]] ||
		fail "follow: the follower said more: $(grep -v -x -e "$f" "$work/follow.out" | head -3)"
	echo "drvbind $n $sc0 $scn $ir0 $irn $FOK $((3 * n + 1))" >>"$data/follow"
	echo "rest $q $rss0 $rss1 $fds0 $fds1 $q0 $q1" >>"$data/follow"
	((FOK == 3 * n + 1)) || fail "follow: $((3 * n + 1 - FOK)) of $((3 * n + 1)) replugs did not end on vfio-pci"

	# What systemd runs for driverctl@pci-DEV.service: %I, the instance
	# unescaped ("-" is "/"); its environment, a PATH; stdin /dev/null.
	say "bench: driverctl load-override per replug ($dn traced, $dcn under callgrind)"
	mount -t tmpfs -o mode=0755 drvbind-bench-driverctl /etc/driverctl.d
	echo vfio-pci >"/etc/driverctl.d/pci-$FDEV"
	fload
	for ((i = 1; i <= dn + dcn; i++)); do
		freplug driverctl || { fail "follow: the replug for driverctl did not end on e1000"; break; }
		if ((i <= dn)); then
			env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
				strace -f -c -o "$work/dc.sc" driverctl load-override "pci/$FDEV" </dev/null >/dev/null 2>&1
			dsc=$((dsc + $(calls "$work/dc.sc")))
		else
			rm -rf "$work/dc.cg"
			mkdir -p "$work/dc.cg"
			env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
				valgrind -q --tool=callgrind --trace-children=yes --callgrind-out-file="$work/dc.cg/cg.%p" \
				driverctl load-override "pci/$FDEV" </dev/null >/dev/null 2>&1
			dir=$((dir + $(awk '/^summary:/ { n += $2 } END { print n + 0 }' "$work"/dc.cg/cg.*)))
		fi
		[[ $(readlink "$live/back/bus/pci/devices/$FDEV/driver") == */vfio-pci ]] && dok=$((dok + 1))
	done
	umount /etc/driverctl.d
	echo "driverctl $dn $dsc $dcn $dir $dok $((dn + dcn))" >>"$data/follow"
	((dok == dn + dcn)) || fail "follow: $((dn + dcn - dok)) of $((dn + dcn)) driverctl runs did not end on vfio-pci"
}
