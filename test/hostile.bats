#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Hostile input through the binary itself, beyond the malformed rules of
# rules.bats: absolute paths, unbalanced quotes, bytes that are neither
# ASCII nor UTF-8, NULs, over-long paths and lines, thousands of rules,
# numbers that would wrap, names in sysfs that hold escape sequences (a
# device's own strings in -l: trust.bats). Every run is traced: nothing
# is created or removed anywhere, and nothing is opened for writing but
# a relative path below the sysfs root's descriptor. The good rule
# beside the bad ones still applies.

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

# ---- a hostile tree under a set's ATTR=PATTERN ----
#
# A set reads its attributes as udev's ATTRS{}: the device's own, or its
# nearest parent's, walking down the path its bus link names from
# devices/, one directory at a time, none a link, none "..". Here the
# tree itself leads out: a directory of the path, the bus link, the
# attribute, devices/ itself. What lies outside, in $OUT, is a stick
# that would match (planted by whoever wrote there). Every run is traced
# with the descriptors' paths (strace -y): nothing outside the mount is
# opened, looked up or read, nothing is written there, and the write log
# holds the writes of the genuine stick alone.

# A serial number that only the planted sticks have, and the genuine
# stick's (both match the sets below, 4C53*).
PLANTED=4C530000000000000666
GENUINE=4C530001230101112095

# planted DIR ID: outside the tree, a USB device's directory DIR/ID with
# the genuine stick's idVendor and idProduct and the serial $PLANTED, and
# its interface DIR/ID/ID:1.0, of class 08 and authorized 1, as the
# kernel makes them
planted() {
	mkdir -p "$1/$2/$2:1.0"
	printf '%s\n' 0781 >"$1/$2/idVendor"
	printf '%s\n' 5567 >"$1/$2/idProduct"
	printf '%s\n' "$PLANTED" >"$1/$2/serial"
	printf '%s\n' 08 >"$1/$2/$2:1.0/bInterfaceClass"
	printf '%s\n' 1 >"$1/$2/$2:1.0/authorized"
	: >"$1/$2/$2:1.0/uevent"
}

# genuine_stick: a stick in the tree, 1-5, that the sets take, its
# interface on usb-storage: the walk works, and is refused only where
# the tree leads out
genuine_stick() {
	fake_driver usb usb-storage 'match=*'
	fake_device usb 1-5 idVendor=0781 idProduct=5567 serial=$GENUINE
	fake_device usb 1-5:1.0 parent=1-5 class=08 driver=usb-storage
}

# GENUINE_HELD: the write log of the genuine stick's interface taken to none
GENUINE_HELD="devices/pci0000:00/0000:00:1d.7/usb1/1-5/1-5:1.0/authorized 0 -> ok"

# walk_traced ARG...: drvbind ARG... under strace, every open and link
# read in $FAKE/walk, each descriptor shown with its path (-y)
walk_traced() {
	fake_ns strace -f -qq -y -e trace=open,openat,openat2,readlink,readlinkat -o "$FAKE/walk" \
		"$BIN" -r "$SYS" -k "$FAKE/cmdline" -c "$FAKE/conf" -m "$FAKE/modprobe" "$@"
}

