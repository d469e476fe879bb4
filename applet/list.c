/* SPDX-License-Identifier: MIT */
/*
 * -l: every device of a bus, or of every bus that has drivers, sorted,
 * with its driver, the ids a rule can name it by, its driver_override
 * where one is set, authorized where it is not 1, and the rule that
 * names it (a set's, where the set takes the device or its IOMMU
 * group), held or not; then the rules whose device is absent. A line
 * each on stdout, made in its own buffer by line_put, every name and
 * value in it escaped as in say()'s messages: a device chooses its
 * serial, and a newline in it would make a line of its own.
 * Calls set.c, conf.c's rules, device.c, sysfs.c, log.c, parse.c and
 * mem.c.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>

#include "drvbind.h"

/*
 * The attributes that name a device in a set's ATTR=PATTERN, where it
 * has them: PCI's ids, a USB device's ids and serial, a USB interface's
 * class.
 */
static const char *const ids[] = { "vendor", "device", "idVendor", "idProduct", "serial", "bInterfaceClass" };

/* The device's attribute `name' into v, from its directory dir: 0, or -1 where it has none. */
static int attr_of(int dir, const char *name, char v[NAME_SZ])
{
	int fd = open_at(dir, name, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = fd_get(fd, v, NAME_SZ);
	fd_close(fd);
	return ret;
}

/* A device of an IOMMU group, and whether one matched the set. */
struct mates {
	const struct rule *set;
	int found;
};

static int mate_fn(const char *dev, void *ctx)
{
	struct mates *m = ctx;
	int group;

	return m->found = set_match(m->set, dev, &group);
}

/*
 * Does the set p take the device, whose directory is dir, as set.c's
 * set_look does? A device it matches; with iommu_group, every device of
 * the group of one it matches, but the group's bridges, which stay
 * where they are.
 */
static int set_takes(const struct rule *p, int dir, const char *dev)
{
	struct mates m = { p, 0 };
	char path[PATH_SZ], v[NAME_SZ];
	int group;

	m.found = set_match(p, dev, &group);
	if (!group)
		return m.found;
	if (attr_of(dir, "class", v) == 0 && glob_match("0x0604*", v))
		return 0;
	if (!m.found && link_base(dir, "iommu_group", v) == 0 && PATH(path, "kernel/iommu_groups/", v, "/devices") == 0)
		(void)dir_scan(path, mate_fn, &m);
	return m.found;
}

/*
 * The device's line, from its directory, opened once: O_PATH, since the
 * directory is only a base for the reads.
 */
static void list_dev(const char *bus, const char *dev)
{
	struct line l = { 0 };
	char p[PATH_SZ], v[NAME_SZ], ovr[NAME_SZ], auth[NAME_SZ];
	struct rule *r = rule_find(bus, dev), *s;
	int dir = PATH(p, "bus/", bus, "/devices/", dev) ? -1 : sys_open(p, O_PATH | O_DIRECTORY);
	struct look lk = { .bus = bus, .dev = dev, .dir = dir, .hold = -1, .bind = -1 };
	unsigned i;
	int o, a, held;

	/* -l does not expand sets: a device that one takes is named by it. */
	for (s = rules; !r && s < rules + conf.nrules; s++)
		if (s->s.set && !strcmp(s->bus, bus) && set_takes(s, dir, dev))
			r = s;

	line_put(&l, "%s/%s %s", bus, dev, dev_driver(&lk, v) < 0 ? "?" : drv_or_none(v));
	for (i = 0; i < sizeof ids / sizeof *ids; i++)
		if (attr_of(dir, ids[i], v) == 0 && *v)
			line_put(&l, " %s=%s", ids[i], v);
	if ((o = attr_of(dir, "driver_override", ovr) == 0 && strcmp(ovr, "(null)")))
		line_put(&l, " override=%s", ovr);
	if ((a = attr_of(dir, "authorized", auth) == 0 && strcmp(auth, "1")))
		line_put(&l, " authorized=%s", auth);
	fd_close(dir);
	if (r) {
		r->rep.listed = 1;
		/* What keeps other drivers away: the override the rule wrote, or authorized 0 for none. */
		held = (o && !strcmp(ovr, r->s.drv)) || (a && r->none && !strcmp(auth, "0"));
		line_put(&l, held ? " rule=%s held" : " rule=%s", r->s.drv);
	}
	line_write(&l, 1);
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
 * (cpu, clockevents, ...) has nothing to bind or keep away. Then the
 * rules whose device is not there: -l expands no set and finds no
 * device, so each rule's bus is still the one it names.
 */
int list_all(void)
{
	char bus[NAME_SZ], p[PATH_SZ], drv[NAME_SZ];
	const struct rule *r;
	int st = 0;

	bus[0] = '\0';
	while (dir_next("bus", bus) == 0 && bus[0]) {
		drv[0] = '\0';
		if (PATH(p, "bus/", bus, "/drivers") == 0 && dir_next(p, drv) == 0 && drv[0])
			st |= list_bus(bus);
	}
	for (r = rules; r < rules + conf.nrules; r++) {
		struct line l = { 0 };

		if (r->rep.listed)
			continue;
		line_put(&l, "%r absent rule=%s", r, r->s.drv);
		line_write(&l, 1);
	}
	return st;
}
