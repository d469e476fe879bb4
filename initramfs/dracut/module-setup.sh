#!/bin/sh
# SPDX-License-Identifier: MIT
# dracut module 90drvbind. dracut sources this file and calls its
# functions; $initdir, $kernel, $moddir and $systemdsystemunitdir are
# dracut's.
# shellcheck disable=SC2154

# Always included once installed: rules typed at the boot prompt need the
# binary even when no config file names one.
check() {
	require_binaries @SBINDIR@/drvbind || return 1
	return 0
}

depends() {
	return 0
}

install() {
	inst_binary @SBINDIR@/drvbind /sbin/drvbind
	# A config file that someone besides root may write, or swap through
	# a directory on its path, stays out: drvbind would refuse it at boot
	# anyway, and modules.sh says why.
	if sh @DATADIR@/modules.sh -t /etc/drvbind.conf; then
		inst_simple /etc/drvbind.conf
	fi
	# With systemd as the initrd's init, hooks run inside units that are
	# stopped before the switch to the real root, and a child left there
	# is killed with them: the unit keeps drvbind's child alive instead.
	if dracut_module_included systemd; then
		inst_simple @UNITDIR@/drvbind.service "$systemdsystemunitdir/drvbind.service"
		$SYSTEMCTL -q --root "$initdir" enable drvbind.service
	else
		inst_hook pre-trigger 10 "$moddir/drvbind.sh"
	fi
}

installkernel() {
	mods=$(sh @DATADIR@/modules.sh "$kernel")
	if [ -n "$mods" ]; then
		# one module name a word
		# shellcheck disable=SC2086
		instmods $mods
	fi
}
