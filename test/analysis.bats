#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The analysers: cppcheck and clang-tidy's clang-analyzer checks on the
# sources, the files' "Calls ..." lines against the symbols each file
# takes from the others, and valgrind's memcheck on the shipped code at
# work.

load helper

# clang-analyzer checks left out, each for a reason that holds for every
# finding it could make here:
#   security.insecureAPI.DeprecatedOrUnsafeBufferHandling flags every
#     memcpy and memset and asks for Annex K's memcpy_s, which neither
#     musl nor glibc has; every length here is checked before the call.
TIDY_CHECKS='-*,clang-analyzer-*,-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling'

@test "cppcheck finds nothing in the sources" {
	shipped_only "analyses the sources"
	run cppcheck -q --enable=warning,portability,performance --error-exitcode=1 \
		--inline-suppr "$TOP/applet" "$TOP/test/fuzz"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# A file a run: clang-tidy 14 run on several files carries the valist
# checker's state from one file to the next, and then reports va_arg in
# say() (log.c) as uninitialized after any other file.
@test "clang-tidy's clang-analyzer checks find nothing" {
	shipped_only "analyses the sources"
	local f
	for f in "$TOP"/applet/*.c; do
		run clang-tidy --quiet -checks="$TIDY_CHECKS" "$f" -- -D_GNU_SOURCE
		echo "$output"
		[ "$status" -eq 0 ]
		! grep -qE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' <<<"$output" || false
	done
}

# Each applet file's header says which other files it uses ("Calls
# sysfs.c, log.c and mem.c."). test/calls.sh compiles each file alone and
# compares that line with the functions and globals its object takes from
# the other files (nm); its comment says what counts. It prints a line a
# wrong file: "applet/log.c calls mem.c but does not say so (str_len)",
# "applet/notify.c says it calls proc.c but does not".
@test "every applet file's Calls line names exactly the files whose functions and globals it uses" {
	shipped_only "analyses the sources"
	run "$TOP/test/calls.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# A function is its definition's first line (a name and '(' at the start
# of a line, no ';') to its closing brace, also at the start of a line:
# the kernel's style, which applet/ keeps.
@test "no function in applet/ is longer than 60 lines, its comments and blank lines counted" {
	shipped_only "analyses the sources"
	run awk 'FNR == 1 { start = 0 }
		/^[a-z_].*[a-z_0-9]\(/ && !/;$/ && !/^(static )?const/ { start = FNR; name = $0 }
		/^}/ && start { if (FNR - start + 1 > 60) print FILENAME ": " FNR - start + 1 " lines: " name; n++; start = 0 }
		END { if (n < 50) print "only " n + 0 " functions found" }' "$TOP"/applet/*.c
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "valgrind's memcheck sees no error in runs that move, roll back, teach new_id, wait for a device, list and dry-run" {
	shipped_only "runs the shipped code under valgrind"
	local vg=(valgrind -q --error-exitcode=99 --log-file="$FAKE/vg.%p" "$TOP/build/drvbind.syms"
		-r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe")
	fake_driver pci e1000 "match=$E1000"
	fake_driver pci vfio-pci match=* probe=EINVAL
	fake_driver pci pci-stub new_id
	fake_device pci "$E1000" vendor=0x8086 device=0x100e override driver=e1000
	fake_driver usb usb-storage match=*
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	fake_cmdline "drvbind=pci/$E1000:vfio-pci drvbind=usb/1-1:1.0:none drvbind=bad"
	fake_conf "0000:00:09.0:pci-stub"
	fake_later idle fake_device pci 0000:00:09.0 vendor=0x8086 device=0x100e
	run fake_ns "${vg[@]}" -v -t 10
	echo "$output"
	[ "$status" -eq 1 ]
	grep -qx "drvbind: pci/$E1000: e1000 -> vfio-pci failed at bind: Invalid argument; back on e1000" <<<"$output"
	grep -qx "drvbind: usb/1-1:1.0: usb-storage -> none" <<<"$output"
	grep -qx 'drvbind: pci/0000:00:09.0: none -> pci-stub (new_id "8086 100e")' <<<"$output"
	assert_driver pci 0000:00:09.0 pci-stub
	run fake_ns "${vg[@]}" "$E1000:pci-stub" "usb/1-1:1.0:usb-storage"
	[ "$status" -eq 0 ]
	assert_driver pci "$E1000" pci-stub
	run fake_ns "${vg[@]}" -n "$E1000:e1000"
	[ "$status" -eq 0 ]
	run fake_ns "${vg[@]}" -l
	[ "$status" -eq 0 ]
	# four devices, three with their rule, and the bad rule refused
	[ "${#lines[@]}" -eq 5 ]
	[ "$(grep -c ' rule=' <<<"$output")" -eq 3 ]
	# every run, and any child it made, ended without an error
	[ "$(cat "$FAKE"/vg.* | wc -c)" -eq 0 ]
	[ "$(find "$FAKE" -name 'vg.*' | wc -l)" -ge 4 ]
}
