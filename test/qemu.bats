#!/usr/bin/env bats
# The real-kernel tier: Debian's kernel under QEMU (TCG), a busybox
# initramfs whose /init runs drvbind and reports on the second serial
# port; drvbind comes from the prepend image concatenated in front of it.
# Six boots (test/qemu/run.sh, two at a time) serve every test; two of
# them run drvbind as PID 1. The guest's side is test/qemu/guest/, one
# script per boot.
#
# Results are lines "RUN.KEY VALUE" in build/qemu/out/BOOT/results:
#   RUN.status / RUN.ms      drvbind's exit status and run time
#   RUN.stderr / RUN.dmesg   its messages; the kernel log during the run
#                            (dmesg -r: <facility*8+level>, /dev/kmsg
#                            lines are facility user, so <11> err, <14> info)
#   RUN.link BUS/DEV DRIVER  the driver link afterwards (or none)
#   RUN.override BUS/DEV V   driver_override afterwards
#   RUN.modprobe WHO: ARGS   who ran /sbin/modprobe (the kernel runs it too)
#   init.KEY                 what /init found when it started (pid, argv,
#                            env, premount, dirs, mount, fd, sigign)

load qemu/results

setup_file() {
	# fetches the kernel on first use, builds the initramfs, boots
	boot_all test/qemu/run.sh build/qemu
}

