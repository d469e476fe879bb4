# SPDX-License-Identifier: MIT
# Loaded by every .bats file that runs drvbind on the fake kernel: a fake
# sysfs per test, the verbs that build it in the kernel's shapes,
# drvbind run on it, and the assertions. Above each function, a comment
# says what it does, every argument it takes, and why where that is not
# plain.
#
#   $FAKE/back  backing tree (plain files, dirs, relative symlinks)
#   $SYS        the FUSE mount of it, with the driver core's write rules
#   $FAKE/log   one line per write through the mount: "RELPATH VALUE -> RESULT"
#
# Everything runs in a private network namespace per test, so uevents
# sent by the fake kernel reach only this test's drvbind.

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
# DRVBIND=PATH runs the suite on another build of the same sources (make
# check-asan, make check-ubsan); the default is the shipped binary. A
# relative PATH (make check-cross's) is made whole: a run that enters a
# mount namespace (fake_setup_boot's) starts at that namespace's root.
BIN=$(realpath -m -- "${DRVBIND:-$TOP/build/drvbind}")
# A cross build (make check-cross) names its architecture, as make's
# ARCH=, and what runs it: qemu-user, e.g. DRVBIND_RUN=qemu-aarch64-static.
# Everything runs the binary as ${RUN:+"$RUN"} "$BIN".
ARCH=${DRVBIND_ARCH-}
RUN=${DRVBIND_RUN-}
FAKESYS=${FAKESYS:-$TOP/build/test/fakesys}
UEVENT=${UEVENT:-$TOP/build/test/uevent}

# A test about the shipped binary itself (its size, its static link, what
# its bytes hold), or about the sources alone, has nothing to add in a run
# on a sanitizer build; the run on build/drvbind makes it, and the run on
# each shipped cross build (build/ARCH/drvbind, make check-cross).
# shipped_only [WHAT]: WHAT the test checks, for the reason it is skipped
shipped_only() {
	[[ $BIN -ef $TOP/build/${ARCH:+$ARCH/}drvbind ]] ||
		skip "${1:-checks the shipped build/drvbind}: the run on build/drvbind does that; this run is on $BIN"
}

# fake_ns COMMAND [ARG...]: COMMAND inside the test's network namespace
# (fake_setup's), where the fake kernel's uevents go and drvbind listens
fake_ns() {
	nsenter -t "$FAKE_NSPID" -n -- "$@"
}

# fake_setup: each test's setup (setup() below; a file with a setup of
# its own calls it first). Makes $FAKE (the test's directory: back/,
# log, cmdline, conf, pids, and modprobe, a script that appends
# "modprobe ARGS" to $FAKE/modprobe.log), a network namespace of its own
# held by a sleeping process (FAKE_NSPID), and the fake kernel mounted
# at $SYS inside it (FAKE_FSPID). Fails, saying why, when the namespace
# or the mount does not come within 5 s.
fake_setup() {
	FAKE=$BATS_TEST_TMPDIR/fake
	SYS=$FAKE/sys
	mkdir -p "$FAKE/back" "$SYS"
	: >"$FAKE/log"
	: >"$FAKE/cmdline"
	: >"$FAKE/conf"
	: >"$FAKE/pids"
	printf '#!/bin/sh\necho "modprobe $*" >>"%s/modprobe.log"\n' \
		"$FAKE" >"$FAKE/modprobe"
	chmod +x "$FAKE/modprobe"

	# unshare(CLONE_NEWNET) needs no fork: the pid is the holder's
	unshare -n sleep 100000 </dev/null >/dev/null 2>&1 3>&- &
	FAKE_NSPID=$!
	local i host
	host=$(readlink /proc/self/ns/net)
	for ((i = 0; i < 500; i++)); do
		[[ $(readlink "/proc/$FAKE_NSPID/ns/net" 2>/dev/null) != "$host" ]] &&
			break
		sleep 0.01
	done
	if [[ $(readlink "/proc/$FAKE_NSPID/ns/net") == "$host" ]]; then
		echo "fake_setup: no network namespace" >&2
		return 1
	fi

	fake_ns "$FAKESYS" "$FAKE/back" "$FAKE/log" "$SYS" \
		</dev/null >"$FAKE/fakesys.out" 2>&1 3>&- &
	FAKE_FSPID=$!
	fake_until "$FAKE_FSPID" mountpoint -q "$SYS" && return 0
	echo "fake_setup: fakesys did not mount:" >&2
	cat "$FAKE/fakesys.out" >&2
	return 1
}

# fake_until PID COMMAND [ARG...]: COMMAND every 10 ms until it succeeds
# (0), or for 5 s at most, or until PID, the process that would make it
# true, is gone (1)
fake_until() {
	local pid=$1 i
	shift
	for ((i = 0; i < 500; i++)); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# fake_setup_boot: fake_setup, with the test's network namespace in a
# user namespace of its own: the kernel sends its own uevents (a FUSE
# mount's bdi, of any test on the machine) into every network namespace
# of the initial user namespace only, so here only the fake's uevents
# wake drvbind. fake_setup runs unshare only for that namespace's
# holder. Then FAKE_MNT: a process in that network namespace and in a
# mount namespace of its own where the fake is mounted over /sys, for
# drvbind to run in as at boot (nsenter -t "$FAKE_MNT" -n -m).
fake_setup_boot() {
	local rc
	unshare() { exec unshare -U "$@"; }
	fake_setup
	rc=$?
	unset -f unshare
	((rc == 0)) || return $rc
	nsenter -t "$FAKE_NSPID" -n -- unshare -m --propagation private \
		sh -c 'mount --bind "$1" /sys && exec sleep 100000' - "$SYS" \
		</dev/null >"$FAKE/mnt.out" 2>&1 3>&- &
	FAKE_MNT=$!
	echo "$FAKE_MNT" >>"$FAKE/pids"
	fake_until "$FAKE_MNT" _fake_over_sys && return 0
	echo "fake_setup_boot: no mount namespace with the fake over /sys" >&2
	cat "$FAKE/mnt.out" >&2
	return 1
}

_fake_over_sys() {
	local -a m
	mapfile -t m 2>/dev/null <"/proc/$FAKE_MNT/mounts"
	[[ " ${m[*]} " == *" $SYS fuse.fakesys "* && " ${m[*]} " == *" /sys fuse.fakesys "* ]]
}

# _fake_kill PID: a background job and whatever it is running now (a
# sleep, a write), its children first, so that nothing outlives the test
_fake_kill() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		_fake_kill "$c"
	done
	kill "$1" 2>/dev/null
}

# fake_teardown: each test's teardown: every job in $FAKE/pids
# (fake_later, follow, ...) killed, the mount undone (lazily where the
# daemon died), the fake kernel and the namespace's holder ended. Always
# 0, so that a failure in the test is the one reported.
fake_teardown() {
	local pid
	[[ -n ${FAKE-} ]] || return 0
	while read -r pid; do
		_fake_kill "$pid"
	done <"$FAKE/pids"
	# a dead daemon leaves a mount that mountpoint(1) cannot stat
	if grep -qF " $SYS fuse" /proc/self/mounts; then
		fusermount3 -u "$SYS" 2>/dev/null ||
			fusermount3 -uz "$SYS" 2>/dev/null || umount -l "$SYS"
	fi
	[[ -n ${FAKE_FSPID-} ]] && kill "$FAKE_FSPID" 2>/dev/null
	[[ -n ${FAKE_NSPID-} ]] && kill "$FAKE_NSPID" 2>/dev/null
	wait ${FAKE_FSPID-} ${FAKE_NSPID-} 2>/dev/null
	return 0
}

# setup: bats's hook before each test: fake_setup (a file that needs
# more defines its own, which calls fake_setup first)
setup() { fake_setup; }

# teardown: bats's hook after each test: fake_teardown
teardown() { fake_teardown; }

# drvbind ARG...: the binary under test ($BIN, through $RUN for a cross
# build) in the test's namespace, with ARGs after the options that point
# it at this test's tree: -r $SYS, -k $FAKE/cmdline, -c $FAKE/conf,
# -m $FAKE/modprobe, -s $FAKE/follow.sock. Its status is drvbind's.
drvbind() {
	fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" \
		-m "$FAKE/modprobe" -s "$FAKE/follow.sock" "$@"
}

