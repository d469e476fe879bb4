#!/bin/bash
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2016 # shell code for busybox sh, quoted on purpose
# make bench: drvbind side by side with driverctl, dpdk-devbind.py, usbip
# and a hand-written boot script (script.sh), on one fake kernel, and on
# the real kernel under QEMU where a peer can run in a test initramfs;
# drvbind's follower through replugs beside driverctl's path for them
# (follow.sh); a set of functions in one IOMMU group taken by one
# rule, beside vfio-pci-bind's procedure and driverctl (sets.sh); and a
# follower's lockdown of USB storage through a plug storm (lockdown.sh).
#
#   test/bench/bench.sh [-q] [-o DIR]     (as root)
#
# -q  smoke run (make check): one round, 1 and 2 rules, 2 s waits, 3
#     replugs, a set of 8, 300 plugs at 150 ports, no QEMU
# -o  where RESULTS.md and the charts go (default test/bench/)
#
# Every tool sees the same FUSE fake kernel (test/fake/fakesys.c) mounted
# over /sys in a private mount namespace, so the peers run unmodified,
# and a private network namespace, so the fake's uevents reach only
# them. Before every run the tree is put back as it was (every device on
# its native driver), so each run does the whole job.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
quick=0
out=$top/test/bench
while getopts qo: o; do
	case $o in
	q) quick=1 ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
out=$(mkdir -p "$out" && cd "$out" && pwd)

if ((quick)); then
	rounds=1 sizes="1 2" lat_rounds=1 wait_s=2 qemu=0
else
	rounds=${BENCH_ROUNDS:-9} sizes="1 16 256" lat_rounds=${BENCH_LAT_ROUNDS:-9}
	wait_s=5 qemu=${BENCH_QEMU:-1}
fi

if [[ -z ${BENCH_NS-} ]]; then
	[[ $(id -u) == 0 ]] || { echo "bench: run as root (mounts over /sys)" >&2; exit 1; }
	# The namespace has no network: Debian's kernel is fetched (once) before.
	# Without it the fake kernel's figures are still taken, the QEMU ones fail.
	if ((qemu)); then
		sh "$top/test/qemu/kernel.sh" "$top/build/qemu" >/dev/null ||
			echo "bench: no kernel for QEMU: its figures will be missing" >&2
	fi
	BENCH_NS=1 exec unshare -m -n --propagation private "$0" "$@"
fi

