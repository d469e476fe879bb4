#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The interleaving explorer. For each sequence of the kernel's single
# steps (the device appears, its native driver registers, the target
# driver registers, the native driver unregisters, the device is
# replugged mid-move; ex_seq), on PCI (driver_override), a USB interface
# (authorized) and serio (neither; ex_kind), for `none` and for a move,
# drvbind starts on the state after every single step k (0 to the last),
# and the steps after k follow in one of two orders:
#
#   step   drvbind is stopped in ppoll() while each step is made, and let
#          go after a step that sent a uevent until it sleeps in ppoll()
#          again with nothing left to read: it looks at every state a
#          uevent announces, as a drvbind that keeps up would
#   burst  drvbind is stopped in ppoll() while all the other steps are
#          made, then let go: it looks at the state after step k and then
#          at the last one, as a drvbind that lagged behind would
#
# drvbind runs as at boot: the fake is mounted over /sys in a mount
# namespace of its own and there is no -r, so only a uevent wakes it (no
# re-scan every 250 ms). strace tells its sleeps in ppoll(), and
# /proc/net/netlink what waits on its uevent socket; the network
# namespace belongs to a user namespace of its own, so the kernel's own
# uevents (any FUSE mount on the machine) do not wake it. Nothing waits a
# fixed time. The fake's own hot-unplug (its fault action, fake_ctl
# unplug) is all at once, so ex_step unplugs in the kernel's order one
# step at a time, the steps fake_unplug makes in one go: the driver
# released (an unbind uevent), the links, the remove uevent, the
# directory.
#
# The sequences that add a device (appear, replug) run again on Linux
# 7.x's orderings (test/fake/fakesys.c, part 3), where the adding is made
# of other steps (ex_seq): on 7.1 the device is added in the window where
# it is not ready to probe (bind EAGAIN; on PCI, match_driver false, bind
# ENODEV), then device_add finishes and probes it (ready); on 7.0 the
# native driver's probe of the new device begins (probing) and ends
# (probed) as two steps, and an override stored in between does not wait
# for it.
#
# Each (kind, rule, sequence, k, order) asserts drvbind's exit status,
# the device's final driver and drvbind's messages, exactly, as expect
# says is right; a failing test lists every case that ended otherwise,
# with the write log. The state after each step is made once per
# sequence and copied in; EXPLORE_JOBS workers (4) run the cases side by
# side, each on a fake of its own; a case whose steps outlast drvbind's
# deadline (EXPLORE_TIMEOUT, 10 s; EXPLORE_WATCH, 2 s, for a watched
# none, which waits for all of it) on a loaded machine is run again with
# twice the deadline. The (sequence, step) pairs go to
# build/explore.count and the end of the run's output.

load helper

# drvbind's deadline (-t): a move or a held none ends as soon as it is
# done, so this is only how long a wrong one waits; a watched none
# (serio) waits for all of it, so that is short, but longer than any
# sequence made one step at a time takes
EX_TMOVE=${EXPLORE_TIMEOUT:-10}
EX_TWATCH=${EXPLORE_WATCH:-2}
# workers side by side, each with a fake of its own
EX_JOBS=${EXPLORE_JOBS:-4}

# each test makes its fakes itself
setup() { :; }

setup_file() {
	: >"$BATS_FILE_TMPDIR/pairs"
	: >"$BATS_FILE_TMPDIR/slow"
}

# the counts, for the README's table: build/explore.count holds the
# (sequence, step) pairs
teardown_file() {
	local pairs cases runs
	read -r pairs cases runs < <(awk '{ p += $1; c += $2; r += $3 }
		END { print p + 0, c + 0, r + 0 }' "$BATS_FILE_TMPDIR/pairs")
	mkdir -p "$TOP/build"
	echo "$pairs" >"$TOP/build/explore.count"
	echo "# explorer: $pairs (sequence, step) pairs, $cases cases (the two orders), $runs runs of drvbind" >&3
	[[ -s $BATS_FILE_TMPDIR/slow ]] &&
		echo "# explorer: $(wc -l <"$BATS_FILE_TMPDIR/slow") runs made again: the steps outlasted drvbind's deadline" >&3
	return 0
}

# ---- the three kinds of device ----

# ex_kind K: the device, its native driver N and the move's target T
ex_kind() {
	KIND=$1
	case $1 in
	pci)
		BUS=pci ID=$E1000 NAT=e1000 TGT=pci-stub
		DEV=devices/pci0000:00/$E1000
		DEVARGS=(vendor=0x8086 device=0x100e override)
		# every PCI driver has new_id and remove_id; pci-stub's table
		# is empty
		NATARGS=("match=$E1000" new_id module=e1000)
		TGTARGS=(new_id module=pci_stub)
		;;
	usb)
		# usb-storage's table has the stick; uas is taught it by new_id
		BUS=usb ID=1-1:1.0 NAT=usb-storage TGT=uas
		DEV=devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0
		DEVARGS=(parent=1-1 class=08)
		NATARGS=("match=1-1:1.0" new_id module=usb_storage)
		TGTARGS=(new_id module=uas)
		;;
	serio)
		# both tables have the port; atkbd registered first
		BUS=serio ID=serio0 NAT=atkbd TGT=serio_raw
		DEV=devices/platform/i8042/serio0
		DEVARGS=()
		NATARGS=(match=serio0 module=atkbd)
		TGTARGS=(match=serio0 module=serio_raw)
		;;
	esac
}

