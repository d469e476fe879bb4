#!/bin/bash
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2016 # shell code for busybox sh, quoted on purpose
# The tables and charts of `make bench` from the numbers bench.sh
# collected: prints the tables, writes OUT/RESULTS.md, OUT/walltime.svg
# and OUT/latency.svg.
#
#   test/bench/report.sh DATA OUT QUICK ROUNDS LAT_ROUNDS WAIT_S "SIZES"
set -u
data=$1 out=$2 quick=$3 rounds=$4 lat_rounds=$5 wait_s=$6 sizes=$7
small=${sizes%% *} big=${sizes#* } big=${big%% *}
peers="script driverctl dpdk-devbind usbip"
# the drvbind run each peer is compared with: the same job on the same tree
base() { case $1 in usbip) echo drvbind-usb ;; *) echo drvbind ;; esac; }

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ratio PEER DRVBIND: how many times drvbind's figure the peer's is
ratio() {
	awk -v p="$1" -v d="$2" 'BEGIN {
		if (p == "" || d == "") print "n/a"
		else if (d == 0 && p == 0) print "1x"
		else if (d == 0) print "inf"
		else printf "%.1fx\n", p / d }'
}
field() { awk -v t="$1" -v c="$3" '$1 == t { print $c; exit }' "$data/$2"; }
wall_ms() { awk -v t="$1" -v n="$2" '$1 == t && $2 == n { print $3 / 1e6 }' "$data/wall" | median; }
lat_ms() { awk -v t="$1" '$1 == t { print $2 / 1000 }' "$data/latency" | median; }
qemu() { [[ -f $data/qemu ]] && awk -v k="$1" -v t="$2" '$1 == k && $2 == t { print $3 }' "$data/qemu"; }
# qlat_ms CASE TOOL: median QEMU latency, or "failed N/M" when some rounds did not bind
qlat_ms() {
	local ok bad
	ok=$(qemu "lat.$1" "$2" | wc -l)
	bad=$([[ -f $data/qemu ]] && awk -v k="fail.$1" -v t="$2" '$1 == k && $2 == t' "$data/qemu" | wc -l)
	if ((bad)); then
		echo "failed $bad/$((ok + bad))"
	else
		qemu "lat.$1" "$2" | awk '{ print $1 / 1000 }' | median
	fi
}
num() { [[ $1 =~ ^[0-9.]+$ ]] && echo "$1"; }
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { if (v == "") print "n/a"; else printf f "\n", v }'; }
# fol KEY COLUMN: a figure of the follower's runs (follow.sh)
fol() { [[ -f $data/follow ]] && awk -v k="$1" -v c="$2" '$1 == k { print $c; exit }' "$data/follow"; }
# div A B FORMAT: A / B, empty where a figure is missing
div() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (a == "" || b == "" || b == 0) print ""; else printf f "\n", a / b }'; }
# per replug: drvbind's N replugs less none, driverctl's runs
fsc() { div "$(($(fol drvbind 4) - $(fol drvbind 3)))" "$(fol drvbind 2)" %.1f; }
fir() { div "$(($(fol drvbind 6) - $(fol drvbind 5)))" "$(fol drvbind 2)" %.0f; }
dsc() { div "$(fol driverctl 3)" "$(fol driverctl 2)" %.1f; }
dir() { div "$(fol driverctl 5)" "$(fol driverctl 4)" %.0f; }
# rest COLUMN: the idle follower (follow.sh: fquiet), or n/a
rest() { fmt "$(fol rest "$1")" %s; }

# setf TOOL COLUMN: a figure of the set's runs (sets.sh); setw TOOL: its wall time, ms.
# A tool's line is "TOOL CALLS INSTRUCTIONS"; a wall time's, "wall TOOL NS", as long.
setf() { [[ -f $data/sets ]] && awk -v t="$1" -v c="$2" 'NF == 3 && $1 == t { print $c; exit }' "$data/sets"; }
setw() { [[ -f $data/sets ]] && awk -v t="$1" '$1 == "wall" && $2 == t { print $3 / 1e6 }' "$data/sets" | median; }
# lkd KEY COLUMN: a figure of the lockdown's run (lockdown.sh), or empty
lkd() { [[ -f $data/lockdown ]] && awk -v k="$1" -v c="$2" '$1 == k { print $c; exit }' "$data/lockdown"; }
# lkr FIGURE POINT: the follower's RSS (1), address space (2) or open
# files (3) at its start (0), after a round of the ports (1), after the
# storm (2), after the wide devices (3)
lkr() { fmt "$(lkd rest $((2 + 3 * $2 + $1 - 1)))" %s; }
# the lockdown's checks, 1 where met: every plug held, the set never full
# in the storm, one hold said a plug; the wide devices' interfaces held;
# the RSS from the storm's first round to its last, the address space
# and the open files from the start to the end, the same
lk_held_ok() {
	awk -v n="$(lkd storm 2)" -v ok="$(lkd storm 4)" -v over="$(lkd storm 6)" -v said="$(lkd storm 7)" \
		-v w="$(lkd wide 2)" -v per="$(lkd wide 3)" -v wok="$(lkd wide 4)" \
		'BEGIN { exit !(n > 0 && ok == n && over == 0 && said == n && w * per > 0 && wok == w * per) }'
}
lk_flat_ok() {
	local f
	[[ $(lkr 1 1) == "$(lkr 1 2)" && $(lkr 1 1) != n/a ]] || return 1
	for f in 2 3; do
		[[ $(lkr "$f" 0) == "$(lkr "$f" 2)" && $(lkr "$f" 2) == "$(lkr "$f" 3)" && $(lkr "$f" 0) != n/a ]] || return 1
	done
}