BIN=$top/build/drvbind
# Another make may rebuild the binary while this runs: RESULTS.md says so.
bin_sum=$(cksum <"$BIN")
BENCHRUN=$top/build/test/benchrun
MAGIC=$top/build/test/sysfsmagic.so
SCRIPT=$top/test/bench/script.sh
small=${sizes%% *} big=${sizes#* } big=${big%% *}
tools="drvbind script driverctl dpdk-devbind usbip"
# drvbind's limit of rules per run (applet/drvbind.h)
rules_max=$(sed -n 's/^[[:space:]]*RULES_MAX = \([0-9]*\),.*/\1/p' "$top/applet/drvbind.h")

work=$(mktemp -d /tmp/drvbind-bench.XXXXXX)
data=$work/data
mkdir -p "$data"
live=$work/live

# shellcheck source=test/helper.bash
BATS_TEST_DIRNAME=$top/test . "$top/test/helper.bash"
# Already in our own network namespace: no nsenter around the verbs.
fake_ns() { "$@"; }

cleanup() {
	# a follower (follow.sh) that a failure left running: wait would wait for it
	[[ -n ${FPID-} ]] && kill "$FPID" 2>/dev/null
	umount -l /sys 2>/dev/null
	umount /usr/sbin/modprobe 2>/dev/null
	fusermount3 -u "$live/sys" 2>/dev/null || umount -l "$live/sys" 2>/dev/null
	[[ -n ${fspid-} ]] && kill "$fspid" 2>/dev/null
	wait 2>/dev/null
	umount -l "$live" 2>/dev/null
	[[ -n ${BENCH_KEEP-} ]] || rm -rf "$work"
}
trap cleanup EXIT

say() { printf '%s\n' "$*" >&2; }

# ---- fake trees ----

pci_id() { printf '0000:%02x:%02x.0' $(($1 / 32 + 1)) $(($1 % 32)); }
usb_id() { printf '1-%d' $(($1 + 1)); }

# tree NAME KIND N [late]: a backing tree in $work/trees/NAME with N
# devices of KIND (pci: e1000s with driver_override, target vfio-pci;
# usb: devices on the generic usb driver, target usbip-host). late: the
# last device is built but not plugged (its bus link is missing), and
# $work/trees/NAME.plug says how to plug it.
tree() {
	local name=$1 kind=$2 n=$3 late=${4-} i id d
	FAKE=$work/trees/$name
	mkdir -p "$FAKE/back"
	if [[ $kind == pci ]]; then
		fake_driver pci e1000 'match=*' module=e1000
		fake_driver pci vfio-pci module=vfio_pci
		for ((i = 0; i < n; i++)); do
			id=$(pci_id $i)
			fake_device pci "$id" driver=e1000 override vendor=0x8086 device=0x100e
			d=$FAKE/back$FAKE_DEVPATH
			# what lspci (dpdk-devbind) reads: the config header and class
			printf '\206\200\016\020\007\000\000\000\003\000\000\002' >"$d/config"
			truncate -s 64 "$d/config"
			echo 0x020000 >"$d/class"
		done
	else
		fake_driver usb usb 'match=*'
		fake_driver usb usbip-host 'match=*' match_busid
		for ((i = 0; i < n; i++)); do
			id=$(usb_id $i)
			fake_device usb "$id" path=pci0000:00/0000:00:1d.7/usb1 driver=usb \
				idVendor=46f4 idProduct=0001
			echo 00 >"$FAKE/back$FAKE_DEVPATH/bDeviceClass"
		done
	fi
	if [[ -n $late ]]; then
		# unplugged: no driver, no bus link; device_add makes the link last
		rm "$FAKE/back$FAKE_DEVPATH/driver" "$FAKE/back/bus/$kind/drivers/e1000/$id"
		echo "bus/$kind/devices/$id $(readlink "$FAKE/back/bus/$kind/devices/$id") $FAKE_DEVPATH $kind" \
			>"$work/trees/$name.plug"
		rm "$FAKE/back/bus/$kind/devices/$id"
	fi
}

# load NAME: the live fake kernel shows tree NAME, as built. Deleting and
# copying a tree leaves the kernel work to finish (freeing dentries and
# inodes after an RCU grace period); whoever ran next paid for it, tens
# of ms on this 2-CPU machine: a pause lets it end before the timed run.
load() {
	find "$live/back" -mindepth 1 -delete
	cp -a "$work/trees/$1/back/." "$live/back/"
	: >"$live/times"
	sleep 0.2
}

# The fake keeps its tree in memory, as the kernel keeps sysfs: on the
# disk's ext4, a bind's symlinkat waited for the journal, 1-3 ms each.
mount_fake() {
	mkdir -p "$live"
	mount -t tmpfs -o mode=0755 drvbind-bench "$live"
	mkdir -p "$live/back" "$live/sys"
	FAKESYS_TIMES=$live/times "$top/build/test/fakesys" "$live/back" /dev/null "$live/sys" \
		</dev/null >"$work/fakesys.out" 2>&1 &
	fspid=$!
	local i
	for ((i = 0; i < 500; i++)); do
		mountpoint -q "$live/sys" && break
		sleep 0.01
	done
	mountpoint -q "$live/sys" || { cat "$work/fakesys.out" >&2; exit 1; }
	mount --bind "$live/sys" /sys
	# driverctl runs /sbin/modprobe unless /sys/module/DRIVER exists
	# (the module is vfio_pci, the driver vfio-pci): never the host's.
	mount --bind /bin/true /usr/sbin/modprobe
}

# ---- the tools ----

ids() {
	local kind=$1 n=$2 i
	for ((i = 0; i < n; i++)); do
		if [[ $kind == pci ]]; then pci_id $i; else usb_id $i; fi
		echo
	done
}

# cmd TOOL N [direct]: the command line in CMD for TOOL applying N rules
# (usbip and drvbind-usb on the usb tree, the others on the pci tree).
# Tools that take one device per run are run once per rule from a
# busybox sh loop, as a boot script would, unless `direct` (N = 1).
# LP is the LD_PRELOAD the run needs: usbip's libudev sees sysfs only
# through sysfsmagic.so; everything else runs without.
cmd() {
	local t=$1 n=$2 direct=${3-} d
	local -a devs
	LP=
	mapfile -t devs < <(ids "$(kind "$t")" "$n")
	case $t in
	drvbind | drvbind-usb)
		local -a rules=()
		for d in "${devs[@]}"; do
			if [[ $t == drvbind ]]; then rules+=("pci/$d:vfio-pci"); else rules+=("usb/$d:usbip-host"); fi
		done
		if ((n <= rules_max)); then
			CMD=("$BIN" "${rules[@]}")
		else
			# one run takes RULES_MAX rules: more are several runs
			local script='' i
			for ((i = 0; i < n; i += rules_max)); do
				script+="$BIN ${rules[*]:i:rules_max}; "
			done
			CMD=(busybox sh -c "$script")
		fi ;;
	script) CMD=(busybox sh "$SCRIPT" 10) && for d in "${devs[@]}"; do CMD+=("pci/$d:vfio-pci"); done ;;
	dpdk-devbind) CMD=(dpdk-devbind.py -b vfio-pci "${devs[@]}") ;;
	driverctl)
		if [[ -n $direct ]]; then
			CMD=(driverctl --nosave set-override "${devs[0]}" vfio-pci)
		else
			CMD=(busybox sh -c 'for d; do driverctl --nosave set-override "$d" vfio-pci; done' sh "${devs[@]}")
		fi ;;
	usbip)
		LP=$MAGIC
		if [[ -n $direct ]]; then
			CMD=(usbip bind -b "${devs[0]}")
		else
			CMD=(busybox sh -c 'for b; do usbip bind -b "$b"; done' sh "${devs[@]}")
		fi ;;
	esac
}