# boot_drvbind ARG...: drvbind as at boot, for a test whose setup is
# fake_setup_boot: on the fake over /sys with no -r, in the namespaces
# where only the fake's uevents come, so only a uevent brings its next
# look (with -r it would also look every 250 ms)
boot_drvbind() {
	nsenter -t "$FAKE_MNT" -n -m -- ${RUN:+"$RUN"} "$BIN" -k "$FAKE/cmdline" \
		-c "$FAKE/conf" -m "$FAKE/modprobe" -s "$FAKE/follow.sock" "$@"
}

# fake_cmdline TEXT: the kernel command line drvbind reads ($FAKE/cmdline,
# its -k), TEXT and a newline, as /proc/cmdline has it
fake_cmdline() {
	printf '%s\n' "$1" >"$FAKE/cmdline"
}

# fake_conf [LINE...]: drvbind's config file ($FAKE/conf, its -c), one
# LINE a line; without LINEs, what stdin holds
fake_conf() {
	if (($#)); then
		printf '%s\n' "$@" >"$FAKE/conf"
	else
		cat >"$FAKE/conf"
	fi
}

# _fake_up PATH: "../" once per component of PATH, a path below the
# root: what a relative link in PATH's directory climbs to the root
_fake_up() {
	local IFS=/ c up=
	for c in $1; do up+=../; done
	printf %s "$up"
}

# fake_bus B: the bus B as bus_register makes it: devices/, drivers/,
# drivers_probe and uevent (write-only), drivers_autoprobe (1). Nothing
# when B is there; the other verbs call it for the bus they name.
fake_bus() {
	local b=$FAKE/back/bus/$1
	[[ -d $b ]] && return 0
	mkdir -p "$b/devices" "$b/drivers"
	: >"$b/drivers_probe"
	chmod 200 "$b/drivers_probe"
	echo 1 >"$b/drivers_autoprobe"
	: >"$b/uevent"
	chmod 200 "$b/uevent"
}

# _fake_drv_state DIR ARG...: what the kernel keeps inside a driver for
# fake_driver's ARGs, in the driver's directory DIR: .fake_match (match=),
# .fake_probe (probe=), .fake_busids (match_busid), .fake_sriov
# (sriov=); the files of the others are the caller's to make. With DIR
# empty, only the check that every ARG is one fake_driver knows
# (fake_register checks before its first step). 1, naming it, for an
# unknown ARG.
_fake_drv_state() {
	local d=$1 a ids
	shift
	for a; do
		case $a in
		match=* | probe=*) [[ -n $d ]] || continue ;;&
		match=*)
			IFS=, read -ra ids <<<"${a#match=}"
			printf '%s\n' "${ids[@]}" >>"$d/.fake_match"
			;;
		probe=*:*)
			a=${a#probe=}
			printf '%s %s\n' "${a%%:*}" "${a#*:}" >"$d/.fake_probe"
			;;
		probe=*)
			printf '%s\n' "${a#probe=}" >"$d/.fake_probe"
			;;
		match_busid)
			# usbip-host's table of bus ids, empty, from its init
			[[ -z $d ]] || : >>"$d/.fake_busids"
			;;
		sriov=disable | sriov=keep)
			[[ -z $d ]] || printf '%s\n' "${a#sriov=}" >"$d/.fake_sriov"
			;;
		new_id | module=?*) ;;
		*)
			echo "fake_driver: unknown argument: $a" >&2
			return 1
			;;
		esac
	done
}

# _fake_drv_file DIR NAME: one of a driver's files in its directory DIR,
# empty, with sysfs's mode: write-only (0200) but for usbip-host's
# match_busid, which can be read
_fake_drv_file() {
	: >"$1/$2"
	[[ $2 == match_busid ]] || chmod 200 "$1/$2"
}

# _fake_drv_module DIR M: the module link of the driver in DIR to
# module/M, as module_add_driver makes it (the initramfs resolver follows
# it from a driver to its module)
_fake_drv_module() {
	mkdir -p "$FAKE/back/module/$2"
	ln -sfn "../../../../module/$2" "$1/module"
}

# fake_driver B D [ARG...]: the driver D of bus B, already registered,
# all at once (fake_register: step by step), with bind, unbind and
# uevent; calling it again for D adds to it. ARGs:
#   match=ID,ID|*     the bus ids its static id table matches (* any
#                     device); without it, it matches nothing but what
#                     new_id or match_busid teach it
#   new_id            new_id and remove_id, as PCI and USB drivers have
#   match_busid       usbip-host's match_busid: it then probes only the
#                     bus ids added there
#   probe=ERR[:ID]    its probe answers ERR, an errno name (EINVAL,
#                     EPROBE_DEFER, which bind reports as EAGAIN, ...),
#                     or silent (0 without binding), for device ID only
#                     where given; otherwise every probe binds
#   module=M          its module link, to module/M
#   sriov=disable|keep
#                     a PCI PF driver's sriov_configure, which makes
#                     writes to a bound PF's sriov_numvfs work (without
#                     it they answer ENOENT, as pci-stub's do); its
#                     remove() then disables SR-IOV, every VF going
#                     (disable: ixgbe, i40e, ice, vfio-pci), or leaves
#                     the VFs, sriov_numvfs answering ENOENT until a
#                     driver is bound again (keep: nvme)
fake_driver() {
	local bus=$1 drv=$2 d a f
	shift 2
	fake_bus "$bus"
	d=$FAKE/back/bus/$bus/drivers/$drv
	mkdir -p "$d"
	_fake_drv_state "$d" "$@" || return 1
	[[ -e $d/bind ]] || for f in bind unbind uevent; do
		_fake_drv_file "$d" "$f"
	done
	for a; do
		case $a in
		new_id)
			_fake_drv_file "$d" new_id
			_fake_drv_file "$d" remove_id
			;;
		match_busid) _fake_drv_file "$d" match_busid ;;
		module=*) _fake_drv_module "$d" "${a#module=}" ;;
		esac
	done
}

# fake_ctl VERB B NAME: what the driver core does on its own hand, with
# no sysfs write to ask for it, through the root's .fake_ctl (see
# test/fake/fakesys.c): uevents as the kernel's, nothing in the write log.
#   attach B D    driver_attach: D binds every unbound device it matches
#   detach B D    driver_detach: D lets go of every device it holds
#   probe B ID    bus_probe_device, device_add's probe (nothing when the
#                 bus's drivers_autoprobe is 0)
#   unplug B ID, replug B ID
#                 device ID removed, and added again as a new device
#                 (driver_override cleared, authorized 1, a PF's
#                 SR-IOV at its start: no VFs, autoprobe 1)
#   rmmod B D, insmod B D
#                 driver D unloaded, and loaded again
# The last four all at once, without a fork: for endurance runs, where
# fake_unplug, fake_plug and fake_register would fork thousands of times.
fake_ctl() {
	printf '%s' "$*" >"$SYS/.fake_ctl"
}

# fake_register B D [fake_driver's ARGs...] [steps=N|steps=STEP]: the
# driver D of bus B registers, one step at a time as driver_register
# does it on 6.1, so that a test can stop between any two; steps= stops
# after the first N steps, or after the step named STEP, and
# fake_register_rest goes on. The steps, for the driver ARGs ask for:
#   dir          the driver's directory, empty (kobject_add)
#   attach       driver_attach, when drivers_autoprobe is not 0: each
#                unbound device that matches and probes is bound, a bind
#                uevent each
#   module       the module link (module=M only)
#   uevent       the uevent file
#   new_id remove_id
#                the bus's driver groups (new_id only; not on usb)
#   unbind bind  the bind files
#   add          the driver's add uevent (SUBSYSTEM=drivers)
#   new_id remove_id
#                usb only: usb_register_driver makes them after
#                driver_register (usb_create_newid_files)
#   match_busid  usbip-host makes it after it registered
fake_register() {
	local bus=$1 drv=$2 a steps= new_id= busid= module=
	local -a args=() todo
	shift 2
	for a; do
		case $a in
		steps=*) steps=${a#steps=} ;;
		*) args+=("$a") ;;
		esac
	done
	for a in "${args[@]}"; do
		case $a in
		new_id) new_id=1 ;;
		match_busid) busid=1 ;;
		module=?*) module=1 ;;
		esac
	done
	if [[ -e $FAKE/back/bus/$bus/drivers/$drv ]]; then
		echo "fake_register: $bus/$drv is there already" >&2
		return 1
	fi
	_fake_drv_state "" "${args[@]}" || return 1
	todo=(dir attach ${module:+module} uevent)
	[[ -n $new_id && $bus != usb ]] && todo+=(new_id remove_id)
	todo+=(unbind bind add)
	[[ -n $new_id && $bus == usb ]] && todo+=(new_id remove_id)
	[[ -n $busid ]] && todo+=(match_busid)
	_fake_steps_save register "$bus" "$drv" "${todo[*]}" "${args[@]}"
	_fake_steps_run register "$bus" "$drv" "$steps"
}