# the set's tools, in the order sets.sh measured them
set_tools=$([[ -f $data/sets ]] && awk 'NF == 3 && $1 != "wall" { print $1 }' "$data/sets")

# per extra rule, from the small and the big run
per() { awk -v a="$1" -v b="$2" -v s="$small" -v g="$big" 'BEGIN { printf "%.1f\n", (b - a) / (g - s) }'; }

tables() {
	local t b v bv

	echo "### 1. Footprint"
	echo
	echo "What a run opens or executes (binary or script, interpreter, libraries, modules; one rule, traced), the Debian packages those files belong to, the largest peak RSS (VmHWM) of any of its processes, and its heap calls (brk + mmap)."
	echo
	echo "| tool | bytes to run | files | packages | peak RSS KiB | heap calls | bytes vs drvbind | RSS vs drvbind |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for t in drvbind $peers; do
		echo "| $t | $(field "$t" footprint 2) | $(field "$t" footprint 3) | $(field "$t" footprint 4) | $(field "$t" footprint 5) | $(field "$t" footprint 6) | $(ratio "$(field "$t" footprint 2)" "$(field drvbind footprint 2)") | $(ratio "$(field "$t" footprint 5)" "$(field drvbind footprint 5)") |"
	done
	echo
	for t in $peers; do
		echo "- $t: $(cut -d' ' -f7- <<<"$(grep "^$t " "$data/footprint")")"
	done
	echo

	echo "### 2. System calls (strace -f -c), devices already present"
	echo
	echo "| tool | $small rule(s) | $big rules | per rule | vs $(base x) per rule |"
	echo "|---|---:|---:|---:|---:|"
	for t in drvbind drvbind-usb $peers; do
		b=$(base "$t")
		v=$(per "$(field "$t" syscalls 2)" "$(field "$t" syscalls 3)")
		bv=$(per "$(field "$b" syscalls 2)" "$(field "$b" syscalls 3)")
		echo "| $t | $(field "$t" syscalls 2) | $(field "$t" syscalls 3) | $v | $(ratio "$v" "$bv") |"
	done
	echo
	echo "Per rule: (calls for $big rules - calls for $small) / $((big - small)). usbip is compared with drvbind-usb (the same USB job); every other peer with drvbind on the PCI tree."
	echo

	echo "### 3. Instructions (valgrind --tool=callgrind, every process)"
	echo
	echo "| tool | $small rule(s) | $big rules | per rule | vs drvbind, $small rule(s) | vs drvbind, per rule |"
	echo "|---|---:|---:|---:|---:|---:|"
	for t in drvbind drvbind-usb $peers; do
		# the smoke run (-q) leaves dpdk-devbind (Python) out here
		grep -q "^$t " "$data/instructions" || continue
		b=$(base "$t")
		v=$(per "$(field "$t" instructions 2)" "$(field "$t" instructions 3)")
		bv=$(per "$(field "$b" instructions 2)" "$(field "$b" instructions 3)")
		echo "| $t | $(field "$t" instructions 2) | $(field "$t" instructions 3) | $v | $(ratio "$(field "$t" instructions 2)" "$(field "$b" instructions 2)") | $(ratio "$v" "$bv") |"
	done
	echo

	echo "### 4. Wall time (ms, median of $rounds rounds, A B A B)"
	echo
	printf '| tool |'
	for n in $sizes; do printf ' %s rule(s) | vs drvbind |' "$n"; done
	echo
	printf '|---|'
	for n in $sizes; do printf -- '---:|---:|'; done
	echo
	for t in drvbind drvbind-usb $peers; do
		b=$(base "$t")
		printf '| %s |' "$t"
		for n in $sizes; do
			v=$(wall_ms "$t" "$n")
			printf ' %s | %s |' "$(fmt "$v" %.2f)" "$(ratio "$v" "$(wall_ms "$b" "$n")")"
		done
		echo
	done
	echo

	echo "### 5. Appear-to-bound latency (ms, median)"
	echo
	echo "Fake kernel: the device appears (benchrun -p makes its bus link and sends the add uevent, stamping the time) -> the fake kernel's timestamp of the successful bind write; $lat_rounds rounds. QEMU, Debian's kernel under TCG, $lat_rounds rounds each, every time on the kernel's printk clock: *driver appears*: the e1000 at 00:05.0 has no driver, the tool waits for pci-stub, the guest loads it (\"calling pci_stub_init\", initcall_debug) -> \"claimed by stub\"; *device appears*: pci-stub is loaded, 00:05.0 is removed, the tool waits for it, a PCI rescan brings it back (\"pci 0000:00:05.0: [8086:100e]\") -> \"claimed by stub\"."
	echo
	echo "| tool | fake kernel | min | max | vs drvbind | QEMU, driver appears | vs drvbind | QEMU, device appears | vs drvbind |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for t in drvbind script; do
		v=$(lat_ms "$t")
		echo "| $t | $(fmt "$v" %.3f) | $(awk -v t="$t" '$1 == t { print $2 / 1000 }' "$data/latency" | sort -n | head -1) | $(awk -v t="$t" '$1 == t { print $2 / 1000 }' "$data/latency" | sort -n | tail -1) | $(ratio "$v" "$(lat_ms drvbind)") | $(qlat_ms driver "$t") | $(ratio "$(num "$(qlat_ms driver "$t")")" "$(num "$(qlat_ms driver drvbind)")") | $(qlat_ms device "$t") | $(ratio "$(num "$(qlat_ms device "$t")")" "$(num "$(qlat_ms device drvbind)")") |"
	done
	for t in driverctl dpdk-devbind usbip; do
		echo "| $t | does not wait | | | | | | | |"
	done
	echo
	echo "driverctl, dpdk-devbind.py and usbip act only on what is there: at boot udev or a unit starts them once the device exists."
	if [[ -f $data/qemu ]] && grep -q '^fail\.' "$data/qemu"; then
		echo
		echo "Rounds under QEMU that did not end bound, with the tool's message:"
		echo
		sed -n 's/^fail\.\([a-z]*\) \([a-z]*\) \(.*\)/- \1 appears, \2: `\3`/p' "$data/qemu" | sort | uniq -c | sed 's/^ *\([0-9]*\) - \(.*\)/- \2 (x\1)/'
	fi
	echo

	echo "### 6. Cost of waiting ${wait_s} s for a device that never comes"
	echo
	echo "Wake-ups: context switches (voluntary + involuntary, /proc/PID/status) of the waiting process between $((wait_s * 1000 / 5)) ms and $((wait_s * 4000 / 5)) ms after its start. CPU: user + system time of the whole run, children included."
	echo
	echo "| tool | fake: wake-ups/s | fake: CPU ms | vs drvbind (wake-ups) | QEMU: wake-ups/s | QEMU: CPU ms | vs drvbind (wake-ups) |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for t in drvbind script; do
		v=$(awk -v t="$t" '$1 == t { printf "%.1f\n", $2 * 1000 / $4 }' "$data/waiting")
		bv=$(awk '$1 == "drvbind" { printf "%.1f\n", $2 * 1000 / $4 }' "$data/waiting")
		q=$(qemu wake "$t" | awk '{ printf "%.1f\n", $1 }')
		qb=$(qemu wake drvbind | awk '{ printf "%.1f\n", $1 }')
		echo "| $t | $v | $(field "$t" waiting 3) | $(ratio "$v" "$bv") | $(fmt "$q" %s) | $(fmt "$(qemu cpu "$t")" %s) | $(ratio "$q" "$qb") |"
	done
	for t in driverctl dpdk-devbind usbip; do
		echo "| $t | does not wait | | | | | |"
	done
	echo

	local fn q
	fn=$(fol drvbind 2) q=$(fol rest 2)
	echo "### 7. Keeping a rule across replugs (drvbind -f against driverctl's udev + systemd + bash path)"
	echo
	echo "The same replug, the fake kernel's own (\`.fake_ctl\` unplug then replug of 0000:01:00.0: its driver released, the unbind and remove uevents; a new device, its add uevent, e1000 bound by the probe and its bind uevent), answered by drvbind's follower, \`drvbind -f pci/0000:01:00.0:vfio-pci\`, and by what driverctl has done for it: its udev rule (/lib/udev/rules.d/05-driverctl.rules in Debian's driverctl) tags the add of a device that has /etc/driverctl.d/pci-0000:01:00.0 for systemd, which starts driverctl@pci-0000:01:00.0.service, which runs \`driverctl load-override pci/0000:01:00.0\` (%I: the instance unescaped) with a bare environment; here /etc/driverctl.d/pci-0000:01:00.0 says vfio-pci. Per replug, each checked to end on vfio-pci:"
	echo
	echo "- drvbind -f: everything it does for a replug, every uevent of it, the move and its message. System calls: \`strace -c -p\` attached to the running follower over ${fn:-N} replugs, less the same over none, / ${fn:-N}. Instructions: a follower under \`valgrind --tool=callgrind\` through ${fn:-N} replugs, less one through none, / ${fn:-N}."
	echo "- driverctl: its one run after each replug. System calls: \`strace -f -c\` of $(fol driverctl 2) runs, / $(fol driverctl 2); instructions: \`valgrind --tool=callgrind --trace-children=yes\`, every process, $(fol driverctl 4) runs, / $(fol driverctl 4)."
	echo "- Not counted for driverctl: udevd's work on each uevent of the replug (rules read and matched, the TEST of the file, the tag), systemd's start of the unit (the job, the condition, a fork, the cgroup, the exec), modprobe (here /bin/true, as in the tables above), and on a real kernel the second bash that 89-vfio-uio.rules runs for the vfio group's device. udevd takes uevents on the kernel's group from the kernel alone (netlink port id 0), and the fake kernel sends its own from user space, so udevd's share cannot be measured on it. driverctl's figures are a lower bound, in its favour. That systemd starts the unit again for each add of the same device (it is a oneshot with RemainAfterExit=yes) is assumed, not measured."
	echo
	echo "| tool | system calls per replug | instructions per replug | replugs that ended on vfio-pci | calls vs drvbind -f | instructions vs drvbind -f |"
	echo "|---|---:|---:|---:|---:|---:|"
	echo "| drvbind -f | $(fmt "$(fsc)" %s) | $(fmt "$(fir)" %s) | $(fol drvbind 7) of $(fol drvbind 8) | $(ratio "$(fsc)" "$(fsc)") | $(ratio "$(fir)" "$(fir)") |"
	echo "| driverctl | $(fmt "$(dsc)" %s) | $(fmt "$(dir)" %s) | $(fol driverctl 6) of $(fol driverctl 7) | $(ratio "$(dsc)" "$(fsc)") | $(ratio "$(dir)" "$(fir)") |"
	echo
	echo "The follower at rest: after its first pass and after ${fn:-N} replugs, ${q:-?} s without a tracer (its context switches, /proc/PID/status: a voluntary one each time it goes back to sleep, so one a wake-up; an involuntary one each time something else took the CPU from it while it was awake), then ${q:-?} s under \`strace -p\` (every call; its ppoll() returns, on a descriptor or on a timeout), and the uevents that reached the namespace in each: the host kernel's own reach every network namespace of the initial user namespace (other work's FUSE mounts add and remove a bdi device), and each one wakes the follower, which must look at it. A wake-up or ppoll() return of its own would show as more wake-ups than uevents, or as a timeout."
	echo
	echo "| the follower, idle | after its first pass | after ${fn:-N} replugs |"
	echo "|---|---:|---:|"
	echo "| wake-ups in ${q:-?} s (voluntary context switches) | $(rest 7) | $(rest 14) |"
	echo "| preempted while awake (involuntary context switches) | $(rest 8) | $(rest 15) |"
	echo "| uevents that came in those ${q:-?} s | $(rest 9) | $(rest 16) |"
	echo "| system calls in the next ${q:-?} s (strace -p) | $(rest 10) | $(rest 17) |"
	echo "| ppoll() returns on a descriptor | $(rest 11) | $(rest 18) |"
	echo "| ppoll() returns on a timeout | $(rest 12) | $(rest 19) |"
	echo "| uevents that came in those ${q:-?} s | $(rest 13) | $(rest 20) |"
	echo "| RSS KiB (VmRSS) | $(rest 3) | $(rest 4) |"
	echo "| open files | $(rest 5) | $(rest 6) |"
	echo

	local sn
	sn=$([[ -f $data/sets ]] && sed -n 1p "$data/sets")
	echo "### 8. A set of ${sn:-N} functions in one IOMMU group (one rule against vfio-pci-bind's procedure and driverctl)"
	echo
	echo "${sn:-N} e1000 functions (0000:01:00.0 to $(printf '0000:01:%02x.%d' $(((${sn:-1} - 1) / 8)) $(((${sn:-1} - 1) % 8))), eight a slot) behind the bridge 0000:00:01.0, all in IOMMU group 1 with the bridge, to vfio-pci, the bridge left on pcieport; every run checked to end so. drvbind-set is one wildcard rule, drvbind-group one device with its group; group-script is vfio-pci-bind's procedure in busybox sh (test/bench/group.sh: for each device of the group but the bridges, driver_override, unbind, drivers_probe; nothing verified, nothing put back on a failure); driverctl is \`driverctl --nosave set-override DEV vfio-pci\` for each device, from a busybox sh loop. Wall time: median of $rounds rounds, the order turned each round."
	echo
	echo "| tool | system calls | vs drvbind-set | instructions | vs drvbind-set | wall ms | vs drvbind-set |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for t in $set_tools; do
		echo "| $t | $(fmt "$(setf "$t" 2)" %s) | $(ratio "$(setf "$t" 2)" "$(setf drvbind-set 2)") | $(fmt "$(setf "$t" 3)" %s) | $(ratio "$(setf "$t" 3)" "$(setf drvbind-set 3)") | $(fmt "$(setw "$t")" %.2f) | $(ratio "$(setw "$t")" "$(setw drvbind-set)") |"
	done
	echo

	local ln lp lw lper
	ln=$(lkd storm 2) lp=$(lkd storm 3) lw=$(lkd wide 2) lper=$(lkd wide 3)
	echo "### 9. A lockdown through a plug storm (drvbind -f usb/*,bInterfaceClass=08:none)"
	echo
	echo "A follower of \`usb/*,bInterfaceClass=08:none\` (every USB mass-storage interface held: no driver, authorized 0), whose set has 64 places in a table of 128, on the fake kernel. Every device below was in the tree, on its drivers, and unplugged before the follower started. The storm: one stick (0781:5567, one interface of class 08) plugged ${ln:-N} times, port after port at ${lp:-P} ports (1-1 to 1-${lp:-P}), each plug the fake kernel's own (\`.fake_ctl\` replug of the device, then of its interface: the add uevents, the generic usb driver and usb-storage bound by the probes, their bind uevents); the follower let finish (it sleeps in ppoll() with nothing left on its uevent socket); the interface checked held; then the fake kernel's unplug (the interface, then the device: unbind and remove uevents). Then ${lw:-N} devices of ${lper:-N} such interfaces each plugged at once, every replug made without a wait for the follower between them: $((${lw:-0} * ${lper:-0})) interfaces, past the set's 64 places and the table's 128, each checked held."
	echo
	echo "| lockdown | plugs | held (no driver, authorized 0) |"
	echo "|---|---:|---:|"
	echo "| one stick at ${lp:-?} ports in turn | ${ln:-n/a} | $(fmt "$(lkd storm 4)" %s) of ${ln:-?} |"
	echo "| ${lw:-?} devices of ${lper:-?} interfaces at once | $((${lw:-0} * ${lper:-0})) | $(fmt "$(lkd wide 4)" %s) of $((${lw:-0} * ${lper:-0})) |"
	echo
	echo "In the storm the set was full (its line \"more than N devices; held all the same\") $(fmt "$(lkd storm 6)" %s) times: the place in the table of a member whose device has gone is given back. The follower said a hold for $(fmt "$(lkd storm 7)" %s) of the ${ln:-?} plugs. Time per plug, the fake kernel's replug and unplug, the follower's work and the check together (for information: a FUSE fake on a shared machine): $(fmt "$(div "$(lkd storm 5)" "$((${ln:-0} * 1000))" %.2f)" %s) ms, the ${ln:-?} in $(fmt "$(div "$(lkd storm 5)" 1000000 %.0f)" %s) s."
	echo
	echo "The follower's memory is its static image (no heap, no mmap); a page of it counts in its RSS from the first time it is touched: the first hold touches a page of stack, the set's first fill the places of its members in the table. What must not move: the RSS from the storm's first round of the ports to its end, the address space and the open files from its start to the end."
	echo
	echo "| the follower | started | after ${lp:-?} plugs (a round of the ports) | after ${ln:-?} plugs | after the $((${lw:-0} * ${lper:-0})) |"
	echo "|---|---:|---:|---:|---:|"
	echo "| RSS KiB (VmRSS) | $(lkr 1 0) | $(lkr 1 1) | $(lkr 1 2) | $(lkr 1 3) |"
	echo "| address space KiB (VmSize) | $(lkr 2 0) | $(lkr 2 1) | $(lkr 2 2) | $(lkr 2 3) |"
	echo "| open files | $(lkr 3 0) | $(lkr 3 1) | $(lkr 3 2) | $(lkr 3 3) |"
	echo
}

