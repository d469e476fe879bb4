# SPDX-License-Identifier: MIT
# drvbind ran as PID 1 (rdinit=/sbin/drvbind) from the image that is the
# board's whole root filesystem, then exec'd drvbind.init=/sbin/init
# (this init), with rules that moved the AMBA RTC and GPIO controller
# off their built-in drivers before any init ran.
report_init
link rootfs amba 9010000.pl031
link rootfs amba 9030000.pl061
say "rootfs.rtc $(ls /sys/class/rtc | tr '\n' ' ')"
report_log rootfs
