#!/bin/sh
# SPDX-License-Identifier: MIT
# Boot every real-kernel scenario (or the ones named) and leave each
# guest's report in build/qemu/out/NAME/results ("RUN.KEY VALUE" lines,
# see test/qemu.bats), beside its console.log.
#
#   test/qemu/run.sh [SCENARIO[@SUITE]...]   vfio follow lockdown serial
#                          late pcitiming usbtiming pid1 pci missing malformed
#                          myinit,
#                          and pcitiming@S usbtiming@S pci@S for each S of
#                          QEMU_SUITES (default "bullseye trixie sid
#                          trixie-backports"), with vfio@S follow@S late@S
#                          for sid and trixie-backports (boots_of)
#
# Without @SUITE the kernel is Debian 12's (6.1); pci@bullseye boots the
# scenario pci on Debian 11's (5.10), reported in build/qemu/out/pci@bullseye;
# trixie is Debian 13's (6.12), sid 7.2, trixie-backports 7.3.
# Each kernel is fetched once and cached (kernel.sh); the initramfs is
# rebuilt every run, so it always carries the current build/drvbind.
# Every boot's initramfs is the prepend image (make initramfs:
# build/drvbind.cpio, /sbin/drvbind alone) with the busybox test image
# concatenated behind it, as a user would put it in front of a
# distribution's: drvbind reaches the guest only that way.
# QEMU_JOBS boots run at once (default: the number of CPUs; each TCG
# guest keeps one busy), each under a hard QEMU_TIMEOUT (default 120 s).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
q=test/qemu
out=build/qemu/out
# DRVBIND=FILE tests another binary: its own prepend image is made.
if [ -n "${DRVBIND:-}" ]; then
	prepend=build/qemu/drvbind.cpio
	sh initramfs/prepend.sh "$DRVBIND" "$prepend"
else
	prepend=build/drvbind.cpio
	make -s "$prepend"
fi

# boots_of SUITE: the scenarios booted again on SUITE's kernel. The core
# cases on each; on Linux 7's also a driver registering mid-wait, the
# follower through replugs and reloads, and vfio-pci under an IOMMU:
# 7.0 moved driver_override into the driver core, and since 7.1 bind
# answers EAGAIN until the bus has finished adding the device, both of
# which those boots cross.
boots_of() {
	case $1 in
	sid | trixie-backports) echo pcitiming usbtiming pci late follow vfio ;;
	*) echo pcitiming usbtiming pci ;;
	esac
}

# Longest first, so the boots running side by side end close together:
# each scenario on Debian 12's kernel, then on each kernel of
# QEMU_SUITES that boots it.
if [ $# -eq 0 ]; then
	for b in vfio follow lockdown serial late pcitiming usbtiming pid1 pci missing malformed myinit; do
		set -- "$@" "$b"
		for suite in ${QEMU_SUITES-bullseye trixie sid trixie-backports}; do
			case " $(boots_of "$suite") " in
			*" $b "*) set -- "$@" "$b@$suite" ;;
			esac
		done
	done
fi

# lockdown's knock on the follower's sockets (test/fake/knock.c): static,
# with musl, for the guest.
case " $* " in
*" lockdown"[@\ ]*)
	make -s build/test/knock ;;
esac

