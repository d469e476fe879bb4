# SPDX-License-Identifier: MIT
# A device-tree board, drvbind run as from an initramfs hook. The
# command line moves the AMBA RTC (amba/9010000.pl031, bus named) and
# GPIO controller (9030000.pl061, by its device-tree name alone) from
# their built-in drivers to none; then rules as arguments put them back.
# Last, the e1000 at 0000:00:02.0 is sent to a driver that refuses it
# (refuse=: vfio-pci, which has no IOMMU on this board, or pcieport,
# which takes only PCIe ports) and must end back on e1000.
refuse=
for arg in $(cat /proc/cmdline); do
	case $arg in
	refuse=*) refuse=${arg#refuse=} ;;
	esac
done
load e1000
[ -f "/mod/$refuse.list" ] && load "$refuse"
settle amba 9010000.pl031
settle amba 9030000.pl061
settle pci 0000:00:02.0

# devices NAME: what the drivers made of them: RTCs and GPIO chips
devices() {
	say "$1.rtc $(ls /sys/class/rtc | tr '\n' ' ')"
	say "$1.gpio $(ls /sys/bus/gpio/devices 2>/dev/null | tr '\n' ' ')"
}

devices before
run cmdline
link cmdline amba 9010000.pl031
link cmdline amba 9030000.pl061
devices cmdline

run back amba/9010000.pl031:rtc-pl031 9030000.pl061:pl061_gpio
link back amba 9010000.pl031
link back amba 9030000.pl061
devices back

run refuse -v "pci/0000:00:02.0:$refuse"
link refuse pci 0000:00:02.0
