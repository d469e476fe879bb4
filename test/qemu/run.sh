#!/bin/sh
# Boot every real-kernel scenario (or the ones named) and leave each
# guest's report in build/qemu/out/NAME/results ("RUN.KEY VALUE" lines,
# see test/qemu.bats), beside its console.log.
#
#   test/qemu/run.sh [SCENARIO...]      late pci missing malformed
#
# The kernel is fetched once and cached (kernel.sh); the initramfs is
# rebuilt every run, so it always carries the current build/drvbind.
# QEMU_JOBS boots run at once (default: the number of CPUs; each TCG
# guest keeps one busy), each under a hard QEMU_TIMEOUT (default 120 s).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
q=test/qemu
out=build/qemu/out
drvbind=${DRVBIND:-build/drvbind}
[ -x "$drvbind" ] || make -s build/drvbind

# longest first, so the boots running side by side end close together
set -- ${*:-late pci missing malformed}

k=$(sh $q/kernel.sh build/qemu)
kdir=${k% *} kver=${k##* }
kernel=$kdir/boot/vmlinuz-$kver
initrd=build/qemu/test.cpio
sh $q/initramfs.sh "$kdir" "$kver" "$drvbind" "$initrd"

# QEMU devices. Fixed PCI addresses make fixed bus ids: addr=5 is
# 0000:00:05.0; romfile= skips a network boot ROM nothing boots from.
# The stick is a null block device (no image file); on qemu-xhci's
# USB 3 root hub its interface is 2-1:1.0.
e1000() {
	for a; do
		printf -- '-device e1000,addr=%s,romfile= ' "$a"
	done
}
stick='-device qemu-xhci,id=xhci,addr=9
	-blockdev driver=null-co,node-name=stick,size=1048576
	-device usb-storage,bus=xhci.0,drive=stick'

# boot NAME APPEND QEMU-ARG...
boot() {
	name=$1 append=$2
	shift 2
	rm -rf "${out:?}/$name"
	sh $q/boot.sh "$kernel" "$initrd" "$out/$name" "scenario=$name $append" "$@"
}

# Refused rules, each for the device 00:05.0 that must stay untouched:
# no colon, empty parts, climbing out of sysfs, a control byte (an ESC
# sequence that would clear a terminal), a driver name over the limit,
# and a bad parameter. At most ten lines of one /dev/kmsg writer get
# through in five seconds: these eight and the good rule's make nine.
esc=$(printf '\033')
long=$(printf '%0200d' 0 | tr 0 x)
bad="drvbind=e1000 drvbind=0000:00:05.0: drvbind=:pci-stub"
bad="$bad drvbind=../0000:00:05.0:pci-stub drvbind=0000:00:05.0:../../module/e1000"
bad="$bad drvbind=0000:00:05.0:e1000${esc}[2J drvbind=0000:00:05.0:$long"
bad="$bad drvbind.timeout=soon"

scenario() {
	case $1 in
	pci)
		boot pci "drvbind=pci/0000:00:05.0:pci-stub drvbind=0000:00:06.0:none drvbind=0000:00:07.0:e1000" \
			$(e1000 5 6 7 8) $stick ;;
	malformed)
		boot malformed "$bad drvbind=pci/0000:00:06.0:pci-stub" \
			$(e1000 5 6) ;;
	missing)
		boot missing "drvbind.timeout=3 drvbind=0000:00:1f.0:pci-stub drvbind=0000:00:05.0:pci-stub" \
			$(e1000 5) ;;
	late)
		boot late "drvbind.timeout=30 drvbind=0000:00:05.0:pci-stub drvbind=2-1:1.0:none" \
			$(e1000 5 6 7 0a 0b) $stick ;;
	*)
		echo "run.sh: no scenario $1" >&2
		return 1 ;;
	esac
}

jobs=${QEMU_JOBS:-$(nproc 2>/dev/null || echo 1)}
n=0
pids=
for s; do
	scenario "$s" &
	pids="$pids $!"
	n=$((n + 1))
	if [ "$n" -ge "$jobs" ]; then
		for p in $pids; do wait "$p" || true; done
		n=0 pids=
	fi
done
for p in $pids; do wait "$p" || true; done
