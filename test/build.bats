#!/usr/bin/env bats
# The standing promises of the binary itself: static, small, no heap.

load helper

setup() { :; }
teardown() { :; }

# The compiler and nm of the binary's architecture, as the Makefile has them.
tool() {
	make -s -C "$TOP" ARCH="$ARCH" --no-print-directory print-"$1"
}

@test "the binary is static, stripped and at most 16 KiB" {
	shipped_only
	[ -x "$BIN" ]
	size=$(wc -c <"$BIN")
	echo "size: $size"
	[ "$size" -le 16384 ]
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
	run $(tool cc) -Os -Wall -Wextra -Werror -c -o /dev/null "$TOP/applet/drvbind.c"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run $(tool cc) -Os -Wall -Wextra -Werror -c -o /dev/null "$TOP/applet/parse.c"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the binary carries no date or path of the build" {
	shipped_only
	run grep -ac -e "$(date +%Y)" -e "$(date +%b)" -e "$TOP" "$BIN"
	[ "$output" = 0 ]
}

@test "-h prints the usage on stdout and -V the version, both exit 0" {
	run ${RUN:+"$RUN"} "$BIN" -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: drvbind [-bnqv] [-r SYSFS] [-k CMDLINE] [-c CONF] [-t SECS] [-m MODPROBE] [RULE...]" ]]
	run ${RUN:+"$RUN"} "$BIN" -V
	[ "$status" -eq 0 ]
	[ "$output" = "drvbind 0.1" ]
}

@test "an unknown option or a missing value is a usage error, exit 2" {
	run ${RUN:+"$RUN"} "$BIN" -x
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "drvbind: -x: unknown option" ]]
	run ${RUN:+"$RUN"} "$BIN" -r
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "drvbind: -r: missing value" ]]
	run ${RUN:+"$RUN"} "$BIN" -t soon
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "drvbind: -t: not a whole number of seconds" ]]
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
	run make -s -C "$TOP" uninstall ARCH="$ARCH" DESTDIR="$d" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ -z "$(find "$d" -type f)" ]
}
