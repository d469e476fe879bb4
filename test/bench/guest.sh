# SPDX-License-Identifier: MIT
# make bench, the real-kernel half: sourced by the test guest's /init
# (test/qemu/guest/init) as scenario "bench", with lib.sh loaded.
# Results on fd 3, one round a line:
#   lat.driver TOOL US	pci-stub registers -> the e1000 at 00:05.0 bound to it
#   lat.device TOOL US	00:05.0 appears (PCI rescan) -> bound to pci-stub
#   fail.CASE TOOL MESSAGE	the tool did not bind it (its message)
#   wake TOOL PER_S, cpu TOOL MS	waiting for a device that never comes
#
# The e1000 module is never loaded: nothing else wants the device. All
# times are the kernel's own printk clock: initcall_debug logs "calling
# pci_stub_init" as the module's init (which registers the driver)
# starts, the PCI core logs "pci 0000:00:05.0: [8086:100e] ..." as it
# enumerates the device, and pci-stub's probe logs "claimed by stub".
dev=0000:00:05.0
rounds=1
for arg in $(cat /proc/cmdline); do # shellcheck disable=SC2013
	case $arg in
	bench_rounds=*) rounds=${arg#bench_rounds=} ;;
	esac
done

# phase ROUND: 0.5 s, and a part of the script's 0.1 s poll that moves
# evenly over that period from round to round, so that the event does
# not come at the same point of the script's poll every time
phase() {
	awk -v r="$1" -v n="$rounds" 'BEGIN { printf "%.3f\n", 0.5 + r * 0.1 / n }'
}

# tool TOOL TIMEOUT RULE: the tool in the background, its pid in $pid
tool() {
	case $1 in
	drvbind) drvbind -t "$2" -m '' "$3" 2>/tmp/err & ;;
	script) sh /test/script.sh "$2" "$3" 2>/tmp/err & ;;
	esac
	pid=$!
}

# seconds.micro of the first kernel-log line holding TEXT
stamp() {
	dmesg | awk -v s="$1" 'index($0, s) { sub(/^\[ */, ""); sub(/\].*/, ""); print; exit }'
}

# result CASE TOOL START-TEXT
result() {
	local t0 t1
	t0=$(stamp "$3")
	t1=$(stamp "$dev: claimed by stub")
	if [ -n "$t0" ] && [ -n "$t1" ]; then
		say "lat.$1 $2 $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d\n", (b - a) * 1e6 }')"
	else
		say "fail.$1 $2 $(cat /tmp/err)"
	fi
}

r=0
while [ "$r" -lt "$rounds" ]; do
	for t in drvbind script; do
		tool "$t" 10 "pci/$dev:pci-stub"
		sleep "$(phase "$r")"
		dmesg -c >/dev/null
		load pci-stub
		wait "$pid"
		result driver "$t" "calling  pci_stub_init"
		echo >"/sys/bus/pci/devices/$dev/driver_override"
		[ -e "/sys/bus/pci/devices/$dev/driver" ] &&
			echo "$dev" >"/sys/bus/pci/devices/$dev/driver/unbind"
		rmmod pci_stub
	done
	r=$((r + 1))
done

load pci-stub
r=0
while [ "$r" -lt "$rounds" ]; do
	for t in drvbind script; do
		echo 1 >"/sys/bus/pci/devices/$dev/remove"
		tool "$t" 10 "pci/$dev:pci-stub"
		sleep "$(phase "$r")"
		dmesg -c >/dev/null
		echo 1 >/sys/bus/pci/rescan
		wait "$pid"
		result device "$t" "pci $dev: [8086:100e]"
	done
	r=$((r + 1))
done

# Waiting 5 s for a device that never comes: context switches of the
# waiting process from 1 s to 4 s after its start, and its CPU time
# (children included) at 4 s, from /proc/PID/stat in 10 ms ticks.
switches() {
	awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n }' "/proc/$1/status"
}
for t in drvbind script; do
	tool "$t" 5 pci/0000:00:1f.0:pci-stub
	sleep 1
	s0=$(switches "$pid")
	sleep 3
	s1=$(switches "$pid")
	cpu=$(awk '{ print ($14 + $15 + $16 + $17) * 10 }' "/proc/$pid/stat")
	wait "$pid"
	say "wake $t $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f\n", (b - a) / 3 }')"
	say "cpu $t $cpu"
done
