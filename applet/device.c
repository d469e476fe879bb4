/* SPDX-License-Identifier: MIT */
/*
 * Devices and drivers: where a device and its driver's files are, which
 * driver a device is on, the buses a bus id is on, the ids a driver's
 * new_id takes, and asking modprobe for a missing driver. A device is a
 * look's (struct look: its bus and bus id, and what the look has open),
 * or is named by its bus and id; nothing here knows of rules.
 * Calls conf.c, sysfs.c, proc.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "drvbind.h"

/* "bus/BUS/KIND/NAME/ATTR" into p[PATH_SZ]: KIND is "/devices/" or "/drivers/". */
int node_path(char *p, const char *bus, const char *kind, const char *name, const char *attr)
{
	return path_join(p, PATH_SZ, "bus/", bus, kind, name, "/", attr, (const char *)0);
}

/* The device's attribute `attr'. */
int dev_path(char *p, const struct look *lk, const char *attr)
{
	return node_path(p, lk->bus, "/devices/", lk->dev, attr);
}

/* Device dev's bus link is there: the device is on bus `bus'. */
static int dev_on(const char *bus, const char *dev)
{
	char p[PATH_SZ];

	return PATH(p, "bus/", bus, "/devices/", dev) == 0 && sys_exists(p);
}

int dev_there(const struct look *lk)
{
	return dev_on(lk->bus, lk->dev);
}

/*
 * The driver the device is bound to now, "" for none: from its
 * directory where the look has it open, its link one step away; else
 * from the root.
 */
int dev_driver(const struct look *lk, char *drv)
{
	char p[PATH_SZ];

	drv[0] = '\0';
	if (lk->dir >= 0)
		return link_base(lk->dir, "driver", drv) < 0 && errno != ENOENT ? -1 : 0;
	if (dev_path(p, lk, "driver") < 0)
		return -1;
	return link_base(sys_dirfd(), p, drv) < 0 && errno != ENOENT ? -1 : 0;
}

int dev_write(const struct look *lk, const char *attr, const char *val)
{
	char p[PATH_SZ];

	if (dev_path(p, lk, attr) < 0)
		return -1;
	return attr_write(p, val);
}

/* The driver's attribute exists, on the device's bus. */
int drv_has(const struct look *lk, const char *drv, const char *attr)
{
	char p[PATH_SZ];

	return node_path(p, lk->bus, "/drivers/", drv, attr) == 0 && sys_exists(p);
}

int drv_write(const struct look *lk, const char *drv, const char *attr, const char *val)
{
	char p[PATH_SZ];

	if (node_path(p, lk->bus, "/drivers/", drv, attr) < 0)
		return -1;
	return attr_write(p, val);
}

/* Asks the bus to probe the device: drivers_probe binds it to the first driver that takes it. */
int drivers_probe(const struct look *lk)
{
	char p[PATH_SZ];

	if (PATH(p, "bus/", lk->bus, "/drivers_probe") < 0)
		return -1;
	return attr_write(p, lk->dev);
}

/*
 * The buses the bus id `dev' is on, into found: the number found, 0 to
 * 2 (where there are two, a third is not looked for).
 */
struct find_ctx {
	const char *dev;
	char (*found)[NAME_SZ];
	int n;
};

static int find_fn(const char *bus, void *ctx)
{
	struct find_ctx *c = ctx;

	if (str_len(bus) >= NAME_SZ || !dev_on(bus, c->dev))
		return 0;
	copy(c->found[c->n], bus);
	return ++c->n == 2;
}

int bus_find(const char *dev, char found[2][NAME_SZ])
{
	struct find_ctx c = { .dev = dev, .found = found };

	if (dir_scan("bus", find_fn, &c) < 0)
		return 0;
	return c.n;
}

/* Reads an id attribute without its "0x": new_id takes bare hex and checks it. */
static int id_read(const struct look *lk, const char *attr, char *out)
{
	char p[PATH_SZ];

	if (dev_path(p, lk, attr) < 0 || attr_read(p, out, 16) < 0)
		return -1;
	if (out[0] == '0' && out[1] == 'x')
		copy(out, out + 2);
	return 0;
}

/*
 * The id a driver's new_id takes for this device: PCI "vendor device";
 * a USB interface "idVendor idProduct class" of its parent device, the
 * class so that the new id does not match every interface of the device.
 * -1 where it has neither.
 */
int dev_id(const struct look *lk, char *id, size_t size)
{
	char a[16], b[16], c[16];

	if (id_read(lk, "vendor", a) == 0 && id_read(lk, "device", b) == 0)
		return path_join(id, size, a, " ", b, (const char *)0);
	if (id_read(lk, "../idVendor", a) < 0 || id_read(lk, "../idProduct", b) < 0 ||
	    id_read(lk, "bInterfaceClass", c) < 0)
		return -1;
	return path_join(id, size, a, " ", b, " ", c, (const char *)0);
}

/* Starts modprobe for a driver, without waiting: its uevent says when it is there. */
void drv_request(const char *drv)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	char *argv[] = { (char *)conf.modprobe, "-q", "--", (char *)drv, NULL };
	pid_t pid;

	say(LOG_DEBUG, "asking %s for %s", conf.modprobe, drv);
	pid = proc_fork();
	if (pid == 0) {
		sig_set(SIGPIPE, SIG_DFL);
		execve(conf.modprobe, argv, envp);
		_exit(127);
	}
	if (pid < 0)
		say(LOG_ERR, "fork: %m");
}