# REG, UNREG: the steps of driver_register and driver_unregister, as
# fake_register and fake_unregister take them for these drivers
ex_drv_steps() {
	case $BUS in
	pci)
		REG=(dir attach module uevent new_id remove_id unbind bind add)
		UNREG=(bind unbind new_id remove_id uevent detach module remove dir)
		;;
	usb)
		REG=(dir attach module uevent unbind bind add new_id remove_id)
		UNREG=(remove_id new_id bind unbind uevent detach module remove dir)
		;;
	serio)
		REG=(dir attach module uevent unbind bind add)
		UNREG=(bind unbind uevent detach module remove dir)
		;;
	esac
}

# ---- the sequences ----

# ex_seq S R: STEPS, the sequence's single steps, for rule R (none or move),
# and EX_KERNEL, the kernel whose orderings the fake replays (empty: 6.1 to
# 6.18). S is a sequence below, or one of them on a kernel 7.x, S@7.1 or
# S@7.0, where the device's adding is made of other steps (appear and
# replug: dev add probe):
#   @7.1    dev add ready: the device is added in 7.1's window (not ready
#           to probe, .fake_adding; on PCI, match_driver false, on every
#           kernel), then device_add finishes (fake_ctl ready) and probes
#   @7.0    dev add probing probed: the bus's probe of the new device
#           begins (the native driver matched it and probes it under the
#           device lock, nothing shows) and then ends (it binds); from
#           7.0 a driver_override store does not wait for it
#   appear  the device is added (device_add): its directory, attributes
#           and bus link; its add uevent; the bus's probe
#   native  the native driver registers, step by step
#   target  the target driver registers, step by step (a move only)
#   unreg   the native driver unregisters, step by step
#   replug  the device is unplugged (device_del) and added again; for a
#           move the target driver registers last, all at once, so that
#           drvbind is mid-move (waiting for it) while the device goes
ex_seq() {
	local adding=(dev add probe)
	ex_drv_steps
	STEPS=()
	EX_KERNEL=
	[[ $1 == *@* ]] && EX_KERNEL=${1#*@}
	case $EX_KERNEL in
	7.1) adding=(dev add ready) ;;
	7.0) adding=(dev add probing probed) ;;
	esac
	case ${1%@*} in
	appear) STEPS=("${adding[@]}") ;;
	native) STEPS=("${REG[@]/#/nat:}") ;;
	target) STEPS=("${REG[@]/#/tgt:}") ;;
	unreg) STEPS=("${UNREG[@]/#/natgo:}") ;;
	replug)
		# PCI and serio release the driver before device_del
		# (pci_stop_dev, serio_disconnect_port); a USB interface's
		# device_del takes the links first (bus_remove_device), and the
		# USB device goes after its interfaces
		case $BUS in
		usb) STEPS=(unlink release remove rmdir parentgo parentcome) ;;
		*) STEPS=(release unlink remove rmdir) ;;
		esac
		STEPS+=("${adding[@]}")
		if [[ $2 == move ]]; then STEPS+=(tgt:all); fi
		;;
	esac
}

# ex_base S R: the tree before the sequence's first step
ex_base() {
	[[ -z $EX_KERNEL ]] || fake_ctl kernel "$EX_KERNEL" || return 1
	[[ $BUS == usb ]] && fake_device usb 1-1 idVendor=0781 idProduct=5567
	case ${1%@*} in
	appear)
		fake_driver "$BUS" "$NAT" "${NATARGS[@]}"
		[[ $2 == move ]] && fake_driver "$BUS" "$TGT" "${TGTARGS[@]}"
		;;
	native)
		fake_device "$BUS" "$ID" "${DEVARGS[@]}"
		[[ $2 == move ]] && fake_driver "$BUS" "$TGT" "${TGTARGS[@]}"
		;;
	target | replug)
		fake_driver "$BUS" "$NAT" "${NATARGS[@]}"
		fake_device "$BUS" "$ID" "${DEVARGS[@]}" "driver=$NAT"
		;;
	unreg)
		fake_driver "$BUS" "$NAT" "${NATARGS[@]}"
		fake_device "$BUS" "$ID" "${DEVARGS[@]}" "driver=$NAT"
		[[ $2 == move ]] && fake_driver "$BUS" "$TGT" "${TGTARGS[@]}"
		;;
	esac
	return 0
}

