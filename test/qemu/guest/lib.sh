# SPDX-License-Identifier: MIT
# Helpers for the scenarios; results are "NAME.KEY VALUE" lines on fd 3.

say() {
	printf '%s\n' "$*" >&3
}

# say_lines PREFIX: each line read from stdin said with PREFIX in front;
# every report of a run's messages, kernel log and modprobe calls is one.
say_lines() {
	local l
	while IFS= read -r l; do
		say "$1$l"
	done
}

# kernel_log [-c]: dmesg with each line's priority (<facility*8+level>)
# kept and its timestamp dropped, so that reports compare between boots;
# with -c the log is cleared as it is read, so the next read has only
# what came after.
kernel_log() {
	dmesg -r ${1:+"$1"} | sed 's/^\(<[0-9]*>\)\[[^]]*\] */\1/'
}

# say_modprobe NAME: the modprobe requests not reported yet (the guest's
# /sbin/modprobe logs each), as NAME.modprobe lines
say_modprobe() {
	if [ -f /run/modprobe.log ]; then
		say_lines "$1.modprobe " </run/modprobe.log
		rm -f /run/modprobe.log
	fi
}

# driver_of BUS DEV: the name of the driver that holds the device now,
# or none; the reports and the demo's table both say it.
driver_of() {
	local l="/sys/bus/$1/devices/$2/driver"
	if [ -L "$l" ]; then
		l=$(readlink "$l")
		echo "${l##*/}"
	else
		echo none
	fi
}

