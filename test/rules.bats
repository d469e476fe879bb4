#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Rules: every shape of bus id, with and without the bus, the kernel's
# splitting of its command line, the config file, and the refusal of
# every malformed rule or parameter without losing the good ones.

load helper

# nic_and_port_moved: the NIC on pci-stub and the port on parport_pc,
# and the write log those two moves alone (pci_stub_setup, pnp_setup).
nic_and_port_moved() {
	assert_driver pci "$E1000" pci-stub
	assert_driver pnp 00:05 parport_pc
	assert_log <<-EOF
	$E1000_TO_STUB
	$SERIAL_TO_PARPORT
	EOF
}

# The NIC on pci-stub and the port on parport_pc, each moved once and
# said once: how the tests of rules that replace earlier ones for the
# same devices all end.
assert_nic_and_port_moved() {
	assert_output_is <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pnp/00:05: serial -> parport_pc
	EOF
	nic_and_port_moved
}

# ---- bus id shapes ----

@test "a PCI device named without its bus is found on pci and moved" {
	pci_stub_setup
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub" drvbind -t 0 "$E1000:pci-stub"
	nic_stubbed
}

@test "a PCI device in a five-digit domain named with its bus is moved" {
	fake_driver pci nvme 'match=*'
	fake_driver pci vfio-pci 'match=*'
	fake_device pci 10000:e1:00.0 path=pci10000:e1 driver=nvme override
	run_says 0 "drvbind: pci/10000:e1:00.0: nvme -> vfio-pci" \
		drvbind -t 0 pci/10000:e1:00.0:vfio-pci
	assert_driver pci 10000:e1:00.0 vfio-pci
	assert_log <<-EOF
	devices/pci10000:e1/10000:e1:00.0/driver_override vfio-pci -> ok
	bus/pci/drivers/nvme/unbind 10000:e1:00.0 -> ok
	bus/pci/drivers/vfio-pci/bind 10000:e1:00.0 -> ok
	EOF
}

@test "a USB device and its interface are both moved, split at the last colon" {
	fake_driver usb usb match=1-1
	fake_driver usb usbip-host match=1-1 match_busid
	fake_driver usb ub match=1-1:1.0
	fake_driver usb usb-storage match=1-1:1.0
	fake_device usb 1-1 idVendor=0781 idProduct=5567 driver=usb
	fake_device usb 1-1:1.0 parent=1-1 class=08 driver=ub
	run_says 0 - drvbind -t 0 1-1:1.0:usb-storage 1-1:usbip-host <<-EOF
	drvbind: usb/1-1:1.0: ub -> usb-storage
	drvbind: usb/1-1: usb -> usbip-host
	EOF
	assert_driver usb 1-1:1.0 usb-storage
	assert_driver usb 1-1 usbip-host
	assert_log <<-EOF
	bus/usb/drivers/ub/unbind 1-1:1.0 -> ok
	bus/usb/drivers/usb-storage/bind 1-1:1.0 -> ok
	bus/usb/drivers/usb/unbind 1-1 -> ok
	bus/usb/drivers/usbip-host/match_busid add 1-1 -> ok
	bus/usb/drivers/usbip-host/bind 1-1 -> ok
	EOF
}

