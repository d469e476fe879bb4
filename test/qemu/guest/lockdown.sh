# SPDX-License-Identifier: MIT
# The USB storage lockdown on the real kernel. drvbind ran as PID 1
# (rdinit=/sbin/drvbind, from the prepend image) with
#   drvbind=usb/*,bInterfaceClass=08:none drvbind.follow=1
# a device set: every USB interface of class 08 (mass storage) kept
# without a driver, by its follower, through whatever comes later. At
# boot there is no USB at all (xhci-pci is a module this init loads);
# the machine has one qemu-xhci with a usb-storage stick (2-1), a
# usb-tablet (1-2) and a usb-hub (1-3) with three more usb-storage
# sticks behind it (1-3.1 to 1-3.3): four mass-storage interfaces.
# Each step changes the machine under the follower, waits until it has
# settled, and reports as STEP.*: the follower's pid, the lone stick's
# and the tablet's interfaces (STEP.stick ID, STEP.tablet ID), the hub's
# USB device (STEP.hub ID) and the mass-storage interfaces behind it
# (STEP.hubstick ID, one line each), every USB interface's class,
# driver and authorized (STEP.class, STEP.link, STEP.authorized
# usb/ID ...), the kernel log since the step before (read and cleared
# at once) and the modprobe requests:
#   start   usb-storage, usbhid and xhci-pci loaded: the four mass-
#           storage interfaces held (none, authorized 0), the tablet's
#           on usbhid; and what drvbind -l usb lists then (start.list)
#   reenum  the lone stick's USB device deauthorized and authorized
#           again, which makes its interface anew, probed by usb-storage
#   hub     the hub's USB device deauthorized and authorized again:
#           everything behind it goes, and comes back anew, the three
#           sticks' interfaces probed by usb-storage; and drvbind -l usb
#           once more (hub.list)
#   reload  usb-storage unloaded and loaded again
#   knock   the uid 65534 knocking on the follower's places with
#           /bin/knock (test/fake/knock.c): knock1 three times from one
#           process, knock2 and knock3 once each, each a process (pid)
#           of its own; KNOCK.out is the knock's own report
#           ("self pid PID uid UID gid GID", then one line per
#           connection). knock.listen: the follower's listening sockets
#           in /proc/net/unix, knock.sockfile: the path socket's mode
#           and owner
#   after   the lone stick re-enumerated once more, after the knocks
#   root    a knock as root (root.out), an equal: the follower must end
#           (root.state ended or running, root.ms); root.exit_group,
#           its exit status, from the kernel's trace of its
#           exit_group()

# the follower's uevent sockets (see idle), the lone stick's interface
# and the hub's USB device as last seen
follower='' socks=' ' stick='' tablet='' hub=''

# The mass-storage interfaces of the machine (test/qemu/run.sh): the
# lone stick's and the three behind the hub.
STORAGE=4

# class_intfs CLASS: every USB interface of that bInterfaceClass, one a
# line, sorted by name
class_intfs() {
	local d
	for d in /sys/bus/usb/devices/*:*; do
		[ "$(cat "$d/bInterfaceClass" 2>/dev/null)" = "$1" ] && echo "${d##*/}"
	done
}

# class_intf CLASS: the first of them whose device is in a root hub's
# port (no '.' in the device's part of its name: not behind a hub)
class_intf() {
	class_intfs "$1" | grep -v '^[^:]*\.' | head -n 1
}

# find_hub: the hub's USB device, the one of class 09 that is not a root
# hub (usbN)
find_hub() {
	local d
	for d in /sys/bus/usb/devices/[0-9]*; do
		case ${d##*/} in
		*:*) continue ;;
		esac
		[ "$(cat "$d/bDeviceClass" 2>/dev/null)" = 09 ] && { echo "${d##*/}"; return; }
	done
}

# held: all STORAGE mass-storage interfaces are there, each without a
# driver and authorized 0
held() {
	local i n=0
	for i in $(class_intfs 08); do
		[ "$(driver_of usb "$i")" = none ] || return 1
		[ "$(cat "/sys/bus/usb/devices/$i/authorized")" = 0 ] || return 1
		n=$((n + 1))
	done
	stick=$(class_intf 08)
	[ $n -eq $STORAGE ]
}

# hid: the tablet's interface is on usbhid
hid() {
	tablet=$(class_intf 03)
	[ -n "$tablet" ] && [ "$(driver_of usb "$tablet")" = usbhid ]
}

