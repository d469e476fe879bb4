# SPDX-License-Identifier: MIT
# vfio-pci for real: QEMU's q35 with an emulated Intel IOMMU and
# intel_iommu=on, so the kernel makes IOMMU groups and vfio-pci binds
# (without an IOMMU its probe refuses every device: the pci boot). The
# machine (run.sh):
#   05.0 05.1  two e1000 functions (8086:100e) of one slot: one IOMMU
#              group, as a multifunction device without ACS
#   06.0       a lone 82545EM e1000 (8086:100f), its own group: no rule
#              names it and none may touch it
#   07.0 07.1  another 82545EM beside a PCI-PCI bridge, one group;
#              vfio-pci refuses the bridge (EINVAL: not a normal header)
# No module is loaded at the start. Each run NAME reports, before and
# after, every device's driver link and override, its IOMMU group, and
# for each group whether /dev/vfio/GROUP exists (vfio makes it when the
# group's first device binds to vfio-pci, removes it when the last one
# leaves). The rules come through config files, so their outcomes reach
# the kernel log as at boot:
#   waits       05.0 and 05.1 to vfio-pci, neither driver loaded: both
#               held while e1000 loads (1 s in), bound once vfio-pci does
#   waitsback   both back to e1000, a second run with per-device rules
#   bound       05.0 and 05.1 to vfio-pci, e1000 bound before drvbind
#   boundback   both back to e1000
#   eachfail    07.0 and 07.1 to vfio-pci by per-device rules: the bridge
#               fails alone, 07.0 stays moved (what a set must not do)
# Then the device sets, which drvbind does not know yet: they run all
# the same (today each is one device name that never appears), so that
# this boot proves them once they land:
#   slot        pci/0000:00:05.*:vfio-pci, every function of the slot
#   group       pci/0000:00:05.0,iommu_group:vfio-pci
#   attrs       pci/vendor=0x8086,device=0x100e,iommu_group:vfio-pci
#   bridged     pci/0000:00:07.0,iommu_group:vfio-pci: the bridge of the
#               group is left alone
#   setfail     pci/0000:00:07.*:vfio-pci: the bridge fails, so 07.0
#               must go back to e1000 as well
# Between cases every device is put back as booted (restore), so each
# starts from the same machine; RUN.before.* shows that it did.

devs="0000:00:05.0 0000:00:05.1 0000:00:06.0 0000:00:07.0 0000:00:07.1"

# state NAME: each device's driver, override and group (NAME.group
# pci/DEV N), then each group's node (NAME.vfio N present|absent).
state() {
	local d g groups=
	for d in $devs; do
		link "$1" pci "$d"
		g=$(readlink "/sys/bus/pci/devices/$d/iommu_group")
		g=${g##*/}
		say "$1.group pci/$d $g"
		case " $groups " in
		*" $g "*) ;;
		*) groups="$groups $g" ;;
		esac
	done
	for g in $groups; do
		if [ -c "/dev/vfio/$g" ]; then
			say "$1.vfio $g present"
		else
			say "$1.vfio $g absent"
		fi
	done
}

# case_run NAME RULE...: the rules in NAME's config file, the state
# before (NAME.before.*), drvbind, the state after. -t 1: every driver
# is loaded by now, so only a rule that matches nothing waits.
case_run() {
	local n=$1
	shift
	printf '%s\n' "$@" >"/tmp/$n.conf"
	state "$n.before"
	run "$n" -v -t 1 -c "/tmp/$n.conf"
	state "$n"
}

# clear_overrides: "\n" empties driver_override; the next case must not
# inherit a driver the last one named.
clear_overrides() {
	local d
	for d in $devs; do
		echo >"/sys/bus/pci/devices/$d/driver_override"
	done
}

# restore: every e1000 back on e1000 by per-device rules, which drvbind
# has, whatever a set rule left; then no override anywhere.
restore() {
	drvbind -q -t 1 -m '' pci/0000:00:05.0:e1000 pci/0000:00:05.1:e1000 \
		pci/0000:00:06.0:e1000 pci/0000:00:07.0:e1000 2>/dev/null
	clear_overrides
}

# The machine as booted: ids, class, and who shares which group.
for d in $devs; do
	s=/sys/bus/pci/devices/$d
	say "boot.id pci/$d $(cat "$s/vendor") $(cat "$s/device") $(cat "$s/class")"
done
for g in /sys/kernel/iommu_groups/*; do
	m=
	for d in "$g"/devices/*; do
		m="$m ${d##*/}"
	done
	say "boot.members ${g##*/}$m"
done
state boot

# waits: held with driver_override while e1000 registers and takes the
# control; vfio-pci's registration then binds the held functions itself
printf '%s\n' pci/0000:00:05.0:vfio-pci pci/0000:00:05.1:vfio-pci >/tmp/waits.conf
state waits.before
start waits -v -t 20 -c /tmp/waits.conf
sleep 1
load e1000
settle pci 0000:00:06.0
state waits.held
load vfio-pci
finish waits
state waits

case_run waitsback pci/0000:00:05.0:e1000 pci/0000:00:05.1:e1000
clear_overrides

case_run bound pci/0000:00:05.0:vfio-pci pci/0000:00:05.1:vfio-pci
case_run boundback pci/0000:00:05.0:e1000 pci/0000:00:05.1:e1000
clear_overrides

case_run eachfail pci/0000:00:07.0:vfio-pci pci/0000:00:07.1:vfio-pci
restore

case_run slot 'pci/0000:00:05.*:vfio-pci'
restore
case_run group pci/0000:00:05.0,iommu_group:vfio-pci
restore
case_run attrs pci/vendor=0x8086,device=0x100e,iommu_group:vfio-pci
restore
case_run bridged pci/0000:00:07.0,iommu_group:vfio-pci
restore
case_run setfail 'pci/0000:00:07.*:vfio-pci'
restore
