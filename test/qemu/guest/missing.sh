# SPDX-License-Identifier: MIT
# A rule for a device that never comes (00:1f.0) beside one that can be
# applied at once (00:05.0), with drvbind.timeout=3.
load e1000 pci-stub
settle pci 0000:00:05.0
start missing
finish
link missing pci 0000:00:05.0
# When each outcome reached the kernel log (ms since boot): the present
# device must not have waited for the missing one. Timestamps taken by
# the kernel, so a stalled host only widens the gap.
dmesg -r | sed -n 's/^<[0-9]*>\[ *\([0-9]*\)\.\([0-9][0-9][0-9]\)[0-9]*\] drvbind: /\1\2 /p' |
	while IFS= read -r l; do
		say "missing.logged $l"
	done

# A device the bus adds while drvbind waits for it: PCI lets drivers
# match a new device only after its add uevent, so a bind at once says
# ENODEV; the override holds it, and the kernel binds pci-stub itself as
# it finishes adding it. e1000 goes first, or it might take the device
# before drvbind sees it (which drvbind would then undo).
echo 1 >/sys/bus/pci/devices/0000:00:05.0/remove
rmmod e1000
start rescan -v -t 10 -m '' 0000:00:05.0:pci-stub
sleep 1
echo 1 >/sys/bus/pci/rescan
finish
link rescan pci 0000:00:05.0