# EX_DRV: the device's driver in the backing tree, or nothing
ex_drv() {
	EX_DRV=
	[[ -L $FAKE/back/$DEV/driver ]] || return 0
	EX_DRV=$(readlink "$FAKE/back/$DEV/driver")
	EX_DRV=${EX_DRV##*/}
}

# _ex_next VERB B D NAME ARG...: the next step of fake_VERB of driver D,
# which must be NAME
_ex_next() {
	local verb=$1 bus=$2 drv=$3 name=$4 todo=
	shift 4
	if [[ ! -e $FAKE/steps/$bus:$drv ]]; then
		"fake_$verb" "$bus" "$drv" "$@" steps=0 || return 1
	fi
	read -r todo <"$FAKE/steps/$bus:$drv/todo"
	if [[ $todo != "$name" ]]; then
		echo "explore: fake_$verb $bus/$drv: next step is $todo, not $name" >&2
		return 1
	fi
	"fake_${verb}_rest" "$bus" "$drv" steps=1
}

# ex_step STEP: one step; EX_SENT=1 when it sent a uevent into the
# namespace, which is what wakes drvbind
ex_step() {
	local bound=0
	[[ -L $FAKE/back/$DEV/driver ]] && bound=1
	EX_SENT=0
	case $1 in
	dev)
		# 7.1's window: device_add under way until ready
		fake_device "$BUS" "$ID" "${DEVARGS[@]}" &&
			if [[ $EX_KERNEL == 7.1 ]]; then : >"$FAKE/back/$DEV/.fake_adding"; fi
		;;
	add) fake_uevent add "/$DEV" "SUBSYSTEM=$BUS" ;;
	probe | ready | probing | probed) fake_ctl "$1" "$BUS" "$ID" ;;
	nat:*) _ex_next register "$BUS" "$NAT" "${1#*:}" "${NATARGS[@]}" ;;
	tgt:all) fake_register "$BUS" "$TGT" "${TGTARGS[@]}" ;;
	tgt:*) _ex_next register "$BUS" "$TGT" "${1#*:}" "${TGTARGS[@]}" ;;
	natgo:*) _ex_next unregister "$BUS" "$NAT" "${1#*:}" ;;
	# fake_plug's steps (dev, add, probe) above, fake_unplug's here, one
	# at a time in ex_seq's order
	release) fake_release "$BUS" "$ID" "$DEV" ;;
	unlink) rm "$FAKE/back/$DEV/subsystem" "$FAKE/back/bus/$BUS/devices/$ID" ;;
	remove) fake_uevent remove "/$DEV" "SUBSYSTEM=$BUS" ;;
	rmdir) rm -r "$FAKE/back/$DEV" ;;
	# the USB device, which no driver holds here: its links, its remove
	# uevent, its directory
	parentgo) fake_unplug usb 1-1 ;;
	parentcome)
		fake_device usb 1-1 idVendor=0781 idProduct=5567 &&
			fake_uevent add "$FAKE_DEVPATH" SUBSYSTEM=usb
		;;
	*)
		echo "explore: no step $1" >&2
		return 1
		;;
	esac || return 1
	# the helper's add and remove steps send their uevent; a step of the
	# driver core (attach, probe, detach, release) a bind or unbind
	# uevent when the device's driver changed
	case $1 in
	add | remove | parentgo | parentcome | tgt:all | nat:add | tgt:add | natgo:remove)
		EX_SENT=1
		;;
	esac
	[[ -L $FAKE/back/$DEV/driver ]] && ((!bound)) && EX_SENT=1
	[[ ! -L $FAKE/back/$DEV/driver ]] && ((bound)) && EX_SENT=1
	return 0
}

# ---- drvbind, stopped and let go between steps ----
#
# The loops below poll with shell builtins only (a fork costs tens of ms
# on a loaded machine, and drvbind's deadline runs on meanwhile).

# ex_nap: a few ms, without a fork (a read from a pipe no one writes)
ex_nap() {
	read -r -t 0.003 -u "$EX_ZZ" _ || :
}