@test "a platform, a PnP and an SPI device are each found on their bus and moved" {
	fake_driver platform sdhci-iproc 'match=*'
	fake_driver platform dw_mmc 'match=*'
	fake_device platform fe300000.mmc driver=sdhci-iproc override
	pnp_setup
	fake_driver spi mcp251x 'match=*'
	fake_driver spi spidev 'match=*'
	fake_device spi spi0.0 path=platform/soc/spi0 driver=mcp251x override
	run_says 0 - drvbind -t 0 fe300000.mmc:dw_mmc 00:05:parport_pc spi0.0:spidev <<-EOF
	drvbind: platform/fe300000.mmc: sdhci-iproc -> dw_mmc
	drvbind: pnp/00:05: serial -> parport_pc
	drvbind: spi/spi0.0: mcp251x -> spidev
	EOF
	assert_driver platform fe300000.mmc dw_mmc
	assert_driver pnp 00:05 parport_pc
	assert_driver spi spi0.0 spidev
	assert_log <<-EOF
	devices/platform/fe300000.mmc/driver_override dw_mmc -> ok
	bus/platform/drivers/sdhci-iproc/unbind fe300000.mmc -> ok
	bus/platform/drivers/dw_mmc/bind fe300000.mmc -> ok
	bus/pnp/drivers/serial/unbind 00:05 -> ok
	bus/pnp/drivers/parport_pc/bind 00:05 -> ok
	devices/platform/soc/spi0/spi0.0/driver_override spidev -> ok
	bus/spi/drivers/mcp251x/unbind spi0.0 -> ok
	bus/spi/drivers/spidev/bind spi0.0 -> ok
	EOF
}

@test "a rule naming a bus looks for the device on that bus only" {
	pci_stub_setup
	fake_bus usb
	run_says 1 "drvbind: usb/$E1000: device not found (waited 0 s)" \
		drvbind -t 0 "usb/$E1000:pci-stub"
	assert_driver pci "$E1000" e1000
	assert_log </dev/null
}

@test "a bus id on two buses is refused naming both, and a rule naming the bus still works" {
	pnp_setup
	fake_driver platform serial8250 'match=*'
	fake_device platform 00:05 driver=serial8250 override
	local t0=$SECONDS
	run drvbind -t 30 00:05:parport_pc
	[ "$status" -eq 1 ]
	((SECONDS - t0 < 8))
	assert_output_is "drvbind: 00:05: device on both platform and pnp"
	assert_log </dev/null
	run_says 0 "drvbind: pnp/00:05: serial -> parport_pc" drvbind -t 0 pnp/00:05:parport_pc
	assert_driver pnp 00:05 parport_pc
	assert_driver platform 00:05 serial8250
	assert_log <<<"$SERIAL_TO_PARPORT"
}

@test "rules naming two buses for the same bus id are two rules, not one replacing the other" {
	pnp_setup
	fake_driver platform serial8250 'match=*'
	fake_device platform 00:05 driver=serial8250 override
	run_says 0 - drvbind -t 0 pnp/00:05:parport_pc platform/00:05:none <<-EOF
	drvbind: pnp/00:05: serial -> parport_pc
	drvbind: platform/00:05: serial8250 -> none
	EOF
	assert_driver pnp 00:05 parport_pc
	assert_driver platform 00:05 none
}

# ---- driver names with spaces and commas ----

@test "a driver name with a space is taken whole from the command line in each way the kernel quotes it" {
	local n
	fake_driver usb 'RSI-USB WLAN' match=1-1:1.0,2-1:1.0,3-1:1.0
	for n in 1 2 3; do
		fake_device usb "$n-1" "path=pci0000:00/0000:00:1d.7/usb$n" \
			idVendor=1618 idProduct=9113
		fake_device usb "$n-1:1.0" "parent=$n-1" class=ff
	done
	fake_cmdline 'ro drvbind="1-1:1.0:RSI-USB WLAN" "drvbind=2-1:1.0:RSI-USB WLAN" drvbind=3-1:1.0:"RSI-USB WLAN" quiet'
	run_says 0 - drvbind -t 0 <<-EOF
	drvbind: usb/1-1:1.0: none -> RSI-USB WLAN
	drvbind: usb/2-1:1.0: none -> RSI-USB WLAN
	drvbind: usb/3-1:1.0: none -> RSI-USB WLAN
	EOF
	for n in 1 2 3; do
		assert_driver usb "$n-1:1.0" 'RSI-USB WLAN'
	done
	assert_log <<-EOF
	bus/usb/drivers/RSI-USB WLAN/bind 1-1:1.0 -> ok
	bus/usb/drivers/RSI-USB WLAN/bind 2-1:1.0 -> ok
	bus/usb/drivers/RSI-USB WLAN/bind 3-1:1.0 -> ok
	EOF
}

