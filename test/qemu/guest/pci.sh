# SPDX-License-Identifier: MIT
# The ordinary moves, one boot. QEMU: e1000 at 00:05.0 to 00:08.0, a
# qemu-xhci with a usb-storage stick (interface 2-1:1.0). The command
# line carries the PCI rules; the later runs add one rule each through a
# config file, so they still log to /dev/kmsg as at boot, while the
# command-line rules, settled by then, only say "already".
load e1000 pci-stub vfio-pci xhci-pci usb-storage uas
for d in 05 06 07 08; do
	settle pci 0000:00:$d.0
done
settle usb 2-1:1.0

run cmdline
link cmdline pci 0000:00:05.0
link cmdline pci 0000:00:06.0
link cmdline pci 0000:00:07.0

echo '2-1:1.0:none' >/tmp/usbnone.conf
run usbnone -c /tmp/usbnone.conf
link usbnone usb 2-1:1.0

echo 'usb/2-1:1.0:usb-storage' >/tmp/usbback.conf
run usbback -c /tmp/usbback.conf
link usbback usb 2-1:1.0

# No IOMMU in this guest: vfio-pci's probe refuses the device.
echo 'pci/0000:00:08.0:vfio-pci' >/tmp/vfio.conf
run vfio -v -c /tmp/vfio.conf
link vfio pci 0000:00:08.0

# uas takes only UAS interfaces, not a bulk-only stick.
echo '2-1:1.0:uas' >/tmp/uas.conf
run uas -v -c /tmp/uas.conf
link uas usb 2-1:1.0