# ex_start RULE: drvbind as at boot (the fake over /sys, no -r), traced
# for its ppoll() calls, in the background; EX_PID is drvbind's own
# process, strace's child
ex_start() {
	local i
	local -a kids
	EX_INO=
	nsenter -t "$FAKE_MNT" -n -m -- strace -qq -o "$FAKE/trace" -e trace=ppoll \
		${RUN:+"$RUN"} "$BIN" -k "$FAKE/cmdline" -c "$FAKE/conf" \
		-m "$FAKE/modprobe" -t "$EX_T" "$1" \
		</dev/null >"$FAKE/out" 2>&1 3>&- &
	EX_JOB=$!
	EX_PID=
	for ((i = 0; i < 3000; i++)); do
		kids=()
		read -r -a kids 2>/dev/null <"/proc/$EX_JOB/task/$EX_JOB/children"
		if ((${#kids[@]})) && [[ /proc/${kids[0]}/exe -ef $BIN ]]; then
			EX_PID=${kids[0]}
			return 0
		fi
		kill -0 "$EX_JOB" 2>/dev/null || return 0
		ex_nap
	done
	echo "explore: drvbind did not start" >&2
	return 1
}

ex_alive() {
	local st
	[[ -n $EX_PID ]] || return 1
	{ read -r _ _ st _ <"/proc/$EX_PID/stat"; } 2>/dev/null || return 1
	[[ $st != Z && $st != X ]]
}

# EX_RMEM: bytes waiting on drvbind's uevent socket: its line in
# /proc/net/netlink (protocol 15, NETLINK_KOBJECT_UEVENT) has drvbind's
# pid for port id (the kernel's choice for a socket bound to port 0),
# else the inode of drvbind's socket
ex_rmem() {
	local -a w
	local f found=
	EX_RMEM=0
	{
		while read -r -a w; do
			[[ ${w[1]} == 15 ]] || continue
			if [[ ${w[2]} == "$EX_PID" || ${w[9]} == "${EX_INO:--}" ]]; then
				EX_RMEM=${w[4]}
				found=1
			fi
		done <"/proc/$EX_PID/net/netlink"
	} 2>/dev/null
	[[ -n $found || -n ${EX_INO-} ]] && return 0
	for f in /proc/"$EX_PID"/fd/*; do
		f=$(readlink "$f" 2>/dev/null)
		[[ $f == socket:* ]] && EX_INO=${f//[^0-9]/} && break
	done
	[[ -n ${EX_INO-} ]] && ex_rmem
	return 0
}

# EX_TR: the trace's lines
ex_trace() {
	mapfile -t EX_TR <"$FAKE/trace"
}

# the trace's last line is a ppoll() not returned yet
ex_in_ppoll() {
	ex_trace
	((${#EX_TR[@]})) || return 1
	[[ ${EX_TR[-1]} == ppoll\(* && ${EX_TR[-1]} != *') = '* ]]
}

# ex_freeze: wait until drvbind sleeps in ppoll() with nothing to read,
# and stop it there (SIGSTOP: the ppoll() is cut and restarted after
# SIGCONT, as if it had slept on). Returns 1 when drvbind has exited.
ex_freeze() {
	local i j m n l stopped
	for ((i = 0; i < 5000; i++)); do
		ex_alive || return 1
		if ex_in_ppoll && ex_rmem && ((EX_RMEM == 0)); then
			n=${#EX_TR[@]}
			kill -STOP "$EX_PID" 2>/dev/null || return 1
			stopped=
			for ((j = 0; j < 2000; j++)); do
				ex_trace
				for ((m = n; m < ${#EX_TR[@]}; m++)); do
					[[ ${EX_TR[m]} == '--- stopped by SIGSTOP ---' ]] &&
						stopped=1 && break
				done
				[[ -n $stopped ]] && break
				ex_alive || return 1
				ex_nap
			done
			# stopped inside a ppoll() (it was cut: ERESTARTNOHAND),
			# with nothing to read: asleep, as it would have slept on
			l=
			for ((m--; m >= 0; m--)); do
				[[ ${EX_TR[m]} == ppoll\(* ]] && l=${EX_TR[m]} && break
			done
			ex_rmem
			if [[ -n $stopped && $l == *'= ? ERESTARTNOHAND'* ]] &&
				((EX_RMEM == 0)); then
				return 0
			fi
			kill -CONT "$EX_PID"
		fi
		ex_nap
	done
	echo "explore: drvbind never slept in ppoll with nothing to read" >&2
	return 1
}

# ex_go: let drvbind go; with "settle", wait until it has read every
# uevent and sleeps in ppoll() again, and stop it there
ex_go() {
	ex_alive || return 0
	kill -CONT "$EX_PID"
	[[ ${1-} == settle ]] || return 0
	ex_freeze || return 0
}

# ex_kill: drvbind and its strace killed, when the case cannot go on
ex_kill() {
	ex_alive && kill -KILL "$EX_PID"
	kill -KILL "$EX_JOB" 2>/dev/null
	wait "$EX_JOB"
	return 0
}

# ---- one case ----

# ex_restore DIR: the tree and the helper's steps under way as saved in
# DIR (ex_snapshots), on this fake; the write log emptied
ex_restore() {
	local -a old gone=("$FAKE/steps")
	local f
	shopt -s nullglob dotglob
	old=("$FAKE"/back/*)
	shopt -u nullglob dotglob
	for f in "${old[@]}"; do
		[[ $f == */.fake_ctl ]] || gone+=("$f")
	done
	rm -rf "${gone[@]}" && cp -a "$1/." "$FAKE/" || return 1
	: >"$FAKE/log"
}

# ex_case K R S K ORDER SNAPDIR OUTDIR: on this fake, the state after
# step k (restored from SNAPDIR), drvbind, the other steps in ORDER;
# writes OUTDIR/result and OUTDIR/log, OUTDIR/slow when the steps took
# so long that drvbind's deadline may have cut them short, and
# OUTDIR/woke 1 when drvbind was let go before the last step
ex_case() {
	local kind=$1 rule=$2 seq=$3 k=$4 order=$5 o=$7 i st frozen=0 sp t0 t1 woke=0
	local -a lines
	: >"$o/result"
	: >"$o/slow"
	ex_kind "$kind"
	ex_seq "$seq" "$rule"
	ex_restore "$6/$k" || return 1
	[[ $rule == none ]] && sp=none || sp=$TGT
	# a watched none waits for its whole deadline; a run made again
	# because the machine was slow has twice the deadline, then four times
	EX_T=$EX_TMOVE
	[[ $rule == none && $BUS == serio ]] && EX_T=$EX_TWATCH
	EX_T=$((EX_T << (${EX_TRY:-1} - 1)))
	: >"$FAKE/trace"
	t0=${EPOCHREALTIME/./}
	if ! ex_start "$BUS/$ID:$sp"; then
		ex_kill
		return 1
	fi
	ex_freeze && frozen=1
	for ((i = k; i < ${#STEPS[@]}; i++)); do
		if ! ex_step "${STEPS[i]}"; then
			ex_kill
			return 1
		fi
		# a step that sent nothing leaves drvbind asleep
		if [[ $order == step && $frozen == 1 && $EX_SENT == 1 ]]; then
			ex_go settle
			ex_alive || frozen=0
			((i < ${#STEPS[@]} - 1)) && woke=1
		fi
	done
	echo "$woke" >"$o/woke"
	t1=${EPOCHREALTIME/./}
	# drvbind's last look comes after the last step: half a second for it
	if ((t1 - t0 > EX_T * 1000000 - 500000)); then
		echo $(((t1 - t0) / 1000)) >"$o/slow"
	else
		: >"$o/slow"
	fi
	ex_go
	wait "$EX_JOB"
	st=$?
	ex_drv
	mapfile -t lines <"$FAKE/out"
	{
		echo "status $st"
		echo "driver ${EX_DRV:-none}"
		((${#lines[@]})) && printf '%s\n' "${lines[@]}"
	} >"$o/result"
	mapfile -t lines <"$FAKE/log"
	((${#lines[@]})) && printf '%s\n' "${lines[@]}" >"$o/log"
	return 0
}

# ---- what is right ----

# ex_at STEP: AT, the index of STEP in STEPS counted from 1 (0 when
# absent): k >= AT means drvbind started after STEP
ex_at() {
	local i
	AT=0
	for ((i = 0; i < ${#STEPS[@]}; i++)); do
		[[ ${STEPS[i]} == "$1" ]] && AT=$((i + 1)) && return 0
	done
	return 0
}

# expect K R S K ORDER: EXP_STATUS, EXP_DRIVER and EXP_OUT, drvbind's
# messages as they are right for the case (one a line, each behind
# "drvbind: B/ID: "); where two outcomes are both right, EXP_OUT has both
# (an array), and the comment says why.
expect() {
	local kind=$1 rule=$2 seq=$3 k=$4 order=$5 n at un det rel gone dev add probe
	local moved held nid= pstep=probe
	ex_kind "$kind"
	ex_seq "$seq" "$rule"
	n=${#STEPS[@]}
	EXP_STATUS=0
	EXP_OUT=()
	# a USB interface reaches uas through new_id, which the message names
	[[ $BUS == usb ]] && nid=' (new_id "0781 5567 08")'
	moved="$NAT -> $TGT$nid"
	held="none -> $TGT$nid"
	if [[ $rule == none ]]; then
		EXP_DRIVER=none
		moved="$NAT -> none"
		# found unbound, the hold drvbind writes then is news (PCI's
		# override, a USB interface's authorized); a serio port has
		# none to write
		case $BUS in
		pci) held="unbound; held by driver_override none" ;;
		usb) held="unbound; held by authorized 0" ;;
		*) held="already unbound" ;;
		esac
	else
		EXP_DRIVER=$TGT
	fi
	# serio: nothing holds the port, so none watches it to the deadline
	# and unbinds every driver that binds it meanwhile
	local again="$NAT bound it; unbound again" watch=
	[[ $rule == none && $BUS == serio ]] && watch=1
	# the step that ends the device's adding: device_add's probe; on 7.1
	# the end of device_add (ready); on 7.0 the probe's beginning (probing:
	# from there a native driver is on its way to the device)
	case $EX_KERNEL in
	7.1) pstep=ready ;;
	7.0) pstep=probing ;;
	esac
	case ${seq%@*} in
	appear)
		# present but not probed yet (dev, add), drvbind holds it
		# first; probed, the native driver has it; from nothing, the
		# step order looks at the add uevent, the burst at the end
		if ((k == n)) || { ((k == 0)) && [[ $order == burst ]]; }; then
			EXP_OUT=("$moved")
		else
			EXP_OUT=("$held${watch:+
$again}")
		fi
		;;
	native)
		# the native driver binds it at driver_attach, before its
		# unbind file: drvbind waits for that file (PCI, serio) or
		# writes authorized (USB)
		ex_at nat:attach
		at=$AT
		if ((k >= at)); then
			EXP_OUT=("$moved")
		else
			EXP_OUT=("$held${watch:+
$again}")
		fi
		;;
	target)
		EXP_OUT=("$moved")
		;;
	unreg)
		# between the unbind file going and driver_detach, drvbind
		# cannot unbind (ENOENT) and waits; driver_detach then unbinds
		# the device itself. Both messages are right then: the device
		# went from the native driver to none or the target since
		# drvbind started (NAT -> ...), and drvbind found it unbound
		# when it acted (none -> T, already unbound). A USB none does
		# not need the unbind file: authorized 0 unbinds.
		ex_at natgo:unbind
		un=$AT
		ex_at natgo:detach
		det=$AT
		[[ $rule == none && $BUS == usb ]] && un=$det
		if ((k < un)); then
			EXP_OUT=("$moved")
		elif ((k < det)); then
			EXP_OUT=("$moved" "$held")
		else
			EXP_OUT=("$held")
		fi
		;;
	replug)
		ex_at release
		rel=$AT
		ex_at unlink
		gone=$AT
		ex_at dev
		dev=$AT
		ex_at "$pstep"
		probe=$AT
		if [[ $rule == none && -z $watch ]]; then
			if ((k < gone)); then
				# drvbind holds the device that is there and exits;
				# the device that comes back is a new one, which
				# nothing holds: the native driver probes it
				EXP_DRIVER=$NAT
				((k < rel)) && EXP_OUT=("$moved") || EXP_OUT=("$held")
			elif ((k < dev)); then
				# waiting for it: the step order holds it at its add
				# uevent, the burst finds it probed
				[[ $order == step ]] && EXP_OUT=("$held") || EXP_OUT=("$moved")
			elif ((k < probe)); then
				EXP_OUT=("$held")
			else
				EXP_OUT=("$moved")
			fi
		elif [[ -n $watch ]]; then
			# the watch goes on across the replug: the new port is
			# probed by the native driver, and unbound again
			if ((k < rel)); then
				EXP_OUT=("$moved
$again")
			elif ((k < gone)); then
				EXP_OUT=("$held
$again")
			elif ((k < dev)); then
				[[ $order == step ]] && EXP_OUT=("$held
$again") || EXP_OUT=("$moved")
			elif ((k < probe)); then
				EXP_OUT=("$held
$again")
			else
				EXP_OUT=("$moved")
			fi
		else
			# a move waits for the target, which registers last;
			# meanwhile a device present and unbound is held
			# (override, authorized), so the new device's probe
			# cannot take it, and the target's driver_attach (PCI,
			# through the override) or drvbind binds it; a serio
			# port cannot be held, so atkbd has it first
			if ((k == n)) || [[ $BUS == serio ]]; then
				EXP_OUT=("$moved")
			elif ((k >= dev && k < probe)); then
				EXP_OUT=("$held")
			elif [[ $order == burst ]] || ((k >= probe)); then
				EXP_OUT=("$moved")
			elif [[ $BUS == usb ]] || ((k >= gone)); then
				# the step order sees the new device at its add
				# uevent, unbound, and holds it
				EXP_OUT=("$held")
			else
				# PCI, from the device still there: seen unbound at
				# its release, it was held; that hold went with it
				# and is not made again on the new device, which its
				# probe gives to the native driver (NAT -> T);
				# holding the new one too would give none -> T. Both
				# end on the target.
				EXP_OUT=("$moved" "$held")
			fi
		fi
		;;
	esac
	# Linux 7.x
	case $EX_KERNEL in
	7.1)
		# In 7.1's window bind says EAGAIN (USB, serio; PCI ENODEV, its
		# match_driver) and the device is probed when device_add ends.
		# A held device (PCI's override, a none's authorized 0) is
		# probed as the hold says, as on older kernels. A move on USB or
		# serio holds nothing: the native driver has the device first,
		# then drvbind moves it.
		if [[ ${seq%@*} == appear && $rule == move && $BUS != pci ]]; then
			EXP_OUT=("$moved")
		fi
		;;
	7.0)
		# drvbind starts while the native probe runs: its override store
		# does not wait for it (7.0), and the device ends as the rule
		# says all the same; it had no driver when drvbind looked, and
		# the native one meanwhile, so both messages are right. A none
		# on PCI waits for the probe through drivers_probe (it takes the
		# device lock), then unbinds what it bound.
		ex_at probing
		if ((k == AT)); then
			EXP_OUT=("$moved" "$held")
		fi
		;;
	esac
}

# ex_judge K R S K ORDER DIR: nothing when DIR/result is right, else
# what is wrong, with the write log
ex_judge() {
	local d=$6 st drv out want ok=0 o p
	local -a r
	mapfile -t r 2>/dev/null <"$d/result"
	if ((${#r[@]} < 2)); then
		echo "  no result:"
		cat "$d/case.out" 2>/dev/null
		return 1
	fi
	expect "$1" "$2" "$3" "$4" "$5"
	st=${r[0]#status }
	drv=${r[1]#driver }
	out=
	((${#r[@]} > 2)) && printf -v out '%s\n' "${r[@]:2}"
	p="drvbind: $BUS/$ID: "
	for o in "${EXP_OUT[@]}"; do
		want="$p${o//$'\n'/$'\n'$p}"$'\n'
		[[ $out == "$want" ]] && ok=1
	done
	if [[ $st == "$EXP_STATUS" && $drv == "$EXP_DRIVER" && $ok == 1 && ! -s $d/slow ]]; then
		return 0
	fi
	echo "  expected: status $EXP_STATUS, driver $EXP_DRIVER, messages:"
	for o in "${EXP_OUT[@]}"; do
		[[ $o == "${EXP_OUT[0]}" ]] || echo "    or"
		echo "    $p${o//$'\n'/$'\n'    $p}"
	done
	echo "  actual:   status $st, driver $drv, messages:"
	((${#r[@]} > 2)) && printf '    %s\n' "${r[@]:2}"
	echo "  write log:"
	sed 's/^/    /' "$d/log"
	[[ -s $d/slow ]] &&
		echo "  (the steps took $(cat "$d/slow") ms of drvbind's deadline: too slow a machine to judge)"
	return 1
}

# ---- running them ----

# ex_snapshots K R S DIR: the tree after each step k of the sequence, in
# DIR/k, made once, on this fake
ex_snapshots() {
	local i
	ex_kind "$1"
	ex_seq "$3" "$2"
	ex_base "$3" "$2" || return 1
	for ((i = 0; ; i++)); do
		mkdir -p "$4/$i"
		cp -a "$FAKE/back" "$4/$i/" || return 1
		if [[ -d $FAKE/steps ]]; then
			cp -a "$FAKE/steps" "$4/$i/" || return 1
		fi
		((i < ${#STEPS[@]})) || break
		ex_step "${STEPS[i]}" || return 1
	done
}

# ex_plain: in a subshell of the test, bats's traps off and errors
# handled by hand (its DEBUG trap costs much in loops)
ex_plain() {
	set +eE
	trap - ERR DEBUG RETURN
	set +T
}

# ex_run K R S K ORDER DIR: one run of ex_case into DIR/K.ORDER; a run
# the machine made too slowly is made again with a longer deadline,
# twice at most
ex_run() {
	local d=$6/$4.$5 EX_TRY
	mkdir -p "$d"
	echo "$1 $2 $3 $4 $5" >>"$6/runs"
	for EX_TRY in 1 2 3; do
		: >"$d/log"
		ex_case "$1" "$2" "$3" "$4" "$5" "$6/snap" "$d" >"$d/case.out" 2>&1
		[[ -s $d/slow ]] || break
		echo "$1 $2 $3 $4 $5" >>"$BATS_FILE_TMPDIR/slow"
	done
}

# ex_worker DIR W: on a fake of its own, every k of DIR/cases not taken
# yet by another worker (mkdir takes it): the step order, then the burst
# unless the step order let drvbind go only after the last step (then
# the two are the same run, and the burst's result is the step's).
# Worker 0 first makes the snapshots, the others wait for them.
ex_worker() {
	local dir=$1 kind rule seq k n i
	ex_plain
	BATS_TEST_TMPDIR=$dir/w$2
	mkdir -p "$BATS_TEST_TMPDIR"
	exec {EX_ZZ}<> <(:)
	if ! fake_setup_boot >"$BATS_TEST_TMPDIR/setup.out" 2>&1; then
		(($2 == 0)) && echo failed >"$dir/ready"
		exit 1
	fi
	if (($2 == 0)); then
		read -r kind rule seq k <"$dir/cases"
		if ex_snapshots "$kind" "$rule" "$seq" "$dir/snap" >"$dir/snap.out" 2>&1; then
			echo ok >"$dir/ready"
		else
			echo failed >"$dir/ready"
		fi
	fi
	for ((i = 0; i < 20000; i++)); do
		[[ -s $dir/ready ]] && break
		read -r -t 0.01 -u "$EX_ZZ" _
	done
	if [[ $(<"$dir/ready") == ok ]]; then
		while read -r kind rule seq k n; do
			mkdir "$dir/$k.taken" 2>/dev/null || continue
			ex_run "$kind" "$rule" "$seq" "$k" step "$dir"
			((k < n - 1)) || continue
			if [[ $(<"$dir/$k.step/woke") == 0 ]]; then
				cp -a "$dir/$k.step" "$dir/$k.burst"
			else
				ex_run "$kind" "$rule" "$seq" "$k" burst "$dir"
			fi
		done <"$dir/cases"
	fi
	fake_teardown || :
}

# ex_report DIR: every case of DIR/cases judged, in both orders; what is
# wrong, and the counts of wrong and judged cases in DIR/bad
ex_report() {
	local dir=$1 kind rule seq k n order bad=0 judged=0
	ex_plain
	while read -r kind rule seq k n; do
		ex_kind "$kind"
		ex_seq "$seq" "$rule"
		for order in step burst; do
			[[ $order == step ]] || ((k < n - 1)) || continue
			if ! ex_judge "$kind" "$rule" "$seq" "$k" "$order" "$dir/$k.$order" >"$dir/judged"; then
				echo "$kind $rule $seq, drvbind started after step $k of: ${STEPS[*]}; then $order:"
				cat "$dir/judged"
				bad=$((bad + 1))
			fi
			judged=$((judged + 1))
		done
	done <"$dir/cases"
	echo "$bad $judged" >"$dir/bad"
}

# explore K R S: every k of the sequence, in both orders (the last two
# in the step order only: with one step or none to follow, the burst is
# the same run), EX_JOBS workers side by side; fails listing every case
# that ended wrong
explore() {
	local kind=$1 rule=$2 seq=$3 k n dir=$BATS_TEST_TMPDIR/x w jobs bad judged
	local -a pids=()
	# strace and the process tree need the binary itself, not qemu-user
	[[ -z $RUN ]] || skip "the explorer runs the native build only"
	ex_kind "$kind"
	ex_seq "$seq" "$rule"
	n=${#STEPS[@]}
	mkdir -p "$dir"
	for ((k = 0; k <= n; k++)); do
		echo "$kind $rule $seq $k $n"
	done >"$dir/cases"
	: >"$dir/runs"
	# a watched none idles to its deadline: more workers
	jobs=$EX_JOBS
	[[ $rule == none && $kind == serio ]] && jobs=$((2 * EX_JOBS))
	for ((w = 0; w < jobs; w++)); do
		ex_worker "$dir" "$w" &
		pids+=($!)
	done
	wait "${pids[@]}" || :
	if [[ $(cat "$dir/ready" 2>/dev/null) != ok ]]; then
		echo "the snapshots of the sequence could not be made:"
		cat "$dir/snap.out" "$dir"/w*/setup.out 2>/dev/null
		return 1
	fi
	(ex_report "$dir")
	read -r bad judged <"$dir/bad"
	echo "$((n + 1)) $judged $(wc -l <"$dir/runs")" >>"$BATS_FILE_TMPDIR/pairs"
	((bad == 0))
}

# ---- the tests: one a (kind, rule, sequence) ----

@test "none holds a PCI device that appears, from every step of its adding" {
	explore pci none appear
}

@test "none keeps a PCI device unbound while its native driver registers, from every step of the registration" {
	explore pci none native
}

@test "none leaves a PCI device unbound while its native driver unregisters, from every step of the unregistration" {
	explore pci none unreg
}

@test "none holds a replugged PCI device that comes back while drvbind waits for it" {
	explore pci none replug
}

@test "a move takes a PCI device that appears to pci-stub, from every step of its adding" {
	explore pci move appear
}

@test "a move takes a PCI device to pci-stub while e1000 registers, from every step of the registration" {
	explore pci move native
}

@test "a move takes a PCI device to pci-stub as pci-stub registers, from every step of the registration" {
	explore pci move target
}

@test "a move takes a PCI device to pci-stub while e1000 unregisters, from every step of the unregistration" {
	explore pci move unreg
}

@test "a move waiting for pci-stub takes a PCI device replugged meanwhile to it, from every step of the replug" {
	explore pci move replug
}

@test "none holds a USB interface that appears, from every step of its adding" {
	explore usb none appear
}

@test "none keeps a USB interface unbound while usb-storage registers, from every step of the registration" {
	explore usb none native
}

@test "none leaves a USB interface unbound while usb-storage unregisters, from every step of the unregistration" {
	explore usb none unreg
}

@test "none holds a replugged USB interface that comes back while drvbind waits for it" {
	explore usb none replug
}

@test "a move takes a USB interface that appears to uas, from every step of its adding" {
	explore usb move appear
}

@test "a move takes a USB interface to uas while usb-storage registers, from every step of the registration" {
	explore usb move native
}

@test "a move takes a USB interface to uas as uas registers, from every step of the registration" {
	explore usb move target
}

@test "a move takes a USB interface to uas while usb-storage unregisters, from every step of the unregistration" {
	explore usb move unreg
}

@test "a move waiting for uas takes a USB interface replugged meanwhile to it, from every step of the replug" {
	explore usb move replug
}

@test "none watches a serio port that appears and unbinds atkbd from it, from every step of its adding" {
	explore serio none appear
}

@test "none watches a serio port and unbinds atkbd as it registers, from every step of the registration" {
	explore serio none native
}

@test "none leaves a serio port unbound while atkbd unregisters, from every step of the unregistration" {
	explore serio none unreg
}

@test "none watches a serio port across a replug and unbinds atkbd from the new one, from every step of the replug" {
	explore serio none replug
}

@test "a move takes a serio port that appears to serio_raw, from every step of its adding" {
	explore serio move appear
}

@test "a move takes a serio port to serio_raw while atkbd registers, from every step of the registration" {
	explore serio move native
}

@test "a move takes a serio port to serio_raw as serio_raw registers, from every step of the registration" {
	explore serio move target
}

@test "a move takes a serio port to serio_raw while atkbd unregisters, from every step of the unregistration" {
	explore serio move unreg
}

@test "a move waiting for serio_raw takes a serio port replugged meanwhile to it, from every step of the replug" {
	explore serio move replug
}

# ---- the same on Linux 7.x's orderings ----

@test "7.1: none holds a PCI device that appears, through the window where its bus has not added it, from every step" {
	explore pci none appear@7.1
}

@test "7.1: a move takes a PCI device that appears to pci-stub, through the window where its bus has not added it, from every step" {
	explore pci move appear@7.1
}

@test "7.1: none holds a replugged PCI device that comes back through the window while drvbind waits for it" {
	explore pci none replug@7.1
}

@test "7.1: a move waiting for pci-stub takes a PCI device replugged through the window meanwhile to it, from every step" {
	explore pci move replug@7.1
}

@test "7.1: none holds a USB interface that appears, through the window where it is not ready to probe, from every step" {
	explore usb none appear@7.1
}

@test "7.1: a move takes a USB interface that appears to uas, through the window where bind says EAGAIN, from every step" {
	explore usb move appear@7.1
}

@test "7.1: none holds a replugged USB interface that comes back through the window while drvbind waits for it" {
	explore usb none replug@7.1
}

@test "7.1: a move waiting for uas takes a USB interface replugged through the window meanwhile to it, from every step" {
	explore usb move replug@7.1
}

@test "7.1: none watches a serio port that appears through the window and unbinds atkbd from it, from every step" {
	explore serio none appear@7.1
}

@test "7.1: a move takes a serio port that appears to serio_raw, through the window where bind says EAGAIN, from every step" {
	explore serio move appear@7.1
}

@test "7.0: none holds a PCI device that appears, with e1000's probe running while the override is stored, from every step" {
	explore pci none appear@7.0
}

@test "7.0: a move takes a PCI device that appears to pci-stub, with e1000's probe running while the override is stored, from every step" {
	explore pci move appear@7.0
}

@test "7.0: none holds a replugged PCI device whose e1000 probe runs while the override is stored, from every step" {
	explore pci none replug@7.0
}

@test "7.0: a move waiting for pci-stub takes a replugged PCI device whose e1000 probe runs while the override is stored, from every step" {
	explore pci move replug@7.0
}