@test "a driver name with a comma is one rule, quoted on the command line or not" {
	fake_driver platform 'qcom,sdhci-msm-v5' 'match=*'
	fake_device platform 7c4000.mmc override
	fake_device platform 8804000.mmc override
	fake_cmdline 'drvbind="7c4000.mmc:qcom,sdhci-msm-v5" drvbind=8804000.mmc:qcom,sdhci-msm-v5'
	run_says 0 - drvbind -t 0 <<-EOF
	drvbind: platform/7c4000.mmc: none -> qcom,sdhci-msm-v5
	drvbind: platform/8804000.mmc: none -> qcom,sdhci-msm-v5
	EOF
	assert_driver platform 7c4000.mmc 'qcom,sdhci-msm-v5'
	assert_driver platform 8804000.mmc 'qcom,sdhci-msm-v5'
	assert_log <<-EOF
	devices/platform/7c4000.mmc/driver_override qcom,sdhci-msm-v5 -> ok
	bus/platform/drivers/qcom,sdhci-msm-v5/bind 7c4000.mmc -> ok
	devices/platform/8804000.mmc/driver_override qcom,sdhci-msm-v5 -> ok
	bus/platform/drivers/qcom,sdhci-msm-v5/bind 8804000.mmc -> ok
	EOF
}

# ---- the kernel command line ----

@test "drvbind= is found among other parameters separated by spaces and tabs" {
	pci_stub_setup
	printf 'BOOT_IMAGE=/vmlinuz-6.1.0\troot=/dev/sda1 ro  \t drvbind=%s:pci-stub\tquiet splash\n' \
		"$E1000" >"$FAKE/cmdline"
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub" drvbind -t 0
	nic_stubbed
}

@test "drvbind= inside another parameter's quoted value is not a rule" {
	pci_stub_setup
	fake_cmdline "dyndbg=\"file drvbind.c drvbind=$E1000:pci-stub +p\" drvbind.timeout=0 ro"
	run_says 0 '' drvbind
	assert_driver pci "$E1000" e1000
	assert_log </dev/null
}

@test "drvbind= after a bare -- belongs to init and is ignored" {
	pci_stub_setup
	pnp_setup
	fake_cmdline "ro drvbind=pnp/00:05:parport_pc -- single drvbind=$E1000:pci-stub drvbind=bogus"
	run_says 0 "drvbind: pnp/00:05: serial -> parport_pc" drvbind -t 0
	assert_driver pnp 00:05 parport_pc
	assert_driver pci "$E1000" e1000
	assert_log <<<"$SERIAL_TO_PARPORT"
}

@test "drvbind without '=' is an empty rule, and the rules beside it still apply" {
	pci_stub_setup
	fake_cmdline "drvbind ro drvbind=$E1000:pci-stub"
	good_rule_applies drvbind -t 0 <<-EOF
	drvbind: bad rule "": empty rule
	EOF
}

@test "every drvbind= applies, and a later one for the same device replaces the earlier" {
	pci_stub_setup
	pnp_setup
	fake_cmdline "drvbind=$E1000:none drvbind=pnp/00:05:parport_pc drvbind=$E1000:pci-stub"
	run drvbind -t 0
	[ "$status" -eq 0 ]
	assert_nic_and_port_moved
}

@test "a rule naming the bus replaces an earlier one without it for the same device, and the other way round" {
	pci_stub_setup
	pnp_setup
	fake_cmdline "drvbind=$E1000:none drvbind=pci/$E1000:pci-stub drvbind=pnp/00:05:none drvbind=00:05:parport_pc"
	run drvbind -t 0
	[ "$status" -eq 0 ]
	assert_nic_and_port_moved
}

