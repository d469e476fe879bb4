#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The initramfs integrations' own behaviour, without booting: the shared
# module resolver (initramfs/modules.sh), the boot scripts of each
# builder run against a stub drvbind, dracut's and mkinitcpio's build
# files sourced in a harness that stands in for the builder, real
# mkinitramfs and dracut builds of the edge cases (an untrusted config
# file among them), make install, and shellcheck.
# Files are taken as `make install DESTDIR=` puts them, paths filled in.
# test/builders.bats boots the real images.

bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export TOP
	k=$(sh "$TOP/test/qemu/kernel.sh" "$TOP/build/qemu")
	export KDIR=${k% *} KVER=${k##* }
	export STAGE=$BATS_FILE_TMPDIR/stage
	make -s -C "$TOP" install DESTDIR="$STAGE" PREFIX=/usr
}

setup() {
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/etc" "$T/stub/usr/sbin"
	: >"$T/drvbind.log"
	echo "BOOT_IMAGE=/vmlinuz ro quiet" >"$T/cmdline"
	# /sbin/drvbind as the boot scripts run it: it only says it ran.
	printf '#!/bin/sh\necho "drvbind $*" >>"%s/drvbind.log"\n' "$T" >"$T/stub/usr/sbin/drvbind"
	chmod 755 "$T/stub/usr/sbin/drvbind"
}

teardown() {
	[ -z "${PUBLIC:-}" ] || rm -rf "$PUBLIC"
}

# public: $PUBLIC, a directory of root's that nobody may reach (the
# test's own tree is root's alone), with nobody's directory
# $PUBLIC/nobody in it and root's config file $PUBLIC/nobody/conf, mode
# 644, with a rule for pci-stub
public() {
	PUBLIC=$(mktemp -d /tmp/drvbind-hooks.XXXXXX)
	chmod 755 "$PUBLIC"
	mkdir "$PUBLIC/nobody"
	chown nobody:nogroup "$PUBLIC/nobody"
	echo 'pci/0000:00:05.0:pci-stub' >"$PUBLIC/nobody/conf"
	chmod 644 "$PUBLIC/nobody/conf"
}

# as_nobody CMD...: CMD as nobody:nogroup without other groups
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}

# untrusted FILE WHY: modules.sh -t refuses FILE for WHY, and says so
untrusted() {
	run --separate-stderr sh "$TOP/initramfs/modules.sh" -t "$1"
	[ "$status" -eq 1 ]
	is "$1" "$stderr" "drvbind: $1: $2; not copied into the image"
}

# trusted FILE: modules.sh -t passes FILE, quietly
trusted() {
	run --separate-stderr sh "$TOP/initramfs/modules.sh" -t "$1"
	is "$1" "$stderr" ""
	[ "$status" -eq 0 ]
}

# ns COMMAND...: with the stub over /usr/sbin, the staged install and
# the test kernel's modules over /usr, $T/etc over /etc and
# $T/cmdline over /proc/cmdline (test/initramfs/ns.sh).
ns() {
	sh "$TOP/test/initramfs/ns.sh" -u "$T/stub/usr" -u "$STAGE/usr" -u "$KDIR" -e "$T/etc" -k "$T/cmdline" -- "$@"
}

# no_conf: /etc/drvbind.conf is absent for ns, even if the machine has
# one: an overlay whiteout (a 0/0 character device) hides it.
no_conf() {
	rm -f "$T/etc/drvbind.conf"
	mknod "$T/etc/drvbind.conf" c 0 0
}

# resolve ARG...: modules.sh against the test kernel, stderr kept apart.
resolve() {
	run --separate-stderr sh "$TOP/initramfs/modules.sh" -b "$KDIR" "$@" "$KVER"
}

# resolves MODULES MESSAGES ARG...: resolve ARG..., which exits 0, and
# prints the modules MODULES, one a line, on stdout and MESSAGES on stderr
resolves() {
	local modules=$1 messages=$2
	shift 2
	resolve "$@"
	[ "$status" -eq 0 ]
	is modules "$output" "$modules"
	is messages "$stderr" "$messages"
}

is() {
	[[ $2 == "$3" ]] && return 0
	echo "$1: expected '$3', got '$2'"
	return 1
}

