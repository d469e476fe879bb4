#!/bin/sh
# SPDX-License-Identifier: MIT
# Run a package build that refuses root (makepkg), or should not have it,
# as an unprivileged user, from a copy of its directory that user can
# reach. For the NAME.mk files here:
#
#   sh initramfs/pkg/asuser.sh DIR COMMAND [ARG...]
#
# As a normal user, COMMAND runs in DIR and nothing more. As root, it runs
# as nobody (setpriv, no supplementary groups) in a copy of DIR made in a
# fresh `mktemp -d` directory that nobody owns: nobody cannot enter a
# checkout under /root (0700) or in another mktemp -d directory. What
# COMMAND leaves in the copy, its work files too, is then copied back
# into DIR with its owner kept (nobody, who built it), whether COMMAND
# succeeded or not; DIR itself keeps its owner and mode, a symbolic link
# into the copy is made to point into DIR, and the copy is removed. The
# exit status is COMMAND's. setpriv keeps root's capabilities until it
# execs COMMAND, so COMMAND may even start from a path nobody cannot
# reach; all it opens after that it opens as nobody. HOME is left as it
# is: a build that reads one (makepkg, rpmbuild) should be given the
# copy's.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: asuser.sh DIR COMMAND [ARG...]" >&2
	exit 2
fi
dir=$1
shift

if [ "$(id -u)" != 0 ]; then
	cd "$dir"
	exec "$@"
fi

user=nobody
group=$(id -g "$user")
copy=$(mktemp -d "${TMPDIR:-/tmp}/drvbind-asuser.XXXXXX")
trap 'rm -rf "$copy"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

as_user() {
	setpriv --reuid="$user" --regid="$group" --clear-groups -- "$@"
}

cp -PR "$dir/." "$copy"
chown -R "$user:$group" "$copy"
# mktemp -d honours TMPDIR, which may lie where nobody cannot go either
if ! as_user test -w "$copy"; then
	echo "asuser.sh: $user cannot write $copy; set TMPDIR to a directory $user can enter" >&2
	exit 1
fi
st=0
(cd "$copy" && as_user "$@") || st=$?
find "$copy" -mindepth 1 -maxdepth 1 -exec cp -PpR {} "$dir" \;
# makepkg links each source into src/ by its absolute path
top=$(cd "$dir" && pwd)
find "$dir" -type l | while IFS= read -r link; do
	target=$(readlink "$link")
	case $target in
	"$copy"/*)
		ln -sfn "$top/${target#"$copy"/}" "$link"
		chown -h "$user:$group" "$link"
		;;
	esac
done
exit "$st"