@test "a NUL byte in the command-line file ends it: what follows is ignored" {
	pci_stub_setup
	pnp_setup
	printf 'drvbind=%s:pci-stub\0drvbind=pnp/00:05:parport_pc\n' "$E1000" >"$FAKE/cmdline"
	run_says 0 - drvbind -t 0 <<-EOF
	drvbind: $FAKE/cmdline: NUL byte at offset 29; the rest is ignored
	drvbind: pci/$E1000: e1000 -> pci-stub
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_driver pnp 00:05 serial
	assert_log <<<"$E1000_TO_STUB"
}

@test "a command-line file of 4096 bytes is read and one byte more is refused whole" {
	local rule="drvbind=$E1000:pci-stub"
	pci_stub_setup
	pnp_setup
	# a rule at the very end of the largest command line accepted
	{ head -c $((4096 - ${#rule} - 2)) /dev/zero | tr '\0' x; printf ' %s\n' "$rule"; } >"$FAKE/cmdline"
	[ "$(wc -c <"$FAKE/cmdline")" -eq 4096 ]
	run_says 0 "drvbind: pci/$E1000: e1000 -> pci-stub" drvbind -t 0
	assert_driver pci "$E1000" pci-stub

	printf 'drvbind=%s:e1000 x%04096d\n' "$E1000" 0 >"$FAKE/cmdline"
	[ "$(wc -c <"$FAKE/cmdline")" -gt 4096 ]
	fake_conf pnp/00:05:parport_pc
	run_says 1 - drvbind -t 0 <<-EOF
	drvbind: $FAKE/cmdline: longer than 4096 bytes; not read
	drvbind: pnp/00:05: serial -> parport_pc
	EOF
	nic_and_port_moved
}

@test "rules given as arguments ignore the command-line file and the config file" {
	pci_stub_setup
	pnp_setup
	fake_cmdline "drvbind=$E1000:pci-stub drvbind.timeout=abc drvbind.foo=1"
	fake_conf "$E1000:none" 'bad rule'
	run_says 0 "drvbind: pnp/00:05: serial -> parport_pc" drvbind -t 0 pnp/00:05:parport_pc
	assert_driver pci "$E1000" e1000
	assert_driver pnp 00:05 parport_pc
	assert_log <<<"$SERIAL_TO_PARPORT"
}

# ---- the config file ----

@test "the config file takes one rule a line, comments, the drvbind= form and drvbind.timeout=" {
	pci_stub_setup
	pnp_setup
	fake_driver usb 'RSI-USB WLAN' match=1-1:1.0
	fake_device usb 1-1 idVendor=1618 idProduct=9113
	fake_device usb 1-1:1.0 parent=1-1 class=ff
	fake_conf <<-EOF
	# the NIC goes to the VM
	$E1000:pci-stub
	  # an indented comment
	drvbind=pnp/00:05:parport_pc

	1-1:1.0:RSI-USB WLAN
	drvbind=0000:00:09.0:pci-stub
	drvbind.timeout=0
	EOF
	run_says 1 - drvbind <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pnp/00:05: serial -> parport_pc
	drvbind: usb/1-1:1.0: none -> RSI-USB WLAN
	drvbind: 0000:00:09.0: device not found (waited 0 s)
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_driver pnp 00:05 parport_pc
	assert_driver usb 1-1:1.0 'RSI-USB WLAN'
	assert_log <<-EOF
	$E1000_TO_STUB
	$SERIAL_TO_PARPORT
	bus/usb/drivers/RSI-USB WLAN/bind 1-1:1.0 -> ok
	EOF
}

@test "a command-line rule wins over a config-file rule for the same device" {
	pci_stub_setup
	fake_conf "$E1000:none" "drvbind=pnp/00:05:none"
	pnp_setup
	fake_cmdline "drvbind=pnp/00:05:parport_pc drvbind=$E1000:pci-stub"
	run_says 0 - drvbind -t 0 <<-EOF
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: pnp/00:05: serial -> parport_pc
	EOF
	assert_driver pci "$E1000" pci-stub
	assert_driver pnp 00:05 parport_pc
}

@test "a bad line of the config file is named by file and line, and the other lines apply" {
	pci_stub_setup
	fake_conf '# first' "$E1000:pci-stub" 'no-colon-here' 'drvbind.foo=1'
	good_rule_applies drvbind -t 0 <<-EOF
	drvbind: $FAKE/conf:3: bad rule "no-colon-here": no ':' before the driver
	drvbind: $FAKE/conf:4: bad "drvbind.foo"="1": unknown parameter
	EOF
}

# ---- malformed rules ----

@test "empty rules and rules with an empty part are refused by name, the good rule still applies" {
	pci_stub_setup
	good_rule_applies drvbind -t 0 '' 'pci-stub' ":pci-stub" "pci/:pci-stub" "$E1000:" "/$E1000:pci-stub" \
		"$E1000:pci-stub" <<-EOF
	drvbind: bad rule "": empty rule
	drvbind: bad rule "pci-stub": no ':' before the driver
	drvbind: bad rule ":pci-stub": empty device
	drvbind: bad rule "pci/:pci-stub": empty device
	drvbind: bad rule "$E1000:": empty driver
	drvbind: bad rule "/$E1000:pci-stub": empty bus
	EOF
}

@test "names that would leave their directory are refused, the good rule still applies" {
	pci_stub_setup
	good_rule_applies drvbind -t 0 "pci/0000:00/02.0:pci-stub" "$E1000:../../../../devices" \
		"../pci/$E1000:pci-stub" ".:pci-stub" "$E1000:pci\"stub" "$E1000:pci-stub" <<-EOF
	drvbind: bad rule "pci/0000:00/02.0:pci-stub": '/' in device
	drvbind: bad rule "$E1000:../../../../devices": '..' in driver
	drvbind: bad rule "../pci/$E1000:pci-stub": '..' in bus
	drvbind: bad rule ".:pci-stub": '.' as device
	drvbind: bad rule "$E1000:pci\\x22stub": '"' in driver
	EOF
}

@test "control characters and non-ASCII bytes are refused and shown escaped, the good rule still applies" {
	pci_stub_setup
	good_rule_applies drvbind -t 0 $'0000:00:02.0\t:pci-stub' $'0000:00:02.0:pci-stub\e[2J' \
		$'0000:00:02.0:pci-st\xc3\xbcb' $'pci\x7f/0000:00:02.0:pci-stub' $'a\\b\x01:x' "$E1000:pci-stub" <<-EOF
	drvbind: bad rule "0000:00:02.0\\x09:pci-stub": control character in device
	drvbind: bad rule "0000:00:02.0:pci-stub\\x1b[2J": control character in driver
	drvbind: bad rule "0000:00:02.0:pci-st\\xc3\\xbcb": non-ASCII byte in driver
	drvbind: bad rule "pci\\x7f/0000:00:02.0:pci-stub": control character in bus
	drvbind: bad rule "a\\x5cb\\x01:x": control character in device
	EOF
}

@test "names of 128 bytes or more are refused with the rule cut at 80 bytes, 127 bytes pass" {
	local d127 d128 b128 long
	d127=$(printf 'd%.0s' {1..127})
	d128=${d127}d
	b128=$(printf 'b%.0s' {1..128})
	long=$(printf 'x%.0s' {1..385})
	pci_stub_setup
	fake_driver pci "$d127" 'match=*'
	run_says 1 - drvbind -t 0 "$E1000:$d128" "$d128:pci-stub" "$b128/$E1000:pci-stub" "$long" \
		"$E1000:$d127" <<-EOF
	drvbind: bad rule "$E1000:${d128:0:67}"...: too long a driver
	drvbind: bad rule "${d128:0:80}"...: too long a device
	drvbind: bad rule "${b128:0:80}"...: too long a bus
	drvbind: bad rule "${long:0:80}"...: rule too long
	drvbind: pci/$E1000: e1000 -> $d127
	EOF
	assert_driver pci "$E1000" "$d127"
}

@test "more than 64 rules: the 65th device is refused, the 64 before it and a replacement still apply" {
	local i id args=() out=() log=() pids=()
	fake_driver pci pci-stub 'match=*'
	for ((i = 0; i < 65; i++)); do
		printf -v id '0000:01:%02x.0' "$i"
		# the tree of 65 devices is built in parallel, to keep the test fast
		fake_device pci "$id" override &
		pids+=($!)
		args+=("$id:pci-stub")
		((i > 0 && i < 64)) || continue
		out+=("drvbind: pci/$id: none -> pci-stub")
		log+=("devices/pci0000:00/$id/driver_override pci-stub -> ok"
			"bus/pci/drivers/pci-stub/bind $id -> ok")
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	# the first device again: it replaces a rule, it is not a 65th device
	args+=("0000:01:00.0:none")
	run_says 1 - drvbind -t 0 "${args[@]}" <<-EOF
	drvbind: bad rule "0000:01:40.0:pci-stub": more than 64 rules
	drvbind: pci/0000:01:00.0: unbound; held by driver_override none
	$(printf '%s\n' "${out[@]}")
	EOF
	assert_log <<-EOF
	devices/pci0000:00/0000:01:00.0/driver_override none -> ok
	bus/pci/drivers_probe 0000:01:00.0 -> ok
	$(printf '%s\n' "${log[@]}")
	EOF
	assert_driver pci 0000:01:00.0 none
	assert_driver pci 0000:01:01.0 pci-stub
	assert_driver pci 0000:01:3f.0 pci-stub
	assert_driver pci 0000:01:40.0 none
}

# ---- other parameters ----

@test "bad drvbind.timeout= values are reported and the value before them is kept" {
	pci_stub_setup
	fake_cmdline "drvbind.timeout=0 drvbind.timeout=abc drvbind.timeout=99999999999999999999 drvbind.timeout=-1 drvbind.timeout= drvbind.timeout=86401 drvbind=0000:00:09.0:pci-stub drvbind=$E1000:pci-stub"
	run_says 1 - drvbind <<-EOF
	drvbind: bad "drvbind.timeout"="abc": not a whole number of seconds
	drvbind: bad "drvbind.timeout"="99999999999999999999": more than a day
	drvbind: bad "drvbind.timeout"="-1": not a whole number of seconds
	drvbind: bad "drvbind.timeout"="": empty
	drvbind: bad "drvbind.timeout"="86401": more than a day
	drvbind: pci/$E1000: e1000 -> pci-stub
	drvbind: 0000:00:09.0: device not found (waited 0 s)
	EOF
	nic_stubbed
}

@test "a bad drvbind.timeout= alone keeps the default wait, so a device that appears later is moved" {
	fake_driver pci pci-stub 'match=*'
	fake_cmdline "drvbind.timeout=abc drvbind=$E1000:pci-stub"
	fake_later idle fake_device pci "$E1000" override
	run_says 1 - drvbind <<-EOF
	drvbind: bad "drvbind.timeout"="abc": not a whole number of seconds
	drvbind: pci/$E1000: none -> pci-stub
	EOF
	assert_driver pci "$E1000" pci-stub
}

@test "an unknown drvbind. parameter is reported and the rules still apply" {
	pci_stub_setup
	fake_cmdline "drvbind.foo=1 drvbind=$E1000:pci-stub drvbindx=1 drvbind.bar"
	good_rule_applies drvbind -t 0 <<-EOF
	drvbind: bad "drvbind.foo"="1": unknown parameter
	drvbind: bad "drvbind.bar"="": unknown parameter
	EOF
}
