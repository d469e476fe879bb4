#!/bin/sh
# SPDX-License-Identifier: MIT
# modules.sh [-c CONF] [-k CMDLINE] [-r SYSFS] [-b BASEDIR] KVER
# modules.sh -t CONF
#
# The kernel modules an initramfs needs for the drivers that drvbind
# rules name, one a line on stdout; what was added and what was not goes
# to stderr. Shared by every initramfs builder's hook. The rules come
# from the config file (default /etc/drvbind.conf) and the running
# system's command line (default /proc/cmdline), as drvbind reads them.
#
# A rule names a driver, not a module (vfio-pci lives in vfio_pci,
# "RSI-USB WLAN" in rsi_usb). A driver registered now says which module
# holds it through /sys/bus/BUS/drivers/DRIVER/module; otherwise the
# name itself, and its '-'/'_' variants, are asked of modinfo for KVER,
# the kernel the image is for (which need not be the running one).
#
# With -t, whether a hook may copy CONF into the image: status 0, or
# status 1 and, unless CONF is missing, why not on stderr.
set -u

usage="usage: modules.sh [-c CONF] [-k CMDLINE] [-r SYSFS] [-b BASEDIR] KVER
       modules.sh -t CONF"

# Whoever may write the config file chooses which driver gets which
# device at the next boot (and which modules go into the image), so it
# is taken only as drvbind itself takes it at run time: owned by root
# (the image's drvbind runs as root), writable by no one else. A FIFO
# would hold the build up: a regular file only. A link is judged by
# its target, which is what drvbind opens and the builders copy.
# trusted FILE: status 0, or 1 with the reason in $why.
trusted() {
	why=
	if ! [ -f "$1" ]; then
		why='not a regular file'
	elif ! st=$(stat -L -c '%u %a' -- "$1"); then
		why='cannot be examined'
	elif [ "${st% *}" != 0 ]; then
		why="owned by uid ${st% *}, not by root"
	elif [ $((0${st#* } & 022)) -ne 0 ]; then
		why='writable by group or others'
	fi
	[ -z "$why" ]
}

conf=/etc/drvbind.conf cmdline=/proc/cmdline sysfs=/sys base='' check=''
while getopts c:k:r:b:t: opt; do
	case $opt in
	c) conf=$OPTARG ;;
	k) cmdline=$OPTARG ;;
	r) sysfs=$OPTARG ;;
	b) base=$OPTARG ;;
	t) check=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -n "$check" ]; then
	[ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
	[ -e "$check" ] || exit 1
	trusted "$check" && exit 0
	echo "drvbind: $check: $why; not copied into the image" >&2
	exit 1
fi
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
kver=$1

# Every rule's value, one a line: the config file's lines (whole lines,
# as drvbind takes them), then the command line split as the kernel
# splits it (lib/cmdline.c next_arg: quotes group, a value's enclosing
# quotes go, nothing after a bare "--" is a parameter).
rules() {
	if [ -e "$conf" ]; then
		if trusted "$conf"; then
			sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^#/d' -e '/^$/d' \
				-e '/^drvbind\./d' -e 's/^drvbind=//' "$conf"
		else
			echo "drvbind: $conf: $why; not read" >&2
		fi
	fi
	if [ -f "$cmdline" ]; then
		awk '
		{ s = s $0 " " }
		END {
			n = length(s); i = 1
			while (i <= n) {
				while (i <= n && substr(s, i, 1) ~ /[ \t\n\r\f\v]/) i++
				if (i > n) break
				q = 0; quoted = 0
				if (substr(s, i, 1) == "\"") { i++; q = 1; quoted = 1 }
				t = ""
				while (i <= n) {
					c = substr(s, i, 1)
					if (c ~ /[ \t\n\r\f\v]/ && !q) break
					if (c == "\"") q = !q
					t = t c; i++
				}
				if (t == "--") break
				eq = index(t, "=")
				if (!eq) continue
				name = substr(t, 1, eq - 1); val = substr(t, eq + 1)
				if (val ~ /^"/) { val = substr(val, 2); sub(/"$/, "", val) }
				else if (quoted) sub(/"$/, "", val)
				if (name == "drvbind") print val
			}
		}' "$cmdline"
	fi
}

# modfile NAME: the path of module NAME for KVER, "(builtin)",
# or nothing.
modfile() {
	if [ -n "$base" ]; then
		modinfo -b "$base" -k "$kver" -F filename "$1" 2>/dev/null
	else
		modinfo -k "$kver" -F filename "$1" 2>/dev/null
	fi | head -n 1
}

resolve() {
	bus=$1 drv=$2
	cands=
	# The registered driver's own module, if it is loaded as one now.
	for link in "$sysfs"/bus/$bus/drivers/"$drv"/module; do
		[ -L "$link" ] || continue
		m=$(readlink "$link")
		cands="${m##*/}"
		break
	done
	for c in "$cands" "$drv" "$(echo "$drv" | tr - _)" "$(echo "$drv" | tr _ -)"; do
		[ -n "$c" ] || continue
		f=$(modfile "$c")
		case $f in
		'') continue ;;
		'(builtin)')
			echo "drvbind: $drv: built into $kver, no module needed" >&2
			return 0 ;;
		esac
		m=${f##*/}
		m=${m%%.ko*}
		echo "drvbind: $drv: adding module $m" >&2
		echo "$m"
		return 0
	done
	echo "drvbind: $drv: no module found for $kver; not added" >&2
}

# Each driver once; "none" needs no module.
rules | while IFS= read -r rule; do
	drv=${rule##*:}
	case $drv in
	"$rule" | '' | none) continue ;;
	esac
	dev=${rule%:*}
	bus='*'
	case $dev in
	*/*) bus=${dev%%/*} ;;
	esac
	printf '%s\t%s\n' "$bus" "$drv"
done | awk -F '\t' '!seen[$2]++' | while IFS="$(printf '\t')" read -r bus drv; do
	resolve "$bus" "$drv"
done
