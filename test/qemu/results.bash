# SPDX-License-Identifier: MIT
# Reading a guest's report: lines "RUN.KEY VALUE" in $QEMU_OUT/BOOT/results
# (test/qemu.bats, test/board.bats, test/builders.bats). Each check says
# what it found when it fails.

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# boot_all SCRIPT DIR: setup_file's one run of SCRIPT (a path below the
# top), which boots every guest the file's tests read; its own output goes
# to DIR/run.log, the guests' reports to DIR/out, where the checks below
# read them.
boot_all() {
	export QEMU_OUT=$TOP/$2/out
	mkdir -p "$TOP/$2"
	"$TOP/$1" >"$TOP/$2/run.log" 2>&1
}

# booted BOOT: the guest ran its scenario to the end.
booted() {
	local d=$QEMU_OUT/$1
	if [[ $(cat "$d/qemu.status" 2>/dev/null) == 0 ]] &&
		grep -qx end "$d/results" 2>/dev/null; then
		return 0
	fi
	echo "boot $1 did not finish (QEMU status $(cat "$d/qemu.status" 2>/dev/null))"
	tail -n 25 "$d/console.log" 2>/dev/null
	return 1
}

# val BOOT KEY: the first value of KEY.
val() {
	awk -v k="$2 " 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' \
		"$QEMU_OUT/$1/results"
}

# has BOOT KEY VALUE: one of KEY's lines is exactly VALUE.
has() {
	grep -qxF -- "$2 $3" "$QEMU_OUT/$1/results" && return 0
	echo "$1: no line: $2 $3"
	echo "$1: $2 lines are:"
	grep -F -- "$2 " "$QEMU_OUT/$1/results"
	return 1
}

# has_all BOOT <<EOF ... EOF: has BOOT KEY VALUE for every line "KEY
# VALUE" of stdin, as the results file has them (# lines are comments);
# every line missing is said, not only the first.
has_all() {
	local l bad=0
	while IFS= read -r l; do
		[[ $l == \#* ]] && continue
		has "$1" "${l%% *}" "${l#* }" || bad=1
	done
	return "$bad"
}

# count BOOT KEY VALUE: how many of KEY's lines are exactly VALUE.
count() {
	grep -cxF -- "$2 $3" "$QEMU_OUT/$1/results"
}

# is NAME ACTUAL EXPECTED, saying both when they differ.
is() {
	[[ $2 == "$3" ]] && return 0
	echo "$1: expected '$3', got '$2'"
	return 1
}

# status_is BOOT RUN N: drvbind's exit status; its messages if not N.
status_is() {
	local st
	st=$(val "$1" "$2.status")
	[[ $st == "$3" ]] && return 0
	echo "$2: exit status $st, expected $3; its messages:"
	grep -F -- "$2.stderr " "$QEMU_OUT/$1/results"
	return 1
}

# within NAME MS LOW HIGH
within() {
	[[ $2 =~ ^[0-9]+$ ]] && (($2 >= $3 && $2 <= $4)) && return 0
	echo "$1: $2 ms, expected $3 to $4"
	return 1
}

# as_kernel_left BOOT INIT: the next init, INIT, found /proc, /sys and
# /dev as the kernel leaves them for an initramfs (nothing mounted:
# drvbind detached what it mounted) and none of drvbind's descriptors.
as_kernel_left() {
	has "$1" init.premount none
	has "$1" init.dirs "/proc: /sys: /dev:console,"
	is mounts "$(awk '$1 == "init.mount" { printf "%s %s %s;", $2, $3, $4 }' "$QEMU_OUT/$1/results")" \
		"rootfs / rootfs;proc /proc proc;"
	# 0-2 the kernel's console, 10 and 11 the shell's own
	is fds "$(awk '$1 == "init.fd" { printf "%s %s;", $2, $4 }' "$QEMU_OUT/$1/results")" \
		"0 /dev/console;1 /run/init.fds;10 $2;11 /dev/console;2 /dev/console;"
}

# Images the real initramfs builders made and booted (test/initramfs/run.sh:
# builders.bats, and rpm.bats's dracut-rpm): IMAGE's build.log (the
# builder's output) and contents (its file list) beside its results.

# holds IMAGE REGEX: a file of the image matches (lsinitramfs/lsinitrd).
holds() {
	grep -qE -- "$2" "$QEMU_OUT/$1/contents" && return 0
	echo "$1: no file matching $2 in the image"
	return 1
}

# said IMAGE LINE: the builder printed LINE.
said() {
	grep -qxF -- "$2" "$QEMU_OUT/$1/build.log" && return 0
	echo "$1: the build did not say: $2"
	grep -F drvbind "$QEMU_OUT/$1/build.log"
	return 1
}

# applied IMAGE: the rule held when the root's init started, the native
# driver took the other device, and drvbind said so in the kernel log.
applied() {
	booted "$1"
	has "$1" root.pid 1
	has "$1" root.link "pci/0000:00:05.0 pci-stub"
	has "$1" root.override "pci/0000:00:05.0 pci-stub"
	has "$1" root.link "pci/0000:00:06.0 e1000"
	# unbound when drvbind came: it ran before coldplug loaded e1000
	has "$1" root.dmesg "<14>drvbind: pci/0000:00:05.0: none -> pci-stub"
}

# unheld IMAGE: the rule on the command line held too: 2-1:1.0 had no
# driver when the root's init started, though usb-storage was registered
# (only the initramfs's coldplug loads it: the real root runs no udev), so
# it had its chance at the interface; authorized 0 is what keeps it away.
unheld() {
	booted "$1"
	has "$1" root.driver "usb-storage registered"
	has "$1" root.link "usb/2-1:1.0 none"
	has "$1" root.authorized "usb/2-1:1.0 0"
}

# waiting IMAGE ARGV: drvbind still runs in the real root, as ARGV,
# waiting for the device that never appears: boot went on without it.
waiting() {
	local procs
	procs=$(awk '$1 == "root.procs" { $1 = ""; print }' "$QEMU_OUT/$1/results")
	echo "$1: real root's init at $(awk '$1 == "root.uptime" { print $2 }' "$QEMU_OUT/$1/results") s; drvbind processes:$procs"
	[[ $procs == *":$2"* ]]
	# 0000:00:1f.0, 0000:00:05.0 (pci-stub still loading) and 2-1:1.0
	# (xhci-pci not loaded before coldplug)
	has "$1" root.dmesg "<14>drvbind: waiting in the background for 3 rule(s)"
}
