# SPDX-License-Identifier: MIT
# drvbind ran as PID 1 with drvbind.init=/sbin/myinit (this same script
# under another name) and no arguments after "--"; its one rule moved
# serio0 away from the built-in atkbd before this init started.
report_init
link myinit pnp 00:05
link myinit serio serio0
report_log myinit