# fake_register_rest B D [steps=N|steps=STEP]: the steps fake_register
# left, or the next N of them, or those up to STEP; 1 when no
# fake_register of D is under way
fake_register_rest() {
	_fake_steps_run register "$1" "$2" "${3#steps=}"
}

# fake_unregister B D [steps=N|steps=STEP]: the driver D of bus B
# unregisters, one step at a time as driver_unregister does it on 6.1,
# steps= as fake_register's. The steps, for the files the driver has now:
#   match_busid  usbip-host removes it before it unregisters
#   remove_id new_id
#                usb only: usb_deregister removes them first
#   bind unbind  the bind files (remove_bind_files)
#   new_id remove_id
#                the bus's driver groups (not usb)
#   uevent       the uevent file
#   detach       driver_detach: each device the driver holds is unbound,
#                an unbind uevent each
#   module       the module link
#   remove       the remove uevent, which kobject_del sends just before
#   dir          the directory goes
fake_unregister() {
	local bus=$1 drv=$2 d f
	local -a todo=()
	d=$FAKE/back/bus/$bus/drivers/$drv
	if [[ ! -d $d ]]; then
		echo "fake_unregister: no driver $bus/$drv" >&2
		return 1
	fi
	[[ -e $d/match_busid ]] && todo+=(match_busid)
	[[ $bus == usb ]] && for f in remove_id new_id; do
		[[ -e $d/$f ]] && todo+=("$f")
	done
	for f in bind unbind; do
		[[ -e $d/$f ]] && todo+=("$f")
	done
	[[ $bus != usb ]] && for f in new_id remove_id; do
		[[ -e $d/$f ]] && todo+=("$f")
	done
	[[ -e $d/uevent ]] && todo+=(uevent)
	todo+=(detach)
	[[ -L $d/module ]] && todo+=(module)
	todo+=(remove dir)
	_fake_steps_save unregister "$bus" "$drv" "${todo[*]}"
	_fake_steps_run unregister "$bus" "$drv" "${3#steps=}"
}

# fake_unregister_rest B D [steps=N|steps=STEP]: the steps
# fake_unregister left, or the next N of them, or those up to STEP
fake_unregister_rest() {
	_fake_steps_run unregister "$1" "$2" "${3#steps=}"
}

# _fake_steps_save VERB B D "STEP..." [ARG...]: a fake_VERB of driver D
# of bus B under way: the verb, the STEPs left to do and the driver's
# ARGs, in $FAKE/steps/B:D, for _fake_steps_run (the test's shell may
# not be the one that goes on: fake_later runs the rest in a subshell)
_fake_steps_save() {
	local f=$FAKE/steps/$2:$3
	mkdir -p "$f"
	printf '%s\n' "$1" >"$f/verb"
	_fake_lines $4 >"$f/todo"
	_fake_lines "${@:5}" >"$f/args"
}

# _fake_lines [WORD...]: one a line, nothing for none
_fake_lines() {
	(($#)) && printf '%s\n' "$@"
	return 0
}

# _fake_steps_run VERB B D [N|STEP]: of the fake_VERB of D under way
# (_fake_steps_save), the next N steps, those up to STEP, or all, each
# by _fake_VERB_step; the record goes once none is left. 1, saying why,
# when no fake_VERB of D is under way, STEP is not among the steps left,
# or a step fails.
_fake_steps_run() {
	local verb=$1 bus=$2 drv=$3 stop=${4-} f=$FAKE/steps/$2:$3 step n=0
	local -a todo args
	if [[ $(cat "$f/verb" 2>/dev/null) != "$verb" ]]; then
		echo "fake_${verb}_rest: no fake_$verb of $bus/$drv under way" >&2
		return 1
	fi
	mapfile -t todo <"$f/todo"
	mapfile -t args <"$f/args"
	if [[ -n $stop && ! $stop =~ ^[0-9]+$ && " ${todo[*]} " != *" $stop "* ]]; then
		echo "fake_$verb: no step $stop left in: ${todo[*]}" >&2
		return 1
	fi
	while ((${#todo[@]})); do
		[[ $stop =~ ^[0-9]+$ ]] && ((n >= stop)) && break
		step=${todo[0]}
		todo=("${todo[@]:1}")
		_fake_lines "${todo[@]}" >"$f/todo"
		"_fake_${verb}_step" "$bus" "$drv" "$step" "${args[@]}" || return 1
		n=$((n + 1))
		[[ $step == "$stop" ]] && break
	done
	((${#todo[@]})) || rm -r "$f"
}

# _fake_register_step B D STEP [ARG...]: one step of fake_register (see
# there) of the driver D of bus B with fake_driver's ARGs; a step that
# is a file's name makes that file
_fake_register_step() {
	local bus=$1 drv=$2 step=$3 d a
	shift 3
	d=$FAKE/back/bus/$bus/drivers/$drv
	case $step in
	dir)
		fake_bus "$bus"
		mkdir "$d" && _fake_drv_state "$d" "$@"
		;;
	attach)
		[[ $(cat "$FAKE/back/bus/$bus/drivers_autoprobe") == 0 ]] ||
			fake_ctl attach "$bus" "$drv"
		;;
	module)
		for a; do
			if [[ $a == module=* ]]; then
				_fake_drv_module "$d" "${a#module=}"
			fi
		done
		;;
	add) fake_uevent add "/bus/$bus/drivers/$drv" SUBSYSTEM=drivers ;;
	*) _fake_drv_file "$d" "$step" ;;
	esac
}

# _fake_unregister_step B D STEP: one step of fake_unregister (see there)
# of the driver D of bus B; a step that is a file's name removes it
_fake_unregister_step() {
	local bus=$1 drv=$2 step=$3 d
	d=$FAKE/back/bus/$bus/drivers/$drv
	case $step in
	detach) fake_ctl detach "$bus" "$drv" ;;
	remove) fake_uevent remove "/bus/$bus/drivers/$drv" SUBSYSTEM=drivers ;;
	dir) rm -r "$d" ;;
	*) rm "$d/$step" ;;
	esac
}

