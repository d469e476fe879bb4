# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# shellcheck disable=SC2154 # live, work, data and the rest are bench.sh's
# shellcheck disable=SC2016 # shell code for busybox sh, quoted on purpose
# Sourced by bench.sh: a device set. N PCI functions (slots 0000:01:00
# to 0000:01:07, up to eight functions each) behind the bridge
# 0000:00:01.0, all of them and the bridge in IOMMU group 1, the
# functions on e1000, the bridge on pcieport; every one of the N to
# vfio-pci, the bridge left alone, as vfio wants a group. The tools:
#
#   drvbind-set    drvbind pci/0000:01:*:vfio-pci                  one wildcard
#   drvbind-group  drvbind pci/0000:01:00.0,iommu_group:vfio-pci   one device and its group
#   group-script   busybox sh test/bench/group.sh 0000:01:00.0     vfio-pci-bind's procedure
#   driverctl      driverctl --nosave set-override DEV vfio-pci, per device, from busybox sh
#
# System calls (strace -f -c), instructions (callgrind, every process)
# and wall time (benchrun, median of ROUNDS, the order turned each
# round), each run checked to end with the N on vfio-pci and the bridge
# on pcieport. Writes $data/sets: "N", then "TOOL CALLS INSTRUCTIONS",
# and "wall TOOL NS" a round.
#
# Uses bench.sh's live fake kernel (mounted over /sys), load, fail, say,
# calls_of, instructions_of and wall_of.

set_tools="drvbind-set drvbind-group group-script driverctl"

set_id() { printf '0000:01:%02x.%d' $(($1 / 8)) $(($1 % 8)); }

# set_tree N: the tree set-N
set_tree() {
	local n=$1 i
	FAKE=$work/trees/set-$n
	mkdir -p "$FAKE/back"
	fake_driver pci pcieport
	fake_driver pci e1000 'match=*' module=e1000
	fake_driver pci vfio-pci module=vfio_pci
	fake_device pci 0000:00:01.0 driver=pcieport override pciclass=0x060400 group=1
	for ((i = 0; i < n; i++)); do
		fake_device pci "$(set_id $i)" path=pci0000:00/0000:00:01.0 driver=e1000 override \
			vendor=0x8086 device=0x100e pciclass=0x020000 group=1
	done
}

# set_cmd TOOL N: the command line in CMD, run without LD_PRELOAD (LP)
set_cmd() {
	local i
	LP=
	case $1 in
	drvbind-set) CMD=("$BIN" "pci/0000:01:*:vfio-pci") ;;
	drvbind-group) CMD=("$BIN" "pci/0000:01:00.0,iommu_group:vfio-pci") ;;
	group-script) CMD=(busybox sh "$top/test/bench/group.sh" 0000:01:00.0) ;;
	driverctl)
		CMD=(busybox sh -c 'for d; do driverctl --nosave set-override "$d" vfio-pci; done' sh)
		for ((i = 0; i < $2; i++)); do CMD+=("$(set_id $i)"); done ;;
	esac
}

# set_bound TOOL N WHAT: the N functions on vfio-pci and the bridge on pcieport
set_bound() {
	local n
	n=$(find "$live/back/bus/pci/drivers/vfio-pci" -maxdepth 1 -name '0000:01:*' -type l | wc -l)
	[[ $n == "$2" && -L $live/back/bus/pci/drivers/pcieport/0000:00:01.0 ]] ||
		fail "set: $3: $1 did not bind: $n of $2 on vfio-pci, the bridge on $(readlink "$live/back/bus/pci/devices/0000:00:01.0/driver")"
}

# set_bench N ROUNDS
set_bench() {
	local n=$1 rounds=$2 t r k sc ir
	set_tree "$n"
	echo "$n" >"$data/sets"
	say "bench: a set of $n functions: system calls and instructions"
	for t in $set_tools; do
		load "set-$n"
		set_cmd "$t" "$n"
		sc=$(calls_of)
		set_bound "$t" "$n" "system calls"
		load "set-$n"
		ir=$(instructions_of)
		set_bound "$t" "$n" instructions
		echo "$t $sc $ir" >>"$data/sets"
	done
	say "bench: a set of $n functions: wall time, $rounds rounds"
	for ((r = 1; r <= rounds; r++)); do
		# shellcheck disable=SC2086 # one word per tool
		set -- $set_tools
		for ((k = 0; k < (r - 1) % $#; k++)); do set -- "${@:2}" "$1"; done
		for t; do
			load "set-$n"
			set_cmd "$t" "$n"
			wall_of
			set_bound "$t" "$n" "wall time"
			echo "wall $t $NS" >>"$data/sets"
		done
	done
}
