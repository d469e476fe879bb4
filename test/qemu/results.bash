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
