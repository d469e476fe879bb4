#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The initramfs integrations proven with the real builders: images made
# by mkinitramfs, by dracut (with systemd as the initrd's init, and with
# its shell init) and by Arch's mkinitcpio from drvbind as `make
# install` stages it, each booted under QEMU (TCG) with Debian's kernel
# into an ext4 root disk whose /sbin/init (test/initramfs/root-init)
# reports what it found. test/initramfs/run.sh builds and boots; see it
# for the setup, and for what mkinitcpio needs on Debian. mkinitcpio
# comes from MKINITCPIO_SRC (a tree or a tarball, by default the vendor
# tarball beside the checkout); without one its tests are skipped.
#
# Every boot has two e1000s: 0000:00:05.0 named by the rule baked into
# the image (/etc/drvbind.conf: pci/0000:00:05.0:pci-stub) and
# 0000:00:06.0 named by none, so that udev's coldplug loads e1000 and
# would take both. It also has a USB stick (usb-storage on qemu-xhci),
# whose interface 2-1:1.0 the boot's command line sends to none: the
# builders put xhci-pci and usb-storage in the image by their own choice
# (mkinitramfs's MODULES=most, dracut --no-hostonly, mkinitcpio's block
# hook without autodetect), so coldplug loads
# usb-storage, which must not take it. The command line also adds a rule
# for 0000:00:1f.0, which never appears, with drvbind.timeout=600: far
# longer than QEMU is allowed to run, so a boot that waited for it would
# never reach the root's init.
#
# The mkinitramfs image is booted once more (itools-follow) with
# drvbind.follow=1, into a root whose /sbin/init is busybox init and whose
# /etc/inittab holds the line `make install` ships in
# share/drvbind/inittab, beside two calls of test/initramfs/root-follow,
# which reports before init starts anything (start.*), once inittab's
# follower has taken over from the initramfs's (takeover.*), and after a
# replug of each ruled device in the real root (rescan.*, reenum.*).
#
# Results are lines "root.KEY VALUE" in build/initramfs/out/IMAGE/results,
# beside build.log (the builder's output) and contents (its file list);
# root.kmsg lines are the whole kernel log. DRVBIND=FILE boots another
# binary (test/initramfs/run.sh).

load qemu/results

setup_file() {
	boot_all test/initramfs/run.sh build/initramfs
	export OUT=$QEMU_OUT
}

# built_by_mkinitcpio: skips the test when run.sh found no mkinitcpio
# source, saying which variable to set.
built_by_mkinitcpio() {
	if [[ -f $OUT/mkinitcpio/skipped ]]; then
		skip "$(cat "$OUT/mkinitcpio/skipped")"
	fi
}

@test "mkinitramfs, with the hook make install put in place, packs drvbind, its boot script, the config and pci-stub's module" {
	holds itools '^usr/sbin/drvbind$'
	holds itools '^scripts/init-top/drvbind$'
	holds itools '^etc/drvbind\.conf$'
	holds itools '/pci-stub\.ko$'
	said itools "drvbind: pci-stub: adding module pci-stub"
}

@test "booted from the mkinitramfs image, 0000:00:05.0 is on pci-stub before the real root's init runs, while e1000 took 0000:00:06.0" {
	applied itools
}

@test "booted from the mkinitramfs image, the USB stick's interface 2-1:1.0, sent to none on the command line, has no driver when the real root's init runs, though coldplug loaded usb-storage" {
	holds itools '/usb-storage\.ko$'
	unheld itools
}

@test "with initramfs-tools, a rule whose device never appears leaves drvbind waiting in the background, and the real root's init starts" {
	booted itools
	waiting itools "/sbin/drvbind -b"
}

@test "dracut --no-hostonly includes the module by itself: drvbind, the config, pci-stub's module, and with systemd the unit, enabled" {
	holds dracut ' usr/sbin/drvbind$'
	holds dracut ' etc/drvbind\.conf$'
	holds dracut '/pci-stub\.ko$'
	holds dracut ' usr/lib/systemd/system/drvbind\.service$'
	holds dracut 'sysinit\.target\.wants/drvbind\.service -> '
	! holds dracut 'hooks/pre-trigger/.*drvbind' || false
	said dracut "dracut: *** Including module: drvbind ***"
	said dracut "drvbind: pci-stub: adding module pci-stub"
}

@test "booted from dracut's systemd initrd, 0000:00:05.0 is on pci-stub before the real root's init runs, while e1000 took 0000:00:06.0" {
	holds dracut ' usr/lib/systemd/systemd$'
	applied dracut
}

@test "booted from dracut's systemd initrd, the USB stick's interface 2-1:1.0, sent to none on the command line, has no driver when the real root's init runs, though coldplug loaded usb-storage" {
	holds dracut '/usb-storage\.ko$'
	unheld dracut
}

@test "in dracut's systemd initrd, drvbind's waiting child outlives the switch to the real root (argv[0] @drvbind) and does not hold up boot" {
	booted dracut
	waiting dracut "@drvbind -b"
}

