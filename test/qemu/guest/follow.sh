# SPDX-License-Identifier: MIT
# Following on the real kernel. drvbind ran as PID 1 (rdinit=/sbin/drvbind,
# from the prepend image) with drvbind.follow=1 and the rules
#   drvbind=0000:00:05.0:pci-stub   the e1000
#   drvbind=2-1:1.0:none            the stick's interface
# found neither driver nor interface (every driver is a module this init
# loads), left its background child following both, and exec'd this
# init. Each step below changes the machine under the follower, waits
# until it has settled, and reports as STEP.*: the follower's pid, each
# ruled device's driver (and driver_override, authorized), the kernel log
# since the step before (read and cleared at once), and its modprobe
# requests:
#   start   the modules loaded: e1000, pci-stub, usb-storage, xhci-pci
#   rescan  the e1000 removed and rescanned in: a new device, without
#           the override, which e1000 would probe as the bus adds it
#   stub    pci-stub unloaded and loaded again
#   native  e1000 unloaded and loaded again
#   reenum  the stick's USB device deauthorized and authorized again,
#           which makes its interface anew, probed by usb-storage
#   replug  the stick unplugged and plugged again by QEMU itself: a line
#           "monitor unplug" or "monitor plug" on the report port asks
#           the host (test/qemu/monitor.sh), and this side waits for the
#           kernel to see it
#   term    SIGTERM to the follower, which must end with status 0

intf=/sys/bus/usb/devices/2-1:1.0

# step NAME: the report of a step, once the follower has had its say
# (step_log, step_said): both ruled devices, and the interface's
# authorized
step() {
	step_log "$1"
	link "$1" pci 0000:00:05.0
	link "$1" usb 2-1:1.0
	say "$1.authorized $(cat "$intf/authorized" 2>/dev/null || echo absent)"
	step_said "$1"
}


on() {
	[ "$(driver_of "$1" "$2")" = "$3" ]
}

# held: the interface is there, without a driver, and authorized 0
held() {
	[ -e "$intf" ] && on usb 2-1:1.0 none && [ "$(cat "$intf/authorized")" = 0 ]
}

gone() {
	[ ! -e "/sys/bus/$1/devices/$2" ]
}



# The drvbind that PID 1 left: its child, in a session of its own, its
# parent this init. Of the log since boot, drvbind's lines.
follower_found
say "boot.ppid $(sed -n 's/^PPid:\t*//p' "/proc/$follower/status")"
say "boot.sid $(cut -d' ' -f6 "/proc/$follower/stat")"
keep='drvbind: |Run /sbin/drvbind'
step boot
keep=

# The drivers come: e1000 must not take the held e1000, pci-stub gets
# it; usb-storage is there before the stick's interface appears.
load e1000
load pci-stub
load usb-storage
load xhci-pci
until_ok on pci 0000:00:05.0 pci-stub
until_ok held
step start

# 1. The e1000 removed and rescanned in: the rescan adds a new device
# (no driver_override), which e1000 probes unless the follower holds it
# first.
echo 1 >/sys/bus/pci/devices/0000:00:05.0/remove
until_ok gone pci 0000:00:05.0
echo 1 >/sys/bus/pci/rescan
# as the rescan returns: on e1000, or already on pci-stub where the
# follower held the device before the bus probed it
link rescan.added pci 0000:00:05.0
until_ok on pci 0000:00:05.0 pci-stub
step rescan

# 2. pci-stub out and in again: the override keeps e1000 off the device
# meanwhile, even when the bus is asked to probe it; then e1000 out and
# in again, which changes nothing.
rmmod pci_stub
until_ok on pci 0000:00:05.0 none
echo 0000:00:05.0 >/sys/bus/pci/drivers_probe
link stub.out pci 0000:00:05.0
load pci-stub
until_ok on pci 0000:00:05.0 pci-stub
step stub
rmmod e1000
load e1000
step native

# 3. The stick's device re-enumerated: authorized 0 takes its interfaces
# away, 1 makes them anew, and usb-storage probes the new 2-1:1.0.
echo 0 >/sys/bus/usb/devices/2-1/authorized
until_ok gone usb 2-1:1.0
link reenum.out usb 2-1:1.0
echo 1 >/sys/bus/usb/devices/2-1/authorized
until_ok held
step reenum

# 4. QEMU unplugs the stick and plugs it in again, asked by this guest.
say "monitor unplug"
until_ok gone usb 2-1
link replug.out usb 2-1:1.0
say "monitor plug"
until_ok held
step replug

# 5. SIGTERM: the follower ends with status 0, within a second
# (term.state: ended, or running; term.ms when). This init, its parent,
# does not know it as a job and reaps it unasked: its status is read
# from the kernel's trace of its exit_group() call instead (killed by the
# signal, it would make none).
exit_traced
ms_now
t0=$ms
kill -TERM "$follower"
follower_ends "$t0" 1000
ms_now
say "term.state $state"
say "term.ms $((ms - t0))"
exit_said term
step term
