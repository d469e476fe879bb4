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

# Whoever may write the config file, or swap it for another (whoever
# may write a directory on its path), chooses which driver gets which
# device at the next boot, the programs root runs then
# (drvbind.modprobe=, drvbind.init=) and the modules in the image. So
# it is taken only as drvbind itself takes it at run time (its
# applet/trust.c): the file, every directory from / to it and every
# link on the way owned by root (the image's drvbind runs as root), and
# none but a link writable by group or others, save a sticky directory
# on the way (/tmp), where only root may swap root's entries. Links are
# followed as the kernel follows them, 40 at most, so what is judged is
# what the builders copy. A FIFO would hold the build up: a regular
# file only.

# judge PATH KIND [END]: whether PATH, a directory, link or file met on
# the walk, with stat's '%f %u' in $st, may be trusted; END: it is the
# file itself. Status 0, or 1 with the reason in $why.
judge() {
	mode=$((0x${st% *})) uid=${st#* } what=
	[ "$2" = file ] || what="$2 $1 is "
	if [ "$uid" != 0 ]; then
		why="${what}owned by uid $uid, not by root"
	elif [ "$2" != link ] && [ $((mode & 022)) -ne 0 ] &&
		{ [ -n "${3:-}" ] || [ $((mode & 01000)) -eq 0 ]; }; then
		why="${what}writable by group or others"
	fi
	[ -z "$why" ]
}

# trusted FILE: FILE walked a name at a time from / (a relative one
# from the working directory's path), each name judged before the next
# is taken from it. Status 0, or 1 with the reason in $why, which is
# empty where a name is missing.
trusted() {
	why='cannot be examined' at=/ links=0 rest=$1
	case $rest in
	/*) ;;
	*) rest=$(pwd -P)/$rest || return 1 ;;
	esac
	st=$(stat -c '%f %u' /) || return 1
	why=
	judge / directory || return 1
	while :; do
		rest=${rest#"${rest%%[!/]*}"}
		name=${rest%%/*}
		rest=${rest#"$name"}
		more=${rest#"${rest%%[!/]*}"}
		case $name in
		'' | .) path=$at ;;
		..) path=${at%/*}; path=${path:-/} ;;
		*) path=${at%/}/$name ;;
		esac
		if ! st=$(stat -c '%f %u' -- "$path" 2>/dev/null); then
			[ ! -e "$path" ] || why='cannot be examined'
			return 1
		fi
		type=$((0x${st% *} & 0170000))
		if [ "$type" -eq $((0120000)) ]; then
			judge "$path" link || return 1
			links=$((links + 1))
			[ "$links" -le 40 ] || { why='symbolic link loop (more than 40 links)'; return 1; }
			target=$(readlink -- "$path") || { why='cannot be examined'; return 1; }
			rest=$target$rest
			case $target in
			/*) at=/ ;;
			esac
		elif [ "$type" -ne $((0040000)) ] && [ -n "$rest" ]; then
			why='not a directory'
			return 1
		elif [ -n "$more" ]; then
			judge "$path" directory || return 1
			at=$path
		elif [ "$type" -ne $((0100000)) ]; then
			why='not a regular file'
			return 1
		else
			judge "$path" file end
			return
		fi
	done
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
	trusted "$check" && exit 0
	[ -z "$why" ] || echo "drvbind: $check: $why; not copied into the image" >&2
	exit 1
fi
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
kver=$1

# Every rule's value, one a line: the config file's lines (whole lines,
# as drvbind takes them), then the command line split as the kernel
# splits it (lib/cmdline.c next_arg: quotes group, a value's enclosing
# quotes go, nothing after a bare "--" is a parameter).
rules() {
	if trusted "$conf"; then
		sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^#/d' -e '/^$/d' \
			-e '/^drvbind\./d' -e 's/^drvbind=//' "$conf"
	elif [ -n "$why" ]; then
		echo "drvbind: $conf: $why; not read" >&2
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
