#!/bin/sh
# SPDX-License-Identifier: MIT
# systemd as PID 1 of a real root, with drvbind-follow.service as `make
# install` ships it, enabled; booted once under QEMU (TCG) to show that a
# unit ordered after the follower starts only once the follower's first
# pass has settled (Type=notify, READY=1).
#
#   test/qemu/systemd.sh          results in build/systemd/out/follow/
#
# The root disk (ext4, made without root by `mke2fs -d`) holds this
# machine's own systemd, systemctl and kmod with the libraries ldd names
# for them, busybox-static for the shell and the small tools, drvbind
# installed by `make install DESTDIR=ROOT PREFIX=/usr`, its unit enabled
# by `systemctl --root=ROOT enable`, and /etc/drvbind.conf with one rule,
# pci/0000:00:05.0:pci-stub. The root runs no udev, so nothing binds the
# e1000 at 0000:00:05.0 but drvbind, and pci-stub is not loaded: drvbind
# asks /sbin/modprobe for it, which here sleeps MODPROBE_DELAY seconds (2)
# before kmod loads the module, as a slow load would: the rule holds
# seconds after the follower starts. A tiny busybox initramfs loads
# virtio and ext4, mounts the disk and switches to it; systemd starts
# from the root's /sbin/init.
#
# default.target wants drvbind-probe.service, which is ordered
# After=drvbind-follow.service and Wants= it, and nothing else
# (DefaultDependencies=no): when it starts it reports where 0000:00:05.0
# is, what systemd says of the follower, the modprobe log; then it
# reloads the follower (SIGHUP) and stops it, reports each, and powers
# off. Lines "probe.KEY VALUE" on the second serial port. One drop-in,
# for this test's record only, sends the follower's messages to
# /run/drvbind-follow.log: the root runs no journald.
#
# DRVBIND=FILE puts another binary in the root, FOLLOW_UNIT=FILE another
# drvbind-follow.service (@SBINDIR@ filled in; e.g. a copy with Type=exec,
# to see the test fail), MODPROBE_DELAY=SECONDS another delay.
#
# Results: build/systemd/out/follow/{results,console.log,qemu.status,seconds}.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
w=build/systemd
here=test/qemu
delay=${MODPROBE_DELAY:-2}

k=$(sh "$here/kernel.sh" build/qemu)
kdir=${k% *} kver=${k##* }
mkdir -p "$w/out"

# The root: merged /usr, as Debian 12's.
r=$w/root
rm -rf "$r" "$w/root.img"
mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/lib64" "$r/usr/local/sbin" \
	"$r/etc/systemd/system" "$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/tmp" "$r/root" "$r/var"
for d in bin sbin lib lib64; do
	ln -s "usr/$d" "$r/$d"
done

# busybox's applets first; the real programs below replace some of them.
cp "$(command -v busybox)" "$r/usr/bin/busybox"
for a in $(busybox --list-full); do
	case $a in
	bin/busybox | sbin/init | sbin/modprobe | linuxrc) continue ;;
	usr/*) l=$r/$a ;;
	*) l=$r/usr/$a ;;
	esac
	ln -sf /usr/bin/busybox "$l"
done

# copy FILE...: the machine's own program or library at the same path
# below /usr (merged: /lib is /usr/lib), and every library ldd names for
# it, the links resolved.
copy() {
	for f; do
		case $f in
		/usr/*) d=$r$f ;;
		*) d=$r/usr$f ;;
		esac
		mkdir -p "$(dirname "$d")"
		rm -f "$d"
		cp -L "$f" "$d"
		ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
			while read -r l; do
				case $l in
				/usr/*) ld=$r$l ;;
				*) ld=$r/usr$l ;;
				esac
				[ -e "$ld" ] && continue
				mkdir -p "$(dirname "$ld")"
				cp -L "$l" "$ld"
			done
	done
}
copy /usr/lib/systemd/systemd /usr/bin/systemctl /usr/bin/kmod
# kmod is modprobe by the name it is called by
mkdir -p "$r/usr/lib/kmod"
ln -s /usr/bin/kmod "$r/usr/lib/kmod/modprobe"
ln -sf /usr/lib/systemd/systemd "$r/usr/sbin/init"
# systemd's own sysinit.target, which the unit names (WantedBy=, Before=)
mkdir -p "$r/usr/lib/systemd/system"
cp /usr/lib/systemd/system/sysinit.target "$r/usr/lib/systemd/system/sysinit.target"

# drvbind as make install puts it, then its unit enabled the usual way.
make -s install DESTDIR="$top/$r" PREFIX=/usr
if [ -n "${DRVBIND:-}" ]; then
	install -m 755 "$DRVBIND" "$r/usr/sbin/drvbind"
fi
if [ -n "${FOLLOW_UNIT:-}" ]; then
	# as make install fills it in
	sed 's|@SBINDIR@|/usr/sbin|g' "$FOLLOW_UNIT" >"$r/usr/lib/systemd/system/drvbind-follow.service"
fi
systemctl --root="$r" enable drvbind-follow.service 2>"$w/enable.log"
printf '# the root'"'"'s rule\npci/0000:00:05.0:pci-stub\n' >"$r/etc/drvbind.conf"
chmod 644 "$r/etc/drvbind.conf"

# pci-stub's module, and a modprobe that takes its time.
mkdir -p "$r/usr/lib/modules/$kver/kernel"
modprobe -d "$kdir" -S "$kver" --show-depends pci-stub | awk '$1 == "insmod" { print $2 }' |
	while read -r ko; do
		cp "$ko" "$r/usr/lib/modules/$kver/kernel/"
	done
for f in modules.order modules.builtin modules.builtin.modinfo; do
	cp "$kdir/lib/modules/$kver/$f" "$r/usr/lib/modules/$kver/"
done
depmod -b "$r" "$kver"
cat >"$r/usr/sbin/modprobe" <<EOF
#!/bin/sh
# a slow module load: $delay s, then kmod's modprobe
read -r up _ </proc/uptime
echo "\$up modprobe \$*" >>/run/modprobe.log
sleep $delay
exec /usr/lib/kmod/modprobe "\$@"
EOF
chmod 755 "$r/usr/sbin/modprobe"

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' >"$r/etc/group"
printf 'ID=drvbind-test\nNAME="drvbind test root"\n' >"$r/etc/os-release"
echo 0123456789abcdef0123456789abcdef >"$r/etc/machine-id"

# The test's own units.
cat >"$r/etc/systemd/system/default.target" <<'EOF'
[Unit]
Description=drvbind test: the follower, then a unit ordered after it
Wants=sysinit.target drvbind-probe.service
EOF
cat >"$r/etc/systemd/system/drvbind-probe.service" <<'EOF'
[Unit]
Description=Report where the follower's rule put 0000:00:05.0
DefaultDependencies=no
Wants=drvbind-follow.service
After=drvbind-follow.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/probe
EOF
mkdir -p "$r/etc/systemd/system/drvbind-follow.service.d"
printf '# the root has no journald: the messages to a file, for the test\n[Service]\nStandardOutput=append:/run/drvbind-follow.log\n' \
	>"$r/etc/systemd/system/drvbind-follow.service.d/log.conf"
cat >"$r/usr/local/sbin/probe" <<'EOF'
#!/bin/sh
# What a unit ordered after drvbind-follow.service finds when it starts.
read -r up _ </proc/uptime
dev=/sys/bus/pci/devices/0000:00:05.0
link=none
[ -L "$dev/driver" ] && link=$(readlink "$dev/driver")
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
say() {
	printf '%s\n' "$*" >&3
}
# show KEY UNIT PROPERTY...: systemd's view of UNIT, a line "KEY.PROPERTY VALUE" each
show() {
	key=$1 unit=$2
	shift 2
	systemctl show "$unit" $(printf -- '-p %s ' "$@") | while IFS= read -r l; do
		say "$key.${l%%=*} ${l#*=}"
	done
}
say "probe.uptime $up"
say "probe.link pci/0000:00:05.0 ${link##*/}"
say "probe.override pci/0000:00:05.0 $(cat "$dev/driver_override")"
show probe.self drvbind-probe.service ExecMainStartTimestampMonotonic
show probe.follow drvbind-follow.service Type ActiveState SubState StatusText NotifyAccess MainPID \
	ExecMainStartTimestampMonotonic ActiveEnterTimestampMonotonic
