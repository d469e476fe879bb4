/* SPDX-License-Identifier: MIT */
/*
 * -l: every device of a bus, or of every bus, with its driver and its
 * driver_override where one is set, a line each on stdout.
 * Calls device.c, sysfs.c, log.c and mem.c.
 */
#include <errno.h>
#include <string.h>

#include "drvbind.h"

static int list_dev(const char *dev, void *bus)
{
	char p[PATH_SZ], drv[NAME_SZ], ovr[NAME_SZ];

	put(bus);
	put_c('/');
	put(dev);
	put_c(' ');
	put(dev_driver(bus, dev, drv) < 0 ? "?" : drv_or_none(drv));
	if (node_path(p, bus, "/devices/", dev, "driver_override") == 0 &&
	    attr_read(p, ovr, sizeof ovr) == 0 && strcmp(ovr, "(null)")) {
		put(" override=");
		put(ovr);
	}
	put_c('\n');
	put_line(1);
	return 0;
}

int list_bus(const char *bus, void *unused)
{
	char p[PATH_SZ];

	(void)unused;
	if (str_len(bus) >= NAME_SZ || PATH(p, "bus/", bus, "/devices") < 0 ||
	    dir_scan(p, list_dev, (void *)bus) < 0) {
		say(LOG_ERR, "%s: no such bus: %e", bus, errno);
		return -1;
	}
	return 0;
}
