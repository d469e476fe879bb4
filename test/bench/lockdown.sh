# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# shellcheck disable=SC2154 # live, work, data and the rest are bench.sh's
# Sourced by bench.sh after follow.sh: a lockdown's limits last a
# lifetime. A follower of `usb/*,bInterfaceClass=08:none` (every USB
# mass-storage interface held: no driver, authorized 0) on the live fake
# kernel through a plug storm: one stick (0781:5567, one interface of
# class 08) plugged and unplugged port after port, at more ports than
# the set has places (64) and its table (128), each plug let settle and
# checked held; then four devices of 32 such interfaces each plugged at
# once, 128 interfaces past both limits, none let settle before the
# next, and every one checked held. The follower's RSS must not grow
# through the storm, nor its address space and open files through it
# all (lockdown_bench says when each is taken).
#
# Uses bench.sh's live fake kernel (mounted over /sys), load, fail and
# say, and follow.sh's follower (fstart_with, fidle, fstatus, ffds,
# fstop). Writes $data/lockdown.

LK_RULE='usb/*,bInterfaceClass=08:none'
# fake_device's place for a USB device, and the ../ that lead back up
# to the root from a device there and from one of its interfaces
LK_HUB=devices/pci0000:00/0000:00:1d.7/usb1
LK_UP_DEV=../../../../../ LK_UP_INTF=../../../../../../
# the wide device: interfaces each, devices (ports) at once
LK_WIDE=32 LK_WIDE_PORTS=4

# lk_dev PORT N: the device 1-PORT (0781:5567) on the generic usb driver
# with N interfaces 1-PORT:1.0... of class 08 on usb-storage, queued in
# LK_OPS for lk_make: as fake_device lays out each (test/helper.bash),
# the attributes, the subsystem link, the bus link and the driver's.
lk_dev() {
	local b=$FAKE/back id=1-$1 dev i intf
	dev=$LK_HUB/$id
	LK_OPS+=("d $b/$dev" "f $b/$dev/uevent" "l ${LK_UP_DEV}bus/usb $b/$dev/subsystem"
		"f $b/$dev/idVendor 0781" "f $b/$dev/idProduct 5567"
		"l ../../../$dev $b/bus/usb/devices/$id"
		"l ${LK_UP_DEV}bus/usb/drivers/usb $b/$dev/driver"
		"l ../../../../$dev $b/bus/usb/drivers/usb/$id")
	for ((i = 0; i < $2; i++)); do
		intf=$dev/$id:1.$i
		LK_OPS+=("d $b/$intf" "f $b/$intf/uevent" "l ${LK_UP_INTF}bus/usb $b/$intf/subsystem"
			"f $b/$intf/bInterfaceClass 08" "f $b/$intf/authorized 1"
			"l ../../../$intf $b/bus/usb/devices/$id:1.$i"
			"l ${LK_UP_INTF}bus/usb/drivers/usb-storage $b/$intf/driver"
			"l ../../../../$intf $b/bus/usb/drivers/usb-storage/$id:1.$i")
	done
}

# lk_make: LK_OPS made, in one process: "d DIR" a directory, "f FILE
# [TEXT]" a file (TEXT and a newline, or empty), "l TARGET LINK" a
# symlink. fake_device forks a dozen times a device, 0.15 s on a loaded
# 2-CPU machine: minutes for the storm's thousand sticks.
lk_make() {
	printf '%s\n' "${LK_OPS[@]}" | perl -ne '
		chomp;
		my ($op, $path, $arg) = split / /, $_, 3;
		if ($op eq "d") { mkdir $path or die "$path: $!\n" }
		elsif ($op eq "l") { symlink $path, $arg or die "$arg: $!\n" }
		else { open my $f, ">", $path or die "$path: $!\n"; print $f "$arg\n" if defined $arg; close $f }' ||
		fail "lockdown: a tree was not made"
	LK_OPS=()
}

# lk_drivers PORTS: the generic usb driver for the devices 1-1 to
# 1-PORTS (it would take their interfaces too with match=*), and
# usb-storage for the interfaces, which come to it after the generic one
lk_drivers() {
	local ids=1-1 p
	for ((p = 2; p <= $1; p++)); do ids+=,1-$p; done
	fake_driver usb usb "match=$ids"
	fake_driver usb usb-storage 'match=*'
}

# lk_same: lk_dev lays out a stick and a device of two interfaces as
# fake_device does, byte for byte and link for link
lk_same() {
	local t=$work/trees/lk-same
	FAKE=$t/dev
	mkdir -p "$FAKE/back"
	lk_drivers 2
	fake_device usb 1-1 idVendor=0781 idProduct=5567 driver=usb
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	fake_device usb 1-2 idVendor=0781 idProduct=5567 driver=usb
	fake_device usb 1-2:1.0 parent=1-2 class=08 driver=usb-storage
	fake_device usb 1-2:1.1 parent=1-2 class=08 driver=usb-storage
	FAKE=$t/lk
	mkdir -p "$FAKE/back"
	lk_drivers 2
	mkdir -p "$FAKE/back/$LK_HUB"
	lk_dev 1 1
	lk_dev 2 2
	lk_make
	diff -r --no-dereference "$t/dev" "$t/lk" >&2 ||
		fail "lockdown: the storm's tree is not laid out as fake_device lays it out"
	rm -rf "$t"
}

# lk_tree PORTS: the tree lockdown, every device plugged: a stick at
# each of the PORTS ports 1-1..., and the wide devices after them
lk_tree() {
	local p
	lk_same
	FAKE=$work/trees/lockdown
	mkdir -p "$FAKE/back"
	lk_drivers $(($1 + LK_WIDE_PORTS))
	mkdir -p "$FAKE/back/$LK_HUB"
	for ((p = 1; p <= $1; p++)); do lk_dev "$p" 1; done
	for ((p = $1 + 1; p <= $1 + LK_WIDE_PORTS; p++)); do lk_dev "$p" "$LK_WIDE"; done
	lk_make
}

