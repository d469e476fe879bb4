/* SPDX-License-Identifier: MIT */
/*
 * -l: every device of a bus, or of every bus that has drivers, sorted,
 * with its driver, the ids a rule can name it by, its driver_override
 * where one is set, authorized where it is not 1, and the rule that
 * names it, held or not; then the rules whose device is absent. A line
 * each on stdout, every name and value in it escaped as log.c's put_val
 * does: a device chooses its serial, and a newline in it would make a
 * line of its own.
 * Calls set.c, conf.c's rules, device.c, sysfs.c, log.c and mem.c.
 */
#include <string.h>

#include "drvbind.h"

/*
 * The attributes that name a device in a set's ATTR=PATTERN, where it
 * has them: PCI's ids, a USB device's ids and serial, a USB interface's
 * class.
 */
static const char *const ids[] = { "vendor", "device", "idVendor", "idProduct", "serial", "bInterfaceClass" };

/* " LABEL=VALUE" where the device's attribute `name' reads other than `unset'; its value in v. */
static int list_attr(const char *bus, const char *dev, const char *name, const char *label, const char *unset,
    char *v)
{
	char p[PATH_SZ];

	if (node_path(p, bus, "/devices/", dev, name) || attr_read(p, v, NAME_SZ) || !strcmp(v, unset))
		return 0;
	put_c(' ');
	put(label);
	put_c('=');
	put_val(v);
	return 1;
}

static void list_dev(const char *bus, const char *dev)
{
	char drv[NAME_SZ], ovr[NAME_SZ], auth[NAME_SZ];
	struct rule *r = rule_find(bus, dev), *p;
	struct look lk = { .bus = bus, .dev = dev, .dir = -1, .hold = -1, .bind = -1 };
	unsigned i;
	int o, a;

	/* -l does not expand sets: a device that one matches is named by it. */
	for (p = rules; !r && p < rules + conf.nrules; p++)
		if (p->s.set && !strcmp(p->bus, bus) && set_match(p, dev, &o))
			r = p;

	put_dev(bus, dev);
	put_c(' ');
	put_val(dev_driver(&lk, drv) < 0 ? "?" : drv_or_none(drv));
	for (i = 0; i < sizeof ids / sizeof *ids; i++)
		(void)list_attr(bus, dev, ids[i], ids[i], "", drv);
	o = list_attr(bus, dev, "driver_override", "override", "(null)", ovr);
	a = list_attr(bus, dev, "authorized", "authorized", "1", auth);
	if (r) {
		r->rep.listed = 1;
		put(" rule=");
		put_val(r->s.drv);
		/* What keeps other drivers away: the override the rule wrote, or authorized 0 for none. */
		if ((o && !strcmp(ovr, r->s.drv)) || (a && r->none && !strcmp(auth, "0")))
			put(" held");
	}
	put_c('\n');
	put_line(1);
}

/* The devices of one bus, in the order of their ids. */
int list_bus(const char *bus)
{
	char p[PATH_SZ], dev[NAME_SZ];

	dev[0] = '\0';
	if (str_len(bus) >= NAME_SZ || PATH(p, "bus/", bus, "/devices") < 0 || dir_next(p, dev) < 0) {
		say(LOG_ERR, "%s: no such bus: %m", bus);
		return -1;
	}
	for (; dev[0]; (void)dir_next(p, dev))
		list_dev(bus, dev);
	return 0;
}

/*
 * Every bus that has a driver, in the order of their names: one without
 * (cpu, clockevents, ...) has nothing to bind or keep away.
 */
int list_buses(void)
{
	char bus[NAME_SZ], p[PATH_SZ], drv[NAME_SZ];
	int st = 0;

	bus[0] = '\0';
	while (dir_next("bus", bus) == 0 && bus[0]) {
		drv[0] = '\0';
		if (PATH(p, "bus/", bus, "/drivers") == 0 && dir_next(p, drv) == 0 && drv[0])
			st |= list_bus(bus);
	}
	return st;
}

/* After every bus: the rules whose device is not there. */
void list_absent(void)
{
	int i;

	for (i = 0; i < conf.nrules; i++) {
		if (rules[i].rep.listed)
			continue;
		put_dev(rules[i].s.bus, rules[i].s.dev);
		put(" absent rule=");
		put_val(rules[i].s.drv);
		put_c('\n');
		put_line(1);
	}
}
