#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# make bench in its smoke mode (test/bench/bench.sh -q: one round, 1 and
# 2 rules, 2 s waits, 3 replugs, a set of 8, 300 plugs at 150 ports, no
# QEMU), once for the file, so that the
# benchmark cannot rot: every tool must really do the job on the fake
# kernel and every table and chart must come out filled. The figures
# themselves are not checked here: on a shared machine they are noise.

load helper

setup() { :; }
teardown() { :; }

setup_file() {
	OUT=$BATS_FILE_TMPDIR/out
	"$BATS_TEST_DIRNAME/bench/bench.sh" -q -o "$OUT" >"$BATS_FILE_TMPDIR/stdout" 2>"$BATS_FILE_TMPDIR/stderr"
	echo $? >"$BATS_FILE_TMPDIR/status"
}

results() {
	R=$BATS_FILE_TMPDIR/out/RESULTS.md
	cat "$BATS_FILE_TMPDIR/stderr"
	[ "$(cat "$BATS_FILE_TMPDIR/status")" = 0 ]
	[ -s "$R" ]
}

# rows TABLE-HEADING: the table's data rows
rows() {
	awk -v h="$1" 'index($0, h) == 1 { on = 1; next } on && /^### / { exit } on && /^\| [a-z]/' "$R" |
		grep -v '^| tool |'
}

@test "the smoke run ends with every tool's every run bound to the wanted driver" {
	results
	run grep -c 'did not bind\|did not end bound' "$R"
	echo "$output"
	[ "$output" = 0 ]
}

@test "the smoke run prints the nine figures and the targets, and writes the same tables" {
	results
	for h in "### 1. Footprint" "### 2. System calls" "### 3. Instructions" \
		"### 4. Wall time" "### 5. Appear-to-bound latency" \
		"### 6. Cost of waiting" "### 7. Keeping a rule across replugs" \
		"### 8. A set of 8 functions in one IOMMU group" \
		"### 9. A lockdown through a plug storm" "### Targets"; do
		grep -qF "$h" "$BATS_FILE_TMPDIR/stdout" || { echo "stdout lacks $h"; return 1; }
		grep -qF "$h" "$R" || { echo "RESULTS.md lacks $h"; return 1; }
	done
}

@test "the footprint gives drvbind the binary's own size, one file, no package, no heap call" {
	results
	rows "### 1. Footprint" | grep -Fx "$(printf '| drvbind | %s | 1 | 0 | %s | 0 | 1.0x | 1.0x |' \
		"$(wc -c <"$BIN")" "$(rows '### 1. Footprint' | awk -F' [|] ' '$1 == "| drvbind" { print $5 }')")"
	# a peak RSS in KiB, more than nothing
	rows "### 1. Footprint" | awk -F' [|] ' '$1 == "| drvbind" { exit !($5 > 0) }'
}

@test "the system call, instruction and wall time tables have a number and a ratio for every tool" {
	results
	for h in "### 2. System calls" "### 4. Wall time"; do
		for t in drvbind drvbind-usb script driverctl dpdk-devbind usbip; do
			rows "$h" | grep -E "^\| $t( \| [0-9.]+x?)+ \|$" ||
				{ echo "$h: no full row for $t:"; rows "$h"; return 1; }
		done
	done
	# -q leaves Python under valgrind out
	for t in drvbind drvbind-usb script driverctl usbip; do
		rows "### 3. Instructions" | grep -E "^\| $t( \| [0-9.]+x?)+ \|$" ||
			{ echo "instructions: no full row for $t:"; rows "### 3. Instructions"; return 1; }
	done
}

@test "the latency and waiting tables measure drvbind and the script, and say the others do not wait" {
	results
	for h in "### 5. Appear-to-bound latency" "### 6. Cost of waiting"; do
		# the ratio is inf where drvbind's own figure is 0 (no wake-ups)
		rows "$h" | grep -E '^\| drvbind \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x? '
		rows "$h" | grep -E '^\| script \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+x?|inf) '
		for t in driverctl dpdk-devbind usbip; do
			rows "$h" | grep -E "^\| $t \| does not wait \|"
		done
	done
}

@test "the wall time and latency charts are SVG drawings with a bar per tool" {
	results
	for c in walltime latency; do
		f=$BATS_FILE_TMPDIR/out/$c.svg
		head -c 200 "$f" | grep -q '<?xml'
		grep -q '<svg' "$f"
		grep -q '>drvbind<' "$f"
		grep -q '>script<' "$f"
	done
	grep -q '>driverctl<' "$BATS_FILE_TMPDIR/out/walltime.svg"
}

@test "RESULTS.md says on what machine, when and with which command lines it was measured" {
	results
	grep -q "^- date: 20[0-9][0-9]-" "$R"
	# every CPU: the run keeps to one only while it measures on the fake
	grep -qF -- "- machine: $(uname -srm), " "$R"
	grep -qF ", $(nproc) CPUs (shared), " "$R"
	grep -qF 'dpdk-devbind.py -b vfio-pci DEV' "$R"
	grep -qF 'driverctl --nosave set-override' "$R"
	grep -qF '$ strace build/drvbind pci/0000:01:00.0:vfio-pci' "$R"
}

@test "the fake kernel and every tool run on it share one CPU, and RESULTS.md says which" {
	results
	grep -o 'the fake on CPU [^)]*' "$R"
	grep -qE 'the fake on CPU ([0-9]+), the tools on CPU \1,' "$R"
}

