# SPDX-License-Identifier: MIT
# make demo: the guest's side. The drivers load as at any boot (e1000
# for the NIC at 00:05.0, usb-storage for the stick's interface 2-1:1.0),
# then drvbind applies the rules of the kernel command line. Every line
# written here is shown by test/qemu/demo.sh as it stands; "scenario"
# and "end" frame it.
load e1000 pci-stub xhci-pci usb-storage
settle pci 0000:00:05.0
settle usb 2-1:1.0

# show BUS DEV WHAT: one line, the device and its driver now.
show() {
	say "$(printf '  %-18s %-34s driver: %s' "$1/$2" "$3" "$(driver_of "$1" "$2")")"
}

# show_both TITLE: the table of both devices under TITLE, as it stands
# before drvbind runs and after.
show_both() {
	say "$1"
	show pci 0000:00:05.0 "$nic"
	show usb 2-1:1.0 "$stick"
	say ""
}

# What each device is, from sysfs: PCI ids, the stick's product string.
nic="$(cat /sys/bus/pci/devices/0000:00:05.0/vendor):$(cat /sys/bus/pci/devices/0000:00:05.0/device) Ethernet"
nic=$(echo "$nic" | sed 's/0x//g')
stick="$(cat /sys/bus/usb/devices/2-1/product) (mass storage)"

rules=
for arg in $(cat /proc/cmdline); do
	case $arg in
	drvbind=*) rules="$rules $arg" ;;
	esac
done
say "Kernel command line rules:$rules"
say ""
show_both "Before drvbind:"
dmesg -c >/dev/null
t0=$(now_ms)
drvbind 2>/tmp/demo.err
st=$?
say "$ drvbind      (exit status $st, $(($(now_ms) - t0)) ms)"
say ""
show_both "After drvbind:"
say "Kernel log while it ran (dmesg):"
dmesg | say_lines "  "
