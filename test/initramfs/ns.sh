#!/bin/sh
# SPDX-License-Identifier: MIT
# ns.sh [-u DIR]... [-e DIR] [-k FILE] [-b DIR] -- COMMAND...
#
# Runs COMMAND in a private mount namespace that shows it the machine as
# if things were installed, while the machine itself is left unchanged:
# each -u DIR (a tree in /usr's layout, e.g. `make install DESTDIR=D
# PREFIX=/usr`'s D/usr, or an unpacked kernel whose lib/modules/KVER
# lands in /usr/lib/modules) is laid read-only over /usr, the first
# topmost; -e DIR over /etc; -k FILE over /proc/cmdline, so that the
# build host's own command line cannot leak rules in; -b DIR over /boot.
set -eu

usr='' etc='' cmdline='' boot=''
while getopts u:e:k:b: opt; do
	case $opt in
	u) usr="$usr$(cd "$OPTARG" && pwd):" ;;
	e) etc=$(cd "$OPTARG" && pwd) ;;
	k) cmdline=$(cd "$(dirname "$OPTARG")" && pwd)/${OPTARG##*/} ;;
	b) boot=$(cd "$OPTARG" && pwd) ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
# /lib and /sbin are links into /usr on a merged-/usr system (Debian 12).
if ! [ -L /lib ] || ! [ -L /sbin ]; then
	echo "ns.sh: /lib or /sbin is not a link into /usr" >&2
	exit 1
fi
# an overlay's mount point must exist
[ -z "$boot" ] || [ -d /boot ] || mkdir /boot

# shellcheck disable=SC2016
exec unshare -m --propagation private sh -c '
	set -eu
	usr=$1 etc=$2 cmdline=$3 boot=$4
	shift 4
	[ -z "$usr" ] || mount -t overlay drvbind-usr -o "lowerdir=$usr/usr" /usr
	[ -z "$etc" ] || mount -t overlay drvbind-etc -o "lowerdir=$etc:/etc" /etc
	[ -z "$cmdline" ] || mount --bind "$cmdline" /proc/cmdline
	[ -z "$boot" ] || mount --bind "$boot" /boot
	exec "$@"' ns.sh "$usr" "$etc" "$cmdline" "$boot" "$@"