# The kernel and test image of each suite named, once per run: Debian
# 12's own in build/qemu, another suite's in build/qemu/SUITE (kernel.sh
# fetches it from that suite). DIR/boot.cpio is the prepend image and
# the test image, DIR/boot.kernel names the kernel.
# A suite whose kernel cannot be fetched (an archive gone) costs its own
# boots only: their checks then say so.
prepared=
for s; do
	suite=
	case $s in
	*@*) suite=${s#*@} ;;
	esac
	dir=build/qemu${suite:+/$suite}
	case " $prepared " in
	*" $dir "*) continue ;;
	esac
	prepared="$prepared $dir"
	rm -f "$dir/boot.kernel"
	if ! k=$(sh $q/kernel.sh "$dir" linux-image-amd64 "$suite"); then
		[ -n "$suite" ] || exit 1
		echo "run.sh: no kernel from $suite: its boots are left out" >&2
		continue
	fi
	kdir=${k% *} kver=${k##* }
	sh $q/initramfs.sh "$kdir" "$kver" "$dir/test.cpio"
	cat "$prepend" "$dir/test.cpio" >"$dir/boot.cpio"
	echo "$kdir/boot/vmlinuz-$kver" >"$dir/boot.kernel"
done

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

# hubsticks HUBPORT PORT...: a stick (a null block device each) in each
# PORT of the usb-hub in the controller's port HUBPORT
hubsticks() {
	h=$1
	shift
	for p; do
		printf -- '-blockdev driver=null-co,node-name=hub%s,size=1048576 ' "$p"
		printf -- '-device usb-storage,bus=xhci.0,port=%s.%s,drive=hub%s ' "$h" "$p" "$p"
	done
}

# boot NAME APPEND QEMU-ARG...: with the image $img, or else $initrd;
# the report goes to build/qemu/out/NAME$tag (tag: @SUITE or nothing).
boot() {
	name=$1 append=$2
	shift 2
	rm -rf "${out:?}/$name$tag"
	sh $q/boot.sh "$kernel" "${img:-$initrd}" "$out/$name$tag" "scenario=$name $append" "$@"
}

# newc NAME MODE RDEV-MAJOR RDEV-MINOR: one entry of a newc archive with
# no data, e.g. a device node: cpio only archives nodes that exist, and
# making one takes root. The header is "070701" and 13 fields of 8 hex
# digits; header and name (with its NUL) are padded to 4 bytes.
newc() {
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s\000' \
		1 "$2" 0 0 1 0 0 0 0 "$3" "$4" $((${#1} + 1)) 0 "$1"
	head -c $(((4 - (110 + ${#1} + 1) % 4) % 4)) /dev/zero
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
longpath=/$(printf '%0600d' 0 | tr 0 p)
hostile="drvbind=pnp/00:05:serial drvbind=../../../../dev/sda:x drvbind=serio0:/sbin/init"
hostile="$hostile drvbind.timeout=99999999999999999999"

# scenario NAME[@SUITE]: one boot, on that suite's kernel.
scenario() {
	dir=build/qemu tag=
	case $1 in
	*@*)
		dir=$dir/${1#*@} tag=@${1#*@}
		set -- "${1%@*}" ;;
	esac
	# no kernel from that suite (said above): no report, and none left
	# over from an earlier run for its checks to read
	if [ ! -s "$dir/boot.kernel" ]; then
		rm -rf "${out:?}/$1$tag"
		return 1
	fi
	kernel=$(cat "$dir/boot.kernel")
	initrd=$dir/boot.cpio
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
	pid1)
		# drvbind as PID 1, then the fallback chain's /init (the named
		# init is missing) with the arguments after "--" and foo=bar in
		# its environment. pnp 00:05 (rtc_cmos) and serio0 (atkbd) have
		# built-in drivers; the e1000 at 00:05.0 waits for modules that
		# this /init loads later.
		boot pid1 "rdinit=/sbin/drvbind drvbind.init=/nonexistent drvbind.timeout=30 foo=bar drvbind=pnp/00:05:none drvbind=serio0:none drvbind=0000:00:05.0:pci-stub -- arg1 arg2" \
			$(e1000 5) ;;
	myinit)
		# drvbind as PID 1, then the init that drvbind.init= names. The
		# image also has a static /dev/null node, as images made from a
		# gen_init_cpio list or by hand often do, but no /dev/kmsg:
		# drvbind must still get its lines into the kernel log. Before
		# the good rule, a hostile command line (an init path over the
		# limit, names that climb out or are absolute, a timeout that
		# would wrap) and a bind the kernel refuses (the 8250 PnP
		# driver "serial" does not match the RTC at 00:05: ENODEV, so
		# it goes back to rtc_cmos): none of it may keep the next init
		# from running.
		img=$dir/myinit.cpio
		{
			cat "$initrd"
			newc dev/null $((0020666)) 1 3
			newc TRAILER!!! 0 0 0
		} >"$img"
		boot myinit "rdinit=/sbin/drvbind drvbind.init=$longpath drvbind.init=/sbin/myinit $hostile drvbind=serio0:none" ;;
	pcitiming)
		# one e1000 per case; no rule on the command line
		boot pcitiming "" $(e1000 5 6 7 8 0a 0b) ;;
	usbtiming)
		boot usbtiming "" $stick ;;
	vfio)
		# q35 with an emulated Intel IOMMU: real IOMMU groups, and a
		# vfio-pci that binds under TCG. Interrupt remapping, as hosts
		# for vfio have it, needs kernel-irqchip=split under KVM; TCG
		# takes the same line. Two e1000 functions share slot 5 (one
		# group); the lone control at 06.0 and the e1000 at 07.0 are
		# 82545EMs (8086:100f), which a selection by the 100e id
		# leaves out; a PCI-PCI bridge shares slot 7 (and its group).
		QEMU="${QEMU:-qemu-system-x86_64} -machine q35,kernel-irqchip=split"
		export QEMU
		boot vfio "intel_iommu=on" -device intel-iommu,intremap=on \
			-device e1000,addr=5.0,multifunction=on,romfile= \
			-device e1000,addr=5.1,romfile= \
			-device e1000-82545em,addr=6,romfile= \
			-device e1000-82545em,addr=7.0,multifunction=on,romfile= \
			-device pci-bridge,addr=7.1,chassis_nr=1 ;;
	follow)
		# drvbind as PID 1 with drvbind.follow=1: its background child
		# follows the two rules through the replugs and reloads the
		# init makes, and through QEMU's own unplug and plug of the
		# stick, which monitor.sh makes when the guest asks (the stick
		# with an id, and on a fixed port, so that it comes back as
		# the same 2-1). The QMP monitor's FIFOs are made before QEMU
		# starts, so not by boot(), which empties the directory.
		d=$out/follow$tag
		hotstick=usb-storage,bus=xhci.0,port=1,drive=stick,id=stick0
		rm -rf "$d"
		mkdir -p "$d"
		mkfifo "$d/qmp.in" "$d/qmp.out"
		sh $q/monitor.sh "$d" "$hotstick" &
		sh $q/boot.sh "$kernel" "$initrd" "$d" \
			"scenario=follow rdinit=/sbin/drvbind drvbind.follow=1 drvbind.timeout=30 drvbind=0000:00:05.0:pci-stub drvbind=2-1:1.0:none" \
			$(e1000 5) -device qemu-xhci,id=xhci,addr=9 \
			-blockdev driver=null-co,node-name=stick,size=1048576 \
			-device "$hotstick" \
			-chardev "pipe,id=qmp,path=$d/qmp" -mon chardev=qmp,mode=control
		wait "$!" ;;
	lockdown)
		# The USB storage lockdown: drvbind as PID 1 keeps every mass
		# storage interface (class 08) without a driver, a device set,
		# and follows it; a tablet on the same controller is the
		# control. Port 3 holds QEMU's usb-hub (full speed: on the USB
		# 2 root hub, 1-3) with three sticks of its own behind it, in
		# its ports 1 to 3 (1-3.1 to 1-3.3): four members, each of
		# which the set must hold however they come, and again when
		# the hub is re-enumerated. The stick and the tablet take the
		# free ports before it (2-1 and 1-2, as QEMU hands them out).
		# The guest (lockdown.sh) also needs usbhid and the
		# knock (test/fake/knock.c): one more archive behind the
		# image, its modules as the test image holds them (/mod).
		img=$dir/lockdown.cpio
		kdir=${kernel%/boot/*} kver=${kernel##*/vmlinuz-}
		x=$dir/lockdown.d
		rm -rf "$x"
		mkdir -p "$x/bin" "$x/mod"
		cp build/test/knock "$x/bin/knock"
		modprobe -d "$kdir" -S "$kver" --show-depends usbhid |
			awk '$1 == "insmod" { print $2 }' | while read -r ko; do
			cp "$ko" "$x/mod/"
			echo "/mod/${ko##*/}"
		done >"$x/mod/usbhid.list"
		{
			cat "$initrd"
			(cd "$x" && find bin mod -type f | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet)
		} >"$img"
		rm -rf "$x"
		boot lockdown "rdinit=/sbin/drvbind drvbind.follow=1 drvbind=usb/*,bInterfaceClass=08:none" \
			$stick -device usb-tablet,bus=xhci.0 \
			-device usb-hub,bus=xhci.0,port=3 $(hubsticks 3 1 2 3) ;;
	serial)
		# Two usb-storage sticks, alike but for their serial numbers,
		# and drvbind as PID 1 with drvbind.follow=1 and a set that
		# names one by its serial: the interface of the stick whose
		# device has a serial DRVBINDA..., wherever it is plugged in.
		# Each stick with an id, on a port of its own, so that
		# monitor.sh can unplug it and plug it into another (the guest
		# names the port); the FIFOs as for follow. drvbind.timeout=30,
		# as for follow: on a busy machine the init may load the
		# drivers more than the default 10 s after drvbind started,
		# and the set must not have given up on its stick by then.
		d=$out/serial$tag
		sticka=usb-storage,bus=xhci.0,port=1,drive=disk-a,serial=DRVBINDA0001,id=stick-a
		stickb=usb-storage,bus=xhci.0,port=2,drive=disk-b,serial=DRVBINDB0002,id=stick-b
		rm -rf "$d"
		mkdir -p "$d"
		mkfifo "$d/qmp.in" "$d/qmp.out"
		sh $q/monitor.sh "$d" "$sticka" "$stickb" &
		sh $q/boot.sh "$kernel" "$initrd" "$d" \
			"scenario=serial rdinit=/sbin/drvbind drvbind.follow=1 drvbind.timeout=30 drvbind=usb/*:*,serial=DRVBINDA*:none" \
			-device qemu-xhci,id=xhci,addr=9 \
			-blockdev driver=null-co,node-name=disk-a,size=1048576 \
			-blockdev driver=null-co,node-name=disk-b,size=1048576 \
			-device "$sticka" -device "$stickb" \
			-chardev "pipe,id=qmp,path=$d/qmp" -mon chardev=qmp,mode=control
		wait "$!" ;;
	*)
		echo "run.sh: no scenario $1" >&2
		return 1 ;;
	esac
}

. $q/pool.sh
pool scenario "$@"