# lk_plug VERB PORT N: the fake kernel's own unplug or replug of the
# device 1-PORT and its N interfaces, without a fork: an unplug takes the
# interfaces first, as the kernel removes a device's children first; a
# replug adds the device first
lk_plug() {
	local i
	[[ $1 == replug ]] && { printf 'replug usb 1-%s' "$2" >"$FCTL" || return 1; }
	for ((i = 0; i < $3; i++)); do
		printf '%s usb 1-%s:1.%s' "$1" "$2" "$i" >"$FCTL" || return 1
	done
	[[ $1 == unplug ]] && { printf 'unplug usb 1-%s' "$2" >"$FCTL" || return 1; }
	return 0
}

# lk_held ID: the interface ID is there, without a driver, authorized 0
lk_held() {
	local d=$live/back/bus/usb/devices/$1 a
	[[ -d $d && ! -L $d/driver ]] && read -r a <"$d/authorized" && [[ $a == 0 ]]
}

# lk_rest: the follower's RSS and its address space (KiB), and its open
# files
lk_rest() {
	echo "$(fstatus VmRSS) $(fstatus VmSize) $(ffds)"
}

# lockdown_bench CYCLES PORTS
#
# The follower's RSS, address space and open files are taken once it has
# started, after the first round of the ports, after the storm and after
# the 128. Its memory is its static image (no heap, no mmap), and a page
# of it counts in its RSS from the first time it is touched: the first
# hold touches a page of stack, the set's first fill the places of its
# members in the table, and no later plug adds to them. What must not
# move: the RSS from the storm's first round to its last; the address
# space and the open files from the start to the end.
lockdown_bench() {
	local n=$1 ports=$2 wide=$((LK_WIDE_PORTS * LK_WIDE)) p i ok=0 wok=0 t0 t1 over said r0 r1='' r2 r3
	say "bench: a lockdown through a plug storm: $n plugs at $ports ports, then $LK_WIDE_PORTS devices of $LK_WIDE interfaces at once"
	lk_tree "$ports"
	load lockdown
	: >"$live/back/.fake_ctl"
	for ((p = 1; p <= ports; p++)); do lk_plug unplug "$p" 1 || break; done
	for ((p = ports + 1; p <= ports + LK_WIDE_PORTS; p++)); do lk_plug unplug "$p" "$LK_WIDE" || break; done
	[[ -z $(ls "$live/back/bus/usb/devices") ]] || { fail "lockdown: the devices did not all unplug"; return; }
	: >"$work/follow.out"
	fstart_with fidle "$BIN" -f -s "$work/lockdown.sock" "$LK_RULE" || return
	r0=$(lk_rest)

	t0=$EPOCHREALTIME
	for ((i = 0; i < n; i++)); do
		p=$((i % ports + 1))
		lk_plug replug "$p" 1 || { fail "lockdown: the replug of 1-$p failed"; break; }
		fidle || { fail "lockdown: the follower never went idle after the plug of 1-$p"; break; }
		lk_held "1-$p:1.0" && ok=$((ok + 1))
		lk_plug unplug "$p" 1 || { fail "lockdown: the unplug of 1-$p failed"; break; }
		((i + 1 == ports)) && r1=$(lk_rest)
	done
	fidle || fail "lockdown: the follower never went idle after the storm"
	t1=$EPOCHREALTIME
	r2=$(lk_rest)
	over=$(grep -c 'more than' "$work/follow.out")
	said=$(grep -c -x 'drvbind: usb/\*,bInterfaceClass=08: 1-[0-9]*:1\.0 on none' "$work/follow.out")

	# the four and their interfaces, without a wait for the follower
	# between them: a burst of uevents
	for ((p = ports + 1; p <= ports + LK_WIDE_PORTS; p++)); do
		lk_plug replug "$p" "$LK_WIDE" || { fail "lockdown: the replug of 1-$p failed"; break; }
	done
	fidle || fail "lockdown: the follower never went idle after the $LK_WIDE_PORTS devices"
	for ((p = ports + 1; p <= ports + LK_WIDE_PORTS; p++)); do
		for ((i = 0; i < LK_WIDE; i++)); do
			lk_held "1-$p:1.$i" && wok=$((wok + 1))
		done
	done
	r3=$(lk_rest)
	fstop

	# microseconds: EPOCHREALTIME's digits without its point (or comma)
	{
		echo "storm $n $ports $ok $((${t1//[.,]/} - ${t0//[.,]/})) $over $said"
		echo "wide $LK_WIDE_PORTS $LK_WIDE $wok"
		echo "rest $r0 ${r1:-? ? ?} $r2 $r3"
	} >>"$data/lockdown"
	((ok == n)) || fail "lockdown: $((n - ok)) of $n plugs of the stick were not held"
	((over == 0)) || fail "lockdown: the set was full $over times in the storm: it kept the places of devices gone"
	((said == n)) || fail "lockdown: the follower said $said holds of the stick for $n plugs"
	((wok == wide)) || fail "lockdown: $((wide - wok)) of $wide interfaces plugged at once were not held"
	[[ ${r1%% *} == "${r2%% *}" && ${r0#* } == "${r2#* }" && ${r2#* } == "${r3#* }" ]] ||
		fail "lockdown: the follower's RSS, address space or open files moved: $r0 at its start, $r1 after a round of the ports, $r2 after the storm, $r3 after the $wide"
}