kind() { case $1 in usbip | drvbind-usb) echo usb ;; *) echo pci ;; esac; }
target() { case $1 in usbip | drvbind-usb) echo usbip-host ;; *) echo vfio-pci ;; esac; }
# the drvbind run a peer is compared with
base() { case $1 in usbip) echo drvbind-usb ;; *) echo drvbind ;; esac; }

# bound TOOL N: did every device end on the target driver?
bound() {
	local k
	k=$(kind "$1")
	[[ $(find "$live/back/bus/$k/drivers/$(target "$1")" -maxdepth 1 -type l ! -name module | wc -l) == "$2" ]]
}

fail() {
	say "bench: $*"
	echo "$*" >>"$data/failures"
}

# ---- figures ----

# Files a run opened or executed (regular files outside /sys, /proc,
# /dev and the work directory with the trees): what it needs installed.
footprint() {
	local t=$1 f p bytes=0
	local -A seen=() pk=()
	load "$(kind "$t")-1"
	cmd "$t" 1 direct
	LD_PRELOAD=$LP strace -f -qq -e trace=execve,open,openat -o "$work/fp.$t" "${CMD[@]}" >/dev/null 2>&1
	bound "$t" 1 || fail "footprint: $t did not bind"
	while IFS= read -r f; do
		f=$(readlink -f "$f") || continue
		[[ -f $f && -z ${seen[$f]-} ]] || continue
		case $f in /sys/* | /proc/* | /dev/* | "$work"/* | "$MAGIC") continue ;; esac
		seen[$f]=1
		bytes=$((bytes + $(stat -c %s "$f")))
	done < <(sed -n 's/^[0-9]* *\(execve\|open\|openat\)(\([A-Z_]*, \)\{0,1\}"\([^"]*\)".*= [0-9][0-9]*$/\3/p' "$work/fp.$t")
	# One dpkg -S for all the files (it is slow to start), each also
	# without /usr/: dpkg may know it by its path before the /usr merge.
	# Its lines are "PKG[:ARCH][, PKG...]: PATH".
	while IFS= read -r p; do
		pk[$p]=1
	done < <(for f in "${!seen[@]}"; do echo "$f"; echo "${f/#\/usr\//\/}"; done | sort -u |
		xargs -r dpkg -S 2>/dev/null | grep -v '^diversion ' |
		awk '{ sub(/: \/.*/, ""); n = split($0, a, ", "); for (i = 1; i <= n; i++) { sub(/:.*/, "", a[i]); print a[i] } }')
	load "$(kind "$t")-1"
	peak=$(LD_PRELOAD=$LP "$BENCHRUN" -m "${CMD[@]}" 2>/dev/null | sed -n 's/^peak_kb //p')
	load "$(kind "$t")-1"
	LD_PRELOAD=$LP strace -f -c -o "$work/heap.$t" "${CMD[@]}" >/dev/null 2>&1
	heap=$(awk '$NF == "brk" || $NF == "mmap" { n += $4 } END { print n + 0 }' "$work/heap.$t")
	echo "$t $bytes ${#seen[@]} ${#pk[@]} $peak $heap ${!pk[*]}" >>"$data/footprint"
}