@test "dracut with its shell init gets the pre-trigger hook instead of the unit" {
	holds dracut-sh 'hooks/pre-trigger/10-drvbind\.sh$'
	! holds dracut-sh 'drvbind\.service' || false
	! holds dracut-sh ' usr/lib/systemd/systemd$' || false
	holds dracut-sh '/pci-stub\.ko$'
	said dracut-sh "drvbind: pci-stub: adding module pci-stub"
}

@test "booted from dracut's shell init, 0000:00:05.0 is on pci-stub before the real root's init runs, and drvbind still waits for the missing device" {
	applied dracut-sh
	waiting dracut-sh "/sbin/drvbind -b"
}

@test "booted from dracut's shell init, the USB stick's interface 2-1:1.0, sent to none on the command line, has no driver when the real root's init runs, though coldplug loaded usb-storage" {
	holds dracut-sh '/usb-storage\.ko$'
	unheld dracut-sh
}

@test "mkinitcpio with HOOKS=(base udev drvbind modconf block) packs drvbind, its runtime hook, the config and pci-stub's module, without a build error" {
	built_by_mkinitcpio
	# mkinitcpio's /sbin is a link to usr/bin
	holds mkinitcpio '^usr/bin/drvbind$'
	holds mkinitcpio '^hooks/drvbind$'
	holds mkinitcpio '^etc/drvbind\.conf$'
	holds mkinitcpio '/pci-stub\.ko$'
	said mkinitcpio "  -> Running build hook: [drvbind]"
	said mkinitcpio "drvbind: pci-stub: adding module pci-stub"
	# what mkinitcpio says only when no add_* call failed
	said mkinitcpio "==> Initcpio image generation successful"
}

@test "mkinitcpio's init runs drvbind as an early hook, after udevd starts and before the udev hook's coldplug" {
	built_by_mkinitcpio
	booted mkinitcpio
	# the console's lines end in CR LF
	is order "$(tr -d '\r' <"$OUT/mkinitcpio/console.log" | grep -x -e ':: running early hook \[udev\]' \
		-e ':: running early hook \[drvbind\]' -e ':: Triggering uevents\.\.\.')" ":: running early hook [udev]
:: running early hook [drvbind]
:: Triggering uevents..."
}

@test "booted from the mkinitcpio image, 0000:00:05.0 is on pci-stub before the real root's init runs, while e1000 took 0000:00:06.0" {
	built_by_mkinitcpio
	applied mkinitcpio
}

@test "booted from the mkinitcpio image, the USB stick's interface 2-1:1.0, sent to none on the command line, has no driver when the real root's init runs, though coldplug loaded usb-storage" {
	built_by_mkinitcpio
	holds mkinitcpio '/usb-storage\.ko$'
	unheld mkinitcpio
}

@test "with mkinitcpio, a rule whose device never appears leaves drvbind waiting in the background, and the real root's init starts" {
	built_by_mkinitcpio
	booted mkinitcpio
	waiting mkinitcpio "/sbin/drvbind -b"
}

# The follow boot (run.sh: itools-follow). STEP.proc lines are the
# drvbind processes that ran at the step, "PID PPID ARGV" each.

# procs_at STEP: the step's drvbind processes, one a line
procs_at() {
	sed -n "s/^$1\.proc //p" "$OUT/itools-follow/results"
}

# only STEP ERE: every line drvbind wrote to the kernel log in the step
# matches ERE (there may be none)
only() {
	local other
	other=$(sed -n "s/^$1\.dmesg //p" "$OUT/itools-follow/results" | grep -vxE -- "$2") || :
	[[ -z $other ]] && return 0
	echo "$1: drvbind also said:"
	echo "$other"
	return 1
}

# the_old: the PID of the initramfs's follower, alone when the real root started
the_old() {
	local p
	p=$(procs_at start)
	[[ $p =~ ^([0-9]+)\ 1\ /sbin/drvbind\ -b$ ]] ||
		{ echo "drvbind processes when the real root's init started: ${p:-none}" >&2; return 1; }
	echo "${BASH_REMATCH[1]}"
}

# inittab_follows: the one drvbind that ran after the takeover, and
# still at the end, is inittab's, a child of init
inittab_follows() {
	is "drvbind processes after the takeover" "$(procs_at takeover)" "$(procs_at end)"
	[[ $(procs_at end) =~ ^([0-9]+)\ 1\ /usr/sbin/drvbind\ -f$ ]] && return 0
	echo "drvbind processes after the takeover: $(procs_at takeover)"
	return 1
}

# replugged STEP DEV DRIVER ERE KMSG...: in the real root, after
# inittab's follower took over (inittab_follows), the step's replug of DEV
# (BUS/ID): DEV went away (STEP.removed), each KMSG line is in the kernel
# log, DEV ended on DRIVER (or none), and every line drvbind wrote in the
# step matches ERE (only).
replugged() {
	local step=$1 dev=$2 drv=$3 ere=$4 line
	shift 4
	booted itools-follow
	inittab_follows
	has itools-follow "$step.removed" "$dev absent"
	for line; do
		has itools-follow "$step.kmsg" "$line"
	done
	has itools-follow "$step.link" "$dev $drv"
	only "$step" "$ere"
}