@test "the kernel is the one linux-image-amd64 depends on, unpacked once into build/qemu and reused" {
	pkg=$(apt-cache depends linux-image-amd64 | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	is kver "linux-image-$(cat "$TOP/build/qemu/kver")" "$pkg"
	kver=$(cat "$TOP/build/qemu/kver")
	[ -f "$TOP/build/qemu/kernel/boot/vmlinuz-$kver" ]
	[ -f "$TOP/build/qemu/kernel/lib/modules/$kver/modules.dep" ]
	# a second call finds the cache and downloads nothing
	run sh "$TOP/test/qemu/kernel.sh" "$TOP/build/qemu"
	[ "$status" -eq 0 ]
	is cache "$output" "$TOP/build/qemu/kernel $kver"
}

@test "e1000 at 0000:00:05.0 moves to pci-stub through driver_override, by a rule on the real command line" {
	booted pci
	status_is pci cmdline 0
	has pci cmdline.link "pci/0000:00:05.0 pci-stub"
	has pci cmdline.override "pci/0000:00:05.0 pci-stub"
	has pci cmdline.dmesg "<14>drvbind: pci/0000:00:05.0: e1000 -> pci-stub"
	has pci cmdline.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
}

@test "the rule none leaves e1000 at 0000:00:06.0 without a driver, kept so by driver_override" {
	booted pci
	status_is pci cmdline 0
	has pci cmdline.link "pci/0000:00:06.0 none"
	has pci cmdline.override "pci/0000:00:06.0 none"
	has pci cmdline.dmesg "<14>drvbind: pci/0000:00:06.0: e1000 -> none"
}

@test "a device already on the wanted driver is left alone and reported as such" {
	booted pci
	status_is pci cmdline 0
	has pci cmdline.link "pci/0000:00:07.0 e1000"
	has pci cmdline.override "pci/0000:00:07.0 (null)"
	has pci cmdline.dmesg "<14>drvbind: pci/0000:00:07.0: already on e1000"
	# nothing was unbound: no second "eth" line for 00:07.0 in the log
	! grep -q '^cmdline\.dmesg .*e1000 0000:00:07.0' "$QEMU_OUT/pci/results"
}

@test "the usb-storage stick's interface 2-1:1.0 is unbound by the rule none" {
	booted pci
	status_is pci usbnone 0
	has pci usbnone.link "usb/2-1:1.0 none"
	has pci usbnone.dmesg "<14>drvbind: usb/2-1:1.0: usb-storage -> none"
	# the command-line rules, settled before, are only confirmed
	has pci usbnone.dmesg "<14>drvbind: pci/0000:00:05.0: already on pci-stub"
}

@test "the interface 2-1:1.0 goes back from no driver to usb-storage" {
	booted pci
	status_is pci usbback 0
	has pci usbback.link "usb/2-1:1.0 usb-storage"
	has pci usbback.dmesg "<14>drvbind: usb/2-1:1.0: none -> usb-storage"
	has pci usbback.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
}

@test "vfio-pci refusing e1000 without an IOMMU (EINVAL) leaves it back on e1000, exit 1, failure and rollback logged" {
	booted pci
	status_is pci vfio 1
	has pci vfio.link "pci/0000:00:08.0 e1000"
	has pci vfio.override "pci/0000:00:08.0 (null)"
	has pci vfio.dmesg "<4>vfio-pci: probe of 0000:00:08.0 failed with error -22"
	has pci vfio.dmesg "<11>drvbind: pci/0000:00:08.0: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000"
	# the override was cleared before e1000 was asked again
	has pci vfio.stderr 'drvbind: write bus/pci/devices/0000:00:08.0/driver_override "\x0a"'
	has pci vfio.stderr 'drvbind: write bus/pci/drivers/e1000/bind "0000:00:08.0"'
}

@test "uas refusing a bulk-only stick (ENODEV) is tried through new_id, then the stick is back on usb-storage, exit 1" {
	booted pci
	status_is pci uas 1
	has pci uas.link "usb/2-1:1.0 usb-storage"
	has pci uas.dmesg "<11>drvbind: usb/2-1:1.0: usb-storage -> uas failed at bind: No such device after new_id \"46f4 0001 08\"; back on usb-storage"
	# QEMU's stick is 46f4:0001, interface class 08 (mass storage)
	has pci uas.stderr 'drvbind: write bus/usb/drivers/uas/new_id "46f4 0001 08"'
	has pci uas.stderr 'drvbind: write bus/usb/drivers/uas/remove_id "46f4 0001 08"'
}

@test "a missing device costs the 3 s timeout and exit 1, while the present device is moved at once" {
	booted missing
	status_is missing missing 1
	within run "$(val missing missing.ms)" 2900 9000
	# the present device was moved seconds before the deadline
	moved=$(awk '$1 == "missing.logged" && $3 == "pci/0000:00:05.0:" { print $2 }' "$QEMU_OUT/missing/results")
	lost=$(awk '$1 == "missing.logged" && $3 == "0000:00:1f.0:" { print $2 }' "$QEMU_OUT/missing/results")
	within "moved before the deadline by" $((10#$lost - 10#$moved)) 2000 9000
	has missing missing.link "pci/0000:00:05.0 pci-stub"
	has missing missing.dmesg "<14>drvbind: pci/0000:00:05.0: e1000 -> pci-stub"
	has missing missing.dmesg "<11>drvbind: 0000:00:1f.0: device not found (waited 3 s)"
}

@test "a PCI device added while drvbind waits, which bind refuses until the bus has finished adding it, ends on pci-stub" {
	booted missing
	status_is missing rescan 0
	has missing rescan.link "pci/0000:00:05.0 pci-stub"
	has missing rescan.stderr "drvbind: pci/0000:00:05.0: none -> pci-stub"
}

@test "malformed and hostile rules on the real command line are refused by name, touch nothing, and the good rule applies" {
	booted malformed
	status_is malformed malformed 1
	has malformed malformed.link "pci/0000:00:05.0 e1000"
	has malformed malformed.override "pci/0000:00:05.0 (null)"
	has malformed malformed.link "pci/0000:00:06.0 pci-stub"
	has malformed malformed.dmesg "<14>drvbind: pci/0000:00:06.0: e1000 -> pci-stub"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"e1000\": no ':' before the driver"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"0000:00:05.0:\": empty driver"
	has malformed malformed.dmesg "<11>drvbind: bad rule \":pci-stub\": empty device"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"../0000:00:05.0:pci-stub\": '..' in bus"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"0000:00:05.0:../../module/e1000\": '..' in driver"
	has malformed malformed.dmesg "<11>drvbind: bad rule \"0000:00:05.0:e1000\\x1b[2J\": control character in driver"
	has malformed malformed.dmesg "<11>drvbind: bad \"drvbind.timeout\"=\"soon\": not a whole number of seconds"
	grep -q '^malformed\.dmesg <11>drvbind: bad rule "0000:00:05.0:xxxx.*"\.\.\.: too long a driver$' \
		"$QEMU_OUT/malformed/results"
	# the escape sequence never reaches the log raw
	! grep -E '^malformed\.(dmesg|stderr) ' "$QEMU_OUT/malformed/results" | grep -q $'\033'
}

@test "a late driver: pci-stub loaded 3 s later is asked for once, e1000 is kept away meanwhile, and the device gets pci-stub" {
	booted late
	status_is late late 0
	# e1000 was loaded after a second and did not take the held device
	has late held.link "pci/0000:00:05.0 none"
	has late held.override "pci/0000:00:05.0 pci-stub"
	has late late.link "pci/0000:00:05.0 pci-stub"
	has late late.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
	is "modprobe requests" "$(count late late.modprobe "drvbind: modprobe -q -- pci-stub")" 1
}

@test "a late device: the interface appearing while drvbind waits ends up unbound although usb-storage probes it, and drvbind exits at once" {
	booted late
	status_is late late 0
	has late late.link "usb/2-1:1.0 none"
	has late late.dmesg "<6>scsi host0: usb-storage 2-1:1.0"
	has late late.dmesg "<14>drvbind: usb/2-1:1.0: usb-storage -> none"
	# done soon after the host controller came (timeout is 30 s)
	xhci=$(val late late.xhci_ms) end=$(val late late.ms)
	# waiting on for the deadline would take 20 s more
	within "exit after xhci load" $((end - xhci)) 0 10000
}

@test "a driver that never comes: at the deadline the held device is released to its native driver" {
	booted late
	status_is late expire 1
	# not before its -t 4; the default 10 s would be 10000 and more
	within run "$(val late expire.ms)" 3900 9500
	has late held.link "pci/0000:00:07.0 none"
	has late held.override "pci/0000:00:07.0 vfio-pci"
	has late expire.link "pci/0000:00:07.0 e1000"
	has late expire.override "pci/0000:00:07.0 (null)"
	has late expire.stderr "drvbind: pci/0000:00:07.0: driver vfio-pci not found; now on e1000 (waited 4 s)"
}

@test "-b returns at once and its background child binds the held device when pci-stub registers" {
	booted late
	status_is late bg 0
	# the parent would otherwise wait for pci-stub, which the guest loads
	# only after it returned: until the -t 30 deadline
	within "-b returned after" "$(val late bg.ms)" 0 15000
	has late bg.stderr "drvbind: waiting in the background for 1 rule(s)"
	has late held.link "pci/0000:00:06.0 none"
	has late held.override "pci/0000:00:06.0 pci-stub"
	has late bg.child gone
	has late bg.stderr "drvbind: pci/0000:00:06.0: none -> pci-stub"
	has late bg.link "pci/0000:00:06.0 pci-stub"
}

@test "two functions held for one late driver, as a GPU and its audio function for vfio-pci, both end on it" {
	booted late
	status_is late pair 0
	# not before pci-stub (3 s in); exit 0 says before the -t 10 deadline
	within run "$(val late pair.ms)" 2500 20000
	has late held.link "pci/0000:00:0a.0 none"
	has late held.link "pci/0000:00:0b.0 none"
	has late pair.link "pci/0000:00:0a.0 pci-stub"
	has late pair.link "pci/0000:00:0b.0 pci-stub"
	has late pair.stderr "drvbind: pci/0000:00:0a.0: none -> pci-stub"
	has late pair.stderr "drvbind: pci/0000:00:0b.0: none -> pci-stub"
}

# The PID 1 boots (test/qemu/guest/pid1.sh, myinit.sh): the kernel runs
# drvbind from the prepend image (build/drvbind.cpio, make initramfs)
# concatenated in front of the test image, which has no drvbind of its
# own; drvbind then execs the test image's init, which reports what it
# was handed (init.* lines) before it touches anything.

@test "the prepend image goes in front of another initramfs: the kernel runs /sbin/drvbind from it as PID 1, then that image's /init" {
	# drvbind is in the prepend image only
	cpio -it <"$TOP/build/drvbind.cpio" 2>/dev/null | grep -qx sbin/drvbind
	! cpio -it <"$TOP/build/qemu/test.cpio" 2>/dev/null | grep -q drvbind
	booted pid1
	has pid1 pid1.dmesg "<6>Run /sbin/drvbind as init process"
	has pid1 init.pid 1
	has pid1 init.argv "/init arg1 arg2"
}

@test "as PID 1 it moves devices of built-in drivers (pnp 00:05 off rtc_cmos, serio0 off atkbd) before the next init starts" {
	booted pid1
	has pid1 pid1.before.link "pnp/00:05 none"
	has pid1 pid1.before.link "serio/serio0 none"
	has pid1 pid1.dmesg "<14>drvbind: pnp/00:05: rtc_cmos -> none"
	has pid1 pid1.dmesg "<14>drvbind: serio/serio0: atkbd -> none"
	has pid1 pid1.after.link "pnp/00:05 none"
	has pid1 pid1.after.link "serio/serio0 none"
	# without a rule for it, 00:05 keeps rtc_cmos
	booted myinit
	has myinit myinit.link "pnp/00:05 rtc_cmos"
	has myinit myinit.link "serio/serio0 none"
}

@test "a missing drvbind.init= falls to /init, run as PID 1 with the arguments after -- and the kernel's environment, signals as the kernel left them" {
	booted pid1
	has pid1 init.pid 1
	has pid1 init.argv "/init arg1 arg2"
	# unknown key=value parameters, the last drvbind= winning
	has pid1 init.env "foo=bar"
	has pid1 init.env "drvbind=0000:00:05.0:pci-stub"
	has pid1 init.env "HOME=/"
	has pid1 init.env "TERM=linux"
	# ignored signals as when the kernel runs /init itself (pci boot)
	is "ignored signals" "$(val pid1 init.sigign)" "$(val pci init.sigign)"
}

@test "drvbind.init=/sbin/myinit runs that init as PID 1, argv[0] its path and no arguments" {
	booted myinit
	has myinit init.pid 1
	has myinit init.argv "/sbin/myinit"
	has myinit init.env "drvbind=serio0:none"
	is "ignored signals" "$(val myinit init.sigign)" "$(val pci init.sigign)"
}

@test "the next init finds /proc, /sys and /dev as the kernel left them, and inherits none of drvbind's descriptors" {
	booted pid1
	# drvbind mounted proc, sysfs and devtmpfs and detached them all again
	as_kernel_left pid1 /init
	# an image with its own static /dev/null: that one is left as it was
	booted myinit
	has myinit init.premount /dev/null
	has myinit init.dirs "/proc: /sys: /dev:console,null,"
	is mounts "$(awk '$1 == "init.mount" { printf "%s %s %s;", $2, $3, $4 }' "$QEMU_OUT/myinit/results")" \
		"rootfs / rootfs;proc /proc proc;"
}

@test "a rule whose driver the next init loads: the device is held against e1000 meanwhile and the background child binds it to pci-stub" {
	booted pid1
	# the child was waiting when the init started, the device held
	[[ -n $(val pid1 pid1.child) ]] || { echo "no drvbind child running when /init started"; false; }
	has pid1 pid1.before.link "pci/0000:00:05.0 none"
	has pid1 pid1.before.override "pci/0000:00:05.0 pci-stub"
	has pid1 pid1.dmesg "<14>drvbind: waiting in the background for 1 rule(s)"
	# e1000 loaded by the init did not take it
	has pid1 pid1.held.link "pci/0000:00:05.0 none"
	# pci-stub loaded by the init: the child bound the device and ended
	has pid1 pid1.after.link "pci/0000:00:05.0 pci-stub"
	has pid1 pid1.dmesg "<6>pci-stub 0000:00:05.0: claimed by stub"
	has pid1 pid1.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
	is "child after" "$(val pid1 pid1.child_after)" ""
	# asked for once (by PID 1, before /proc was the init's: who is '?')
	is "modprobe requests" "$(grep -c ': modprobe -q -- pci-stub$' "$QEMU_OUT/pid1/results")" 1
}

@test "as PID 1 in an image with a static /dev/null but no /dev/kmsg, drvbind still writes its lines to the kernel log" {
	booted myinit
	has myinit myinit.link "serio/serio0 none"
	has myinit myinit.dmesg "<14>drvbind: serio/serio0: atkbd -> none"
}

@test "as PID 1 under a hostile command line and a bind the kernel refuses, drvbind reports each, rolls back, and the next init still runs" {
	# panic=-1: had PID 1 exited, the kernel would have panicked and the
	# machine ended before this init reported anything
	booted myinit
	has myinit init.pid 1
	has myinit init.argv "/sbin/myinit"
	grep -q '^myinit\.dmesg <11>drvbind: bad "drvbind\.init"="/p\{79\}"\.\.\.: path too long$' \
		"$QEMU_OUT/myinit/results"
	has myinit myinit.dmesg "<11>drvbind: bad rule \"../../../../dev/sda:x\": '..' in bus"
	has myinit myinit.dmesg "<11>drvbind: bad rule \"serio0:/sbin/init\": '/' in driver"
	has myinit myinit.dmesg "<11>drvbind: bad \"drvbind.timeout\"=\"99999999999999999999\": more than a day"
	# the 8250 PnP driver does not match the RTC: ENODEV, back on rtc_cmos
	has myinit myinit.dmesg "<11>drvbind: pnp/00:05: rtc_cmos -> serial failed at bind: No such device; back on rtc_cmos"
	has myinit myinit.link "pnp/00:05 rtc_cmos"
	# the good rule beside them applied
	has myinit myinit.dmesg "<14>drvbind: serio/serio0: atkbd -> none"
	has myinit myinit.link "serio/serio0 none"
}