# _fake_devrel ID: the device directory below the root (devices/...) of
# the bus id ID, on whichever bus has it, found by its bus link; 1,
# saying so, when no bus has ID
_fake_devrel() {
	local l t
	for l in "$FAKE"/back/bus/*/devices/"$1"; do
		[[ -L $l ]] || continue
		t=$(readlink "$l")
		printf %s "${t#../../../}"
		return 0
	done
	echo "fake: no device $1" >&2
	return 1
}

# driver_registers B D [fake_driver's ARGs...]: the driver D of bus B
# registers at once, its directory with every file in place (built
# aside, then renamed into bus/B/drivers), then its add uevent. (The
# kernel shows the directory a moment before bind; that window has a
# test of its own in wait.bats, and fake_register makes every step.)
driver_registers() {
	local real=$FAKE
	FAKE=$real/stage fake_driver "$@" || return 1
	fake_bus "$1"
	fake_ns sh -c 'mv -T "$1" "$2" && exec "$3" add "$4" SUBSYSTEM=drivers' - \
		"$real/stage/back/bus/$1/drivers/$2" "$real/back/bus/$1/drivers/$2" \
		"$UEVENT" "/bus/$1/drivers/$2"
}

# fake_device B ID [ARG...]: the device ID on bus B as device_add()
# makes it, no uevent sent (fake_plug, fake_later send one): its
# directory with uevent and its subsystem link, the attributes ARGs ask
# for, then the bus link bus/B/devices/ID, then the driver links where
# driver= names one. Sets FAKE_DEVPATH to its /devices/... path. ARGs:
#   path=DIR          its directory devices/DIR/ID; by default the bus's
#                     usual place (pci0000:00, pnp0, the USB host
#                     controller's usb1, platform/i8042 for serio,
#                     platform for the rest)
#   parent=ID         its directory below device ID's instead (a USB
#                     interface below its device)
#   driver=D          bound to D (made, matching nothing, if missing)
#   override          driver_override, reading "(null)", as every PCI
#                     device has since 3.16
#   vendor=V device=D, subsystem_vendor=V subsystem_device=D,
#   idVendor=V idProduct=P, serial=S, boot_vga=0|1
#                     those attributes, reading V, D, P, S (a PCI
#                     device's ids, "0x8086"; a USB device's, "0781",
#                     and the serial number its descriptor gives, a
#                     root hub's the controller's PCI address; a VGA
#                     device's boot_vga)
#   class=C           a USB interface's bInterfaceClass
#   pciclass=C        a PCI device's class, 0x020000 and the like
#   group=N           in IOMMU group N: the group's link and its reverse
#                     in kernel/iommu_groups/N/devices
#   noauth            no authorized: a USB interface (bus usb, an id
#                     with a ':') has it, reading 1, since Linux 4.4;
#                     noauth makes one as before
#   sriov=TOTAL       a PCI physical function with SR-IOV: sriov_totalvfs
#                     (TOTAL; read-only, as sriov_offset, sriov_stride
#                     and sriov_vf_device), sriov_numvfs (0) and
#                     sriov_drivers_autoprobe (1); a write to
#                     sriov_numvfs makes or removes its VFs (see
#                     test/fake/fakesys.c), when its driver has
#                     fake_driver's sriov=
#   sriov_offset=N sriov_stride=N
#                     where VF i goes: the PF's devfn + N + N * i, the
#                     carry into the bus (1 and 1 by default, as QEMU's
#                     NVMe: 0000:00:03.0 makes .1, .2, ...; an 82599's
#                     are 128 and 2)
#   sriov_vf_device=D the VFs' device id, in hex as the kernel shows it
#                     (10ed); by default the PF's own device= (QEMU's
#                     NVMe's VFs have the PF's)
# An unknown ARG is an error, named.
fake_device() {
	local bus=$1 id=$2 a parent= path= drv= auth=1 dev d up
	local sriov='' vf_off=1 vf_stride=1 vf_dev='' pf_dev=''
	shift 2
	for a; do
		case $a in
		path=*) path=${a#path=} ;;
		parent=*) parent=${a#parent=} ;;
		driver=*) drv=${a#driver=} ;;
		noauth) auth= ;;
		sriov=*) sriov=${a#sriov=} ;;
		sriov_offset=*) vf_off=${a#sriov_offset=} ;;
		sriov_stride=*) vf_stride=${a#sriov_stride=} ;;
		sriov_vf_device=*) vf_dev=${a#sriov_vf_device=} ;;
		device=*) pf_dev=${a#device=} ;;
		esac
	done
	if [[ -n $sriov ]]; then
		[[ $bus == pci ]] || {
			echo "fake_device: sriov= on $bus: only PCI has SR-IOV" >&2
			return 1
		}
		[[ -n $vf_dev || -z $pf_dev ]] || vf_dev=$(printf %x "$pf_dev" 2>/dev/null) || vf_dev=
		[[ -n $vf_dev ]] || {
			echo "fake_device: sriov= needs device= or sriov_vf_device=" >&2
			return 1
		}
	fi
	if [[ -n $parent ]]; then
		dev=$(_fake_devrel "$parent") || return 1
		dev+=/$id
	else
		if [[ -z $path ]]; then
			case $bus in
			pci) path=pci0000:00 ;;
			pnp) path=pnp0 ;;
			usb) path=pci0000:00/0000:00:1d.7/usb1 ;;
			serio) path=platform/i8042 ;;
			*) path=platform ;;
			esac
		fi
		dev=devices/$path/$id
	fi
	fake_bus "$bus"
	d=$FAKE/back/$dev
	mkdir -p "$d"
	up=$(_fake_up "$dev")
	: >"$d/uevent"
	ln -sfn "${up}bus/$bus" "$d/subsystem"
	for a; do
		case $a in
		override) echo '(null)' >"$d/driver_override" ;;
		vendor=* | device=* | subsystem_vendor=* | subsystem_device=* | idVendor=* | idProduct=* | \
			serial=* | boot_vga=*)
			printf '%s\n' "${a#*=}" >"$d/${a%%=*}"
			;;
		class=*) printf '%s\n' "${a#class=}" >"$d/bInterfaceClass" ;;
		pciclass=*) printf '%s\n' "${a#pciclass=}" >"$d/class" ;;
		group=*)
			# the IOMMU group's links, both ways, as iommu_group_add_device makes them
			mkdir -p "$FAKE/back/kernel/iommu_groups/${a#group=}/devices"
			ln -sfn "${up}kernel/iommu_groups/${a#group=}" "$d/iommu_group"
			ln -sfn "../../../../$dev" "$FAKE/back/kernel/iommu_groups/${a#group=}/devices/$id"
			;;
		path=* | parent=* | driver=* | noauth | sriov=* | sriov_offset=* | sriov_stride=* | \
			sriov_vf_device=*) ;;
		*)
			echo "fake_device: unknown argument: $a" >&2
			return 1
			;;
		esac
	done
	[[ $bus == usb && $id == *:* && -n $auth ]] && echo 1 >"$d/authorized"
	if [[ -n $sriov ]]; then
		# the PF's attributes from sriov_init: the count 0, autoprobe on
		printf '%s\n' "$sriov" >"$d/sriov_totalvfs"
		printf '%s\n' "$vf_off" >"$d/sriov_offset"
		printf '%s\n' "$vf_stride" >"$d/sriov_stride"
		printf '%s\n' "$vf_dev" >"$d/sriov_vf_device"
		chmod 444 "$d/sriov_totalvfs" "$d/sriov_offset" "$d/sriov_stride" "$d/sriov_vf_device"
		echo 0 >"$d/sriov_numvfs"
		echo 1 >"$d/sriov_drivers_autoprobe"
	fi
	# As device_add(): the attributes first, then the bus link, then a probe.
	ln -sfn "../../../$dev" "$FAKE/back/bus/$bus/devices/$id"
	if [[ -n $drv ]]; then
		[[ -d $FAKE/back/bus/$bus/drivers/$drv ]] || fake_driver "$bus" "$drv"
		ln -sfn "${up}bus/$bus/drivers/$drv" "$d/driver"
		ln -sfn "../../../../$dev" "$FAKE/back/bus/$bus/drivers/$drv/$id"
	fi
	FAKE_DEVPATH=/$dev
}

# fake_fault RELPATH ACTION [always]: the next write through the mount to
# RELPATH (a path below the root), or with always every one, meets
# ACTION instead of the kernel's answer alone; faults on one path are
# used in the order they were given, and the write log shows each.
#   ERRNO        an errno name: the write fails with it, nothing happens
#   short        one byte fewer reported written, nothing happens
#   pass         the write goes through: the next fault on RELPATH is
#                for a later write
#   unplug:ID    the write happens, then device ID is hot-unplugged
#   unregister:B/D
#                the write happens, then driver D of bus B unbinds its
#                devices and goes away
#   probing:D    D was probing the attribute's device: the store waits
#                for that probe, which binds the device, then happens
#   stop         the write happens, then the writer is stopped (SIGSTOP)
#                until the test lets it go: on_stop
fake_fault() {
	printf '%s\n' "$*" >>"$FAKE/back/.fake_faults"
}

# fake_uevent ACTION DEVPATH [KEY=VALUE...]: one uevent, as the kernel
# sends it, in the test's namespace (test/fake/uevent.c; fake_ns "$UEVENT"
# -n COUNT ... sends a burst of the same one, to overflow a socket)
fake_uevent() {
	fake_ns "$UEVENT" "$@"
}

# fake_probe B ID: ID written to bus B's drivers_probe, which binds an
# unbound device to the first driver that takes it: what the native
# driver's probe does a moment later (logged, as drvbind's writes are)
fake_probe() {
	printf %s "$2" >"$SYS/bus/$1/drivers_probe"
}

# fake_release B ID [DEV]: device_release_driver on the device's
# directory DEV below the root (by default where its bus link points):
# when a driver has it, the driver's link and its reverse go, and an
# unbind uevent; nothing when no driver has it
fake_release() {
	local dev=${3-} drv
	if [[ -z $dev ]]; then
		dev=$(readlink "$FAKE/back/bus/$1/devices/$2") || {
			echo "fake_release: no device $1/$2" >&2
			return 1
		}
		dev=${dev#../../../}
	fi
	drv=$(readlink "$FAKE/back/$dev/driver") || return 0
	drv=${drv##*/}
	rm "$FAKE/back/$dev/driver" "$FAKE/back/bus/$1/drivers/$drv/$2" &&
		fake_uevent unbind "/$dev" "SUBSYSTEM=$1"
}