@test "booted from the mkinitramfs image with drvbind.follow=1, the child drvbind -b leaves is a follower, alive with the rules held when the real root's busybox init starts" {
	booted itools-follow
	has itools-follow start.init /bin/busybox
	has itools-follow start.ppid 1
	# reparented to init as the -b parent ended; still the initramfs's binary
	the_old
	has_all itools-follow <<-'EOF'
	start.dmesg <14>drvbind: following 3 rule(s) in the background
	start.dmesg <14>drvbind: pci/0000:00:05.0: none -> pci-stub
	start.link pci/0000:00:05.0 pci-stub
	start.link usb/2-1:1.0 none
	start.authorized usb/2-1:1.0 0
	EOF
}

@test "the inittab line make install ships starts drvbind -f in the real root, which takes over: the initramfs's follower says so and ends, and inittab's, a child of init, is the one follower left" {
	booted itools-follow
	local staged old
	staged=$(grep -v -e '^#' -e '^$' "$TOP/build/initramfs/stage/usr/share/drvbind/inittab")
	is "the installed inittab's line" "$staged" "::respawn:/usr/sbin/drvbind -f"
	has itools-follow start.inittab "$staged"
	old=$(the_old)
	has itools-follow takeover.old "$old ended"
	inittab_follows
	[[ ${BASH_REMATCH[1]} != "$old" ]]
	is "takeovers said" "$(grep -c '\.dmesg <14>drvbind: another follower takes over$' "$OUT/itools-follow/results")" 1
	has itools-follow takeover.dmesg "<14>drvbind: another follower takes over"
	! grep -E '\.dmesg .*drvbind: .*(failed at|not following|following without it|was ended)' "$OUT/itools-follow/results" || false
}

@test "the follower in the real root takes the real root's /etc/drvbind.conf: 0000:00:06.0, which only that file names, leaves e1000 as it starts" {
	booted itools-follow
	! grep -F 0000:00:06.0 "$TOP/build/initramfs/etc/drvbind.conf" || false
	has_all itools-follow <<-'EOF'
	start.conf pci/0000:00:06.0:none
	start.link pci/0000:00:06.0 e1000
	takeover.dmesg <14>drvbind: pci/0000:00:06.0: e1000 -> none
	takeover.link pci/0000:00:06.0 none
	# the rules it shares with the initramfs's follower hold as they were
	takeover.dmesg <14>drvbind: pci/0000:00:05.0: already on pci-stub
	takeover.dmesg <14>drvbind: usb/2-1:1.0: already unbound
	EOF
}

@test "in the real root, 0000:00:05.0 removed and rescanned in ends on pci-stub again, through inittab's follower's driver_override" {
	# drvbind's moves: held before the bus probed the new device (none),
	# or taken from e1000; on the remove the follower may bind the going
	# device once more
	replugged rescan pci/0000:00:05.0 pci-stub \
		"<14>drvbind: pci/0000:00:05\.0: (none|e1000) -> pci-stub" \
		"<6>pci 0000:00:05.0: [8086:100e] type 00 class 0x020000" \
		"<6>pci-stub 0000:00:05.0: claimed by stub"
	# a device the rescan made has no override: this one is the follower's
	has itools-follow rescan.override "pci/0000:00:05.0 pci-stub"
	# its last move came after the bus added the new device
	awk '/^rescan\.kmsg .*\[8086:100e\]/ { added = NR } /^rescan\.kmsg <[0-9]*>drvbind: / { moved = NR }
		END { exit !(added && moved > added) }' "$OUT/itools-follow/results" ||
		{ echo "no move of the rescanned device:"; grep '^rescan\.' "$OUT/itools-follow/results"; false; }
}

@test "in the real root, the stick's interface made anew by authorized 0 and 1 and probed by usb-storage ends without a driver and with authorized 0, from inittab's follower" {
	# drvbind's one line, whichever way usb-storage's probe raced its
	# look: after the probe bound it, a move; before, a hold on the
	# unbound interface, and authorized 0, written while usb-storage
	# probes, waits for the probe and then unbinds it
	replugged reenum usb/2-1:1.0 none \
		"<14>drvbind: usb/2-1:1\.0: (usb-storage -> none|unbound; held by authorized 0)" \
		"<6>usb 2-1: authorized to connect" \
		"<6>usb-storage 2-1:1.0: USB Mass Storage device detected"
	# a new interface is authorized: its 0 is the follower's
	has itools-follow reenum.authorized "usb/2-1:1.0 0"
	has itools-follow reenum.link "pci/0000:00:05.0 pci-stub"
	has itools-follow reenum.link "pci/0000:00:06.0 none"
}
