# SPDX-License-Identifier: MIT
# A stick named by its serial number on the real kernel. drvbind ran as
# PID 1 (rdinit=/sbin/drvbind, from the prepend image) with
#   drvbind=usb/*:*,serial=DRVBINDA*:none drvbind.follow=1 drvbind.timeout=30
# a device set: every USB interface (a bus id with a colon) whose
# device, the interface's parent, has a serial that starts DRVBINDA. An
# interface has no serial of its own: the item matches the nearest
# parent's, as udev's ATTRS{} does. At boot there is no USB at all
# (xhci-pci is a module this init loads); the machine has two QEMU
# usb-storage sticks on one qemu-xhci, alike but for their serials:
# stick A, DRVBINDA0001, in port 1 (2-1), and stick B, DRVBINDB0002, in
# port 2 (2-2). Each step changes the machine under the follower, waits
# until it has settled, and reports as STEP.*: the follower's pid, each
# stick's interface found by its serial (STEP.a ID, STEP.b ID), every
# USB device's serial (STEP.serial usb/DEV SERIAL), every interface's
# driver and authorized, the kernel log since the step before (read
# and cleared at once) and the modprobe requests:
#   start    usb-storage and xhci-pci loaded: A's interface held (none,
#            authorized 0), B's on usb-storage; and what drvbind -l usb
#            lists then (start.list LINE)
#   reenum   each stick's USB device deauthorized and authorized again,
#            A's then B's, which makes its interface anew, probed by
#            usb-storage
#   moved    A unplugged and plugged into port 3 (2-3) by QEMU itself:
#            a line "monitor unplug ID" or "monitor plug ID port=N" on
#            the report port asks the host (test/qemu/monitor.sh), and
#            this side waits for the kernel to see it
#   swapped  both unplugged, B plugged into port 1 (A's first: 2-1), then
#            A into port 2 (B's: 2-2)

A=DRVBINDA0001 B=DRVBINDB0002

# usbdev SERIAL: the USB device (its bus id) whose serial is SERIAL
usbdev() {
	local d
	for d in /sys/bus/usb/devices/*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return; }
	done
}

# intf SERIAL: that stick's interface (a stick has one)
intf() {
	local d i
	d=$(usbdev "$1")
	[ -n "$d" ] || return 0
	for i in "/sys/bus/usb/devices/$d:"*; do
		[ -e "$i" ] && echo "${i##*/}"
		return 0
	done
}

# held: stick A's interface is there, without a driver, authorized 0
held() {
	local a
	a=$(intf $A)
	[ -n "$a" ] && [ "$(driver_of usb "$a")" = none ] &&
		[ "$(cat "/sys/bus/usb/devices/$a/authorized")" = 0 ]
}

# stored: stick B's interface is there, on usb-storage
stored() {
	local b
	b=$(intf $B)
	[ -n "$b" ] && [ "$(driver_of usb "$b")" = usb-storage ]
}

gone() {
	[ ! -e "/sys/bus/usb/devices/$1" ]
}

# step NAME: the report of a step, once the follower has had its say
# (step_log, step_said): which interface is whose, every USB device's
# serial, every interface's driver and authorized
step() {
	local d n a b
	step_log "$1"
	a=$(intf $A) b=$(intf $B)
	say "$1.a ${a:-absent}"
	say "$1.b ${b:-absent}"
	for d in /sys/bus/usb/devices/*; do
		[ -e "$d" ] || continue
		n=${d##*/}
		case $n in
		*:*)
			say "$1.link usb/$n $(driver_of usb "$n")"
			say "$1.authorized usb/$n $(cat "$d/authorized")" ;;
		*)
			say "$1.serial usb/$n $(cat "$d/serial" 2>/dev/null || echo none)" ;;
		esac
	done
	step_said "$1"
}

# reenum SERIAL READY: that stick's USB device deauthorized and
# authorized again; then until READY
reenum() {
	local dev i
	dev=$(usbdev "$1") i=$(intf "$1")
	echo 0 >"/sys/bus/usb/devices/$dev/authorized"
	until_ok gone "$i"
	echo 1 >"/sys/bus/usb/devices/$dev/authorized"
	until_ok "$2"
}

# unplug ID SERIAL: QEMU unplugs the stick ID, whose serial is SERIAL;
# until the kernel has seen its USB device go
unplug() {
	local dev
	dev=$(usbdev "$2")
	say "monitor unplug $1"
	until_ok gone "$dev"
}

# plug ID PORT READY: QEMU plugs the stick ID in again, into PORT of the
# controller; until READY
plug() {
	say "monitor plug $1 port=$2"
	until_ok "$3"
}

# The drvbind that PID 1 left, and its sockets.
boot_step

# The driver, then the controller: both sticks appear.
load usb-storage
load xhci-pci
until_ok held
until_ok stored
step start
# What -l shows of them: the ids and serial a rule can name each by.
/sbin/drvbind -l usb 2>&1 | say_lines "start.list "

# 1. Both re-enumerated: new interfaces, which usb-storage probes.
reenum $A held
reenum $B stored
step reenum

# 2. A in another port: a new USB device and interface, 2-3 and 2-3:1.0.
unplug stick-a $A
plug stick-a 3 held
step moved

# 3. Swapped: B where A was first, A where B was.
unplug stick-a $A
unplug stick-b $B
plug stick-b 1 stored
plug stick-a 2 held
step swapped
