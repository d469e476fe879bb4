# SPDX-License-Identifier: MIT
# make demo: the guest's side. The drivers load as at any boot (e1000
# for both functions of slot 5, usb-storage for the stick's interface
# 2-1:1.0; vfio-pci is loaded, as a host for VMs has it), then drvbind
# applies the rules of the kernel command line. Every line written here
# is shown by test/qemu/demo.sh as it stands; "scenario" and "end" frame
# it.
load e1000 vfio-pci xhci-pci usb-storage
settle pci 0000:00:05.0
settle pci 0000:00:05.1
settle usb 2-1:1.0

# show BUS DEV WHAT: one line, the device and its driver now.
show() {
	say "$(printf '  %-18s %-34s driver: %s' "$1/$2" "$3" "$(driver_of "$1" "$2")")"
}

# The IOMMU group of a PCI function, from its iommu_group link.
group_of() {
	g=$(readlink "/sys/bus/pci/devices/$1/iommu_group")
	echo "${g##*/}"
}

# What a PCI function is, from sysfs: its ids and its IOMMU group.
pci_what() {
	d=/sys/bus/pci/devices/$1
	echo "$(sed 's/0x//' "$d/vendor"):$(sed 's/0x//' "$d/device") fn ${1##*.}, IOMMU group $(group_of "$1")"
}

# show_all TITLE: the table of the devices under TITLE, and /dev/vfio,
# as they stand before drvbind runs and after.
show_all() {
	say "$1"
	show pci 0000:00:05.0 "$(pci_what 0000:00:05.0)"
	show pci 0000:00:05.1 "$(pci_what 0000:00:05.1)"
	show usb 2-1:1.0 "$stick"
	v=
	for f in /dev/vfio/*; do
		[ -e "$f" ] && v="$v ${f##*/}"
	done
	say "  /dev/vfio:${v:- (none)}"
	say ""
}

stick="$(cat /sys/bus/usb/devices/2-1/product) (mass storage)"

rules=
for arg in $(cat /proc/cmdline); do
	case $arg in
	drvbind=*) rules="$rules $arg" ;;
	esac
done
say "Kernel command line rules:$rules"
say ""
show_all "Before drvbind:"
dmesg -c >/dev/null
t0=$(now_ms)
drvbind 2>/tmp/demo.err
st=$?
say "$ drvbind      (exit status $st, $(($(now_ms) - t0)) ms)"
say ""
show_all "After drvbind:"
say "Kernel log while it ran (dmesg):"
dmesg | say_lines "  "
