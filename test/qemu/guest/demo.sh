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
	local d=/sys/bus/$1/devices/$2 drv=none
	[ -L "$d/driver" ] && drv=$(readlink "$d/driver") && drv=${drv##*/}
	say "$(printf '  %-18s %-34s driver: %s' "$1/$2" "$3" "$drv")"
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
say "Before drvbind:"
show pci 0000:00:05.0 "$nic"
show usb 2-1:1.0 "$stick"
say ""
dmesg -c >/dev/null
t0=$(now_ms)
drvbind 2>/tmp/demo.err
st=$?
say "$ drvbind      (exit status $st, $(($(now_ms) - t0)) ms)"
say ""
say "After drvbind:"
show pci 0000:00:05.0 "$nic"
show usb 2-1:1.0 "$stick"
say ""
say "Kernel log while it ran (dmesg):"
dmesg | while IFS= read -r l; do
	say "  $l"
done