@test "across replugs, the follower's system calls and instructions per replug stand beside driverctl's, with ratios, and every replug ended on the rule's driver" {
	results
	# drvbind -f: its figures, N of N replugs on vfio-pci (N > 0), itself 1.0x
	rows "### 7. Keeping a rule across replugs" |
		grep -E '^\| drvbind -f \| [0-9]+\.[0-9] \| [0-9]+ \| ([1-9][0-9]*) of \1 \| 1\.0x \| 1\.0x \|$' ||
		{ echo "no full row for drvbind -f:"; rows "### 7. Keeping a rule across replugs"; return 1; }
	rows "### 7. Keeping a rule across replugs" |
		grep -E '^\| driverctl \| [0-9]+\.[0-9] \| [0-9]+ \| ([1-9][0-9]*) of \1 \| [0-9.]+x \| [0-9.]+x \|$' ||
		{ echo "no full row for driverctl:"; rows "### 7. Keeping a rule across replugs"; return 1; }
	grep -qF '| follower: every replug ends on the rule'"'"'s driver | ' "$R"
	grep -F '| follower: every replug ends on the rule'"'"'s driver | ' "$R" | grep -q '| met |$'
}

@test "a set of functions in one IOMMU group has calls, instructions and wall time for both rules and both peers, each ended on vfio-pci" {
	results
	local t
	for t in drvbind-set drvbind-group group-script driverctl; do
		rows "### 8. A set of 8 functions" | grep -E "^\| $t \| [0-9]+ \| [0-9.]+x \| [0-9]+ \| [0-9.]+x \| [0-9.]+ \| [0-9.]+x \|$" ||
			{ echo "no full row for $t:"; rows "### 8. A set of 8 functions"; return 1; }
	done
	rows "### 8. A set of 8 functions" | grep -E '^\| drvbind-set( \| [0-9.]+ \| 1\.0x){3} \|$'
	# those four rows, and no other
	got=$(rows "### 8. A set of 8 functions" | cut -d'|' -f2 | tr -d ' ' | tr '\n' ' ')
	[ "$got" = "drvbind-set drvbind-group group-script driverctl " ] || { echo "the set's rows are: $got"; return 1; }
	grep -F '| set of 8: either rule takes ' "$R"
	grep -qF 'test/bench/group.sh' "$R"
}

@test "the idle follower's wake-ups, system calls, RSS and open files are numbers, and its RSS and files are the same after the replugs" {
	results
	local h="| the follower, idle |" r
	for r in "wake-ups in " "preempted while awake" "uevents that came in those " "system calls in the next " \
		"ppoll() returns on a descriptor" "ppoll() returns on a timeout" "RSS KiB (VmRSS)" "open files"; do
		awk -v h="$h" 'index($0, h) == 1 { on = 1; next } on && !/^\|/ { exit } on' "$R" |
			grep -F "| $r" | grep -qE '\| [0-9]+ \| [0-9]+ \|$' ||
			{ echo "no figures for: $r"; sed -n "/^| the follower, idle/,/^$/p" "$R"; return 1; }
	done
	sed -n '/^| the follower, idle/,/^$/p' "$R" | awk -F' [|] ' '$1 == "| RSS KiB (VmRSS)" || $1 == "| open files" { split($3, a, " "); if ($2 != a[1]) exit 1 }'
	# its system calls for one replug, listed: the move's bind, and back to sleep
	sed -n "/^## drvbind's system calls for one replug, following/,/^## /p" "$R" >"$BATS_FILE_TMPDIR/replug"
	grep -qE '^    write\([0-9]+, "0000:01:00.0", 12\) += 12$' "$BATS_FILE_TMPDIR/replug"
	tail -1 "$BATS_FILE_TMPDIR/replug" | grep -q '^    ppoll(.*<detached \.\.\.>$'
}

@test "a lockdown through a plug storm holds every plug of the stick and every interface past the set's limits, and the follower's RSS, address space and open files stay the same" {
	results
	awk 'index($0, "### 9. A lockdown through a plug storm") == 1 { on = 1; next } on && /^#/ { exit } on' "$R" \
		>"$BATS_FILE_TMPDIR/lockdown"
	cat "$BATS_FILE_TMPDIR/lockdown"
	grep -qx '| one stick at 150 ports in turn | 300 | 300 of 300 |' "$BATS_FILE_TMPDIR/lockdown"
	grep -qx '| 4 devices of 32 interfaces at once | 128 | 128 of 128 |' "$BATS_FILE_TMPDIR/lockdown"
	grep -qF 'the set was full (its line "more than N devices; held all the same") 0 times' "$BATS_FILE_TMPDIR/lockdown"
	grep -qF 'The follower said a hold for 300 of the 300 plugs.' "$BATS_FILE_TMPDIR/lockdown"
	grep -qE 'Time per plug, .*: [0-9.]+ ms, the 300 in [0-9]+ s\.' "$BATS_FILE_TMPDIR/lockdown"
	# started, after a round of the ports, after the storm, after the 128:
	# the RSS the same through the storm, the rest from start to end
	awk -F' [|] ' '$1 == "| RSS KiB (VmRSS)" { r = $3 == $4 && $4 ~ /^[0-9]+$/ }
		$1 == "| address space KiB (VmSize)" || $1 == "| open files" {
			sub(/ [|]$/, "", $5); s += $2 == $3 && $3 == $4 && $4 == $5 && $2 ~ /^[0-9]+$/ }
		END { exit !(r && s == 2) }' "$BATS_FILE_TMPDIR/lockdown"
	[ "$(grep -c '^| lockdown: .* | met |$' "$R")" -eq 2 ]
}
