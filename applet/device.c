/* SPDX-License-Identifier: MIT */
/*
 * Devices and drivers: where a rule's device and its driver's files are,
 * which driver a device is on, finding a device on any bus, the ids a
 * driver's new_id takes, and asking modprobe for a missing driver.
 * Calls conf.c's rules, sysfs.c, proc.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "drvbind.h"

/* "bus/BUS/devices/DEVICE/ATTR" or "bus/BUS/drivers/DRIVER/ATTR" into p[PATH_SZ]. */
int node_path(char *p, const char *bus, const char *kind, const char *name, const char *attr)
{
	return path_join(p, PATH_SZ, "bus/", bus, kind, name, attr ? "/" : "", attr ? attr : "",
	    (const char *)0);
}

/* Not inlined: its callers pass the rule, not its bus and its device. */
__attribute__((noinline)) int dev_path(char *p, const struct rule *r, const char *attr)
{
	return node_path(p, r->bus, "/devices/", r->s.dev, attr);
}

/* node_path's file exists. */
static int node_exists(const char *bus, const char *kind, const char *name, const char *attr)
{
	char p[PATH_SZ];

	return node_path(p, bus, kind, name, attr) == 0 && sys_exists(p);
}

/* The driver's directory or attribute exists. */
int drv_has(const struct rule *r, const char *drv, const char *attr)
{
	return node_exists(r->bus, "/drivers/", drv, attr);
}

/* The device's bus link (attr NULL) or attribute exists. */
int dev_has(const struct rule *r, const char *attr)
{
	return node_exists(r->bus, "/devices/", r->s.dev, attr);
}

/*
 * The driver a device is bound to now, "" for none. dirfd: the device's
 * directory, open (rule.c's look), where its link is one step away; or
 * -1, from the root.
 */
int dev_driver(int dirfd, const char *bus, const char *dev, char *drv)
{
	char p[PATH_SZ];
	const char *link = "driver";

	drv[0] = '\0';
	if (dirfd < 0) {
		if (node_path(p, bus, "/devices/", dev, link) < 0)
			return -1;
		link = p;
		dirfd = sys_dirfd();
	}
	return link_base(dirfd, link, drv) < 0 && errno != ENOENT ? -1 : 0;
}

/* Writes val to node_path's file; fd: that file open already, or -1. */
int node_store(const char *bus, const char *kind, const char *name, const char *attr, const char *val, int fd)
{
	char p[PATH_SZ];

	if (node_path(p, bus, kind, name, attr) < 0)
		return -1;
	return attr_store(fd, p, val);
}

int dev_write(const struct rule *r, const char *attr, const char *val)
{
	return node_store(r->bus, "/devices/", r->s.dev, attr, val, -1);
}

/* fd: the attribute open already, or -1. */
int drv_store(const struct rule *r, const char *drv, const char *attr, const char *val, int fd)
{
	return node_store(r->bus, "/drivers/", drv, attr, val, fd);
}

/* Not inlined: each of its five callers would pass drv_store's -1 itself. */
__attribute__((noinline)) int drv_write(const struct rule *r, const char *drv, const char *attr, const char *val)
{
	return drv_store(r, drv, attr, val, -1);
}

struct find_ctx {
	const char *dev;
	char hit[2][NAME_SZ];
	int hits;
};

static int find_fn(const char *bus, void *ctx)
{
	struct find_ctx *c = ctx;

	if (str_len(bus) >= NAME_SZ || !node_exists(bus, "/devices/", c->dev, NULL))
		return 0;
	copy(c->hit[c->hits > 0], bus);
	return ++c->hits > 1;
}

/*
 * Sets r->bus once the device is there. Without a bus in the rule every
 * bus is searched; a bus id found on two buses is the rule's failure.
 * Returns 1 found, 0 not (yet), -1 failed.
 */
int dev_find(struct rule *r)
{
	struct find_ctx c = { .dev = r->s.dev };

	if (r->s.bus[0])
		return dev_has(r, NULL);
	if (dir_scan("bus", find_fn, &c) < 0 || !c.hits)
		return 0;
	if (c.hits > 1) {
		int lo = strcmp(c.hit[0], c.hit[1]) > 0;
		say(LOG_ERR, "%s: device on both %s and %s", r->s.dev, c.hit[lo], c.hit[!lo]);
		r->state = FAILED;
		return -1;
	}
	copy(r->bus, c.hit[0]);
	return 1;
}

/* Reads an id attribute without its "0x": new_id takes bare hex and checks it. */
static int id_read(const struct rule *r, const char *attr, char *out)
{
	char p[PATH_SZ];

	if (dev_path(p, r, attr) < 0 || attr_read(p, out, 16) < 0)
		return -1;
	if (out[0] == '0' && out[1] == 'x')
		copy(out, out + 2);
	return 0;
}

/*
 * The id a driver's new_id takes for this device: PCI "vendor device";
 * a USB interface "idVendor idProduct class" of its parent device, the
 * class so that the new id does not match every interface of the device.
 * -1 where it has neither; its one caller then keeps the bind's failure.
 */
int dev_id(const struct rule *r, char *id, size_t size)
{
	char a[16], b[16], c[16];
	const char *sep = "";

	c[0] = '\0';
	if (id_read(r, "vendor", a) < 0 || id_read(r, "device", b) < 0) {
		if (id_read(r, "../idVendor", a) < 0 || id_read(r, "../idProduct", b) < 0 ||
		    id_read(r, "bInterfaceClass", c) < 0)
			return -1;
		sep = " ";
	}
	return path_join(id, size, a, " ", b, sep, c, (const char *)0);
}

/*
 * Asks modprobe for a driver once, without waiting: its uevent says when
 * it is there. Once between the rules that wait for it: 64 rules for
 * vfio-pci would start 64 modprobes at once, each loading the same module.
 */
void drv_request(struct rule *r)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	char *argv[] = { (char *)conf.modprobe, "-q", "--", r->s.drv, NULL };
	struct rule *q;
	pid_t pid;

	if (r->asked || !*conf.modprobe)
		return;
	r->asked = 1;
	for (q = rules; q < rules + conf.nrules; q++)
		if (q != r && q->asked && q->state == WAITING && !strcmp(q->s.drv, r->s.drv))
			return;
	say(LOG_DEBUG, "asking %s for %s", conf.modprobe, r->s.drv);
	pid = proc_fork();
	if (pid == 0) {
		sig_set(SIGPIPE, SIG_DFL);
		execve(conf.modprobe, argv, envp);
		_exit(127);
	}
	if (pid < 0)
		say(LOG_ERR, "fork: %m");
}
