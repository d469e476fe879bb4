/* SPDX-License-Identifier: MIT */
/*
 * -l: every device of a bus, or of every bus, with its driver, its
 * driver_override where one is set, authorized where it is not 1, and
 * the rule that names it, held or not; then the rules whose device is
 * absent. A line each on stdout.
 * Calls set.c, conf.c's rules, device.c, sysfs.c, log.c and mem.c.
 */
#include <errno.h>
#include <string.h>

#include "drvbind.h"

/* The rules that named a device listed: the others' devices are absent. */
static char listed[DEVICES_MAX];

/* " LABEL=VALUE" where the device's attribute `name' reads other than `unset'; its value in v. */
static int list_attr(const char *bus, const char *dev, const char *name, const char *label, const char *unset,
    char *v)
{
	char p[PATH_SZ];

	if (node_path(p, bus, "/devices/", dev, name) || attr_read(p, v, NAME_SZ) || !strcmp(v, unset))
		return 0;
	put(label);
	put(v);
	return 1;
}

static int list_dev(const char *dev, void *bus)
{
	char drv[NAME_SZ], ovr[NAME_SZ], auth[NAME_SZ];
	struct rule *r = rule_find(bus, dev), *p;
	int o, a;

	/* -l does not expand sets: a device that one matches is named by it. */
	for (p = rules; !r && p < rules + conf.nrules; p++)
		if (p->s.set && !strcmp(p->bus, bus) && set_match(p, dev, &o))
			r = p;

	put(bus);
	put_c('/');
	put(dev);
	put_c(' ');
	put(dev_driver(-1, bus, dev, drv) < 0 ? "?" : drv_or_none(drv));
	o = list_attr(bus, dev, "driver_override", " override=", "(null)", ovr);
	a = list_attr(bus, dev, "authorized", " authorized=", "1", auth);
	if (r) {
		listed[r - rules] = 1;
		put(" rule=");
		put(r->s.drv);
		/* What keeps other drivers away: the override the rule wrote, or authorized 0 for none. */
		if ((o && !strcmp(ovr, r->s.drv)) || (a && r->none && !strcmp(auth, "0")))
			put(" held");
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

/* After every bus: the rules whose device is not there. */
void list_absent(void)
{
	int i;

	for (i = 0; i < conf.nrules; i++) {
		if (listed[i])
			continue;
		if (rules[i].s.bus[0]) {
			put(rules[i].s.bus);
			put_c('/');
		}
		put(rules[i].s.dev);
		put(" absent rule=");
		put(rules[i].s.drv);
		put_c('\n');
		put_line(1);
	}
}
