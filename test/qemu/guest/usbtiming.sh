# SPDX-License-Identifier: MIT
# When usb-storage, the stick's native driver, comes: while drvbind waits
# with the interface 2-1:1.0 present (insmod 1 s in), before drvbind
# starts, or on an interface that appears while drvbind waits (the USB
# device 2-1 deauthorized before, authorized again 1 s in, which makes
# its interfaces anew). Each time once with `none` and once with a move
# to usb-storage itself: registered while drvbind waits, the interface
# held meanwhile; already bound; and probed by it as it appears.
# After every none case usb-storage is loaded once more, drvbind gone:
# it must not take the interface (authorized stays 0).
# The rules come through config files, so their outcomes go to the
# kernel log as at boot; no rule is on the command line.
intf=/sys/bus/usb/devices/2-1:1.0
load xhci-pci
appear usb 2-1:1.0

# case_start NAME RULE: drvbind with RULE from a config file, in the
# background, the interface's driver reported before (NAME.before);
# case_end: its outcome, the driver and authorized after.
case_start() {
	link "$1.before" usb 2-1:1.0
	echo "$2" >"/tmp/$1.conf"
	start "$1" -v -t 8 -c "/tmp/$1.conf"
}
case_end() {
	finish
	link "$run_name" usb 2-1:1.0
	authorized "$run_name"
}

# authorized NAME: the interface's authorized (absent: no interface).
authorized() {
	say "$1.authorized $(cat "$intf/authorized" 2>/dev/null || echo absent)"
}

# reload NAME: usb-storage out and loaded again, drvbind no longer
# running; the interface's driver and authorized as NAME.reload.
reload() {
	rmmod usb_storage 2>/dev/null
	dmesg -c >/dev/null
	load usb-storage
	link "$1.reload" usb 2-1:1.0
	authorized "$1.reload"
	kernel_log | grep -e usb-storage -e 2-1 | say_lines "$1.reload.dmesg "
}

# back: the interface authorized and on usb-storage, for the next case.
back() {
	echo 1 >"$intf/authorized"
	echo 2-1:1.0 >/sys/bus/usb/drivers_probe
	settle usb 2-1:1.0
}

# usb-storage loaded 1 s after drvbind starts
case_start movewhile 2-1:1.0:usb-storage
sleep 1
load usb-storage
case_end
rmmod usb_storage
echo 1 >"$intf/authorized"

case_start nonewhile 2-1:1.0:none
sleep 1
load usb-storage
case_end
reload nonewhile
back

# usb-storage bound before drvbind starts
case_start movebefore 2-1:1.0:usb-storage
case_end

case_start nonebefore 2-1:1.0:none
case_end
reload nonebefore
back

# The interface appears 1 s after drvbind starts, usb-storage loaded
echo 0 >/sys/bus/usb/devices/2-1/authorized
case_start noneafter 2-1:1.0:none
sleep 1
echo 1 >/sys/bus/usb/devices/2-1/authorized
case_end
reload noneafter
back

echo 0 >/sys/bus/usb/devices/2-1/authorized
case_start moveafter 2-1:1.0:usb-storage
sleep 1
echo 1 >/sys/bus/usb/devices/2-1/authorized
case_end
