# SPDX-License-Identifier: MIT
# drvbind ran as PID 1 (rdinit=/sbin/drvbind, from the prepend image
# concatenated in front of this test image) before this init, with:
#   drvbind=pnp/00:05:none drvbind=serio0:none   devices bound by
#       built-in drivers (rtc_cmos, atkbd), so moved before any init ran
#   drvbind=0000:00:05.0:pci-stub   an e1000 whose driver and target are
#       modules only this init loads: drvbind holds the device
#       (driver_override) and leaves the rule to a background child
#   drvbind.init=/nonexistent      so the fallback chain's /init runs
#   foo=bar, and "-- arg1 arg2"    what the kernel hands to init
# This init reports what it was handed, then loads e1000 (which must not
# take the held device) and pci-stub (which the child must bind). The
# none rules leave the child watching 00:05 and serio0 until its deadline.
report_init

# drvbind's background child, still waiting for pci-stub
say "pid1.child $(procs drvbind)"
link pid1.before pnp 00:05
link pid1.before serio serio0
link pid1.before pci 0000:00:05.0

sleep 1
load e1000
sleep 1
link pid1.held pci 0000:00:05.0
load pci-stub
# the child settles the rule once pci-stub registers (10 s at most); it
# watches on until its deadline, since the none rules' buses (pnp,
# serio) have nothing that would keep a driver away
i=0
while ! dmesg | grep -q 'drvbind: pci/0000:00:05.0: ' && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
say "pid1.child_after $(procs drvbind)"
link pid1.after pnp 00:05
link pid1.after serio serio0
link pid1.after pci 0000:00:05.0

# rtc_cmos asked to probe 00:05 again: the watching child unbinds it
# (5 s at most for its line)
echo 00:05 >/sys/bus/pnp/drivers_probe
i=0
while ! dmesg | grep -q 'drvbind: pnp/00:05: rtc_cmos bound it' && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
link pid1.watch pnp 00:05
report_log pid1
