#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Hostile input through the binary itself, beyond the malformed rules of
# rules.bats: absolute paths, unbalanced quotes, bytes that are neither
# ASCII nor UTF-8, NULs, over-long paths and lines, thousands of rules,
# numbers that would wrap. Every run is traced: nothing is created or
# removed anywhere, and nothing is opened for writing but a relative
# path below the sysfs root's descriptor. The good rule beside the bad
# ones still applies.

load helper

# The NIC of the good rule, and a serial port that a hostile rule names.
setup() {
	fake_setup || return 1
	pci_stub_setup
	pnp_setup
}

# drvbind under strace: every call that names a file goes to $FAKE/trace.
traced() {
	touch "$FAKE/before"
	fake_ns strace -f -qq -e trace=%file -o "$FAKE/trace" \
		"$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" "$@"
}

# assert_confined: in the trace, no file was made, removed or renamed (a
# sanitizer's runtime tries mkdir on the parents of its log path: they
# exist, and nothing is made), and
# every open for writing was relative to the descriptor of the sysfs root
# (none before it is open), or of a directory opened below it, and stayed
# below it. Nothing outside the fake's backing tree changed.
assert_confined() {
	local sysfd bad
	sysfd=$(awk -v root="\"$SYS\"," '$2 == "openat(AT_FDCWD," && $3 == root && /O_DIRECTORY/ {
		print $NF; exit }' "$FAKE/trace")
	bad=$(awk -v fd="$sysfd" '
		function below() {
			at = substr($2, 8)
			sub(/,$/, "", at)
			# the whole quoted path: it may hold spaces
			path = match($0, /"([^"\\]|\\.)*"/) ? substr($0, RSTART, RLENGTH) : ""
			return $2 ~ /^openat\(/ && (at in root) && path !~ /^"\// && path !~ /(^"|\/)\.\.(\/|")/
		}
		BEGIN { root[fd] = 1 }
		$2 ~ /^(creat|mkdir|mkdirat|mknod|mknodat|symlink|symlinkat|link|linkat|rename|renameat|renameat2|unlink|unlinkat|rmdir|truncate)\(/ {
			if ($(NF - 1) == "=" && $NF == "0")
				print
			next
		}
		$2 ~ /^(open|openat)\(/ && /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/ && !below() { print }
		# a descriptor number, once reused, is a root only if opened as one
		$2 ~ /^(open|openat)\(/ && $(NF - 1) == "=" && $NF ~ /^[0-9]+$/ && $NF != fd {
			if (/O_DIRECTORY/ && below())
				root[$NF] = 1
			else
				delete root[$NF]
		}' "$FAKE/trace")
	if [[ -n $bad ]]; then
		echo "writes or changes outside the sysfs root:"
		printf '%s\n' "$bad"
		return 1
	fi
	bad=$(find "$BATS_TEST_TMPDIR" -newer "$FAKE/before" ! -path "$FAKE/back/*" \
		! -path "$SYS" ! -path "$SYS/*" ! -path "$FAKE/log" ! -path "$FAKE/trace" ! -path "$FAKE")
	if [[ -n $bad ]]; then
		echo "changed outside the sysfs tree:"
		printf '%s\n' "$bad"
		return 1
	fi
}

@test "absolute paths and bare dot names in bus, device and driver are refused by name and nothing outside the root is written" {
	good_rule_applies traced -t 0 "/sys/bus/pci/devices/$E1000:pci-stub" "pci//$E1000:pci-stub" \
		"$E1000:/bin/sh" "$E1000:/proc/sys/kernel/core_pattern" "./$E1000:pci-stub" \
		"pci/..:pci-stub" "..:pci-stub" "$E1000:.." "$E1000:." "..../$E1000:pci-stub" \
		"pci/$E1000:pci-stub" <<-EOF
	drvbind: bad rule "/sys/bus/pci/devices/$E1000:pci-stub": empty bus
	drvbind: bad rule "pci//$E1000:pci-stub": '/' in device
	drvbind: bad rule "$E1000:/bin/sh": '/' in driver
	drvbind: bad rule "$E1000:/proc/sys/kernel/core_pattern": '/' in driver
	drvbind: bad rule "./$E1000:pci-stub": '.' as bus
	drvbind: bad rule "pci/..:pci-stub": '..' in device
	drvbind: bad rule "..:pci-stub": '..' in device
	drvbind: bad rule "$E1000:..": '..' in driver
	drvbind: bad rule "$E1000:.": '.' as driver
	drvbind: bad rule "..../$E1000:pci-stub": '..' in bus
	EOF
	assert_confined
}

@test "on the command line an unbalanced quote takes the rest as one bad rule, as the kernel does, and the rule before it applies" {
	printf 'drvbind=%s:pci-stub drvbind="pnp/00:05:parport_pc drvbind=pnp/00:05:serial\n' "$E1000" >"$FAKE/cmdline"
	run traced -t 0
	[ "$status" -eq 1 ]
	# the newline that ends /proc/cmdline is inside the open quote too
	assert_output_is <<-EOF
	drvbind: bad rule "pnp/00:05:parport_pc drvbind=pnp/00:05:serial\\x0a": '/' in device
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_driver pnp 00:05 serial
	assert_log <<<"$E1000_TO_STUB"
	assert_confined
}

@test "bytes that are not UTF-8 and escape sequences in rules and parameter names are refused, shown escaped" {
	printf 'drvbind=\xff\xfe:\x80 drvbind.\xc3\x28=1 drvbind.timeout=\x1b]0;owned\x07 drvbind=pnp/00:05:\xed\xa0\x80 drvbind=%s:pci-stub\n' \
		"$E1000" >"$FAKE/cmdline"
	run traced -t 0
	[ "$status" -eq 1 ]
	# 0xa0 separates parameters, as in the kernel's isspace: "\x80" is
	# a parameter of its own, not drvbind's
	assert_output_is <<-EOF
	drvbind: bad rule "\\xff\\xfe:\\x80": non-ASCII byte in device
	drvbind: bad "drvbind.\\xc3("="1": unknown parameter
	drvbind: bad "drvbind.timeout"="\\x1b]0;owned\\x07": not a whole number of seconds
	drvbind: bad rule "pnp/00:05:\\xed": non-ASCII byte in driver
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	# nothing but printable ASCII reaches the terminal
	[ -z "$(LC_ALL=C tr -d '\n -~' <<<"$output")" ]
	assert_driver pnp 00:05 serial
	assert_log <<<"$E1000_TO_STUB"
	assert_confined
}

@test "paths for drvbind.init= and drvbind.modprobe= longer than the limit are refused, not cut" {
	local long
	long=/$(printf 'p%.0s' {1..600})
	fake_cmdline "drvbind.modprobe=$long drvbind.init=$long drvbind=$E1000:pci-stub drvbind=0000:00:09.0:nosuch"
	run_says 1 - traced -t 0 <<-EOF
	drvbind: bad "drvbind.modprobe"="${long:0:80}"...: path too long
	drvbind: bad "drvbind.init"="${long:0:80}"...: path too long
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: 0000:00:09.0: device not found (waited 0 s)
	EOF
	assert_log <<<"$E1000_TO_STUB"
	assert_confined
}

@test "NUL bytes end the config file and the command line where they stand, and a config line over the rule limit is refused by line" {
	printf '\0drvbind=pnp/00:05:parport_pc\n' >"$FAKE/cmdline"
	{
		printf 'x%.0s' {1..5000}
		printf '\n%s:pci-stub\npnp/00:05:parport_pc\0pnp/00:05:serial\n' "$E1000"
	} >"$FAKE/conf"
	run_says 1 - traced -t 0 <<-EOF
	drvbind: $FAKE/conf: NUL byte at offset $((5000 + 1 + ${#E1000} + 10 + 20)); the rest is ignored
	drvbind: $FAKE/conf:1: bad rule "$(printf 'x%.0s' {1..80})"...: rule too long
	drvbind: $FAKE/cmdline: NUL byte at offset 0; the rest is ignored
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pnp/00:05: serial -> parport_pc
	EOF
	assert_driver pnp 00:05 parport_pc
	assert_log <<-EOF
	$E1000_TO_STUB
	$SERIAL_TO_PARPORT
	EOF
	assert_confined
}

@test "a config file over 8192 bytes is refused whole and the command line still applies" {
	{
		for ((i = 0; i < 400; i++)); do
			echo "pnp/00:05:parport_pc"
		done
	} >"$FAKE/conf"
	[ "$(wc -c <"$FAKE/conf")" -gt 8192 ]
	fake_cmdline "drvbind=$E1000:pci-stub"
	run_says 1 - traced -t 0 <<-EOF
	drvbind: $FAKE/conf: longer than 8192 bytes; not read
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_driver pnp 00:05 serial
	assert_log <<<"$E1000_TO_STUB"
	assert_confined
}

@test "thousands of rules: 2000 for one device are one rule, the last, and of 3000 devices past 64 each is refused by name" {
	local args=() i id
	for ((i = 0; i < 2000; i++)); do
		args+=("$E1000:e1000")
	done
	args+=("$E1000:pci-stub")
	for ((i = 0; i < 3000; i++)); do
		printf -v id '0000:%02x:%02x.%d' $((i / 256 + 16)) $((i / 8 % 32)) $((i % 8))
		args+=("$id:pci-stub")
	done
	run traced -t 0 "${args[@]}"
	[ "$status" -eq 1 ]
	# 63 rules fit beside the NIC's; they name no device present
	[ "$(grep -c ': more than 64 rules$' <<<"$output")" -eq $((3000 - 63)) ]
	[ "$(grep -c ': device not found (waited 0 s)$' <<<"$output")" -eq 63 ]
	[ "${#lines[@]}" -eq 3001 ]
	# the 64th device's rule is the first refused
	[[ ${lines[0]} == 'drvbind: bad rule "0000:10:07.7:pci-stub": more than 64 rules' ]]
	grep -qx "drvbind: pci/$E1000: e1000 -> pci-stub" <<<"$output"
	nic_stubbed
	assert_confined
}

@test "timeouts that would wrap an integer are refused as more than a day, on the command line and with -t" {
	fake_cmdline "drvbind.timeout=4294967296 drvbind.timeout=18446744073709551616 drvbind.timeout=+5 drvbind.timeout=0x10 drvbind.timeout=0086400 drvbind=$E1000:pci-stub"
	run_says 1 - traced -t 0 <<-EOF
	drvbind: bad "drvbind.timeout"="4294967296": more than a day
	drvbind: bad "drvbind.timeout"="18446744073709551616": more than a day
	drvbind: bad "drvbind.timeout"="+5": not a whole number of seconds
	drvbind: bad "drvbind.timeout"="0x10": not a whole number of seconds
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_log <<<"$E1000_TO_STUB"
	assert_confined
	run traced -t 18446744073709551616 "$E1000:e1000"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "drvbind: -t: more than a day" ]
	assert_confined
	run traced -t -1 "$E1000:e1000"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "drvbind: -t: not a whole number of seconds" ]
	nic_stubbed
	assert_confined
}

@test "hostile sets: attributes that climb or descend are refused by name, directories and links read as attributes match nothing, and nothing outside the root is written" {
	fake_driver pci e1000 'match=*'
	fake_driver pci pci-stub 'match=*'
	fake_device pci "$E1000" driver=e1000 override vendor=0x8086
	run_says 1 - traced -t 0 "pci/*,../../../../etc/passwd=*:pci-stub" "pci/*,driver/unbind=*:pci-stub" \
		"pci/*,/etc/shadow=*:pci-stub" "*:pci-stub" "pci/*,driver=*:pci-stub" "pci/*,subsystem=*:pci-stub" \
		"pci/*,.=*:pci-stub" "pci/**?*?**,vendor=0x8*6:pci-stub" <<-EOF
	drvbind: bad rule "pci/*,../../../../etc/passwd=*:pci-stub": '..' in device
	drvbind: bad rule "pci/*,driver/unbind=*:pci-stub": '/' in device
	drvbind: bad rule "pci/*,/etc/shadow=*:pci-stub": '/' in device
	drvbind: bad rule "*:pci-stub": a set needs its BUS/
	drvbind: pci/*,driver=*: device not found (waited 0 s)
	drvbind: pci/*,subsystem=*: device not found (waited 0 s)
	drvbind: pci/*,.=*: device not found (waited 0 s)
	drvbind: pci/**?*?**,vendor=0x8*6: $E1000 on pci-stub
	EOF
	nic_stubbed
	assert_confined
}
