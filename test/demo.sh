#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo: the example of the 2005 article that introduced sysfs bind and
# unbind, replayed on a fake sysfs: a USB flash drive's interface 1-1:1.0,
# bound to ub, moved to usb-storage by drvbind=1-1:1.0:usb-storage.
set -eu
BATS_TEST_DIRNAME=$(cd "$(dirname "$0")" && pwd)
BATS_TEST_TMPDIR=$(mktemp -d)
. "$BATS_TEST_DIRNAME/helper.bash"
# The demo's status is its own: under set -e, the teardown's kill of a
# daemon already gone, or its wait for the killed one (143), would end
# the script with theirs.
trap 'st=$?; set +e; fake_teardown; rm -rf "$BATS_TEST_TMPDIR"; exit $st' EXIT

# Like tree(1) for one directory of the fake sysfs, links shown as the kernel makes them.
show() {
	printf '\n$ tree /sys/%s\n' "$1"
	(cd "$SYS/$1" && find . -mindepth 1 -maxdepth 2 | LC_ALL=C sort) | while read -r f; do
		if [[ -L $SYS/$1/$f ]]; then
			printf '  %s -> %s\n' "${f#./}" "$(readlink "$SYS/$1/$f")"
		else
			printf '  %s\n' "${f#./}"
		fi
	done
}

fake_setup
fake_driver usb ub match=1-1:1.0 module=ub
fake_driver usb usb-storage match=1-1:1.0 module=usb_storage
fake_device usb 1-1 idVendor=0781 idProduct=5567
fake_device usb 1-1:1.0 parent=1-1 class=08 driver=ub

echo "Before: the interface is on ub."
show bus/usb/drivers/ub
show bus/usb/devices/1-1:1.0

fake_cmdline 'root=/dev/sda1 drvbind=1-1:1.0:usb-storage quiet'
printf '\n$ cat /proc/cmdline\n%s\n' "$(cat "$FAKE/cmdline")"
printf '$ drvbind\n'
drvbind 2>&1

echo
echo "After: ub lets go, usb-storage has it."
show bus/usb/drivers/ub
show bus/usb/drivers/usb-storage
show bus/usb/devices/1-1:1.0

printf '\nWhat drvbind wrote, in order, and what the kernel answered:\n'
sed 's/^/  /' "$FAKE/log"