while IFS= read -r l; do say "probe.modprobe $l"; done </run/modprobe.log
# a reload: SIGHUP, then READY=1 again
systemctl reload drvbind-follow.service
say "probe.reload $?"
show reload drvbind-follow.service ActiveState SubState StatusText
# a stop: SIGTERM
systemctl stop drvbind-follow.service
say "probe.stop $?"
show stop drvbind-follow.service ActiveState SubState Result ExecMainStatus StatusText
while IFS= read -r l; do say "probe.log $l"; done </run/drvbind-follow.log
say "probe.enabled $(systemctl is-enabled drvbind-follow.service)"
dmesg | while IFS= read -r l; do say "probe.kmsg $l"; done
say end
exec 3>&-
poweroff -f
EOF
chmod 755 "$r/usr/local/sbin/probe"
mke2fs -q -F -t ext4 -d "$r" "$w/root.img" 256M >/dev/null

# The initramfs: busybox, virtio and ext4, and an /init that mounts the
# disk and switches to it.
i=$w/initramfs.d
rm -rf "$i"
mkdir -p "$i/bin" "$i/sbin" "$i/proc" "$i/sys" "$i/dev" "$i/root" "$i/mod"
cp "$(command -v busybox)" "$i/bin/busybox"
for a in sh mount umount insmod sleep switch_root cat; do
	ln -s busybox "$i/bin/$a"
done
for mod in virtio_pci virtio_blk ext4; do
	modprobe -d "$kdir" -S "$kver" --show-depends "$mod" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	cp "$ko" "$i/mod/"
	echo "/mod/${ko##*/}"
done >"$i/mod/list"
cat >"$i/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for ko in $(cat /mod/list); do insmod "$ko"; done
n=0
while ! [ -b /dev/vda ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
mount -t ext4 /dev/vda /root || echo "init: cannot mount /dev/vda"
umount /proc /sys /dev
exec switch_root /root /sbin/init
EOF
chmod 755 "$i/init"
(cd "$i" && find . | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) >"$w/initramfs.img"
rm -rf "$i"

QEMU_TIMEOUT=${QEMU_TIMEOUT:-180} sh "$here/boot.sh" \
	"$kdir/boot/vmlinuz-$kver" "$w/initramfs.img" "$w/out/follow" \
	"systemd.show_status=1 systemd.log_target=console" \
	-drive "file=$w/root.img,if=virtio,format=raw,snapshot=on" \
	-device e1000,addr=5,romfile=