# assert_walk_confined: the walk is in $FAKE/walk, and there every path
# a descriptor had (the directory a call was relative to, the file it
# opened) and every absolute path named is the mount or below it, or the
# command line and config files, or the working directory (AT_FDCWD):
# $OUT, whatever links lead there, was never reached; and what is
# planted there is as it was (authorized 1).
assert_walk_confined() {
	local bad
	# the walk ran: it opened devices/ not following a link
	grep -q '"devices", [A-Z_|]*O_NOFOLLOW' "$FAKE/walk" || {
		echo "no walk in the trace:"
		cat "$FAKE/walk"
		return 1
	}
	# a sanitizer build is dynamic, and its loader and runtime open
	# their own files (libraries, /proc/self/maps): not drvbind's calls
	local runtime=1
	[[ ! $BIN -ef $TOP/build/${ARCH:+$ARCH/}drvbind ]] || runtime=0
	bad=$(awk -v sys="$SYS" -v cl="$FAKE/cmdline" -v cf="$FAKE/conf" -v runtime=$runtime '
		function ok(p) {
			return p == sys || index(p, sys "/") == 1 || p == cl || p == cf
		}
		runtime && /"\/(etc\/ld\.so\.cache|lib\/|usr\/lib\/|proc\/self\/)/ { next }
		{
			l = $0
			gsub(/AT_FDCWD<[^<>]*>/, "AT_FDCWD", l)
			while (match(l, /<[^<>]*>/)) {
				p = substr(l, RSTART + 1, RLENGTH - 2)
				l = substr(l, RSTART + RLENGTH)
				if (p !~ /^(\.\.\.|unfinished)/ && !ok(p)) {
					print $0
					next
				}
			}
			# the path a call names: its first string (the second of
			# a link read is the text of the link, which opens nothing)
			if (match($0, /"([^"\\]|\\.)*"/)) {
				p = substr($0, RSTART + 1, RLENGTH - 2)
				if (p ~ /^\// && !ok(p))
					print $0
			}
		}' "$FAKE/walk")
	if [[ -n $bad ]]; then
		echo "looked outside the mount:"
		printf '%s\n' "$bad"
		return 1
	fi
	bad=$(grep -rLx 1 --include=authorized "$OUT" || :)
	if [[ -n $bad ]]; then
		echo "written outside the tree: $bad"
		return 1
	fi
}

@test "a set reads no attribute through a directory of the device's path that is a link out of the tree, to a planted stick or to /, nor its parents' above the link, and writes nothing there" {
	OUT=$FAKE/out
	# the root hub, whose serial (its controller's address) a device
	# below it without a serial of its own reads as its nearest parent's
	fake_device usb usb1 path=pci0000:00/0000:00:1d.7 idVendor=1d6b idProduct=0002 serial=0000:00:1d.7
	genuine_stick
	# usb1/1-1 a link to a planted stick's directory: the bus link has
	# the kernel's shape, and leads there
	planted "$OUT" 1-1
	ln -s "$OUT/1-1" "$FAKE/back/devices/pci0000:00/0000:00:1d.7/usb1/1-1"
	ln -s ../../../devices/pci0000:00/0000:00:1d.7/usb1/1-1/1-1:1.0 "$FAKE/back/bus/usb/devices/1-1:1.0"
	# usb2 a link to /: the device 2-1 would be /etc, whose passwd reads
	# root:... as an attribute
	ln -s / "$FAKE/back/devices/pci0000:00/0000:00:1d.7/usb2"
	ln -s ../../../devices/pci0000:00/0000:00:1d.7/usb2/etc "$FAKE/back/bus/usb/devices/2-1"
	# the planted stick has no serial of its own: the walk ends at the
	# link, and the root hub's above it is not the nearest
	rm "$OUT/1-1/serial"
	run_says 1 - walk_traced -t 0 "usb/*:*,idVendor=0781:none" "usb/*,passwd=root*:none" \
		"usb/*:*,serial=0000:00:1d.7:none" <<-EOF
	drvbind: usb/*:*,idVendor=0781: 1-5:1.0 on none
	drvbind: usb/*,passwd=root*: device not found (waited 0 s)
	drvbind: usb/*:*,serial=0000:00:1d.7: device not found (waited 0 s)
	EOF
	assert_log <<<"$GENUINE_HELD"
	assert_walk_confined
}

@test "a set matches no device whose bus link does not lead down devices/: an absolute target, one that climbs above the root, and '..' right after devices/ or deeper, each to a planted stick" {
	OUT=$FAKE/out
	genuine_stick
	planted "$OUT" 1-1
	planted "$OUT" 1-2
	planted "$OUT" 1-3
	planted "$OUT" 1-4
	local l=$FAKE/back/bus/usb/devices
	ln -s "$OUT/1-1/1-1:1.0" "$l/1-1:1.0"
	# from bus/usb/devices, ../../../../ is the mount's parent, $FAKE
	ln -s ../../../../out/1-2/1-2:1.0 "$l/1-2:1.0"
	ln -s ../../../devices/../../out/1-3/1-3:1.0 "$l/1-3:1.0"
	ln -s ../../../devices/pci0000:00/../../../out/1-4/1-4:1.0 "$l/1-4:1.0"
	# each leads to its planted interface, as the kernel follows links
	for i in 1 2 3 4; do
		[ "$(cat "$SYS/bus/usb/devices/1-$i:1.0/bInterfaceClass")" = 08 ]
	done
	# the interface's own class, and its device's serial
	run_says 0 "drvbind: usb/*:*,bInterfaceClass=08: 1-5:1.0 on none" \
		walk_traced -t 0 "usb/*:*,bInterfaceClass=08:none"
	assert_walk_confined
	run_says 0 "drvbind: usb/*:*,serial=4C53*: 1-5:1.0 on none" \
		walk_traced -t 0 "usb/*:*,serial=4C53*:none"
	assert_walk_confined
	assert_log <<<"$GENUINE_HELD"
}

@test "a set reads no attribute that is itself a link, out of the tree or above its root, where a planted value would match" {
	OUT=$FAKE/out
	mkdir -p "$OUT"
	printf '%s\n' "$PLANTED" >"$OUT/serial"
	printf '%s\n' 08 >"$OUT/class"
	fake_driver usb usb-storage 'match=*'
	fake_device usb 1-1 idVendor=0781 idProduct=5567
	fake_device usb 1-1:1.0 parent=1-1 driver=usb-storage
	local d=$FAKE/back/devices/pci0000:00/0000:00:1d.7/usb1/1-1
	ln -s "$OUT/serial" "$d/serial"
	# from 1-1:1.0, seven levels up is the mount's parent, $FAKE
	ln -s ../../../../../../../out/class "$d/1-1:1.0/bInterfaceClass"
	[ "$(cat "$SYS/bus/usb/devices/1-1:1.0/bInterfaceClass")" = 08 ]
	run_says 1 - walk_traced -t 0 "usb/*:*,serial=4C53*:none" "usb/*:*,bInterfaceClass=08:none" <<-EOF
	drvbind: usb/*:*,serial=4C53*: device not found (waited 0 s)
	drvbind: usb/*:*,bInterfaceClass=08: device not found (waited 0 s)
	EOF
	assert_log </dev/null
	assert_driver usb 1-1:1.0 usb-storage
	assert_walk_confined
}

@test "a set matches nothing where devices/ itself is a link out of the tree, to a copy of it holding the stick" {
	OUT=$FAKE/out
	fake_driver usb usb-storage 'match=*'
	fake_device usb 1-1 idVendor=0781 idProduct=5567 serial=$PLANTED
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=usb-storage
	mkdir -p "$OUT"
	mv "$FAKE/back/devices" "$OUT/devices"
	ln -s "$OUT/devices" "$FAKE/back/devices"
	run_says 1 "drvbind: usb/*:*,serial=4C53*: device not found (waited 0 s)" \
		walk_traced -t 0 "usb/*:*,serial=4C53*:none"
	assert_log </dev/null
	assert_walk_confined
}

@test "a driver's name from a driver link and a set member's name from a directory entry are escaped in the messages that name them" {
	fake_device pci 0000:00:04.0 override driver=$'e1000\e[2K\nfake'
	fake_device pci $'0000:00:05.0\e[8m\\' vendor=0x1234 override driver=e1000
	: >"$FAKE/log"
	run_says 0 - traced -t 2 pci/0000:00:04.0:pci-stub pci/vendor=0x1234:pci-stub <<-'EOF'
	drvbind: pci/0000:00:04.0: e1000\x1b[2K\x0afake -> pci-stub
	drvbind: pci/vendor=0x1234: 0000:00:05.0\x1b[8m\x5c on pci-stub
	EOF
	assert_driver pci 0000:00:04.0 pci-stub
	assert_driver pci $'0000:00:05.0\e[8m\\' pci-stub
	assert_confined
}
