# SPDX-License-Identifier: MIT
# When e1000, the native driver, comes: while drvbind waits with the
# device present (loaded 1 s in), before drvbind starts, or on a device
# that appears while drvbind waits (removed before, a rescan 1 s in,
# e1000 loaded). Each time once with `none` and once with a move to
# pci-stub (loaded from the start), one e1000 per case:
#   05.0 none, 06.0 pci-stub   e1000 loaded while drvbind waits
#   07.0 none, 08.0 pci-stub   e1000 bound before drvbind starts
#   0a.0 none, 0b.0 pci-stub   the device appears while drvbind waits
# The two of the first kind run side by side, so e1000 loads once. The
# rules come through config files, so their outcomes go to the kernel
# log as at boot; no rule is on the command line. Last, e1000 is loaded
# once more, drvbind gone: the none rules' devices must stay unbound.
load pci-stub
for d in 05 06 07 08 0a 0b; do
	appear pci 0000:00:$d.0
done

# case_conf NAME DEV DRIVER: the rule DEV:DRIVER in NAME's config file, the
# device's driver before; then drvbind reads it (start, start_also).
case_conf() {
	link "$1.before" pci "$2"
	echo "$2:$3" >"/tmp/$1.conf"
}

# e1000 loaded 1 s after both drvbinds start
case_conf nonewhile 0000:00:05.0 none
case_conf movewhile 0000:00:06.0 pci-stub
start nonewhile -v -t 6 -c /tmp/nonewhile.conf
start_also movewhile -v -t 6 -c /tmp/movewhile.conf
sleep 1
load e1000
finish nonewhile
finish movewhile
link nonewhile pci 0000:00:05.0
link movewhile pci 0000:00:06.0

# e1000 bound before drvbind starts
for d in 07 08; do
	settle pci 0000:00:$d.0
done
case_conf nonebefore 0000:00:07.0 none
run nonebefore -v -t 6 -c /tmp/nonebefore.conf
link nonebefore pci 0000:00:07.0
case_conf movebefore 0000:00:08.0 pci-stub
run movebefore -v -t 6 -c /tmp/movebefore.conf
link movebefore pci 0000:00:08.0

# The device appears 1 s after drvbind starts, e1000 loaded: the bus
# adds it (its add uevent), then e1000 may probe it.
for c in noneafter:0a:none moveafter:0b:pci-stub; do
	n=${c%%:*} dev=0000:00:${c#*:}
	dev=${dev%:*}.0
	settle pci "$dev"
	echo 1 >"/sys/bus/pci/devices/$dev/remove"
	case_conf "$n" "$dev" "${c##*:}"
	start "$n" -v -t 6 -c "/tmp/$n.conf"
	sleep 1
	echo 1 >/sys/bus/pci/rescan
	finish
	link "$n" pci "$dev"
done

rmmod e1000
load e1000
link nonewhile.reload pci 0000:00:05.0
link nonebefore.reload pci 0000:00:07.0
link noneafter.reload pci 0000:00:0a.0