gone() {
	[ ! -e "/sys/bus/usb/devices/$1" ]
}

# hub_empty: no USB device left behind the hub
hub_empty() {
	local d
	for d in "/sys/bus/usb/devices/$hub."*; do
		[ -e "$d" ] && return 1
	done
	return 0
}

# step NAME: the report of a step, once the follower has had its say
# (step_log, step_said): the lone stick's and the tablet's interfaces,
# the hub and the mass-storage interfaces behind it, every interface's
# class, driver and authorized
step() {
	local d n
	step_log "$1"
	stick=$(class_intf 08) tablet=$(class_intf 03) hub=$(find_hub)
	say "$1.stick ${stick:-absent}"
	say "$1.tablet ${tablet:-absent}"
	say "$1.hub ${hub:-absent}"
	[ -z "$hub" ] || class_intfs 08 | grep "^$hub\." | say_lines "$1.hubstick "
	for d in /sys/bus/usb/devices/*:*; do
		[ -e "$d" ] || continue
		n=${d##*/}
		say "$1.class usb/$n $(cat "$d/bInterfaceClass")"
		say "$1.link usb/$n $(driver_of usb "$n")"
		say "$1.authorized usb/$n $(cat "$d/authorized")"
	done
	step_said "$1"
}

# reenum: the lone stick's USB device deauthorized and authorized again
reenum() {
	local dev="${stick%%:*}"
	echo 0 >"/sys/bus/usb/devices/$dev/authorized"
	until_ok gone "$stick"
	echo 1 >"/sys/bus/usb/devices/$dev/authorized"
	until_ok held
}

# The drvbind that PID 1 left, and its sockets.
boot_step

# The drivers, then the controller: the stick and the tablet appear.
load usb-storage
load usbhid
load xhci-pci
# a full-speed hub and the three sticks behind it enumerate one after
# another, slowly under TCG: 30 s at most
retry 300 held
until_ok hid
step start
# What -l shows of them: each USB device's ids, each interface's class,
# and the held ones by the set's rule.
/sbin/drvbind -l usb 2>&1 | say_lines "start.list "

# 1. Re-enumerated: a new interface, which usb-storage probes.
reenum
step reenum

# 2. The hub re-enumerated: authorized 0 on its USB device disconnects
# everything behind it, 1 configures it again, and it finds its three
# sticks anew, as after a replug of the hub.
echo 0 >"/sys/bus/usb/devices/$hub/authorized"
until_ok hub_empty
echo 1 >"/sys/bus/usb/devices/$hub/authorized"
retry 300 held
step hub
/sbin/drvbind -l usb 2>&1 | say_lines "hub.list "

# 3. usb-storage out and in again.
rmmod usb_storage
load usb-storage
step reload

# 4. An unprivileged user knocks; the follower must keep following.
# Where: every socket the follower listens on, by the name that
# /proc/net/unix shows anyone (its inode one of the follower's fds).
# Every connection is answered before the next is made (knock waits
# for its end), so that each is the follower's to judge alone.
follower_socks
places=$(awk -v s="$socks" '$4 == "00010000" && index(s, " " $7 " ") { print $8 }' /proc/net/unix)
echo "$places" | say_lines "knock.listen "
say "knock.sockfile $(stat -c '%F %a %u' /run/drvbind.sock 2>/dev/null || echo absent)"
# shellcheck disable=SC2086 # the names, one a word
{
	/bin/knock -u 65534:65534 -n 3 $places | say_lines "knock1.out "
	/bin/knock -u 65534:65534 $places | say_lines "knock2.out "
	/bin/knock -u 65534:65534 $places | say_lines "knock3.out "
}
step knock

# 5. The lone stick re-enumerated again, after the knocks: still held?
reenum
until_ok hid
step after

# 6. Root knocks: an equal, for whom the follower ends (status 0, as on
# SIGTERM), within 2 s. Its exit status from the kernel's trace of
# exit_group(), as in follow.sh: this init reaps it unasked.
exit_traced
ms_now
t0=$ms
abstract=$(echo "$places" | grep '^@' | head -n 1)
/bin/knock "${abstract:-@drvbind-follow}" | say_lines "root.out "
follower_ends "$t0" 2000 0.05
ms_now
say "root.state $state"
say "root.ms $((ms - t0))"
exit_said root
awk -v s="$socks" '$4 == "00010000" && index(s, " " $7 " ") { print $8 }' /proc/net/unix | say_lines "root.listen "
step root