# fake_unplug B ID: a hot-unplug of a device without children, in PCI's
# order (pci_stop_dev, then device_del): the driver released (an unbind
# uevent), the links, the driver released again (bus_remove_device: one
# may have bound it meanwhile), the remove uevent, the directory.
# explore.bats makes these steps one at a time; fake_ctl unplug B ID is
# the fake's own, all at once and without a fork, the directory kept
# aside for fake_ctl replug B ID.
fake_unplug() {
	local dev
	dev=$(readlink "$FAKE/back/bus/$1/devices/$2") || {
		echo "fake_unplug: no device $1/$2" >&2
		return 1
	}
	dev=${dev#../../../}
	fake_release "$1" "$2" "$dev" &&
		rm "$FAKE/back/$dev/subsystem" "$FAKE/back/bus/$1/devices/$2" &&
		fake_release "$1" "$2" "$dev" &&
		fake_uevent remove "/$dev" "SUBSYSTEM=$1" &&
		rm -r "${FAKE:?}/back/${dev:?}"
}

# fake_plug B ID [fake_device's ARGs...]: device_add: the directory and
# its attributes (fake_device), the add uevent, then the bus's probe
# (fake_ctl probe: the native driver's bind uevent when it takes it)
fake_plug() {
	fake_device "$@" &&
		fake_uevent add "$FAKE_DEVPATH" "SUBSYSTEM=$1" &&
		fake_ctl probe "$1" "$2"
}

# fake_later idle|SECONDS COMMAND [ARG...] [\; COMMAND [ARG...]]...: each
# COMMAND, a verb or any command, in the background, one after the
# other: with idle, each once drvbind has done with every uevent so far
# (drvbind_idle), so that it comes while drvbind waits however loaded
# the machine is; else all SECONDS later. Its output goes to
# $FAKE/later.out, and teardown ends it. A device that fake_device makes
# then announces itself with its add uevent (and its bind uevent with
# driver=), a driver that fake_driver makes with its own add uevent
# (fake_register sends its own, at its step).
fake_later() {
	local delay=$1
	shift
	(
		# bats's DEBUG trap runs at every command, dozens of its own:
		# the job's loops (fake_idle) would take a loaded CPU's seconds
		trap - DEBUG
		[[ $delay == idle ]] || sleep "$delay"
		while (($#)); do
			local -a step=()
			while (($#)) && [[ $1 != ';' ]]; do
				step+=("$1")
				shift
			done
			(($# == 0)) || shift
			[[ $delay != idle ]] || drvbind_idle || exit 1
			later_step "${step[@]}" || exit 1
		done
	) </dev/null >>"$FAKE/later.out" 2>&1 3>&- &
	echo $! >>"$FAKE/pids"
}

# later_step COMMAND [ARG...]: one of fake_later's COMMANDs, with the
# uevents fake_device and fake_driver do not send themselves
later_step() {
	local a
	case $1 in
	fake_device)
		"$@" || return 1
		fake_uevent add "$FAKE_DEVPATH" "SUBSYSTEM=$2"
		for a in "${@:4}"; do
			[[ $a == driver=* ]] &&
				fake_uevent bind "$FAKE_DEVPATH" "SUBSYSTEM=$2" \
					"DRIVER=${a#driver=}"
		done
		return 0
		;;
	fake_driver)
		"$@" && fake_uevent add "/bus/$2/drivers/$3" SUBSYSTEM=drivers
		;;
	*)
		"$@"
		;;
	esac
}

# fake_listen: record this namespace's uevents in $FAKE/uevents, from
# now until teardown; returns once the listener is bound (5 s at most)
fake_listen() {
	local i
	fake_ns "$UEVENT" -l >"$FAKE/uevents" 2>"$FAKE/uevents.ready" \
		</dev/null 3>&- &
	echo $! >>"$FAKE/pids"
	for ((i = 0; i < 500; i++)); do
		[[ -s $FAKE/uevents.ready ]] && return 0
		sleep 0.01
	done
	echo "fake_listen: listener did not start" >&2
	return 1
}

# fake_uevents: what fake_listen recorded so far, one uevent a line
# ("ACTION@DEVPATH KEY=VALUE..."), less the real kernel's own events
# that reach every namespace (a FUSE mount's bdi, a module load)
fake_uevents() {
	grep -Ev '^[a-z]+@/(devices/virtual|module)/' "$FAKE/uevents"
}

# wait_for FILE PATTERN [PID]: a line of FILE matching PATTERN (grep's
# basic regular expression) shows up within 5 s, or before PID, the
# process that would write it, is gone; otherwise 1, with FILE shown
wait_for() {
	local i
	for ((i = 0; i < 500; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		[[ -z ${3-} ]] || kill -0 "$3" 2>/dev/null || break
		sleep 0.01
	done
	grep -q -- "$2" "$1" 2>/dev/null && return 0
	echo "no line matching '$2' in $1:"
	cat "$1" 2>/dev/null
	return 1
}

# wait_signalfd PID [TRIES]: PID has a signalfd open (a follower, drvbind
# -f, opens it when its first pass is over); a look every 10 ms, TRIES of
# them (500); 1 when it never has, or ends first
wait_signalfd() {
	local i f
	for ((i = 0; i < ${2:-500}; i++)); do
		for f in /proc/"$1"/fd/*; do
			[[ $(readlink "$f" 2>/dev/null) == *signalfd* ]] && return 0
		done
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# fake_nap [SECONDS]: a millisecond (or SECONDS) without a fork: a read
# that times out, from a pipe no one writes (FAKE_ZZ, which the first
# nap opens; a subshell that naps first opens its own)
# shellcheck disable=SC2120 # SECONDS: fake_nap 0 in the callers' files
fake_nap() {
	[[ -n ${FAKE_ZZ-} ]] || exec {FAKE_ZZ}<> <(:)
	read -r -t "${1:-0.001}" -u "$FAKE_ZZ" _ || :
}

# fake_nlsock PID: the inode of PID's netlink socket (its uevent socket):
# the one of its sockets that its /proc/net/netlink lists; nothing and 1
# when it has none
fake_nlsock() {
	local f
	local -a w
	local -A socks=()
	for f in /proc/"$1"/fd/*; do
		f=$(readlink "$f" 2>/dev/null) || continue
		[[ $f == socket:* ]] && socks[${f//[^0-9]/}]=1
	done
	while read -r -a w; do
		[[ -n ${w[9]-} && -n ${socks[${w[9]}]-} ]] && echo "${w[9]}" && return 0
	done <"/proc/$1/net/netlink"
	return 1
}

# fake_idle PID INO [TRIES]: without a fork, PID sleeps in ppoll() (its
# wchan) with nothing left to read on its netlink socket of inode INO
# (fake_nlsock; the Rmem of the socket's line in /proc/PID/net/netlink):
# it has done with every uevent so far (the fake kernel sends its
# uevents before the write that made them returns). A look a fake_nap,
# TRIES of them (5000); 1 when PID never was idle, or is gone.
fake_idle() {
	local pid=$1 ino=$2 n=${3:-5000} i wchan
	local -a w
	for ((i = 0; i < n; i++)); do
		[[ -e /proc/$pid ]] || return 1
		# no newline at its end: read's status says nothing
		read -r wchan <"/proc/$pid/wchan" || :
		if [[ $wchan == *poll* ]]; then
			w=()
			while read -r -a w; do
				[[ ${w[9]-} == "$ino" ]] && break
			done <"/proc/$pid/net/netlink"
			[[ ${w[9]-} == "$ino" && ${w[4]-} == 0 ]] && return 0
		fi
		fake_nap
	done
	return 1
}

# drvbind_find: the drvbind of this test (the one process with its
# command line) and its uevent socket, found within 5 s and kept in
# DRVBIND_PID and DRVBIND_INO for the next calls of the same job; 1,
# saying so, when there is none
drvbind_find() {
	local i=0
	while [[ -z ${DRVBIND_INO-} ]] && ((i++ < 500)); do
		DRVBIND_PID=$(pgrep -f -- "-k $FAKE/cmdline" | head -n 1)
		[[ -n $DRVBIND_PID ]] && DRVBIND_INO=$(fake_nlsock "$DRVBIND_PID") && break
		sleep 0.01
	done
	[[ -n ${DRVBIND_INO-} ]] && return 0
	echo "drvbind_find: no drvbind with a uevent socket" >&2
	return 1
}

# drvbind_idle: this test's drvbind (drvbind_find) has done with every
# uevent so far: it sleeps in ppoll() with nothing left to read on its
# uevent socket (fake_idle), or it has exited. 1, saying so, when there
# is none or it never is idle.
drvbind_idle() {
	drvbind_find || return 1
	fake_idle "$DRVBIND_PID" "$DRVBIND_INO" && return 0
	[[ -e /proc/$DRVBIND_PID ]] || return 0
	echo "drvbind_idle: drvbind $DRVBIND_PID never went idle" >&2
	return 1
}

# when_idle COMMAND [ARG...]: COMMAND once drvbind is idle (drvbind_idle)
when_idle() {
	drvbind_idle && "$@"
}

# halt PID: PID stopped (SIGSTOP), and seen stopped (state T in its
# stat) within 5 s; otherwise 1, saying so. kill returns once the signal
# is queued, and a busy process on the other CPU runs on for a moment:
# a step made then would race with what it was doing
halt() {
	local i stat
	kill -STOP "$1" || return 1
	for ((i = 0; i < 500; i++)); do
		stat=$(<"/proc/$1/stat") || return 1
		stat=${stat##*) }
		[[ $stat == T* ]] && return 0
		sleep 0.01
	done
	echo "pid $1 did not stop within 5 s (state ${stat%% *})"
	return 1
}

# paused COMMAND [ARG...]: in a later step, COMMAND with this test's
# drvbind (DRVBIND_PID, as drvbind_idle or drvbind_find found it)
# stopped (SIGSTOP, then SIGCONT): what it makes is all there when
# drvbind next looks, however long the machine takes to make it
paused() {
	local st
	halt "$DRVBIND_PID" || return 1
	"$@"
	st=$?
	kill -CONT "$DRVBIND_PID"
	return "$st"
}

# on_stop COMMAND [ARG...]: for fake_later 0: COMMAND once the fake has
# stopped this test's drvbind at a write (fake_fault RELPATH stop), then
# drvbind let go (SIGCONT). What COMMAND makes is all there when drvbind
# next looks, and none of drvbind's deadlines passes while the shell
# makes it, however loaded the machine. 1, saying so, when drvbind ends
# or is not stopped within 30 s.
on_stop() {
	local i st pid=
	local -a f
	for ((i = 0; i < 3000; i++)); do
		[[ -n $pid ]] || pid=$(pgrep -f -- "-k $FAKE/cmdline" | head -n 1)
		if [[ -n $pid ]]; then
			read -r -a f <"/proc/$pid/stat" 2>/dev/null || break
			# the state, after "pid (comm)": comm has no space here
			[[ ${f[2]} == T ]] && break
		fi
		sleep 0.01
	done
	if [[ ${f[2]-} != T ]]; then
		echo "on_stop: drvbind${pid:+ $pid} was not stopped at a write" >&2
		return 1
	fi
	"$@"
	st=$?
	kill -CONT "$pid"
	return "$st"
}

# fake_tree: the mounted tree, every path below $SYS sorted, one a line,
# links shown as "a -> b": to compare a whole tree at once
fake_tree() {
	local f
	(cd "$SYS" && find . -mindepth 1 | LC_ALL=C sort) | while read -r f; do
		if [[ -L $SYS/$f ]]; then
			printf '%s -> %s\n' "${f#./}" "$(readlink "$SYS/$f")"
		else
			printf '%s\n' "${f#./}"
		fi
	done
}

# The device most tests move: an Intel NIC, with driver_override as every
# PCI device has since 3.16.
E1000=0000:00:02.0
E1000_DEV=devices/pci0000:00/$E1000

# pci_setup [ARG...]: the NIC on e1000, whose table has it, and vfio-pci
# beside it (ARGs go to vfio-pci's fake_driver: match=*, probe=...)
pci_setup() {
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci vfio-pci "$@"
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override driver=e1000
}

# pci_new_id_setup: the NIC on PCI before 3.16, which had no
# driver_override: only the id table decides, so pci-stub beside it has
# to be taught the ids by new_id.
pci_new_id_setup() {
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci pci-stub new_id
	fake_device pci "$E1000" vendor=0x8086 device=0x100e driver=e1000
}

# pci_stub_setup: the NIC on e1000 that people move to pci-stub, beside
# it; PCI has driver_override, so the override is written first. Both
# drivers take any device, so only the override keeps the NIC off e1000.
pci_stub_setup() {
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	fake_device pci "$E1000" driver=e1000 override
}

# The interface of the USB flash drive most USB tests use, and its
# directory below the root.
USB_IF=1-1:1.0
USB_IF_DEV=devices/pci0000:00/0000:00:1d.7/usb1/1-1/$USB_IF

# usb_stick [ARG...]: a USB flash drive, SanDisk's 0781:5567: the device
# 1-1 and its one interface $USB_IF, of mass-storage class 08, unbound
# (ARGs go to the interface's fake_device: driver=D, noauth, ...)
usb_stick() {
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb "$USB_IF" parent=1-1 class=08 "$@"
}

# stick_on_storage: usb_stick's interface bound to usb-storage, whose id
# table has it
stick_on_storage() {
	fake_driver usb usb-storage "match=$USB_IF"
	usb_stick driver=usb-storage
}

# pnp_setup: a PnP serial port, 00:05, on serial, which a parallel-port
# driver, parport_pc, may also claim; PnP has no driver_override.
pnp_setup() {
	fake_driver pnp serial 'match=*'
	fake_driver pnp parport_pc 'match=*'
	fake_device pnp 00:05 driver=serial
}

# The moves most rules make, as the write log shows them: the NIC off
# e1000 to pci-stub (pci_stub_setup), the NIC with no driver to pci-stub,
# and pnp_setup's port off serial to parport_pc.
E1000_TO_STUB="$E1000_DEV/driver_override pci-stub -> ok
bus/pci/drivers/e1000/unbind $E1000 -> ok
bus/pci/drivers/pci-stub/bind $E1000 -> ok"
UNBOUND_TO_STUB="$E1000_DEV/driver_override pci-stub -> ok
bus/pci/drivers/pci-stub/bind $E1000 -> ok"
SERIAL_TO_PARPORT="bus/pnp/drivers/serial/unbind 00:05 -> ok
bus/pnp/drivers/parport_pc/bind 00:05 -> ok"

# good_rule_applies COMMAND [ARG...] <<EOF REFUSALS EOF: COMMAND, a
# drvbind given bad rules and the good rule $E1000:pci-stub last, on
# pci_stub_setup's tree, exits 1, saying REFUSALS and then the NIC's
# move; nic_stubbed. Every refusal leaves the good rule applied.
good_rule_applies() {
	local refused
	refused=$(cat)
	run_says 1 "$refused
drvbind: pci/$E1000: e1000 -> pci-stub" "$@"
	nic_stubbed
}

# nic_stubbed: the NIC on pci-stub, and the write log its one move off
# e1000 (E1000_TO_STUB) alone: how every test of a rule that takes the
# NIC on e1000 to pci-stub ends, whatever else drvbind was given.
nic_stubbed() {
	assert_driver pci "$E1000" pci-stub && assert_log <<<"$E1000_TO_STUB"
}

# Followers (-f): started, waited for, ended, and the devices they move.
# A follower is a background process of the test's shell: FOLLOW_PID,
# its output in $FAKE/follow.out, ended at teardown.

# follow [ARG...]: drvbind -f ARG... in the background on this test's
# tree, as drvbind runs it, its output in $FAKE/follow.out; FOLLOW_PID is
# drvbind's pid. It gets NOTIFY_SOCKET only as $NOTIFY (whatever runs the
# suite may have one), and runs in $FOLLOW_DIR with fd 5 open on
# $FOLLOW_FD5 where they are set. Returns once the follower's first pass
# is over (follow_ready), 1 if it never is.
follow() {
	(
		[[ -z ${FOLLOW_DIR-} ]] || cd "$FOLLOW_DIR" || exit 1
		[[ -z ${FOLLOW_FD5-} ]] || exec 5<>"$FOLLOW_FD5"
		if [[ -n ${NOTIFY-} ]]; then export NOTIFY_SOCKET=$NOTIFY; else unset NOTIFY_SOCKET; fi
		exec nsenter -t "$FAKE_NSPID" -n -- ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" \
			-c "$FAKE/conf" -m "$FAKE/modprobe" -s "$FAKE/follow.sock" -f "$@"
	) </dev/null >"$FAKE/follow.out" 2>&1 3>&- &
	FOLLOW_PID=$!
	echo "$FOLLOW_PID" >>"$FAKE/pids"
	follow_ready
}

# follow_bg: drvbind -b as at boot, with this test's command line (where
# drvbind.follow=1 makes its child a follower); the parent's exit status
# is follow_bg's. stdout goes to $FAKE/bg.out, stderr, which the child
# keeps, to $FAKE/follow.out: a file, not bats's pipe, which would wait
# for the child. FOLLOW_PID is then the child: the one process with this
# test's command line, ended at teardown. The environment is the
# caller's (NOTIFY_SOCKET=... follow_bg).
follow_bg() {
	local st=0
	fake_ns ${RUN:+"$RUN"} "$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" \
		-s "$FAKE/follow.sock" -b </dev/null >"$FAKE/bg.out" 2>"$FAKE/follow.out" 3>&- || st=$?
	FOLLOW_PID=$(pgrep -f -- "-k $FAKE/cmdline")
	echo "$FOLLOW_PID" >>"$FAKE/pids"
	return "$st"
}

# follow_ready: the first pass of the follower FOLLOW_PID is over: it has
# its signalfd (wait_signalfd, 5 s at most); 1, with what it said, if not
follow_ready() {
	wait_signalfd "$FOLLOW_PID" && return 0
	echo "drvbind -f did not start following; it said:"
	cat "$FAKE/follow.out"
	return 1
}

# ended PID [TRIES]: the process PID (a child of this shell) has exited,
# gone or a zombie, within 5 s (TRIES looks, 10 ms apart: 500); else 1
ended() {
	local i s
	for ((i = 0; i < ${2:-500}; i++)); do
		s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
		s=${s##*) }
		[[ $s == Z* ]] && return 0
		sleep 0.01
	done
	return 1
}

# follow_end: SIGTERM to the follower FOLLOW_PID (follow's, a child of
# this shell), and its exit status in FOLLOW_STATUS once it has ended;
# 1 and FOLLOW_STATUS 124, saying so, where it has not within 5 s (it is
# then killed)
follow_end() {
	kill -TERM "$FOLLOW_PID"
	FOLLOW_STATUS=0
	if ! ended "$FOLLOW_PID"; then
		echo "the follower $FOLLOW_PID did not end within 5 s of SIGTERM; it said:"
		cat "$FAKE/follow.out"
		kill -KILL "$FOLLOW_PID"
		FOLLOW_STATUS=124
		return 1
	fi
	wait "$FOLLOW_PID" || FOLLOW_STATUS=$?
}

# follow_term: SIGTERM to a follower that is not this shell's child
# (follow_bg's), and the follower gone within 5 s
follow_term() {
	local i
	kill -TERM "$FOLLOW_PID"
	for ((i = 0; i < 500; i++)); do
		kill -0 "$FOLLOW_PID" 2>/dev/null || return 0
		sleep 0.01
	done
	echo "the follower $FOLLOW_PID did not end on SIGTERM; it said:"
	cat "$FAKE/follow.out"
	return 1
}

# follow_end_ok: follow_end, and the follower ended with status 0
follow_end_ok() {
	follow_end
	((FOLLOW_STATUS == 0)) && return 0
	echo "drvbind -f ended with status $FOLLOW_STATUS; it said:"
	cat "$FAKE/follow.out"
	return 1
}

# follow_said [TEXT] (or stdin): follow_end, with status 0, and what the
# follower said is TEXT exactly
follow_said() {
	follow_end
	if ((FOLLOW_STATUS)); then
		echo "status $FOLLOW_STATUS; drvbind said:"
		cat "$FAKE/follow.out"
		return 1
	fi
	run cat "$FAKE/follow.out"
	assert_output_is "$@"
}

# taken_over [ARG...] <<<TEXT: a second follower (follow ARGs) takes the
# place of the running one, which ends with status 0 having said TEXT
# exactly (kept in $FAKE/first.out); FOLLOW_PID is the newcomer's
taken_over() {
	local first=$FOLLOW_PID st=0
	mv "$FAKE/follow.out" "$FAKE/first.out"
	follow "$@"
	ended "$first" || {
		echo "the follower before, $first, did not end"
		return 1
	}
	wait "$first" || st=$?
	if ((st)); then
		echo "the follower before ended with status $st"
		return 1
	fi
	run cat "$FAKE/first.out"
	assert_output_is
}

# stopped COMMAND [ARG...]: COMMAND with the follower stopped (SIGSTOP,
# then SIGCONT), so that it wakes on the state after all of it (the
# uevents wait on its socket): several kernel steps seen as one
stopped() {
	halt "$FOLLOW_PID" || return 1
	"$@"
	kill -CONT "$FOLLOW_PID"
}

# until_driver B ID D|none: device ID of bus B is on driver D, or on
# none, within 5 s; otherwise 1, with what the follower said and the
# write log
until_driver() {
	local i got
	for ((i = 0; i < 500; i++)); do
		got=$(readlink "$SYS/bus/$1/devices/$2/driver" 2>/dev/null) || got=none
		[[ ${got##*/} == "$3" ]] && return 0
		sleep 0.01
	done
	echo "$1/$2 is on ${got##*/}, not $3; drvbind said:"
	cat "$FAKE/follow.out"
	echo "write log:"
	cat "$FAKE/log"
	return 1
}

# replug B ID [fake_device's ARGs...]: device ID of bus B unplugged
# (fake_unplug), then plugged as a new device made with ARGs (fake_plug),
# each with the follower stopped: a PCI remove and rescan, a USB
# interface made anew. The follower is idle between the two: had it
# still been looking after the unplug when the plug came, it would find
# the new device before reading its add uevent, and that add would start
# over a rule it had just failed (the kernel makes the directory before
# it sends the add)
replug() {
	stopped fake_unplug "$1" "$2" && idle && stopped fake_plug "$@"
}

# nic_replugged D: the NIC replugged (replug: a PCI remove and rescan,
# the new device with driver_override) under the follower, and on D
# within 5 s
nic_replugged() {
	replug pci "$E1000" override && until_driver pci "$E1000" "$1"
}

# nic_followed: pci_stub_setup, and a follower of the rule that takes the
# NIC to pci-stub, which it has done
nic_followed() {
	pci_stub_setup
	follow "pci/$E1000:pci-stub"
	until_driver pci "$E1000" pci-stub
}

# nic_moved_again: the NIC, on pci-stub by nic_followed's follower,
# replugged: the follower moves it again, and ends with status 0 having
# said those two moves alone
nic_moved_again() {
	nic_replugged pci-stub
	follow_said <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
}

# idle: without a fork (but the first time, for the socket), the follower
# sleeps in ppoll() with nothing left to read on its uevent socket
# (fake_idle), so that it has done with every event so far. The socket
# is found again when FOLLOW_PID names another follower (a supervisor
# started one anew)
idle() {
	if [[ ${FOLLOW_INO_PID-} != "$FOLLOW_PID" ]]; then
		FOLLOW_INO=$(fake_nlsock "$FOLLOW_PID") || {
			echo "the follower has no uevent socket"
			return 1
		}
		FOLLOW_INO_PID=$FOLLOW_PID
	fi
	fake_idle "$FOLLOW_PID" "$FOLLOW_INO" && return 0
	echo "the follower never went idle"
	return 1
}

# follow_placed [NAME]: the follower listens at NAME, a path or the
# abstract @drvbind-follow (default), the last place it takes, within
# 5 s (/proc/net/unix); otherwise, or once it has ended, 1, with what
# it said
follow_placed() {
	local name=${1:-@drvbind-follow} i f
	for ((i = 0; i < 500; i++)); do
		kill -0 "$FOLLOW_PID" 2>/dev/null || break
		for f in /proc/"$FOLLOW_PID"/fd/*; do
			f=$(readlink "$f" 2>/dev/null) || continue
			[[ $f == socket:* ]] || continue
			f=${f//[^0-9]/}
			grep -q " $f $name\$" "/proc/$FOLLOW_PID/net/unix" 2>/dev/null && return 0
		done
		sleep 0.01
	done
	echo "the follower does not listen at $name; it said:"
	cat "$FAKE/follow.out"
	return 1
}

# Assertions: each returns 1 on failure, having printed what it expected
# and what it found, for bats to show under the failed test.

# assert_driver B ID D|none: device ID of bus B is on driver D, or on
# none: its driver link and D's link back, in the kernel's shapes, read
# through the mount, and no other driver of B holding a link to it
assert_driver() {
	local bus=$1 id=$2 want=$3 t dev up got l bad=0
	t=$(readlink "$SYS/bus/$bus/devices/$id") || {
		echo "assert_driver: no device $bus/$id"
		return 1
	}
	if [[ $t != ../../../devices/* ]]; then
		echo "assert_driver: bus link of $id: $t"
		return 1
	fi
	dev=${t#../../../}
	up=$(_fake_up "$dev")
	got=$(readlink "$SYS/$dev/driver" 2>/dev/null) || got=none
	if [[ $want == none ]]; then
		[[ $got == none ]] || {
			echo "expected $bus/$id without a driver, but driver -> $got"
			bad=1
		}
	else
		[[ $got == "${up}bus/$bus/drivers/$want" ]] || {
			echo "expected $dev/driver -> ${up}bus/$bus/drivers/$want"
			echo "  actual $dev/driver -> $got"
			bad=1
		}
		t=$(readlink "$SYS/bus/$bus/drivers/$want/$id" 2>/dev/null)
		[[ $t == "../../../../$dev" ]] || {
			echo "expected bus/$bus/drivers/$want/$id -> ../../../../$dev"
			echo "  actual bus/$bus/drivers/$want/$id -> ${t:-(none)}"
			bad=1
		}
	fi
	for l in "$SYS/bus/$bus/drivers"/*/"$id"; do
		[[ -L $l && $l != "$SYS/bus/$bus/drivers/$want/$id" ]] || continue
		echo "stray link ${l#"$SYS"/} -> $(readlink "$l")"
		bad=1
	done
	return $bad
}

# assert_log <<EOF ... EOF: the whole write log ($FAKE/log) is stdin
# exactly, in order; the difference shown when not
assert_log() {
	local want
	want=$(cat)
	if [[ $want != "$(cat "$FAKE/log")" ]]; then
		echo "write log differs (- expected, + actual):"
		diff -u <(printf '%s\n' "$want") "$FAKE/log" | tail -n +3
		return 1
	fi
}

# vfio_writes BIND...: the write log of a move of pci_setup's NIC to
# vfio-pci up to its binds: the override, e1000's unbind, then one bind
# of vfio-pci for each BIND, the answer it got (ok, EBUSY, ...). For
# assert_log, with what the test's case writes after them.
vfio_writes() {
	local b
	printf '%s\n' "$E1000_DEV/driver_override vfio-pci -> ok" \
		"bus/pci/drivers/e1000/unbind $E1000 -> ok"
	for b; do
		printf '%s\n' "bus/pci/drivers/vfio-pci/bind $E1000 -> $b"
	done
}

# assert_rollback_log BIND [REBIND]: the whole write log of a move of
# pci_setup's NIC to vfio-pci whose bind answered BIND, and of the
# rollback after it: the override cleared, then e1000's bind, which
# answered REBIND (ok when not given). So many faults end this way that
# each test names only the answers that differ.
assert_rollback_log() {
	assert_log <<-EOF
	$(vfio_writes "$1")
	$E1000_DEV/driver_override \\n -> ok
	bus/pci/drivers/e1000/bind $E1000 -> ${2:-ok}
	EOF
}

# rollback_refused PROBE ERR BIND MESSAGE: a move of pci_setup's NIC to a
# vfio-pci that takes any device and whose probe answers PROBE
# (fake_driver's probe=), while every write to e1000's bind fails with
# ERR: exit 1 and MESSAGE, the rollback's write log (assert_rollback_log
# BIND ERR), and the NIC left unbound with its override cleared. Both
# failures are reported, the rollback's with its own step.
rollback_refused() {
	pci_setup match=* "probe=$1"
	fake_fault bus/pci/drivers/e1000/bind "$2" always
	run_says 1 "$4" drvbind "pci/$E1000:vfio-pci"
	assert_rollback_log "$3" "$2"
	nic_is none "(null)"
}

# stub_taught_writes [REMOVE_ID]: the whole write log of a move of
# pci_new_id_setup's NIC to pci-stub: e1000's unbind, pci-stub's bind
# refused (ENODEV: the id is not in its table), the id written to
# new_id, which binds it, then to remove_id, which answered REMOVE_ID
# (ok when not given).
stub_taught_writes() {
	printf '%s\n' "bus/pci/drivers/e1000/unbind $E1000 -> ok" \
		"bus/pci/drivers/pci-stub/bind $E1000 -> ENODEV" \
		"bus/pci/drivers/pci-stub/new_id 8086 100e -> ok" \
		"bus/pci/drivers/pci-stub/remove_id 8086 100e -> ${1:-ok}"
}

# override_of B ID VALUE: B/ID's driver_override now, which a move
# leaves set and a rollback clears, read back through the mount
# ("(null)" when clear), is VALUE
override_of() {
	local got
	got=$(cat "$SYS/bus/$1/devices/$2/driver_override")
	[[ $got == "$3" ]] && return 0
	echo "$1/$2's driver_override: expected '$3', got '$got'"
	return 1
}

# override_is VALUE: the NIC's (override_of pci $E1000 VALUE)
override_is() {
	override_of pci "$E1000" "$1"
}

# nic_is D|none VALUE: the NIC ($E1000) on driver D, or on none, as
# assert_driver sees it, and its driver_override VALUE (override_is):
# where a move or its rollback left it.
nic_is() {
	assert_driver pci "$E1000" "$1" && override_is "$2"
}

# authorized_is 0|1: the USB interface's (USB_IF's) authorized, read
# through the mount
authorized_is() {
	local got
	got=$(cat "$SYS/$USB_IF_DEV/authorized")
	[[ $got == "$1" ]] || {
		echo "authorized is $got, not $1"
		return 1
	}
}

# log_has LINE: LINE is one whole line of the write log, wherever it is
# (for a log whose order the test does not fix); the log shown when not
log_has() {
	grep -Fxq -- "$1" "$FAKE/log" && return 0
	echo "write log lacks: $1"
	echo "write log:"
	cat "$FAKE/log"
	return 1
}

# assert_output_is [TEXT]: $output (bats's run) is TEXT exactly, or
# stdin without TEXT; the difference shown when not
assert_output_is() {
	local want
	if (($#)); then want=$1; else want=$(cat); fi
	if [[ $output != "$want" ]]; then
		echo "output differs (- expected, + actual):"
		diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$output") |
			tail -n +3
		return 1
	fi
}

# run_says STATUS TEXT|- COMMAND [ARG...]: bats's run of COMMAND (it sets
# $status and $output), which must exit with STATUS and say TEXT exactly,
# or what stdin holds when TEXT is -. The most common three lines of the
# suite in one, and a failure names the status, expected and actual,
# beside the output's difference.
run_says() {
	local want_status=$1 want=$2 bad=0
	shift 2
	[[ $want != - ]] || want=$(cat)
	run "$@"
	if [[ $status != "$want_status" ]]; then
		echo "exit status $status, expected $want_status"
		bad=1
	fi
	assert_output_is "$want" || bad=1
	return "$bad"
}