# calls_of: the system calls of the run of CMD (with LP), every process
calls_of() {
	LD_PRELOAD=$LP strace -f -c -o "$work/sc" "${CMD[@]}" >/dev/null 2>&1
	awk '$NF == "total" { print $4 }' "$work/sc"
}

# instructions_of: the instructions of the run of CMD (with LP), every process
instructions_of() {
	rm -rf "$work/cg"
	mkdir -p "$work/cg"
	LD_PRELOAD=$LP valgrind -q --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$work/cg/cg.%p" "${CMD[@]}" >/dev/null 2>&1
	awk '/^summary:/ { n += $2 } END { print n + 0 }' "$work"/cg/cg.*
}

# wall_of: the wall time of the run of CMD (with LP) in ns, in NS. To a
# file, and in no subshell: a reader in a pipe would start up beside the
# timed run, on its CPU (1.4 ms more for one drvbind rule).
wall_of() {
	LD_PRELOAD=$LP "$BENCHRUN" "${CMD[@]}" 2>/dev/null </dev/null >"$live/run"
	read -r NS _ < <(tail -1 "$live/run")
}

# syscalls TOOL N: how many system calls the whole run makes
syscalls() {
	load "$(kind "$1")-$2"
	cmd "$1" "$2"
	calls_of
	bound "$1" "$2" || fail "syscalls: $1 $2 did not bind"
}

