#!/bin/sh
# SPDX-License-Identifier: MIT
# dracut pre-trigger hook for its shell init (with systemd in the image,
# drvbind.service runs instead): udevd runs, its coldplug has not. dracut
# sources hooks, so this must not exit.
if [ -f /etc/drvbind.conf ] || grep -q 'drvbind=' /proc/cmdline; then
	/sbin/drvbind -b
fi
