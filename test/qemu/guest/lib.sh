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

# kernel_log: dmesg with each line's priority (<facility*8+level>) kept
# and its timestamp dropped, so that reports compare between boots.
kernel_log() {
	dmesg -r | sed 's/^\(<[0-9]*>\)\[[^]]*\] */\1/'
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
	if [ -f /run/modprobe.log ]; then
		say_lines "$name.modprobe " </run/modprobe.log
		rm -f /run/modprobe.log
	fi
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

# settle BUS DEV: wait (5 s at most) until the device has a driver, so a
# case starts from the machine the kernel left, not one still probing.
settle() {
	local i=0
	while [ ! -L "/sys/bus/$1/devices/$2/driver" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# appear BUS DEV: wait (10 s at most) until the device is there, bound
# or not, as a USB device enumerating after its host controller loaded.
appear() {
	local i=0
	while [ ! -e "/sys/bus/$1/devices/$2" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
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
	local i=0
	while ! "$@" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
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