# instructions TOOL N: instructions executed, every process of the run
instructions() {
	load "$(kind "$1")-$2"
	cmd "$1" "$2"
	instructions_of
	bound "$1" "$2" || fail "instructions: $1 $2 did not bind"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ---- the run ----

say "bench: building trees"
for n in $sizes; do
	tree "pci-$n" pci "$n"
	tree "usb-$n" usb "$n"
done
[[ -d $work/trees/pci-1 ]] || tree pci-1 pci 1
[[ -d $work/trees/usb-1 ]] || tree usb-1 usb 1
tree pci-late pci 1 late
tree pci-none pci 1
# One CPU for the fake kernel and every tool run on it. Each sysfs
# operation on the fake is a round trip between two processes, which on
# this virtual machine's two CPUs took from nothing to a few hundred µs
# more at random (the likely cause: one CPU waiting for the other to
# wake from idle): one drvbind run of 10 round trips took 0.95 to 1.93
# ms (10th to 90th percentile of 40), on one CPU 0.57 to 0.81 ms. sysfs
# in the kernel runs in the caller and has no such hand-over. QEMU gets
# every CPU back.
cpus=$(taskset -pc $$ | sed 's/.*: //')
taskset -pc "${cpus%%[,-]*}" $$ >/dev/null || { say "bench: cannot keep to one CPU of $cpus"; exit 1; }
mount_fake
# what the report says: the fake's CPUs, the tools' (this shell's), all
for p in "$fspid" $$; do taskset -pc "$p" | sed 's/.*: //'; done >"$data/cpus"
echo "$cpus" >>"$data/cpus"

say "bench: footprint"
for t in $tools; do footprint "$t"; done

say "bench: system calls and instructions ($small and $big rules)"
for t in drvbind drvbind-usb script driverctl dpdk-devbind usbip; do
	echo "$t $(syscalls "$t" "$small") $(syscalls "$t" "$big")" >>"$data/syscalls"
	# a smoke run spares itself Python under valgrind (20 s)
	((quick)) && [[ $t == dpdk-devbind ]] && continue
	echo "$t $(instructions "$t" "$small") $(instructions "$t" "$big")" >>"$data/instructions"
done
# drvbind's calls for one present rule, every one
load pci-1
cmd drvbind 1
strace -o "$data/strace-one" "${CMD[@]}" >/dev/null 2>&1

say "bench: wall time, $rounds rounds"
for ((r = 1; r <= rounds; r++)); do
	for n in $sizes; do
		# A B A B: every tool once per round, the order turned each round
		set -- drvbind drvbind-usb script driverctl dpdk-devbind usbip
		for ((k = 0; k < (r - 1) % $#; k++)); do set -- "${@:2}" "$1"; done
		for t; do
			load "$(kind "$t")-$n"
			cmd "$t" "$n"
			wall_of
			bound "$t" "$n" || fail "wall: $t $n did not bind"
			echo "$t $n $NS" >>"$data/wall"
		done
	done
	say "  round $r done"
done

say "bench: appear-to-bound latency on the fake kernel, $lat_rounds rounds"
read -r plink ptarget pdev pbus <"$work/trees/pci-late.plug"
lid=${plink##*/}
for ((r = 1; r <= lat_rounds; r++)); do
	for t in drvbind script; do
		load pci-late
		if [[ $t == drvbind ]]; then
			"$BIN" -t 10 "pci/$lid:vfio-pci" >/dev/null 2>&1 &
		else
			busybox sh "$SCRIPT" 10 "pci/$lid:vfio-pci" >/dev/null 2>&1 &
		fi
		pid=$!
		# The script polls every 0.1 s: the device comes at a different
		# point of that period each round, evenly over it.
		sleep "$(awk -v r="$r" -v n="$lat_rounds" 'BEGIN { printf "%.3f\n", 0.3 + (r - 1) * 0.1 / n }')"
		t0=$("$BENCHRUN" -p "$live/back/$plink" "$ptarget" "$pdev" "$pbus")
		wait "$pid"
		t1=$(awk -v p="bus/pci/drivers/vfio-pci/bind $lid" '$NF == "ok" && index($0, p) { print $1; exit }' "$live/times")
		if [[ -z $t1 ]]; then
			fail "latency: $t did not bind"
			continue
		fi
		echo "$t $(((t1 - t0) / 1000))" >>"$data/latency"
	done
done

say "bench: cost of waiting ${wait_s} s for a device that never comes"
from=$((wait_s * 1000 / 5)) to=$((wait_s * 1000 * 4 / 5))
for t in drvbind script; do
	load pci-none
	if [[ $t == drvbind ]]; then
		set -- "$BIN" -t "$wait_s" pci/0000:ff:00.0:vfio-pci
	else
		set -- busybox sh "$SCRIPT" "$wait_s" pci/0000:ff:00.0:vfio-pci
	fi
	res=$("$BENCHRUN" -w "$from" "$to" "$@" 2>/dev/null)
	wk=$(sed -n 's/^wakeups //p' <<<"$res")
	read -r ns ut st _ <<<"$(tail -1 <<<"$res")"
	echo "$t $wk $(((ut + st) / 1000)) $((to - from))" >>"$data/waiting"
done

# shellcheck source=test/bench/follow.sh
. "$top/test/bench/follow.sh"
if ((quick)); then
	follow_bench 3 3 1 0.5
else
	follow_bench "${BENCH_REPLUGS:-100}" "${BENCH_REPLUGS:-100}" 10 10
fi

# shellcheck source=test/bench/sets.sh
. "$top/test/bench/sets.sh"
# a smoke run's set is small: driverctl runs bash and its tools for each
# device, under valgrind too
if ((quick)); then set_bench 8 1; else set_bench 64 "$rounds"; fi

# shellcheck source=test/bench/lockdown.sh
. "$top/test/bench/lockdown.sh"
# more ports than the table has places, even in a smoke run: a follower
# that kept the places of the sticks gone would fill it
if ((quick)); then
	lockdown_bench 300 150
else
	lockdown_bench "${BENCH_PLUGS:-10000}" 1000
fi

[[ $(cksum <"$BIN") == "$bin_sum" ]] || echo "${bin_sum##* } $(stat -c %s "$BIN")" >"$data/rebuilt"

say "bench: writing $out"
umount -l /sys
umount /usr/sbin/modprobe
taskset -pc "$cpus" $$ >/dev/null
if ((qemu)); then
	say "bench: the real kernel under QEMU"
	if "$top/test/bench/qemu.sh" "$work/qemu" "$lat_rounds" >&2; then
		cp "$work/qemu/results" "$data/qemu"
	else
		fail "qemu: no results"
	fi
fi
"$top/test/bench/report.sh" "$data" "$out" "$quick" "$rounds" "$lat_rounds" "$wait_s" "$sizes"