# target NAME MEASURED OK
targets() {
	local fp rss low sc w16 wall_ok n lat wk qwk
	fp=$(field drvbind footprint 2)
	rss=$(field drvbind footprint 5)
	low=$(awk -v r="$rss" '$1 != "drvbind" && $5 <= r { print "no"; exit }' "$data/footprint")
	sc=$(per "$(field drvbind syscalls 2)" "$(field drvbind syscalls 3)")
	w16=$(ratio "$(wall_ms driverctl "$big")" "$(wall_ms drvbind "$big")")
	wall_ok=yes
	for n in $sizes; do
		awk -v a="$(wall_ms drvbind "$n")" -v b="$(wall_ms script "$n")" 'BEGIN { exit !(a < b) }' || wall_ok=no
	done
	lat=$(lat_ms drvbind)
	wk=$(awk '$1 == "drvbind" { print $2 }' "$data/waiting")
	qwk=$(qemu wake drvbind)
	ok() { awk "BEGIN { exit !($1) }" 2>/dev/null && echo met || echo MISSED; }
	echo "| target | measured | |"
	echo "|---|---|---|"
	echo "| static binary <= 32 KiB | $fp bytes | $(ok "$fp <= 32768") |"
	echo "| no heap | $(field drvbind footprint 6) brk/mmap calls | $(ok "$(field drvbind footprint 6) == 0") |"
	echo "| lowest peak RSS | $rss KiB | $([[ -z $low ]] && echo met || echo MISSED) |"
	echo "| <= 12 system calls per present rule | $sc | $(ok "$sc <= 12") |"
	echo "| >= 20x less wall time than driverctl, $big rules | $w16 | $(ok "${w16%x} >= 20") |"
	echo "| faster than the script at every size | $(for n in $sizes; do printf '%s: %s ' "$n" "$(ratio "$(wall_ms script "$n")" "$(wall_ms drvbind "$n")")"; done)| $([[ $wall_ok == yes ]] && echo met || echo MISSED) |"
	echo "| latency <= 1 ms median, fake kernel | $(fmt "$lat" %.3f) ms | $(ok "${lat:-1e9} <= 1") |"
	if [[ -n $qwk ]]; then
		echo "| latency under QEMU clearly below the script's 100 ms poll, driver appears | $(qlat_ms driver drvbind) ms | $(ok "$(num "$(qlat_ms driver drvbind)") < 50") |"
		echo "| latency under QEMU clearly below the script's 100 ms poll, device appears | $(qlat_ms device drvbind) | $(ok "$(num "$(qlat_ms device drvbind)") < 50") |"
		echo "| 0 wake-ups while waiting, real kernel (QEMU) | $qwk /s | $(ok "$qwk == 0") |"
	fi
	echo "| 0 wake-ups while waiting, fake kernel | $wk in $(awk '$1 == "drvbind" { print $4 }' "$data/waiting") ms | $(ok "$wk == 0") |"
	local fok ftot sw ev to r0 r1 d0 d1 rc ri
	fok=$(fol drvbind 7) ftot=$(fol drvbind 8)
	sw="$(fol rest 7) $(fol rest 14)" ev="$(fol rest 9) $(fol rest 16)" to="$(fol rest 12) $(fol rest 19)"
	r0=$(fol rest 3) r1=$(fol rest 4) d0=$(fol rest 5) d1=$(fol rest 6)
	rc=$(ratio "$(dsc)" "$(fsc)") ri=$(ratio "$(dir)" "$(fir)")
	echo "| follower: every replug ends on the rule's driver | ${fok:-?} of ${ftot:-?} | $(ok "${ftot:-0} > 0 && ${fok:--1} == ${ftot:-0}") |"
	echo "| follower: no wake-up of its own while idle (wake-ups <= uevents that came; no ppoll() timeout) | wake-ups ${sw/ / and }, uevents ${ev/ / and }, timeouts ${to/ / and } | $(ok "${sw%% *} <= ${ev%% *} && ${sw##* } <= ${ev##* } && ${to%% *} + ${to##* } == 0") |"
	echo "| follower: the same RSS and open files after $(fol drvbind 2) replugs | RSS ${r0:-?} -> ${r1:-?} KiB, files ${d0:-?} -> ${d1:-?} | $(ok "${r0:--1} == ${r1:--2} && ${d0:--1} == ${d1:--2}") |"
	echo "| follower: less per replug than driverctl's load-override alone | calls ${rc}, instructions ${ri} | $(ok "${rc%x} > 1 && ${ri%x} > 1") |"
	local d p c less=yes seen=
	for d in drvbind-set drvbind-group; do
		for p in group-script driverctl; do
			for c in 2 3; do
				awk -v a="$(setf "$d" "$c")" -v b="$(setf "$p" "$c")" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' || less=no
			done
			awk -v a="$(setw "$d")" -v b="$(setw "$p")" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' || less=no
			seen+="$d vs $p: $(ratio "$(setf "$p" 2)" "$(setf "$d" 2)") calls, $(ratio "$(setf "$p" 3)" "$(setf "$d" 3)") instructions, $(ratio "$(setw "$p")" "$(setw "$d")") time; "
		done
	done
	echo "| set of $(sed -n 1p "$data/sets" 2>/dev/null): either rule takes fewer calls, fewer instructions and less time than vfio-pci-bind's procedure and driverctl | ${seen%; } | $([[ $less == yes ]] && echo met || echo MISSED) |"
	local ln lw lper
	ln=$(lkd storm 2) lw=$(lkd wide 2) lper=$(lkd wide 3)
	echo "| lockdown: every plug of ${ln:-?} at $(lkd storm 3) ports and every one of the ${lw:-?} x ${lper:-?} interfaces held, the set never full in the storm | $(lkd storm 4) of ${ln:-?}, $(lkd wide 4) of $((${lw:-0} * ${lper:-0})), full $(lkd storm 6) times | $(lk_held_ok && echo met || echo MISSED) |"
	echo "| lockdown: the follower's RSS the same from the storm's first round to its end, its address space and open files from its start to the end | RSS $(lkr 1 1) -> $(lkr 1 2) KiB, address space $(lkr 2 0) -> $(lkr 2 3) KiB, files $(lkr 3 0) -> $(lkr 3 3) | $(lk_flat_ok && echo met || echo MISSED) |"
}

charts() {
	local t n
	for t in drvbind drvbind-usb $peers; do
		printf '%s' "$t"
		for n in $sizes; do printf ' %s' "$(wall_ms "$t" "$n")"; done
		echo
	done >"$data/wall.dat"
	for t in drvbind script; do
		# NaN: gnuplot leaves the bar out (a failed or missing case)
		echo "$t $(lat_ms "$t") $(num "$(qlat_ms driver "$t")" || echo NaN) $(num "$(qlat_ms device "$t")" || echo NaN)"
	done >"$data/latency.dat"
	local cols=
	# shellcheck disable=SC2086 # one word per size
	set -- $sizes
	cols="'$data/wall.dat' using 2:xtic(1) title '$1 rule'"
	[[ $# -ge 2 ]] && cols="$cols, '' using 3 title '$2 rules'"
	[[ $# -ge 3 ]] && cols="$cols, '' using 4 title '$3 rules'"
	gnuplot <<EOF
set terminal svg size 720,420 font 'sans,11' background rgb 'white'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set grid ytics
set key top left
set ylabel 'wall time, ms (median, log scale)'
set title 'Applying N rules on the fake kernel (lower is better)'
set output '$out/walltime.svg'
plot $cols
set title 'Device appears -> bound to the wanted driver (lower is better)'
set ylabel 'latency, ms (median, log scale)'
set output '$out/latency.svg'
plot '$data/latency.dat' using 2:xtic(1) title 'fake kernel, device appears'$( [[ -f $data/qemu ]] && echo ", '' using 3 title 'QEMU, driver appears', '' using 4 title 'QEMU, device appears'")
EOF
}

tables | tee "$data/tables.md"
echo "### Targets"
targets | tee "$data/targets.md"
charts

{
	echo "# make bench: drvbind and its peers, side by side"
	echo
	echo "Written by \`make bench\` (test/bench/bench.sh)$( ((quick)) && echo ", smoke mode (-q): too few rounds to mean anything")."
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- machine: $(uname -srm), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs (shared), Debian $(cat /etc/debian_version)"
	echo "- drvbind: build/drvbind, $(stat -c %s "$(dirname "$0")/../../build/drvbind") bytes, commit $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null)"
	if [[ -f $data/rebuilt ]]; then
		read -r b0 b1 <"$data/rebuilt"
		echo "- build/drvbind was rebuilt while the fake kernel's figures were taken (its checksum changed; $b0 bytes at the start, $b1 at the end): they come from two builds"
	fi
	echo "- peers: $(dpkg-query -W -f '${Package} ${Version}, ' driverctl dpdk usbip busybox-static bash python3 pciutils 2>/dev/null | sed 's/, $//')"
	echo "- tools: $(dpkg-query -W -f '${Package} ${Version}, ' strace valgrind gnuplot-nox qemu-system-x86 2>/dev/null | sed 's/, $//')"
	echo
	echo "Charts: [wall time](walltime.svg), [latency](latency.svg)."
	echo
	echo "## How it was run"
	echo
	echo "One fake kernel for all: test/fake/fakesys.c (FUSE) mounted over /sys inside \`unshare -m -n\` (bind mount), so the peers run unmodified and the fake's uevents stay in the namespace; the fake keeps its tree on a tmpfs, as the kernel keeps sysfs in memory; the tree is put back (every device on its native driver) before every run, and 0.2 s pass before the run so that the kernel's work of replacing the tree does not land on it. The fake and every tool run on it share one CPU (\`taskset\`; the fake on CPU $(sed -n 1p "$data/cpus"), the tools on CPU $(sed -n 2p "$data/cpus"), of CPUs $(sed -n 3p "$data/cpus")): each sysfs operation on the fake is a round trip between two processes, and on two CPUs of the machine where this was first measured a round trip took from nothing to a few hundred µs more at random (one drvbind rule: 0.95 to 1.93 ms from the 10th to the 90th percentile, 0.57 to 0.81 ms on one CPU), a hand-over that sysfs in the kernel, running in the caller, does not have. The cost: tools that run programs side by side, as driverctl's pipelines do, have one CPU for them all, and in the latency runs the plugging \`benchrun -p\` shares the CPU with the woken tool. QEMU has every CPU. PCI tree: N e1000s (\`0000:01:00.0\`...) on e1000, each with driver_override, config and class for lspci; target vfio-pci (module vfio_pci). USB tree: N devices \`1-1\`... on the generic usb driver; target usbip-host. The exact command lines, for N devices:"
	echo
	echo '    drvbind       build/drvbind pci/DEV:vfio-pci ...             (drvbind-usb: usb/BUSID:usbip-host ...)'
	echo '    script        busybox sh test/bench/script.sh 10 pci/DEV:vfio-pci ...'
	echo '    driverctl     busybox sh -c '\''for d; do driverctl --nosave set-override "$d" vfio-pci; done'\'' sh DEV ...'
	echo '    dpdk-devbind  dpdk-devbind.py -b vfio-pci DEV ...'
	echo '    usbip         busybox sh -c '\''for b; do usbip bind -b "$b"; done'\'' sh BUSID ...   (LD_PRELOAD=sysfsmagic.so)'
	echo
	echo "- drvbind takes at most $(sed -n 's/^[[:space:]]*RULES_MAX = \([0-9]*\),.*/\1/p' "$(dirname "$0")/../../applet/drvbind.h") rules a run (RULES_MAX, applet/drvbind.h): more rules are that many per run, the runs one after the other from one \`busybox sh -c\`."
	echo "- Footprint: \`strace -f -e trace=execve,open,openat\` of one rule (per-device tools run directly), files summed once each; peak RSS: \`benchrun -m\` (VmHWM of each process at its exit, via ptrace); heap calls: \`strace -f -c\`, brk + mmap."
	echo "- System calls: \`strace -f -c\`, total calls for $small and $big rules."
	echo "- Instructions: \`valgrind --tool=callgrind --trace-children=yes\`, the summary of every process added up."
	echo "- Wall time: \`benchrun CMD\` (fork, exec, wait: CLOCK_MONOTONIC), $rounds rounds; in each round every tool once per size, the order rotated each round; medians."
	echo "- Latency: the tool starts while the device is not plugged; 0.3 s later, and in round r of n (r - 1) × 0.1 / n s more, so that the device comes at a point of the script's 0.1 s poll that moves evenly over it, \`benchrun -p\` makes the bus link and sends the add uevent, stamping CLOCK_MONOTONIC; the fake kernel (FAKESYS_TIMES) stamps the bind write. Under QEMU: test/bench/qemu.sh boots Debian's kernel with an e1000 on e1000; each tool waits, and the guest loads pci-stub (or rescans the bus) 0.5 s after the tool starts, plus a part of 0.1 s that moves from round to round as on the fake kernel."
	echo "- Waiting: \`benchrun -w\` with a rule for a device that never comes and a ${wait_s} s timeout."
	echo "- Keeping a rule across replugs (test/bench/follow.sh): the fake kernel's own unplug and replug (test/fake/fakesys.c, .fake_ctl), the follower let finish each step (it sleeps in ppoll() with nothing left on its uevent socket) before the next; the follower is started with stdin, stdout and stderr alone, as a service manager starts it, so that the files it holds are its own. driverctl runs as systemd would run it: \`env -i PATH=... driverctl load-override pci/DEV\`, stdin /dev/null, /etc/driverctl.d a tmpfs of the namespace."
	echo "- A device set (test/bench/sets.sh): the tree and the command lines are in its section below."
	echo "- A lockdown through a plug storm (test/bench/lockdown.sh): the follower is started as in the replugs above; the tree of the storm's sticks and the wide devices is laid out as test/helper.bash's fake_device lays out a device, checked against it, in one process (fake_device forks a dozen times a device)."
	echo "- usbip's libudev refuses a /sys that is not sysfs by its magic number: it runs with LD_PRELOAD=build/test/sysfsmagic.so, which makes statfs say sysfs for the FUSE mount and changes nothing else. driverctl calls /sbin/modprobe unless /sys/module/DRIVER exists (the module of vfio-pci is vfio_pci): in the namespace /usr/sbin/modprobe is /bin/true, in driverctl's favour."
	echo "- The fake lets the kernel keep the names it has looked up, as the kernel keeps sysfs's dentries; every open, read, write and link read still reaches it by path, and link targets, attributes and missing names are never kept (test/fake/fakesys.c, fs_init). Each operation that reaches it is a round trip to a user-space process, tens of µs on this machine where sysfs in the kernel takes well under one: a tool made of sysfs operations alone, as drvbind and the script are, pays that in full; one that starts interpreters and programs mostly pays for those."
	echo "- drvbind waits on the uevent socket alone, on the fake kernel as on the real one: it re-scans every 250 ms (applet/wait.c, RESCAN_MS) only for a root given with -r or without a uevent socket."
	echo
	echo "## Tables"
	echo
	cat "$data/tables.md"
	echo "### Targets"
	echo
	cat "$data/targets.md"
	echo
	echo "## drvbind's system calls for one present rule"
	echo
	echo '    $ strace build/drvbind pci/0000:01:00.0:vfio-pci'
	sed 's/^/    /' "$data/strace-one"
	if [[ -s $data/strace-replug ]]; then
		echo
		echo "## drvbind's system calls for one replug, following"
		echo
		echo "The follower (\`drvbind -f pci/0000:01:00.0:vfio-pci\`) through one unplug and replug of its device, from the ppoll() it slept in to the one it sleeps in again:"
		echo
		echo '    $ strace -p FOLLOWER'
		sed 's/^/    /' "$data/strace-replug"
	fi
	if [[ -f $data/failures ]]; then
		echo
		echo "## Runs that did not end bound"
		echo
		sed 's/^/- /' "$data/failures"
	fi
} >"$out/RESULTS.md"
