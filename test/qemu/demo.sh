#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: drvbind on a real kernel. Boots Debian's kernel under QEMU
# (TCG) on the q35 machine with an emulated Intel IOMMU, with a
# two-function device in slot 5 as a GPU and its audio function would be
# (two e1000 functions, 0000:00:05.0 and .1, which share one IOMMU group)
# and a USB stick on a qemu-xhci controller (its interface is 2-1:1.0),
# with the rules
#   drvbind=pci/0000:00:05.*:vfio-pci drvbind=2-1:1.0:none
# on the kernel command line: one rule hands the whole slot to vfio-pci,
# as for a VM. Inside the guest the usual drivers load, then drvbind
# runs; the guest reports each device's driver and IOMMU group before and
# after, /dev/vfio, and the kernel log while drvbind ran
# (test/qemu/guest/demo.sh). drvbind reaches the guest in the prepend
# image (make initramfs) put in front of the busybox test image, as it
# would be in front of a distribution's initramfs.
#
#   sh test/qemu/demo.sh
#
# Needs what `make demo-deps` installs (the Makefile's DEMO_DEPS); the
# kernel is fetched on first use and cached under build/qemu (as for the
# real-kernel tests). One boot, ~15 s.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
q=test/qemu
dir=build/qemu/demo
rules="drvbind=pci/0000:00:05.*:vfio-pci drvbind=2-1:1.0:none"

make -s build/drvbind.cpio
echo "Kernel: Debian's linux-image-amd64 (fetched on first use, then cached)..."
k=$(sh $q/kernel.sh build/qemu)
kdir=${k% *} kver=${k##* }
mkdir -p "$dir"
sh $q/initramfs.sh "$kdir" "$kver" "$dir/test.cpio"
cat build/drvbind.cpio "$dir/test.cpio" >"$dir/boot.cpio"

echo "Booting Linux $kver under QEMU (q35, IOMMU) with a two-function device and a USB stick..."
# The devices of the tests' vfio boot (test/qemu/run.sh): fixed PCI
# addresses, no boot ROM; interrupt remapping as vfio hosts have it; a
# null block device as the stick's medium. The hard timeout keeps a hung
# guest from outliving a minute.
QEMU="qemu-system-x86_64 -machine q35,kernel-irqchip=split" QEMU_TIMEOUT=60 \
	sh $q/boot.sh "$kdir/boot/vmlinuz-$kver" "$dir/boot.cpio" "$dir" \
	"quiet intel_iommu=on scenario=demo $rules" \
	-device intel-iommu,intremap=on \
	-device e1000,addr=5.0,multifunction=on,romfile= \
	-device e1000,addr=5.1,romfile= \
	-device qemu-xhci,id=xhci,addr=9 \
	-blockdev driver=null-co,node-name=stick,size=1048576 \
	-device usb-storage,bus=xhci.0,drive=stick

# The guest's lines end in \r\n on the serial port; "scenario" and "end"
# frame the report.
tr -d '\r' <"$dir/results" >"$dir/report"
if [ "$(cat "$dir/qemu.status")" != 0 ] || ! grep -qx end "$dir/report"; then
	echo "demo: the guest did not finish (QEMU status $(cat "$dir/qemu.status")); its console:" >&2
	tail -n 25 "$dir/console.log" >&2
	exit 1
fi
echo "Guest up and done in $(cat "$dir/seconds") s. From inside the guest:"
echo
sed -e '/^scenario /d' -e '/^init\./d' -e '/^end$/d' "$dir/report"
echo
echo "(kernel console: $dir/console.log)"