# conf_as UID MODE: /etc/drvbind.conf for ns, with a rule for pci-stub,
# owned by UID with MODE.
conf_as() {
	rm -f "$T/etc/drvbind.conf"
	echo 'pci/0000:00:05.0:pci-stub' >"$T/etc/drvbind.conf"
	chown "$1" "$T/etc/drvbind.conf"
	chmod "$2" "$T/etc/drvbind.conf"
}

# refused WHY: what a build says of /etc/drvbind.conf refused for WHY,
# when the build host's command line holds a rule for vfio-pci.
refused() {
	echo "drvbind: /etc/drvbind.conf: $1; not copied into the image
drvbind: /etc/drvbind.conf: $1; not read
drvbind: vfio-pci: adding module vfio-pci"
}

@test "every initramfs script is shellcheck-clean" {
	cd "$TOP"
	run shellcheck initramfs/prepend.sh initramfs/modules.sh initramfs/initramfs-tools/hook \
		initramfs/initramfs-tools/init-top initramfs/dracut/module-setup.sh \
		initramfs/dracut/drvbind.sh initramfs/mkinitcpio/install initramfs/mkinitcpio/hook \
		initramfs/runit/drvbind-follow/run \
		test/initramfs/ns.sh test/initramfs/run.sh test/initramfs/root-init test/initramfs/root-follow
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "make install puts each builder's files where it reads them, paths filled in, and uninstall removes exactly those" {
	d=$T/dest
	make -s -C "$TOP" install DESTDIR="$d"
	run sh -c "cd '$d' && find . -type f | LC_ALL=C sort"
	is files "$output" "./usr/lib/dracut/modules.d/90drvbind/drvbind.sh
./usr/lib/dracut/modules.d/90drvbind/module-setup.sh
./usr/lib/initcpio/hooks/drvbind
./usr/lib/initcpio/install/drvbind
./usr/lib/systemd/system/drvbind-follow.service
./usr/lib/systemd/system/drvbind.service
./usr/local/sbin/drvbind
./usr/local/share/drvbind/inittab
./usr/local/share/drvbind/modules.sh
./usr/local/share/drvbind/runit/drvbind-follow/run
./usr/local/share/man/man5/drvbind.conf.5
./usr/local/share/man/man8/drvbind.8
./usr/share/initramfs-tools/hooks/drvbind
./usr/share/initramfs-tools/scripts/init-top/drvbind"
	# the build-time hooks name the binary and the resolver where PREFIX put them
	grep -qx 'copy_exec /usr/local/sbin/drvbind /sbin/drvbind' "$d/usr/share/initramfs-tools/hooks/drvbind"
	grep -qF 'sh /usr/local/share/drvbind/modules.sh "$version"' "$d/usr/share/initramfs-tools/hooks/drvbind"
	grep -qF 'inst_simple /usr/lib/systemd/system/drvbind.service' "$d/usr/lib/dracut/modules.d/90drvbind/module-setup.sh"
	# the real root's follower, installed and not enabled
	grep -qx 'ExecStart=/usr/local/sbin/drvbind -f' "$d/usr/lib/systemd/system/drvbind-follow.service"
	grep -qx '::respawn:/usr/local/sbin/drvbind -f' "$d/usr/local/share/drvbind/inittab"
	grep -qx 'exec /usr/local/sbin/drvbind -f' "$d/usr/local/share/drvbind/runit/drvbind-follow/run"
	! grep -rn '@[A-Z]*DIR@' "$d" || false
	[ -x "$d/usr/share/initramfs-tools/hooks/drvbind" ]
	[ -x "$d/usr/share/initramfs-tools/scripts/init-top/drvbind" ]
	make -s -C "$TOP" uninstall DESTDIR="$d"
	is left "$(find "$d" -type f)" ""
	[ ! -e "$d/usr/lib/dracut/modules.d/90drvbind" ]
	[ ! -e "$d/usr/local/share/drvbind" ]
}

@test "the resolver maps rules from the config and the command line to their drivers' modules, each once" {
	printf '# a comment\n  pci/0000:00:05.0:pci-stub  \ndrvbind.timeout=3\ndrvbind=0000:00:06.0:vfio-pci\n\n0000:00:07.0:none\n' >"$T/conf"
	printf 'ro quiet drvbind=1-1:1.0:usb-storage drvbind=0000:00:08.0:pci-stub drvbind.timeout=5\n' >"$T/cmd"
	resolves "pci-stub
vfio-pci
usb-storage" "drvbind: pci-stub: adding module pci-stub
drvbind: vfio-pci: adding module vfio-pci
drvbind: usb-storage: adding module usb-storage" -c "$T/conf" -k "$T/cmd" -r "$T/nosys"
}

@test "no config and no rules on the command line: the resolver adds nothing and says nothing" {
	echo "BOOT_IMAGE=/vmlinuz ro quiet drvbind.timeout=5" >"$T/cmd"
	resolves "" "" -c "$T/none" -k "$T/cmd" -r "$T/nosys"
}

@test "a driver whose module cannot be found is named and left out; a built-in one needs none" {
	printf '0000:00:05.0:nosuch-drv\nserio0:atkbd\n0000:00:06.0:e1000\n' >"$T/conf"
	resolves "e1000" "drvbind: nosuch-drv: no module found for $KVER; not added
drvbind: atkbd: built into $KVER, no module needed
drvbind: e1000: adding module e1000" -c "$T/conf" -k "$T/none" -r "$T/nosys"
}

@test "a quoted rule on the command line gives its whole driver name, found through the registered driver's module link" {
	# The driver "RSI-USB WLAN" is registered by module rsi_usb: no
	# spelling of the name leads to the module, only sysfs does.
	mkdir -p "$T/sys/bus/usb/drivers/RSI-USB WLAN" "$T/sys/module/rsi_usb"
	ln -s ../../../../module/rsi_usb "$T/sys/bus/usb/drivers/RSI-USB WLAN/module"
	printf 'ro "drvbind=1-1:1.0:RSI-USB WLAN" drvbind="pci/0000:00:05.0:vfio-pci" quiet\n' >"$T/cmd"
	resolves "rsi_usb
vfio-pci" "drvbind: RSI-USB WLAN: adding module rsi_usb
drvbind: vfio-pci: adding module vfio-pci" -c "$T/none" -k "$T/cmd" -r "$T/sys"
}

@test "a driver name differing from its module's by '-' and '_' is still resolved, and rules after a bare -- are not rules" {
	# e1000e's module file is e1000e.ko; pci_stub is spelled pci-stub.ko
	printf 'drvbind=0000:00:05.0:pci_stub -- drvbind=0000:00:06.0:e1000e\n' >"$T/cmd"
	resolve -c "$T/none" -k "$T/cmd" -r "$T/nosys"
	[ "$status" -eq 0 ]
	is modules "$output" "pci-stub"
}

@test "the resolver takes no rules from a config file that another user owns, that group or others may write or that is not a regular file, and says why" {
	echo 'pci/0000:00:05.0:pci-stub' >"$T/conf"
	echo 'ro drvbind=0000:00:06.0:vfio-pci' >"$T/cmd"
	chown 65534 "$T/conf"
	resolves "vfio-pci" "drvbind: $T/conf: owned by uid 65534, not by root; not read
drvbind: vfio-pci: adding module vfio-pci" -c "$T/conf" -k "$T/cmd" -r "$T/nosys"
	chown 0 "$T/conf"
	for mode in 0664 0646; do
		chmod "$mode" "$T/conf"
		resolve -c "$T/conf" -k "$T/cmd" -r "$T/nosys"
		[ "$status" -eq 0 ]
		is "modules, $mode" "$output" "vfio-pci"
		is "messages, $mode" "$stderr" "drvbind: $T/conf: writable by group or others; not read
drvbind: vfio-pci: adding module vfio-pci"
	done
	# a FIFO would hold the build up
	mkfifo "$T/fifo"
	resolves "vfio-pci" "drvbind: $T/fifo: not a regular file; not read
drvbind: vfio-pci: adding module vfio-pci" -c "$T/fifo" -k "$T/cmd" -r "$T/nosys"
	chmod 0644 "$T/conf"
	resolve -c "$T/conf" -k "$T/cmd" -r "$T/nosys"
	[ "$status" -eq 0 ]
	is modules "$output" "pci-stub
vfio-pci"
}

@test "modules.sh -t passes a regular file of root's that only root may write, is quiet about a missing one, and says why it refuses the rest" {
	m=$TOP/initramfs/modules.sh
	echo 'pci/0000:00:05.0:pci-stub' >"$T/conf"
	chmod 0644 "$T/conf"
	run --separate-stderr sh "$m" -t "$T/conf"
	[ "$status" -eq 0 ]
	is "0644 root" "$stderr" ""
	chmod 0600 "$T/conf"
	run --separate-stderr sh "$m" -t "$T/conf"
	[ "$status" -eq 0 ]
	run --separate-stderr sh "$m" -t "$T/missing"
	[ "$status" -eq 1 ]
	is missing "$stderr" ""
	chmod 0664 "$T/conf"
	run --separate-stderr sh "$m" -t "$T/conf"
	[ "$status" -eq 1 ]
	is 0664 "$stderr" "drvbind: $T/conf: writable by group or others; not copied into the image"
	chmod 0646 "$T/conf"
	run --separate-stderr sh "$m" -t "$T/conf"
	[ "$status" -eq 1 ]
	is 0646 "$stderr" "drvbind: $T/conf: writable by group or others; not copied into the image"
	# a link is judged by the file it leads to, which is what gets copied
	chmod 0644 "$T/conf"
	chown 65534 "$T/conf"
	ln -s conf "$T/link"
	run --separate-stderr sh "$m" -t "$T/link"
	[ "$status" -eq 1 ]
	is "link to uid 65534" "$stderr" "drvbind: $T/link: owned by uid 65534, not by root; not copied into the image"
	mkdir "$T/dir"
	run --separate-stderr sh "$m" -t "$T/dir"
	[ "$status" -eq 1 ]
	is directory "$stderr" "drvbind: $T/dir: not a regular file; not copied into the image"
}

# The config file's whole path, as drvbind judges it at run time
# (test/trust.bats): every directory from / to it, through every link,
# root's and written by no one else.

@test "modules.sh -t refuses a root config file below a directory nobody owns or group or others may write, however far up, naming it; a relative path is walked from /" {
	public
	untrusted "$PUBLIC/nobody/conf" "directory $PUBLIC/nobody is owned by uid 65534, not by root"
	(cd "$PUBLIC/nobody" && untrusted conf "directory $PUBLIC/nobody is owned by uid 65534, not by root")
	mkdir -p "$PUBLIC/w/sub"
	echo 'pci/0000:00:05.0:pci-stub' >"$PUBLIC/w/sub/conf"
	for mode in 775 757 777; do
		chmod "$mode" "$PUBLIC/w"
		untrusted "$PUBLIC/w/sub/conf" "directory $PUBLIC/w is writable by group or others"
	done
}

@test "as nobody, a root config file in nobody's directory swapped for a link to a root file of nobody's text is refused by modules.sh -t and the resolver, naming the directory; the command line's rules still go in" {
	public
	# A root file whose text nobody chose: /proc/PID/cmdline of a
	# set-user-ID program that nobody started is one. Here root writes it.
	printf 'drvbind.modprobe=/tmp/evil\n0000:00:07.0:e1000\n' >"$PUBLIC/text"
	as_nobody sh -c "rm '$PUBLIC/nobody/conf' && ln -s '$PUBLIC/text' '$PUBLIC/nobody/conf'"
	[ "$(stat -c '%F %u' "$PUBLIC/nobody/conf")" = "symbolic link 65534" ]
	why="directory $PUBLIC/nobody is owned by uid 65534, not by root"
	untrusted "$PUBLIC/nobody/conf" "$why"
	echo 'ro drvbind=0000:00:06.0:vfio-pci' >"$T/cmd"
	resolves "vfio-pci" "drvbind: $PUBLIC/nobody/conf: $why; not read
drvbind: vfio-pci: adding module vfio-pci" -c "$PUBLIC/nobody/conf" -k "$T/cmd" -r "$T/nosys"
}

@test "modules.sh -t follows links through root's directories and a root sticky one as drvbind does, and refuses a link through nobody's directory, a link nobody put in a sticky one, and a loop" {
	public
	mkdir -p "$PUBLIC/a" "$PUBLIC/b/c" "$PUBLIC/etc" "$PUBLIC/tmp/root"
	chmod 1777 "$PUBLIC/tmp"
	echo 'pci/0000:00:05.0:pci-stub' >"$PUBLIC/b/c/conf"
	ln -s ../b "$PUBLIC/a/up"
	# up/.. is b's parent, as the kernel walks it: not a
	ln -s "$PUBLIC/a/./up/../b/c/conf" "$PUBLIC/etc/step"
	ln -s step "$PUBLIC/etc/conf"
	trusted "$PUBLIC/etc/conf"
	cp "$PUBLIC/b/c/conf" "$PUBLIC/tmp/root/conf"
	trusted "$PUBLIC/tmp/root/conf"
	chown nobody "$PUBLIC/b"
	untrusted "$PUBLIC/etc/conf" "directory $PUBLIC/b is owned by uid 65534, not by root"
	ln -s nobody/conf "$PUBLIC/relative"
	untrusted "$PUBLIC/relative" "directory $PUBLIC/nobody is owned by uid 65534, not by root"
	as_nobody ln -s "$PUBLIC/tmp/root/conf" "$PUBLIC/tmp/link"
	untrusted "$PUBLIC/tmp/link" "link $PUBLIC/tmp/link is owned by uid 65534, not by root"
	ln -s loop2 "$PUBLIC/loop1"
	ln -s loop1 "$PUBLIC/loop2"
	untrusted "$PUBLIC/loop1" "symbolic link loop (more than 40 links)"
	ln -s tmp/root/conf "$PUBLIC/l40"
	for ((i = 39; i >= 0; i--)); do
		ln -s "l$((i + 1))" "$PUBLIC/l$i"
	done
	trusted "$PUBLIC/l1"
	untrusted "$PUBLIC/l0" "symbolic link loop (more than 40 links)"
}

@test "initramfs-tools' boot script starts drvbind -b for a config file, for a command-line rule, and not at all without rules" {
	s=$STAGE/usr/share/initramfs-tools/scripts/init-top/drvbind
	run sh "$s" prereqs
	[ "$status" -eq 0 ]
	is prereqs "$output" ""
	no_conf
	run ns sh "$s"
	[ "$status" -eq 0 ]
	is "no rules" "$(cat "$T/drvbind.log")" ""
	echo "ro drvbind=0000:00:05.0:pci-stub" >"$T/cmdline"
	run ns sh "$s"
	[ "$status" -eq 0 ]
	is "command line" "$(cat "$T/drvbind.log")" "drvbind -b"
	: >"$T/drvbind.log"
	echo "ro quiet" >"$T/cmdline"
	rm "$T/etc/drvbind.conf"
	echo "0000:00:05.0:pci-stub" >"$T/etc/drvbind.conf"
	run ns sh "$s"
	[ "$status" -eq 0 ]
	is config "$(cat "$T/drvbind.log")" "drvbind -b"
}

@test "dracut's shell-init hook, sourced as dracut sources it, starts drvbind -b only with rules and never exits" {
	h=$STAGE/usr/lib/dracut/modules.d/90drvbind/drvbind.sh
	no_conf
	run ns sh -c ". '$h'; echo after"
	is output "$output" "after"
	is "no rules" "$(cat "$T/drvbind.log")" ""
	echo 'ro "drvbind=1-1:1.0:RSI-USB WLAN"' >"$T/cmdline"
	run ns sh -c ". '$h'; echo after"
	is output "$output" "after"
	is "command line" "$(cat "$T/drvbind.log")" "drvbind -b"
}

# dracut_harness [systemd]: module-setup.sh sourced with dracut's
# functions standing in, each recording its call in $T/calls.
dracut_harness() {
	cat >"$T/harness.sh" <<EOF
initdir=$T/initdir kernel=$KVER moddir=/usr/lib/dracut/modules.d/90drvbind
systemdsystemunitdir=/usr/lib/systemd/system SYSTEMCTL=systemctl_stub
rec() { echo "\$*" >>'$T/calls'; }
for f in require_binaries inst_binary inst_simple inst_hook instmods systemctl_stub; do
	eval "\$f() { rec \$f \\"\\\$@\\"; }"
done
dracut_module_included() { [ "\$1" = "${1:-}" ]; }
. /usr/lib/dracut/modules.d/90drvbind/module-setup.sh
check; echo "check \$?" >>'$T/calls'
depends; echo "depends \$?" >>'$T/calls'
install
installkernel
EOF
	: >"$T/calls"
	ns sh "$T/harness.sh"
}

@test "dracut's module with shell init: binary, config, a pre-trigger hook and the rules' modules" {
	echo "pci/0000:00:05.0:pci-stub" >"$T/etc/drvbind.conf"
	run dracut_harness
	[ "$status" -eq 0 ]
	is calls "$(cat "$T/calls")" "require_binaries /usr/sbin/drvbind
check 0
depends 0
inst_binary /usr/sbin/drvbind /sbin/drvbind
inst_simple /etc/drvbind.conf
inst_hook pre-trigger 10 /usr/lib/dracut/modules.d/90drvbind/drvbind.sh
instmods pci-stub"
	is built "$output" "drvbind: pci-stub: adding module pci-stub"
}

@test "dracut's module with systemd init: the unit, enabled, instead of the hook; no config and no rules add no config and no modules" {
	no_conf
	run dracut_harness systemd
	[ "$status" -eq 0 ]
	is calls "$(cat "$T/calls")" "require_binaries /usr/sbin/drvbind
check 0
depends 0
inst_binary /usr/sbin/drvbind /sbin/drvbind
inst_simple /usr/lib/systemd/system/drvbind.service /usr/lib/systemd/system/drvbind.service
systemctl_stub -q --root $T/initdir enable drvbind.service"
	is built "$output" ""
}

@test "the systemd unit runs before udev's coldplug, only in an initrd with rules, and spares its waiting child at switch-root" {
	u=$STAGE/usr/lib/systemd/system/drvbind.service
	grep -qx 'DefaultDependencies=no' "$u"
	grep -qx 'Before=systemd-udev-trigger.service' "$u"
	grep -qx 'ConditionPathExists=/etc/initrd-release' "$u"
	grep -qx 'ConditionPathExists=|/etc/drvbind.conf' "$u"
	grep -qx 'ConditionKernelCommandLine=|drvbind' "$u"
	# systemd's killing spree before switch-root skips argv[0] "@..."
	grep -qx 'ExecStart=@/sbin/drvbind @drvbind -b' "$u"
	grep -qx 'KillMode=process' "$u"
	grep -qx 'WantedBy=sysinit.target' "$u"
}

# conf_edges EDGE BAD MODE CONF BIN: the config file through a real
# build, EDGE (dracut_edge or mkinitramfs_edge), three times, the build
# host's command line naming vfio-pci: owned by nobody (image owner),
# root's with MODE (image BAD), root's 0644 (image root). The first two
# stay out, each build saying why (refused), and so does the module of
# the config's rule, pci-stub, while drvbind and vfio-pci's module go
# in; the third goes in with pci-stub's module. CONF and BIN are the
# regular expressions for the config and the binary in the builder's
# listing (NAME.files).
conf_edges() {
	local edge=$1 bad=$2 n
	echo 'BOOT_IMAGE=/vmlinuz ro drvbind=0000:00:06.0:vfio-pci' >"$T/cmdline"
	conf_as 65534 0644
	"$edge" owner
	conf_as 0 "$3"
	"$edge" "$bad"
	conf_as 0 0644
	"$edge" root
	is owner "$(grep '^drvbind:' "$T/owner.log")" "$(refused 'owned by uid 65534, not by root')"
	is "$bad" "$(grep '^drvbind:' "$T/$bad.log")" "$(refused 'writable by group or others')"
	for n in owner "$bad"; do
		! grep -q "$4" "$T/$n.files" || false
		! grep -q '/pci-stub\.ko$' "$T/$n.files" || false
		grep -q '/vfio-pci\.ko$' "$T/$n.files"
		grep -q "$5" "$T/$n.files"
	done
	is root "$(grep '^drvbind:' "$T/root.log")" "drvbind: pci-stub: adding module pci-stub
drvbind: vfio-pci: adding module vfio-pci"
	grep -q '/pci-stub\.ko$' "$T/root.files"
}

# dracut_edge NAME: a real dracut image of drvbind's module alone, with
# the staged module, the config in $T/etc, the build host's command line
# $T/cmdline; its log in $T/NAME.log, its listing in $T/NAME.files.
dracut_edge() {
	sh "$TOP/test/initramfs/ns.sh" -u "$STAGE/usr" -u "$KDIR" -e "$T/etc" -k "$T/cmdline" -- \
		dracut --no-hostonly --no-hostonly-cmdline --modules drvbind --tmpdir "$T" \
		--force --kver "$KVER" "$T/$1.img" >"$T/$1.log" 2>&1 || {
		cat "$T/$1.log"
		return 1
	}
	lsinitrd "$T/$1.img" >"$T/$1.files"
}

@test "a real dracut build leaves out a config file that another user owns or others may write and says why; a root-owned 0644 one goes in" {
	conf_edges dracut_edge others 0646 ' etc/drvbind\.conf$' ' usr/sbin/drvbind$'
	grep -qE '^-rw-r--r-- +1 root +root .* etc/drvbind\.conf$' "$T/root.files"
}

# mkinitcpio_harness [systemd]: install/drvbind sourced by bash with
# mkinitcpio's add_* functions standing in (mkinitcpio is not packaged
# in Debian 12); with systemd, as after the systemd hook, which defines
# add_systemd_unit.
mkinitcpio_harness() {
	local fns="add_binary add_file add_module add_runscript add_symlink"
	[ "${1:-}" = systemd ] && fns="$fns add_systemd_unit"
	cat >"$T/harness.sh" <<EOF
KERNELVERSION=$KVER
rec() { echo "\$*" >>'$T/calls'; }
for f in $fns; do
	eval "\$f() { rec \$f \\"\\\$@\\"; }"
done
. /usr/lib/initcpio/install/drvbind
build
EOF
	: >"$T/calls"
	ns bash "$T/harness.sh"
}

@test "mkinitcpio's install hook after the systemd hook adds the binary, the config, the rules' modules, its runscript and the unit, enabled" {
	printf '1-1:1.0:usb-storage\n0000:00:05.0:nosuch-drv\n' >"$T/etc/drvbind.conf"
	echo "ro drvbind=0000:00:06.0:vfio-pci" >"$T/cmdline"
	run --separate-stderr mkinitcpio_harness systemd
	[ "$status" -eq 0 ]
	is calls "$(cat "$T/calls")" "add_binary /usr/sbin/drvbind /sbin/drvbind
add_file /etc/drvbind.conf
add_module usb-storage
add_module vfio-pci
add_runscript
add_file /usr/lib/systemd/system/drvbind.service /usr/lib/systemd/system/drvbind.service
add_symlink /usr/lib/systemd/system/sysinit.target.wants/drvbind.service /usr/lib/systemd/system/drvbind.service"
	is built "$stderr" "drvbind: usb-storage: adding module usb-storage
drvbind: nosuch-drv: no module found for $KVER; not added
drvbind: vfio-pci: adding module vfio-pci"
}

@test "mkinitcpio with busybox init and without config and rules: only the binary and the runscript; help says what the hook does" {
	no_conf
	run --separate-stderr mkinitcpio_harness
	[ "$status" -eq 0 ]
	is calls "$(cat "$T/calls")" "add_binary /usr/sbin/drvbind /sbin/drvbind
add_runscript"
	is built "$stderr" ""
	run bash -c ". '$STAGE/usr/lib/initcpio/install/drvbind'; help"
	[ "$status" -eq 0 ]
	[[ $output == *"before udev loads the native drivers"* ]]
}

@test "mkinitcpio's install hook leaves out a config file that another user owns or group or others may write and says why; a root-owned 0644 one goes in" {
	echo "ro drvbind=0000:00:06.0:vfio-pci" >"$T/cmdline"
	# left_out UID MODE WHY
	left_out() {
		conf_as "$1" "$2"
		run --separate-stderr mkinitcpio_harness
		[ "$status" -eq 0 ]
		is "calls, $1 $2" "$(cat "$T/calls")" "add_binary /usr/sbin/drvbind /sbin/drvbind
add_module vfio-pci
add_runscript"
		is "built, $1 $2" "$stderr" "$(refused "$3")"
	}
	left_out 65534 0644 'owned by uid 65534, not by root'
	left_out 0 0664 'writable by group or others'
	left_out 0 0646 'writable by group or others'
	conf_as 0 0644
	run --separate-stderr mkinitcpio_harness
	[ "$status" -eq 0 ]
	is calls "$(cat "$T/calls")" "add_binary /usr/sbin/drvbind /sbin/drvbind
add_file /etc/drvbind.conf
add_module pci-stub
add_module vfio-pci
add_runscript"
}

@test "mkinitcpio's install hook leaves out a config file that is a link to a root file in nobody's directory, and says why" {
	public
	echo "ro drvbind=0000:00:06.0:vfio-pci" >"$T/cmdline"
	rm -f "$T/etc/drvbind.conf"
	ln -s "$PUBLIC/nobody/conf" "$T/etc/drvbind.conf"
	run --separate-stderr mkinitcpio_harness
	[ "$status" -eq 0 ]
	is calls "$(cat "$T/calls")" "add_binary /usr/sbin/drvbind /sbin/drvbind
add_module vfio-pci
add_runscript"
	is built "$stderr" "$(refused "directory $PUBLIC/nobody is owned by uid 65534, not by root")"
}

@test "mkinitcpio's run_earlyhook starts drvbind -b only with rules" {
	h=$STAGE/usr/lib/initcpio/hooks/drvbind
	no_conf
	run ns sh -c ". '$h'; run_earlyhook; echo after"
	is output "$output" "after"
	is "no rules" "$(cat "$T/drvbind.log")" ""
	rm "$T/etc/drvbind.conf"
	echo "serio0:none" >"$T/etc/drvbind.conf"
	run ns sh -c ". '$h'; run_earlyhook; echo after"
	is output "$output" "after"
	is config "$(cat "$T/drvbind.log")" "drvbind -b"
}

# mkinitramfs_edge NAME: a real mkinitramfs image (MODULES=list, nothing
# listed) with the staged hook, the config in $T/etc, the build host's
# command line $T/cmdline; its log in $T/NAME.log, its files in $T/NAME.files.
mkinitramfs_edge() {
	mkdir -p "$T/conf/conf.d" "$T/conf/hooks" "$T/conf/scripts"
	printf 'MODULES=list\nBUSYBOX=n\nCOMPRESS=zstd\n' >"$T/conf/initramfs.conf"
	: >"$T/conf/modules"
	sh "$TOP/test/initramfs/ns.sh" -u "$STAGE/usr" -u "$KDIR" -e "$T/etc" -k "$T/cmdline" -b "$KDIR/boot" -- \
		mkinitramfs -d "$T/conf" -o "$T/$1.img" "$KVER" >"$T/$1.log" 2>&1 || {
		cat "$T/$1.log"
		return 1
	}
	lsinitramfs "$T/$1.img" >"$T/$1.files"
}

@test "a real mkinitramfs image without config or rules holds drvbind and its boot script, but no config and no added module" {
	no_conf
	mkinitramfs_edge plain
	grep -qx 'usr/sbin/drvbind' "$T/plain.files"
	grep -qx 'scripts/init-top/drvbind' "$T/plain.files"
	! grep -q 'etc/drvbind.conf' "$T/plain.files" || false
	# MODULES=list with an empty list still gets the few modules other
	# hooks add (fuse, dm-mod, psmouse, fan on this machine): drvbind's
	# hook adds none, nor says anything
	! grep -qE '/(vfio-pci|vfio_pci|pci-stub|e1000)\.ko' "$T/plain.files" || false
	! grep -q '^drvbind:' "$T/plain.log" || false
}

@test "a real mkinitramfs build with a quoted command-line rule and an unknown driver adds the known module and names the other" {
	echo 'pci/0000:00:05.0:nosuch-drv' >"$T/etc/drvbind.conf"
	echo 'BOOT_IMAGE=/vmlinuz ro "drvbind=pci/0000:00:06.0:vfio-pci" quiet' >"$T/cmdline"
	mkinitramfs_edge rules
	grep -qx 'etc/drvbind.conf' "$T/rules.files"
	grep -q '/vfio-pci\.ko$' "$T/rules.files"
	grep -qx "drvbind: nosuch-drv: no module found for $KVER; not added" "$T/rules.log"
	grep -qx "drvbind: vfio-pci: adding module vfio-pci" "$T/rules.log"
}

@test "a real mkinitramfs build leaves out a config file that another user owns or group may write and says why; a root-owned 0644 one goes in" {
	conf_edges mkinitramfs_edge group 0664 'etc/drvbind\.conf' '^usr/sbin/drvbind$'
	lsinitramfs -l "$T/root.img" | grep -qE '^-rw-r--r-- +1 root +root .* etc/drvbind\.conf$'
}

@test "a real mkinitramfs build leaves out a config file that is a link to a root file in nobody's directory, and says why" {
	public
	echo 'BOOT_IMAGE=/vmlinuz ro drvbind=0000:00:06.0:vfio-pci' >"$T/cmdline"
	rm -f "$T/etc/drvbind.conf"
	ln -s "$PUBLIC/nobody/conf" "$T/etc/drvbind.conf"
	mkinitramfs_edge nobody
	is log "$(grep '^drvbind:' "$T/nobody.log")" "$(refused "directory $PUBLIC/nobody is owned by uid 65534, not by root")"
	! grep -q 'etc/drvbind\.conf' "$T/nobody.files" || false
	! grep -q '/pci-stub\.ko$' "$T/nobody.files" || false
	grep -q '/vfio-pci\.ko$' "$T/nobody.files"
	grep -qx 'usr/sbin/drvbind' "$T/nobody.files"
}