# Load modules (and what they depend on) from the lists built on the host;
# trixie's are compressed, NAME.ko.xz.
load() {
	local m ko n
	for m; do
		while read -r ko; do
			n=${ko##*/}
			n=${n%.ko*}
			n=$(echo "$n" | tr - _)
			[ -d "/sys/module/$n" ] && continue
			insmod "$ko" || say "error insmod $ko"
		done <"/mod/$m.list"
	done
}

# Milliseconds since boot (/proc/uptime has hundredths). The leading 0
# of hundredths such as "08" goes: ash reads 08 as bad octal.
now_ms() {
	local up rest c
	read -r up rest </proc/uptime
	c=${up#*.}
	echo $((${up%.*} * 1000 + ${c#0} * 10))
}

# start NAME ARG...: drvbind in the background; finish waits for it.
# The kernel log is cleared first, so what follows is this run's.
# start_also NAME ARG...: one more beside it, the log kept; finish NAME
# waits for that one. NAME.ms is drvbind's own run time, to its exit.
start() {
	dmesg -c >/dev/null
	start_also "$@"
}

start_also() {
	run_name=$1
	shift
	run_t0=$(now_ms)
	(
		drvbind "$@" 2>"/tmp/$run_name.err"
		st=$?
		now_ms >"/tmp/$run_name.t1"
		exit $st
	) &
	run_pid=$!
	echo "$run_t0 $run_pid" >"/tmp/$run_name.run"
}

# finish [NAME]: the exit status, run time, messages, the kernel log
# since start, and the modprobe requests not yet reported.
finish() {
	local name=${1:-$run_name} st t0 pid t1
	read -r t0 pid <"/tmp/$name.run"
	wait "$pid"
	st=$?
	t1=$(cat "/tmp/$name.t1" 2>/dev/null || now_ms)
	say "$name.status $st"
	say "$name.ms $((t1 - t0))"
	say_lines "$name.stderr " <"/tmp/$name.err"
	kernel_log | say_lines "$name.dmesg "
	say_modprobe "$name"
}

# run NAME ARG...: drvbind in the foreground, reported.
run() {
	start "$@"
	finish
}

# link NAME BUS DEV: which driver holds the device now (none, absent),
# and its driver_override where it has one.
link() {
	local d=/sys/bus/$2/devices/$3 v=absent
	[ -e "$d" ] && v=$(driver_of "$2" "$3")
	say "$1.link $2/$3 $v"
	[ -f "$d/driver_override" ] && say "$1.override $2/$3 $(cat "$d/driver_override")"
}

# retry TENTHS CMD...: wait until CMD succeeds, a try every 0.1 s,
# TENTHS tenths of a second at most; the scenario goes on either way, and
# its report shows what came of it.
retry() {
	local n="$1" i=0
	shift
	while ! "$@" && [ $i -lt "$n" ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# settle BUS DEV: wait (5 s at most) until the device has a driver, so a
# case starts from the machine the kernel left, not one still probing.
settle() {
	retry 50 [ -L "/sys/bus/$1/devices/$2/driver" ]
}

# appear BUS DEV: wait (10 s at most) until the device is there, bound
# or not, as a USB device enumerating after its host controller loaded.
appear() {
	retry 100 [ -e "/sys/bus/$1/devices/$2" ]
}

# procs NAME: the PIDs running NAME, "PID:STATE" each (Z: a zombie, gone
# but not yet reaped by its parent, PID 1).
procs() {
	local s p rest comm st
	for s in /proc/[0-9]*/stat; do
		read -r p comm st rest <"$s" 2>/dev/null || continue
		[ "$comm" = "($1)" ] && [ "$st" != Z ] && printf '%s:%s ' "$p" "$st"
	done
}

# report_init: what /init found when it started (see /init), as init.*.
report_init() {
	say "init.pid $init_pid"
	say "init.argv $init_argv"
	echo "$init_env" | say_lines "init.env "
	say "init.premount${init_premount:- none}"
	say "init.dirs$init_dirs"
	echo "$init_mounts" | say_lines "init.mount "
	sed -n 's/.* \([0-9]*\) -> /\1 -> /p' /run/init.fds | say_lines "init.fd "
	say "init.cmdline $(cat /proc/cmdline)"
}

# report_log NAME: drvbind's kernel-log lines since boot (and pci-stub's).
report_log() {
	kernel_log | grep -e drvbind -e 'pci-stub' | say_lines "$1.dmesg "
	if [ -f /run/modprobe.log ]; then
		say_lines "$1.modprobe " </run/modprobe.log
	fi
}

# The follower's boots (follow.sh, lockdown.sh).

# until_ok CMD...: wait (10 s at most) until CMD succeeds
until_ok() {
	retry 100 "$@"
}

# follower_found: $follower, the pid of the drvbind that PID 1 left
# running (procs), and its sockets (follower_socks)
follower_found() {
	follower=$(procs drvbind)
	follower=${follower%%:*}
	follower_socks
}

# boot_step: the boot's own report, after its command line: the
# follower PID 1 left (follower_found), then the scenario's step boot,
# its kernel log kept to drvbind's lines and the kernel running it
boot_step() {
	say "boot.cmdline $(cat /proc/cmdline)"
	follower_found
	keep='drvbind: |Run /sbin/drvbind'
	step boot
	keep=
}

# step_log NAME: once the follower is idle, the step's report begins:
# NAME.child, the drvbind processes (the follower's pid and state); then
# step_said NAME ends it: the kernel log since the last step (read and
# cleared), only the lines that $keep (an ERE) matches, as NAME.dmesg,
# and the modprobe requests, as NAME.modprobe. The scenario reports its
# devices between the two.
keep=
step_log() {
	idle
	say "$1.child $(procs drvbind)"
}

step_said() {
	kernel_log -c | grep -E -e "$keep" | say_lines "$1.dmesg "
	say_modprobe "$1"
}

# exit_traced: the kernel traces the follower's exit_group() call from
# now on (tracefs): this init, its parent, reaps it unasked, as busybox's
# shell reaps any child that ends, so its exit status is read there.
# exit_said NAME: the tracing ends, and the status the trace caught, if
# any (a follower killed by a signal makes no exit_group()), is
# NAME.exit_group.
tr=/sys/kernel/tracing
exit_traced() {
	mount -t tracefs tracefs $tr
	echo "common_pid == ${follower:-0}" >$tr/events/syscalls/sys_enter_exit_group/filter
	echo 1 >$tr/events/syscalls/sys_enter_exit_group/enable
}

exit_said() {
	echo 0 >$tr/events/syscalls/sys_enter_exit_group/enable
	sed -n 's/.*sys_exit_group(error_code: \([^)]*\))$/\1/p' $tr/trace | say_lines "$1.exit_group "
}

# follower_ends T0 MS [PAUSE]: whether the follower has ended (gone, or a
# zombie: this init reaps it unasked), MS ms after T0 (ms_now) at most:
# $state, ended or running. Between looks only builtins, not to be slowed
# down by forks, or a sleep of PAUSE seconds where given.
follower_ends() {
	local st t0="$1" limit="$2" pause="${3-}"
	state=running
	while :; do
		if ! read -r st <"/proc/$follower/stat" 2>/dev/null; then
			state=ended
			return
		fi
		# shellcheck disable=SC2086 # the fields of the stat line
		set -- $st
		if [ "$3" = Z ]; then
			state=ended
			return
		fi
		ms_now
		[ $((ms - t0)) -lt "$limit" ] || return
		[ -z "$pause" ] || sleep "$pause"
	done
}

# ms_now: milliseconds since boot in $ms, with builtins only (now_ms's
# output would need a command substitution, a fork)
ms_now() {
	local up c
	read -r up c </proc/uptime
	c=${up#*.}
	ms=$((${up%.*} * 1000 + ${c#0} * 10))
}

# follower_socks: the inodes of the sockets of $follower (the drvbind
# that PID 1 left) in $socks, " I1 I2 ... "
follower_socks() {
	local f l
	socks=" "
	for f in "/proc/$follower/fd/"*; do
		l=$(readlink "$f")
		case $l in
		socket:*) l=${l#*[} socks="$socks${l%]} " ;;
		esac
	done
}

# idle: the follower has read every uevent sent so far and sleeps (5 s
# at most): it is in S, and the receive queue of its uevent socket (Rmem
# in /proc/net/netlink, found by the inodes in $socks: follower_socks)
# is empty, twice 0.1 s apart. What it had to say about a step is in the
# log then.
idle() {
	local i=0 n=0 st
	while [ $n -lt 2 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
		read -r _ _ st _ <"/proc/$follower/stat" 2>/dev/null || return
		if [ "$st" = S ] && awk -v s="$socks" 'index(s, " " $10 " ") && $5 != 0 { q = 1 } END { exit q }' \
			"/proc/$follower/net/netlink"; then
			n=$((n + 1))
		else
			n=0
		fi
	done
}
