#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The standing promises of the binary itself: static, small, no heap.

load helper

setup() { :; }
teardown() { :; }

# The compiler and nm of the binary's architecture, as the Makefile has them.
tool() {
	make -s -C "$TOP" ARCH="$ARCH" --no-print-directory print-"$1"
}

# exits_with STATUS LINE ARG...: the binary run with ARGs (no sysfs tree
# here) exits STATUS and says LINE first; the option tests are a table
# of these, one line each.
exits_with() {
	local want=$1 line=$2
	shift 2
	run ${RUN:+"$RUN"} "$BIN" "$@"
	[ "$status" -eq "$want" ]
	[[ ${lines[0]} == "$line" ]]
}

@test "the binary is static, stripped and at most 32 KiB" {
	shipped_only
	[ -x "$BIN" ]
	size=$(wc -c <"$BIN")
	echo "size: $size"
	[ "$size" -le 32768 ]
	# a bare "! cmd" before the last line cannot fail a bats test
	[ -z "$(readelf -lW "$BIN" | grep -e INTERP -e DYNAMIC)" ]
	# no symbol table for nm, which would say it cannot read the file at all
	run $(tool nm) "$BIN"
	[[ $output == *": no symbols" ]]
}

@test "the static link holds no allocator, no opendir and no printf" {
	shipped_only "inspects the shipped build's link"
	syms=$BIN.syms nm=$(tool nm)
	[ -f "$syms" ]
	# the link really is the program: its own functions are in it
	$nm "$syms" | grep -q " T main$"
	run sh -c "$nm '$syms' | awk '{print \$NF}' | grep -xE 'malloc|calloc|realloc|free|opendir|fdopendir|[a-z]*printf'"
	echo "$output"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

@test "the sources compile without a warning under -Wall -Wextra -Werror" {
	local f
	for f in "$TOP"/applet/*.c; do
		run $(tool cc) -Os -Wall -Wextra -Werror -c -o /dev/null "$f"
		echo "$f: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "the binary carries no date or path of the build" {
	shipped_only
	run grep -ac -e "$(date +%Y)" -e "$(date +%b)" -e "$TOP" "$BIN"
	[ "$output" = 0 ]
}

@test "-h prints the usage on stdout and -V the version, both exit 0" {
	exits_with 0 "usage: drvbind [-bfnqv] [-r SYSFS] [-k CMDLINE] [-c CONF] [-t SECS] [-m MODPROBE] [-s SOCKET] [RULE...]" -h
	run ${RUN:+"$RUN"} "$BIN" -V
	[ "$status" -eq 0 ]
	[ "$output" = "drvbind 0.1" ]
}

@test "an unknown option or a missing value is a usage error, exit 2" {
	exits_with 2 "drvbind: -x: unknown option" -x
	exits_with 2 "drvbind: -r: missing value" -r
	exits_with 2 "drvbind: -t: not a whole number of seconds" -t soon
}

@test "a sysfs root that is not a sysfs tree is a clear error, exit 1" {
	run ${RUN:+"$RUN"} "$BIN" -r "$BATS_TEST_TMPDIR" a:b
	[ "$status" -eq 1 ]
	[ "$output" = "drvbind: $BATS_TEST_TMPDIR: not a sysfs tree: No such file or directory" ]
	run ${RUN:+"$RUN"} "$BIN" -r "$BATS_TEST_TMPDIR/none" a:b
	[ "$status" -eq 1 ]
	[ "$output" = "drvbind: $BATS_TEST_TMPDIR/none: not a sysfs tree: No such file or directory" ]
}

@test "make install honours DESTDIR and PREFIX, and uninstall removes it all" {
	shipped_only "installs the shipped build"
	d=$BATS_TEST_TMPDIR/dest
	run make -s -C "$TOP" install ARCH="$ARCH" DESTDIR="$d" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ -x "$d/usr/sbin/drvbind" ]
	[ -f "$d/usr/share/man/man8/drvbind.8" ]
	cmp "$BIN" "$d/usr/sbin/drvbind"
	# the follower's ways in without systemd name the installed binary
	grep -qx "::respawn:/usr/sbin/drvbind -f" "$d/usr/share/drvbind/inittab"
	[ -x "$d/usr/share/drvbind/runit/drvbind-follow/run" ]
	grep -qx "exec /usr/sbin/drvbind -f" "$d/usr/share/drvbind/runit/drvbind-follow/run"
	run make -s -C "$TOP" uninstall ARCH="$ARCH" DESTDIR="$d" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ -z "$(find "$d" -type f)" ]
}
