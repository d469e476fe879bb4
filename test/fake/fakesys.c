/* SPDX-License-Identifier: MIT */
/*
 * fakesys BACKDIR LOGFILE MOUNTPOINT [FUSE-OPTION...]
 *
 * A fake sysfs with a fake driver core behind it.  MOUNTPOINT shows
 * BACKDIR (plain directories, files and symlinks in the shapes of
 * /sys); writes to bind, unbind, drivers_probe, driver_override,
 * new_id, remove_id, match_busid, a USB interface's authorized and a
 * PCI PF's sriov_numvfs and sriov_drivers_autoprobe answer and move
 * links the way the Linux driver core does, synchronously, one write()
 * being one sysfs store.  Every write is appended to LOGFILE as
 *	RELPATH VALUE -> RESULT
 * and bind/unbind/add/remove send uevents as the kernel would.  A file
 * with no write mode (an attribute without a store) refuses to open for
 * writing with EACCES, root or not, as kernfs does.
 *
 * authorized (USB interfaces, since 4.4; a USB device's own is a plain
 * file here): kstrtobool's 0/n/f/off clears it and unbinds the driver
 * as device_release_driver does, 1/y/t/on sets it and probes nothing,
 * anything else is EINVAL.  While it reads 0 every probe of the
 * interface fails with ENODEV: bind answers it (after EBUSY), and
 * drivers_probe, new_id and driver_attach pass the interface over.
 *
 * SR-IOV (6.1's drivers/pci/iov.c; part 3 and store_numvfs): a PCI
 * physical function has sriov_totalvfs, sriov_numvfs (the count of its
 * VFs), sriov_offset, sriov_stride, sriov_vf_device and
 * sriov_drivers_autoprobe (kstrtobool, or EINVAL).  sriov_numvfs takes
 * kstrtou16's numbers (else EINVAL) up to sriov_totalvfs (else ERANGE);
 * the count it has is done already; with no driver, or one without
 * sriov_configure (no .fake_sriov), ENOENT; another count while VFs
 * are enabled EBUSY.  N from 0 makes N VFs beside the PF, each with
 * the PF's vendor, sriov_vf_device, driver_override, an IOMMU group of
 * its own where the PF has one, physfn and the PF's virtfnI links, an
 * add and a change uevent, then device_attach (a bind uevent where a
 * driver takes it); then the PF's change uevent.  0 removes them in
 * order, each unbound first.  A VF is probed only while its PF's
 * sriov_drivers_autoprobe reads 1 or with its driver_override set:
 * bind says ENODEV, drivers_probe and driver_attach pass it over.  A PF
 * driver's remove() disables SR-IOV, or leaves it (.fake_sriov).
 *
 * The root's .fake_ctl is the driver core's own hand: through it the
 * test helper replays driver_register, driver_unregister and device_add
 * step by step (the files and uevents in between are the helper's), and
 * an endurance run unplugs and reloads without a fork each.  One
 * command a write, never logged, never faulted; part 5 lists the verbs.
 * It can be opened and written by its path but is never listed.
 *
 * Names starting with ".fake" hold what a real kernel keeps inside:
 *	bus/B/drivers/D/.fake_match	bus ids the static id table matches, or *
 *	bus/B/drivers/D/.fake_probe	"ERRNO [ID]" or "silent [ID]": probe outcome
 *	bus/B/drivers/D/.fake_dynids	ids added through new_id
 *	bus/B/drivers/D/.fake_busids	bus ids added through match_busid (a
 *					driver with it or with match_busid
 *					probes only those)
 *	bus/pci/drivers/D/.fake_sriov	the driver has sriov_configure, and
 *					its remove() "disable"s SR-IOV (its
 *					VFs go: ixgbe, i40e) or "keep"s it
 *					(nvme)
 *	.fake_faults			"RELPATH ACTION [always]" lines
 * where ACTION is an errno name (the write fails, nothing happens),
 * "short", "pass" (the write goes through: a later line takes the
 * next write), "unplug:ID" (the write happens, then device ID is
 * hot-unplugged), "unregister:BUS/DRIVER" (the write happens, then the
 * driver unregisters: its devices are unbound and its directory goes)
 * "stop" (the write happens, then the process that wrote it is stopped
 * with SIGSTOP, for the test to let go with SIGCONT once it has made the
 * kernel's next steps: a deadline of the writer's cannot pass meanwhile
 * however slow the machine)
 * or "probing:DRIVER" (DRIVER of the device's bus was probing the
 * device the attribute belongs to: a store takes the device lock, so it
 * waits for that probe, which binds the device whatever the store then
 * says; then the write happens; but from 7.0 a store to driver_override
 * takes no device lock: it happens at once and the probe runs on, see
 * below)
 *	bus/B/devices/ID/../.fake_adding
 *				the device's device_add() is under way: see
 *				"The kernel's version" in part 3
 *	bus/B/devices/ID/../.fake_probing
 *				DRIVER, whose probe of the device is running
 *	.fake_kernel		the kernel's version, "7.1": the orderings
 *				that changed (part 3); none: 6.1 to 6.18
 * and are invisible through the mount (but for .fake_ctl, above).
 *
 * With FAKESYS_TIMES=FILE in the environment, every logged write is also
 * appended to FILE behind its CLOCK_MONOTONIC time in ns, taken when the
 * store is done (make bench measures latency with it).
 *
 * The file is in seven parts, each leaning only on the ones before it:
 *	1. Common ground	errno names, bounded formatting, path pieces
 *	2. The backing tree	BACKDIR's files, line files and links
 *	3. The driver core	devices and drivers: find, match, probe, the
 *				bind links and uevents, attach and detach;
 *				a PF's VFs made and removed (SR-IOV)
 *	4. The stores		what a write to each attribute does
 *	5. The control verbs	.fake_ctl
 *	6. The faults		.fake_faults, before a store and after it
 *	7. The mount		FUSE's operations, the write log, main
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fuse.h>

#include "uevent.h"

enum {
	PATHSZ = 4096,
	PAGESZ = 4096,		/* sysfs hands a store at most one page */
	FILESZ = 65536,		/* the .fake files are small */
	MAXDEPTH = 64,
	BUSIDSZ = 32,		/* usbip's BUSID_SIZE */
};

static int rootfd = -1, logfd = -1, nlfd = -1, timefd = -1;
static char backroot[PATHSZ];

/*
 * ==== 1. Common ground ====
 *
 * The log and .fake_faults speak errnos by the kernel's names, so a log
 * line reads as the tool's strace would show the write.  Every path is
 * built with fmt(), which fails where snprintf would clip: a clipped
 * path names another file.
 */

static const struct {
	const char *name;
	int num;
} errnames[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EINTR", EINTR },
	{ "EIO", EIO }, { "ENXIO", ENXIO }, { "E2BIG", E2BIG },
	{ "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EACCES", EACCES },
	{ "EFAULT", EFAULT }, { "EBUSY", EBUSY }, { "EEXIST", EEXIST },
	{ "ENODEV", ENODEV }, { "ENOTDIR", ENOTDIR }, { "EISDIR", EISDIR },
	{ "EINVAL", EINVAL }, { "ENOSPC", ENOSPC }, { "EROFS", EROFS },
	{ "ENAMETOOLONG", ENAMETOOLONG }, { "ENOSYS", ENOSYS },
	{ "ETIMEDOUT", ETIMEDOUT }, { "ENOTCONN", ENOTCONN },
	{ "ERANGE", ERANGE },
};

static const char *errname(int e)
{
	static char buf[32];
	size_t i;

	for (i = 0; i < sizeof errnames / sizeof *errnames; i++)
		if (errnames[i].num == e)
			return errnames[i].name;
	snprintf(buf, sizeof buf, "E%d", e);
	return buf;
}

static int errnum(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof errnames / sizeof *errnames; i++)
		if (!strcmp(errnames[i].name, s))
			return errnames[i].num;
	return 0;
}

/* snprintf that reports truncation instead of hiding it */
__attribute__((format(printf, 3, 4)))
static int fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	int r;

	va_start(ap, f);
	r = vsnprintf(buf, n, f, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '\n')
		s[n - 1] = 0;
}

static const char *base(const char *s)
{
	const char *p = strrchr(s, '/');

	return p ? p + 1 : s;
}

/* "/a/b" as FUSE passes it -> "a/b" below the backing root */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

/* the directory (a device's) that the attribute r belongs to */
static int attr_dir(const char *r, char *dir, size_t n)
{
	char *slash;

	if (fmt(dir, n, "%s", r))
		return -1;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/*
 * ==== 2. The backing tree ====
 *
 * BACKDIR is the fake kernel's whole state: nothing is kept in memory,
 * so what a test lays out in $FAKE/back before or while the mount runs
 * is what every store sees, and what a store leaves there is what the
 * test reads back.  Paths are relative to it (r) and opened through
 * rootfd.  The kernel's lists (a driver's ids, .fake_faults) are line
 * files, one entry a line.  Links are relative, in sysfs's shapes, and
 * resolved here by hand so that no lookup leaves the tree.
 */

/* the control file: seen by path, never listed, its writes never logged */
static const char ctl_name[] = ".fake_ctl";

/* below a .fake name: the kernel's insides, which sysfs does not show */
static int hidden(const char *r)
{
	const char *p = r;

	if (!strcmp(r, ctl_name))
		return 0;

	for (;;) {
		if (!strncmp(p, ".fake", 5))
			return 1;
		p = strchr(p, '/');
		if (!p)
			return 0;
		p++;
	}
}

/* a bus id, driver or bus name as the kernel could have it */
static int name_ok(const char *s)
{
	return *s && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/') &&
	    strncmp(s, ".fake", 5);
}

static ssize_t file_read(const char *r, char *buf, size_t n)
{
	ssize_t len, got = 0;
	int fd;

	fd = openat(rootfd, r, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)got < n - 1) {
		len = read(fd, buf + got, n - 1 - got);
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0) {
			close(fd);
			return -1;
		}
		if (!len)
			break;
		got += len;
	}
	close(fd);
	buf[got] = 0;
	return got;
}

static int file_write(const char *r, const char *s, size_t len)
{
	ssize_t n;
	size_t done = 0;
	int fd;

	fd = openat(rootfd, r, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (done < len) {
		n = write(fd, s + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		done += n;
	}
	return close(fd);
}

static int exists(const char *r)
{
	struct stat st;

	return !fstatat(rootfd, r, &st, AT_SYMLINK_NOFOLLOW);
}

/*
 * one regular file of the directory from, copied into the directory to,
 * with its mode (a read-only attribute stays so)
 */
static void file_copy(const char *from, const char *to, const char *name)
{
	char p[PATHSZ], buf[PAGESZ];
	struct stat st;
	ssize_t len;

	if (fmt(p, sizeof p, "%s/%s", from, name) || fstatat(rootfd, p, &st, 0))
		return;
	len = file_read(p, buf, sizeof buf);
	if (len < 0 || fmt(p, sizeof p, "%s/%s", to, name) ||
	    file_write(p, buf, (size_t)len))
		return;
	fchmodat(rootfd, p, st.st_mode & 07777, 0);
}

/* one attribute value without its newline; "" when absent */
static int attr_get(char *buf, size_t n, const char *dir, const char *name)
{
	char p[PATHSZ];

	buf[0] = 0;
	if (fmt(p, sizeof p, "%s/%s", dir, name) || file_read(p, buf, n) < 0)
		return -1;
	chomp(buf);
	return 0;
}

/* an attribute read as a decimal number; dflt when absent or not one */
static unsigned long attr_num(const char *dir, const char *name,
    unsigned long dflt)
{
	char v[64], *end;
	unsigned long n;

	if (attr_get(v, sizeof v, dir, name) || !v[0])
		return dflt;
	errno = 0;
	n = strtoul(v, &end, 10);
	return errno || *end ? dflt : n;
}

static int lines_has(const char *r, const char *val)
{
	static char buf[FILESZ];
	char *line, *save;

	if (file_read(r, buf, sizeof buf) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save))
		if (!strcmp(line, val))
			return 1;
	return 0;
}

static int lines_add(const char *r, const char *val)
{
	char line[PAGESZ + 2];
	int fd, n;

	if (fmt(line, sizeof line, "%s\n", val))
		return -1;
	fd = openat(rootfd, r, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	n = strlen(line);
	if (write(fd, line, n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * Drop lines equal to val; with first, only the first line that is val
 * or starts with "val " (USB's remove_id compares vendor and product).
 */
static int lines_del(const char *r, const char *val, int first)
{
	static char buf[FILESZ], out[FILESZ];
	char *line, *save;
	size_t len = 0, n, vl = strlen(val);
	int done = 0;

	if (file_read(r, buf, sizeof buf) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		if (!done && (!strcmp(line, val) || (first &&
		    !strncmp(line, val, vl) && line[vl] == ' '))) {
			done = first;
			continue;
		}
		n = strlen(line);
		memcpy(out + len, line, n);
		out[len + n] = '\n';
		len += n + 1;
	}
	return file_write(r, out, len);
}

/* dir + relative symlink target -> path below the root, ".." resolved */
static int link_join(char *out, size_t n, const char *dir, const char *target)
{
	char tmp[PATHSZ], *comp[MAXDEPTH], *c, *save;
	size_t len = 0, k;
	int depth = 0, i;

	if (target[0] == '/' || fmt(tmp, sizeof tmp, "%s/%s", dir, target)) {
		errno = EINVAL;
		return -1;
	}
	for (c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (!depth) {
				errno = EINVAL;
				return -1;
			}
			depth--;
			continue;
		}
		if (depth == MAXDEPTH) {
			errno = ENAMETOOLONG;
			return -1;
		}
		comp[depth++] = c;
	}
	out[0] = 0;
	for (i = 0; i < depth; i++) {
		k = strlen(comp[i]);
		if (len + k + 2 > n) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (i)
			out[len++] = '/';
		memcpy(out + len, comp[i], k + 1);
		len += k;
	}
	return 0;
}

static int link_read(const char *r, char *buf, size_t n)
{
	ssize_t len = readlinkat(rootfd, r, buf, n);

	if (len < 0)
		return -1;
	if ((size_t)len == n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[len] = 0;
	return 0;
}

/* "../" once per component of a path below the root */
static int updirs(char *out, size_t n, const char *r)
{
	const char *p;
	size_t len = 0;

	out[0] = 0;
	for (p = r; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL) {
		if (len + 4 > n) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(out + len, "../", 4);
		len += 3;
	}
	return 0;
}

/*
 * A directory's entries sorted by name: the kernel walks its lists in
 * the order things were added, which a test controls by their names.
 */
static int scan(const char *dir, struct dirent ***list)
{
	char p[PATHSZ];

	if (fmt(p, sizeof p, "%s/%s", backroot, dir))
		return -1;
	return scandir(p, list, NULL, alphasort);
}

static void scan_free(struct dirent **list, int n)
{
	while (n-- > 0)
		free(list[n]);
	free(list);
}

static int rmtree_one(const char *p, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p) ? -1 : 0;
}

/* r and everything below it, links not followed */
static void rmtree(const char *r)
{
	char p[PATHSZ];

	if (!fmt(p, sizeof p, "%s/%s", backroot, r))
		nftw(p, rmtree_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * ==== 3. The driver core ====
 *
 * What drivers/base does between a store and its answer.  A bus id
 * names a device through bus/B/devices/ID; the bus's match() and the
 * driver's probe() decide whether a driver takes it; a binding is the
 * two links driver_bound() makes (the device's driver, the driver's
 * entry for it) and the bind uevent, and releasing it the reverse and
 * the unbind uevent.  device_attach, driver_attach, driver_detach and
 * device_del walk these for the stores that bind or release many at
 * once and for the control verbs.  Last, SR-IOV: the VFs a PF's driver
 * makes and removes, and the one link back (links_drop) from releasing
 * a driver to its remove(), declared ahead.
 */

/*
 * The kernel's version, as the root's .fake_kernel says ("7.1"; the
 * control verb kernel writes it), and what changed with it that a tool
 * can see. Without the file, the orderings of 6.1 to 6.18, which the
 * rest of this file describes. A stable kernel that took a change
 * behaves as the first release that had it: write that one.
 *   7.0  driver_override is the driver core's own, guarded by a spinlock
 *        of its own (6.12.y took it too): a store no longer takes the
 *        device lock, so it does not wait for a probe running on the
 *        device, which then binds the driver it matched before the
 *        override came (probe_begin, probe_end)
 *   7.1  a device may be probed only once device_add() has finished,
 *        after its add uevent (a2225b6e834a, "driver core: Don't let a
 *        device probe until it's ready"): see dev_unready
 */
static int kernel_at(unsigned long major, unsigned long minor)
{
	char buf[64], *end;
	unsigned long ma, mi = 0;

	if (file_read(".fake_kernel", buf, sizeof buf) <= 0)
		return 0;
	ma = strtoul(buf, &end, 10);
	if (*end == '.')
		mi = strtoul(end + 1, NULL, 10);
	return ma > major || (ma == major && mi >= minor);
}

/*
 * device_add() under way: the device is on its bus (its directory,
 * attributes and bus link; its add uevent may be out) and
 * bus_probe_device has not run yet. A test marks it so with
 * .fake_adding in the device's directory; the control verb ready
 * finishes device_add.
 */
static int dev_adding(const char *dev)
{
	char p[PATHSZ];

	return !fmt(p, sizeof p, "%s/.fake_adding", dev) && exists(p);
}

/*
 * From 7.1, a device whose device_add() is under way is not ready to
 * probe: __driver_probe_device answers EPROBE_DEFER after the match
 * and the check for a driver (and puts nothing on the deferred list).
 * bind says EAGAIN; drivers_probe, through device_attach, stops at the
 * first driver that matches and says EINVAL (nothing matches: 0);
 * driver_attach (new_id, a driver registering) passes the device over.
 * device_add then probes it itself (ready). Before 7.1 a probe in that
 * window binds as at any other time.
 */
static int dev_unready(const char *dev)
{
	return dev_adding(dev) && kernel_at(7, 1);
}

/* bus/B/devices/ID -> its device directory below the root */
static int dev_find(const char *bus, const char *id, char *dev, size_t n)
{
	char p[PATHSZ], dir[PATHSZ], t[PATHSZ];
	struct stat st;

	if (!name_ok(id) || fmt(dir, sizeof dir, "bus/%s/devices", bus) ||
	    fmt(p, sizeof p, "%s/%s", dir, id) || link_read(p, t, sizeof t) ||
	    link_join(dev, n, dir, t) || fstatat(rootfd, dev, &st, 0) ||
	    !S_ISDIR(st.st_mode))
		return -ENODEV;
	return 0;
}

/* name of the driver the device is bound to; 0 when unbound */
static int dev_driver(const char *dev, char *drv, size_t n)
{
	char p[PATHSZ], t[PATHSZ];

	drv[0] = 0;
	if (fmt(p, sizeof p, "%s/driver", dev) || link_read(p, t, sizeof t))
		return 0;
	if (fmt(drv, n, "%s", base(t)))
		return 0;
	return 1;
}

/* the bus the device is on, as its subsystem link says */
static int dev_bus(const char *dev, char *bus, size_t n)
{
	char p[PATHSZ], t[PATHSZ];

	if (fmt(p, sizeof p, "%s/subsystem", dev) || link_read(p, t, sizeof t))
		return -1;
	return fmt(bus, n, "%s", base(t));
}

/* a driver's directory as the kernel could have it; ENODEV when absent */
static int drv_dir(const char *bus, const char *drv, char *dir, size_t n)
{
	struct stat st;

	if (!name_ok(bus) || !name_ok(drv) ||
	    fmt(dir, n, "bus/%s/drivers/%s", bus, drv) ||
	    fstatat(rootfd, dir, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
		return -ENODEV;
	return 0;
}

/* a device's uevent: its bus, and its driver for bind */
static void dev_event(const char *action, const char *dev, const char *bus,
    const char *drv)
{
	char devpath[PATHSZ], sub[PATHSZ], dkey[PATHSZ];
	const char *kv[2];

	if (nlfd < 0 || fmt(devpath, sizeof devpath, "/%s", dev) ||
	    fmt(sub, sizeof sub, "SUBSYSTEM=%s", bus))
		return;
	kv[0] = sub;
	if (drv && !fmt(dkey, sizeof dkey, "DRIVER=%s", drv)) {
		kv[1] = dkey;
		uevent_send(nlfd, action, devpath, kv, 2);
	} else {
		uevent_send(nlfd, action, devpath, kv, 1);
	}
}

/* a driver's own uevent (its kobject's, in the drivers subsystem) */
static void drv_event(const char *action, const char *dir)
{
	const char *kv[] = { "SUBSYSTEM=drivers" };
	char p[PATHSZ];

	if (nlfd >= 0 && !fmt(p, sizeof p, "/%s", dir))
		uevent_send(nlfd, action, p, kv, 1);
}

/* the links a bound device has, in the kernel's relative shapes */
static int links_make(const char *bus, const char *drv, const char *id,
    const char *dev)
{
	char p[PATHSZ], t[PATHSZ], up[PATHSZ];

	if (updirs(up, sizeof up, dev) ||
	    fmt(p, sizeof p, "%s/driver", dev) ||
	    fmt(t, sizeof t, "%sbus/%s/drivers/%s", up, bus, drv) ||
	    symlinkat(t, rootfd, p))
		return -EIO;
	if (fmt(p, sizeof p, "bus/%s/drivers/%s/%s", bus, drv, id) ||
	    fmt(t, sizeof t, "../../../../%s", dev) ||
	    symlinkat(t, rootfd, p)) {
		fmt(p, sizeof p, "%s/driver", dev);
		unlinkat(rootfd, p, 0);
		return -EIO;
	}
	dev_event("bind", dev, bus, drv);
	return 0;
}

/* the PF driver's remove(), at the end of this part (SR-IOV) */
static void sriov_driver_remove(const char *bus, const char *drv,
    const char *dev);

/*
 * device_release_driver: the links go first, then the driver's remove()
 * runs (a PF's may disable SR-IOV: its VFs go), then the unbind uevent
 */
static void links_drop(const char *bus, const char *drv, const char *id,
    const char *dev)
{
	char p[PATHSZ];

	if (!fmt(p, sizeof p, "%s/driver", dev))
		unlinkat(rootfd, p, 0);
	if (!fmt(p, sizeof p, "bus/%s/drivers/%s/%s", bus, drv, id))
		unlinkat(rootfd, p, 0);
	sriov_driver_remove(bus, drv, dev);
	dev_event("unbind", dev, bus, NULL);
}

/* the id new_id takes for this device: "vvvv dddd", USB also "... cc" */
static int dev_ids(const char *dev, char *two, char *three, size_t n)
{
	char v[64], d[64], c[64], parent[PATHSZ];
	const char *vdir = dev;
	char *slash;

	two[0] = three[0] = 0;
	if (!attr_get(v, sizeof v, dev, "vendor") &&
	    !attr_get(d, sizeof d, dev, "device"))
		return fmt(two, n, "%04lx %04lx", strtoul(v, NULL, 16),
		    strtoul(d, NULL, 16));
	if (fmt(parent, sizeof parent, "%s", dev))
		return -1;
	slash = strrchr(parent, '/');
	if (attr_get(v, sizeof v, dev, "idVendor")) {
		/* a USB interface: the ids are its device's */
		if (!slash)
			return -1;
		*slash = 0;
		vdir = parent;
		if (attr_get(v, sizeof v, vdir, "idVendor"))
			return -1;
	}
	if (attr_get(d, sizeof d, vdir, "idProduct") ||
	    fmt(two, n, "%04lx %04lx", strtoul(v, NULL, 16),
	    strtoul(d, NULL, 16)))
		return -1;
	if (!attr_get(c, sizeof c, dev, "bInterfaceClass") &&
	    fmt(three, n, "%s %02lx", two, strtoul(c, NULL, 16)))
		return -1;
	return 0;
}

/*
 * The bus's match(): driver_override, when set, names the only driver
 * that may take the device, id tables ignored; otherwise the static
 * table (.fake_match) or the dynamic ids (.fake_dynids).
 */
static int drv_match(const char *bus, const char *drv, const char *id,
    const char *dev)
{
	char ov[PAGESZ + 1], d[PATHSZ], p[PATHSZ], two[64], three[64];

	/*
	 * pci_device_add adds the device with match_driver false, which
	 * pci_bus_add_device sets after device_add: until then
	 * pci_bus_match matches no driver, override or not (every kernel)
	 */
	if (!strcmp(bus, "pci") && dev_adding(dev))
		return 0;
	if (!attr_get(ov, sizeof ov, dev, "driver_override") &&
	    strcmp(ov, "(null)") && ov[0])
		return !strcmp(ov, drv);
	if (fmt(d, sizeof d, "bus/%s/drivers/%s", bus, drv) ||
	    fmt(p, sizeof p, "%s/.fake_match", d))
		return 0;
	if (lines_has(p, id) || lines_has(p, "*"))
		return 1;
	if (fmt(p, sizeof p, "%s/.fake_dynids", d) ||
	    dev_ids(dev, two, three, sizeof two))
		return 0;
	return (two[0] && lines_has(p, two)) || (three[0] && lines_has(p, three));
}

/* a USB interface (a usb device whose bus id has a ':'), as its dir says */
static int usb_intf(const char *dev)
{
	char bus[PATHSZ];

	return strchr(base(dev), ':') && !dev_bus(dev, bus, sizeof bus) &&
	    !strcmp(bus, "usb");
}

/*
 * The interface's authorized flag, 0 only when its file reads 0: a tree
 * without the file (before 4.4) has every interface authorized.
 */
static int intf_authorized(const char *dev)
{
	char v[64];

	return attr_get(v, sizeof v, dev, "authorized") || strcmp(v, "0");
}

/*
 * pci_device_can_probe: a VF (its physfn link names its PF) may be
 * probed only while the PF's sriov_drivers_autoprobe reads 1, or when
 * its own driver_override is set (to any driver: the match decides)
 */
static int vf_held(const char *dev)
{
	char p[PATHSZ], t[PATHSZ], pf[PATHSZ], v[64], ov[PAGESZ + 1];

	if (fmt(p, sizeof p, "%s/physfn", dev) || link_read(p, t, sizeof t) ||
	    link_join(pf, sizeof pf, dev, t) ||
	    attr_get(v, sizeof v, pf, "sriov_drivers_autoprobe") ||
	    strcmp(v, "0"))
		return 0;
	return attr_get(ov, sizeof ov, dev, "driver_override") ||
	    !strcmp(ov, "(null)") || !ov[0];
}

/*
 * The driver's probe(): 0 bound, 1 "succeeded" without binding, or a
 * negative errno as bind_store returns it (-EPROBE_DEFER becomes -EAGAIN).
 */
static int drv_probe(const char *bus, const char *drv, const char *id,
    const char *dev)
{
	char d[PATHSZ], p[PATHSZ], buf[PAGESZ], *err, *only, *save;
	int e;

	if (fmt(d, sizeof d, "bus/%s/drivers/%s", bus, drv))
		return -ENODEV;
	/* usb_probe_interface refuses an interface not authorized first */
	if (usb_intf(dev) && !intf_authorized(dev))
		return -ENODEV;
	/* pci_device_probe refuses a VF its PF does not let probe */
	if (vf_held(dev))
		return -ENODEV;
	/*
	 * usbip-host's probe refuses devices not added to match_busid: a
	 * driver with that file, or with its table before the file came
	 */
	if (fmt(p, sizeof p, "%s/.fake_busids", d))
		return -ENODEV;
	if (!lines_has(p, id) && (exists(p) ||
	    (!fmt(p, sizeof p, "%s/match_busid", d) && exists(p))))
		return -ENODEV;
	if (fmt(p, sizeof p, "%s/.fake_probe", d) ||
	    file_read(p, buf, sizeof buf) < 0)
		return 0;
	err = strtok_r(buf, " \t\n", &save);
	if (!err)
		return 0;
	only = strtok_r(NULL, " \t\n", &save);
	if (only && strcmp(only, id))
		return 0;
	if (!strcmp(err, "silent"))
		return 1;
	/* bind_store turns -EPROBE_DEFER into -EAGAIN */
	if (!strcmp(err, "EPROBE_DEFER"))
		return -EAGAIN;
	e = errnum(err);
	return e ? -e : -ENODEV;
}

/*
 * A probe running on the device: it matched DRIVER and took the device
 * lock; the driver's links and the bind uevent come when it ends. Kept
 * in .fake_probing in the device's directory. It ends (probe_end)
 * before whatever else takes the device lock goes on: bind, the unbind
 * of that driver, drivers_probe, driver_attach and device_attach,
 * authorized, a hot-unplug, the control verbs, and a driver_override
 * store before 7.0; or by the control verb probed. From 7.0 a
 * driver_override store happens beside it, and the probe then binds
 * the driver it matched whatever the override now says.
 */
static int probe_running(const char *dev, char *drv, size_t n)
{
	return !attr_get(drv, n, dev, ".fake_probing") && drv[0];
}

/* the probe of drv begins, unless one runs or the device has a driver */
static void probe_begin(const char *dev, const char *drv)
{
	char p[PATHSZ], cur[PATHSZ];
	size_t n = strlen(drv);

	if (probe_running(dev, cur, sizeof cur) ||
	    dev_driver(dev, cur, sizeof cur) || dev_unready(dev) ||
	    fmt(p, sizeof p, "%s/.fake_probing", dev) || fmt(cur, sizeof cur,
	    "%s\n", drv))
		return;
	file_write(p, cur, n + 1);
}

/* the running probe ends: its driver's links and bind uevent, where it binds */
static void probe_end(const char *dev)
{
	char drv[PATHSZ], p[PATHSZ], bus[PATHSZ], cur[PATHSZ], dir[PATHSZ];

	if (!probe_running(dev, drv, sizeof drv) ||
	    fmt(p, sizeof p, "%s/.fake_probing", dev))
		return;
	unlinkat(rootfd, p, 0);
	if (dev_bus(dev, bus, sizeof bus) || dev_driver(dev, cur, sizeof cur) ||
	    drv_dir(bus, drv, dir, sizeof dir) ||
	    drv_probe(bus, drv, base(dev), dev))
		return;
	links_make(bus, drv, base(dev), dev);
}

/*
 * bind or skip, as driver_attach and device_attach do for one pair
 * (__driver_attach matches, then takes the device lock): 1 bound, 0
 * passed over, -1 the device is not ready (7.1), which stops
 * device_attach
 */
static int drv_attach(const char *bus, const char *drv, const char *id,
    const char *dev)
{
	char cur[PATHSZ];

	if (!drv_match(bus, drv, id, dev))
		return 0;
	probe_end(dev);
	if (dev_driver(dev, cur, sizeof cur))
		return 0;
	if (dev_unready(dev))
		return -1;
	if (drv_probe(bus, drv, id, dev))
		return 0;
	return links_make(bus, drv, id, dev) ? 0 : 1;
}

/*
 * device_attach: under the device lock (a running probe ends first), an
 * unbound device gets the first driver that takes it; 1 bound, 0 none,
 * -1 not ready (7.1). With begin, the probe of the first driver that
 * matches only begins (probe_begin), and goes on running.
 */
static int dev_attach(const char *bus, const char *id, const char *dev,
    int begin)
{
	char cur[PATHSZ], dir[PATHSZ];
	struct dirent **list;
	int i, n, r = 0;

	probe_end(dev);
	if (dev_driver(dev, cur, sizeof cur) ||
	    fmt(dir, sizeof dir, "bus/%s/drivers", bus))
		return 0;
	n = scan(dir, &list);
	if (n < 0)
		return 0;
	for (i = 0; i < n && !r; i++) {
		if (!name_ok(list[i]->d_name) ||
		    list[i]->d_type != DT_DIR)
			continue;
		if (!begin) {
			r = drv_attach(bus, list[i]->d_name, id, dev);
		} else if (drv_match(bus, list[i]->d_name, id, dev)) {
			probe_begin(dev, list[i]->d_name);
			r = 1;
		}
	}
	scan_free(list, n);
	return r;
}

/*
 * bus_probe_device, as device_add calls it: device_attach, but nothing
 * while the bus's drivers_autoprobe reads 0; with begin, only its probe
 * begins (dev_attach)
 */
static void bus_probe_device(const char *bus, const char *id, const char *dev,
    int begin)
{
	char dir[PATHSZ], v[64];

	if (fmt(dir, sizeof dir, "bus/%s", bus) ||
	    (!attr_get(v, sizeof v, dir, "drivers_autoprobe") &&
	    !strcmp(v, "0")))
		return;
	dev_attach(bus, id, dev, begin);
}

/*
 * driver_attach: every device of the bus, in readdir order sorted, that
 * is unbound, matches and probes is bound (a bind uevent each).  The
 * kernel walks its list of devices in the order they were added.
 */
static void driver_attach(const char *bus, const char *drv)
{
	char dir[PATHSZ], dev[PATHSZ];
	struct dirent **list;
	int i, n;

	if (fmt(dir, sizeof dir, "bus/%s/devices", bus))
		return;
	n = scan(dir, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++)
		if (name_ok(list[i]->d_name) &&
		    !dev_find(bus, list[i]->d_name, dev, sizeof dev))
			drv_attach(bus, drv, list[i]->d_name, dev);
	scan_free(list, n);
}

/*
 * driver_detach: every device the driver holds is unbound (an unbind
 * uevent each), in readdir order sorted (the kernel takes the last
 * bound first).
 */
static void driver_detach(const char *bus, const char *drv)
{
	char dir[PATHSZ], p[PATHSZ], t[PATHSZ], dev[PATHSZ];
	struct dirent **list;
	int i, n;

	if (fmt(dir, sizeof dir, "bus/%s/drivers/%s", bus, drv))
		return;
	n = scan(dir, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		if (list[i]->d_type != DT_LNK || !name_ok(list[i]->d_name) ||
		    strcmp(list[i]->d_name, "module") == 0 ||
		    fmt(p, sizeof p, "%s/%s", dir, list[i]->d_name) ||
		    link_read(p, t, sizeof t) || link_join(dev, sizeof dev, dir, t))
			continue;
		links_drop(bus, drv, list[i]->d_name, dev);
	}
	scan_free(list, n);
}

/*
 * Hot-unplug, as device_del: children first, each unbound (its driver's
 * unbind uevent), its bus link gone, then its remove uevent.  The
 * directories stay; the caller removes them or keeps them aside.
 */
static void unplug_dev(const char *dev)
{
	char p[PATHSZ], bus[PATHSZ], drv[PATHSZ], sub[PATHSZ];
	struct dirent **list;
	const char *id = base(dev);
	int i, n;

	n = scan(dev, &list);
	for (i = 0; i < n; i++) {
		if (list[i]->d_type != DT_DIR || !name_ok(list[i]->d_name) ||
		    fmt(sub, sizeof sub, "%s/%s", dev, list[i]->d_name))
			continue;
		unplug_dev(sub);
	}
	if (n >= 0)
		scan_free(list, n);
	if (dev_bus(dev, bus, sizeof bus))
		return;
	/* device_release_driver takes the device lock */
	probe_end(dev);
	if (dev_driver(dev, drv, sizeof drv))
		links_drop(bus, drv, id, dev);
	if (!fmt(p, sizeof p, "bus/%s/devices/%s", bus, id))
		unlinkat(rootfd, p, 0);
	dev_event("remove", dev, bus, NULL);
}

/*
 * SR-IOV: a PCI physical function (PF) with sriov_totalvfs makes its
 * virtual functions (VFs) when its driver's sriov_configure is asked
 * to (a store to sriov_numvfs, part 4), and the driver's remove() may
 * take them away.  Nothing is kept but the PF's files: sriov_numvfs is
 * the count (iov->num_VFs), sriov_offset, sriov_stride and
 * sriov_vf_device place and name the VFs, sriov_drivers_autoprobe
 * whether they may be probed (vf_held); a driver with sriov_configure
 * has a .fake_sriov saying what its remove() does: "disable" (network
 * drivers: ixgbe, i40e, ice; vfio-pci) disables SR-IOV, every VF going,
 * "keep" (nvme) leaves it enabled with no driver to change it.
 */

/* the driver's sriov_configure: has one (.fake_sriov), and is it mode */
static int drv_sriov(const char *bus, const char *drv, const char *mode)
{
	char d[PATHSZ], v[64];

	if (fmt(d, sizeof d, "bus/%s/drivers/%s", bus, drv) ||
	    attr_get(v, sizeof v, d, ".fake_sriov"))
		return 0;
	return !mode || !strcmp(v, mode);
}

/*
 * VF i of the PF: its bus id (pci_iov_virtfn_bus, _devfn: the PF's
 * devfn plus offset plus stride times i, the carry into the bus number)
 * and its directory, beside the PF's, as its parent is the PF's; -1
 * when the PF's bus id is not PCI's or the VF's bus would pass ff
 */
static int vf_name(const char *pf, unsigned long i, char *id, size_t idn,
    char *dir, size_t dirn)
{
	char parent[PATHSZ];
	unsigned dom, bus, slot, fn;
	unsigned long v, off = attr_num(pf, "sriov_offset", 1),
	    stride = attr_num(pf, "sriov_stride", 1);
	int end = 0;

	/* offset and stride are the capability's 16-bit fields */
	if (sscanf(base(pf), "%4x:%2x:%2x.%1x%n", &dom, &bus, &slot, &fn,
	    &end) != 4 || base(pf)[end] || slot > 0x1f || fn > 7 ||
	    off > 0xffff || stride > 0xffff || i > 0xffff)
		return -1;
	v = (slot << 3 | fn) + off + stride * i;
	if (bus + (v >> 8) > 0xff || attr_dir(pf, parent, sizeof parent))
		return -1;
	if (fmt(id, idn, "%04x:%02x:%02lx.%lx", dom, bus + (unsigned)(v >> 8),
	    (v & 0xff) >> 3, v & 7))
		return -1;
	return fmt(dir, dirn, "%s/%s", parent, id);
}

/*
 * iommu_group_add_device into a group of the VF's own, as a VF gets
 * where the PF has one: the lowest number free (ida_alloc), the links
 * both ways
 */
static int group_new(const char *dev, const char *id)
{
	char g[PATHSZ], p[PATHSZ], t[PATHSZ], up[PATHSZ];
	int i;

	mkdirat(rootfd, "kernel", 0755);
	mkdirat(rootfd, "kernel/iommu_groups", 0755);
	for (i = 0;; i++) {
		if (i == 65536 || fmt(g, sizeof g, "kernel/iommu_groups/%d", i))
			return -1;
		if (!mkdirat(rootfd, g, 0755))
			break;
		if (errno != EEXIST)
			return -1;
	}
	if (fmt(p, sizeof p, "%s/devices", g) || mkdirat(rootfd, p, 0755) ||
	    updirs(up, sizeof up, dev) ||
	    fmt(p, sizeof p, "%s/iommu_group", dev) ||
	    fmt(t, sizeof t, "%s%s", up, g) || symlinkat(t, rootfd, p) ||
	    fmt(p, sizeof p, "%s/devices/%s", g, id) ||
	    fmt(t, sizeof t, "../../../../%s", dev) || symlinkat(t, rootfd, p))
		return -1;
	return 0;
}

/* iommu_release_device: the device leaves its group, which goes if empty */
static void group_leave(const char *dev, const char *id)
{
	char p[PATHSZ], t[PATHSZ], g[PATHSZ];
	struct dirent **list;
	int i, n, left = 0;

	if (fmt(p, sizeof p, "%s/iommu_group", dev) || link_read(p, t, sizeof t) ||
	    link_join(g, sizeof g, dev, t) ||
	    fmt(p, sizeof p, "%s/devices/%s", g, id))
		return;
	unlinkat(rootfd, p, 0);
	if (fmt(p, sizeof p, "%s/devices", g))
		return;
	n = scan(p, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++)
		left += name_ok(list[i]->d_name);
	scan_free(list, n);
	if (!left)
		rmtree(g);
}

/*
 * pci_iov_remove_virtfn: the PF's virtfnI link and the VF's physfn go,
 * then pci_stop_and_remove_bus_device: its driver released (an unbind
 * uevent), its IOMMU group left, its bus link, the remove uevent, its
 * directory
 */
static void vf_del(const char *bus, const char *pf, unsigned long i)
{
	char id[64], vf[PATHSZ], p[PATHSZ], drv[PATHSZ];

	if (vf_name(pf, i, id, sizeof id, vf, sizeof vf))
		return;
	if (!fmt(p, sizeof p, "%s/virtfn%lu", pf, i))
		unlinkat(rootfd, p, 0);
	if (!exists(vf))
		return;
	if (!fmt(p, sizeof p, "%s/physfn", vf))
		unlinkat(rootfd, p, 0);
	probe_end(vf);
	if (dev_driver(vf, drv, sizeof drv))
		links_drop(bus, drv, id, vf);
	group_leave(vf, id);
	if (!fmt(p, sizeof p, "bus/%s/devices/%s", bus, id))
		unlinkat(rootfd, p, 0);
	dev_event("remove", vf, bus, NULL);
	rmtree(vf);
}

/*
 * pci_iov_add_virtfn, VF i of the PF: pci_device_add (its directory
 * and attributes: the PF's vendor and class, sriov_vf_device for device,
 * driver_override; its own IOMMU group where the PF has one; the bus
 * link; the add uevent), pci_iov_sysfs_link (virtfnI and physfn, a
 * change uevent), then pci_bus_add_device's device_attach, which the
 * bus's drivers_autoprobe does not stop (vf_held may). EEXIST where a
 * device has the VF's name; a VF half made is taken away again.
 */
static int vf_add(const char *bus, const char *pf, unsigned long i)
{
	static const char *const copied[] = {
		"vendor", "class", "subsystem_vendor", "subsystem_device",
	};
	char id[64], vf[PATHSZ], p[PATHSZ], t[PATHSZ], up[PATHSZ], v[64];
	size_t k;

	if (vf_name(pf, i, id, sizeof id, vf, sizeof vf) ||
	    fmt(p, sizeof p, "bus/%s/devices/%s", bus, id))
		return -ENOMEM;
	if (exists(vf) || exists(p))
		return -EEXIST;
	if (mkdirat(rootfd, vf, 0755))
		return -EIO;
	for (k = 0; k < sizeof copied / sizeof *copied; k++)
		file_copy(pf, vf, copied[k]);
	if ((attr_get(v, sizeof v, pf, "sriov_vf_device") &&
	    attr_get(v, sizeof v, pf, "device")) ||
	    fmt(t, sizeof t, "0x%04lx\n", strtoul(v, NULL, 16)) ||
	    fmt(p, sizeof p, "%s/device", vf) || file_write(p, t, strlen(t)) ||
	    fmt(p, sizeof p, "%s/driver_override", vf) ||
	    file_write(p, "(null)\n", 7) ||
	    fmt(p, sizeof p, "%s/uevent", vf) || file_write(p, "", 0) ||
	    updirs(up, sizeof up, vf) || fmt(p, sizeof p, "%s/subsystem", vf) ||
	    fmt(t, sizeof t, "%sbus/%s", up, bus) || symlinkat(t, rootfd, p) ||
	    fmt(p, sizeof p, "%s/iommu_group", pf) ||
	    (exists(p) && group_new(vf, id)) ||
	    fmt(p, sizeof p, "bus/%s/devices/%s", bus, id) ||
	    fmt(t, sizeof t, "../../../%s", vf) || symlinkat(t, rootfd, p))
		goto undo;
	dev_event("add", vf, bus, NULL);
	if (fmt(p, sizeof p, "%s/virtfn%lu", pf, i) ||
	    fmt(t, sizeof t, "../%s", id) || symlinkat(t, rootfd, p) ||
	    fmt(p, sizeof p, "%s/physfn", vf) ||
	    fmt(t, sizeof t, "../%s", base(pf)) || symlinkat(t, rootfd, p))
		goto undo;
	dev_event("change", vf, bus, NULL);
	dev_attach(bus, id, vf, 0);
	return 0;
undo:
	vf_del(bus, pf, i);
	return -EIO;
}

/*
 * sriov_disable: every VF removed, in order (vf_del), and the count 0;
 * no uevent of the PF's own
 */
static void sriov_disable(const char *bus, const char *pf)
{
	char p[PATHSZ];
	unsigned long i, n = attr_num(pf, "sriov_numvfs", 0);

	for (i = 0; i < n; i++)
		vf_del(bus, pf, i);
	if (!fmt(p, sizeof p, "%s/sriov_numvfs", pf))
		file_write(p, "0\n", 2);
}

/*
 * sriov_enable, as the driver's sriov_configure calls it: ENOMEM when
 * the last VF's bus number is out of reach, then each VF added in
 * order (vf_add), the count set, and the PF's change uevent; a VF that
 * fails takes the ones before it away again
 */
static int sriov_enable(const char *bus, const char *pf, unsigned long n)
{
	char id[64], vf[PATHSZ], p[PATHSZ], buf[32];
	unsigned long i;
	int r = 0;

	if (!n)
		return 0;
	if (vf_name(pf, n - 1, id, sizeof id, vf, sizeof vf))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r = vf_add(bus, pf, i);
		if (r)
			break;
	}
	if (r) {
		while (i--)
			vf_del(bus, pf, i);
		return r;
	}
	if (fmt(p, sizeof p, "%s/sriov_numvfs", pf) ||
	    fmt(buf, sizeof buf, "%lu\n", n) || file_write(p, buf, strlen(buf)))
		return -EIO;
	dev_event("change", pf, bus, NULL);
	return 0;
}

/*
 * The PF driver's remove(), from device_release_driver (links_drop):
 * one whose .fake_sriov says disable takes every VF away first; nvme's
 * (keep) leaves them, and sriov_numvfs then answers ENOENT until a
 * driver is bound again (pci_iov_remove warns, and that is all)
 */
static void sriov_driver_remove(const char *bus, const char *drv,
    const char *dev)
{
	if (drv_sriov(bus, drv, "disable") && attr_num(dev, "sriov_numvfs", 0))
		sriov_disable(bus, dev);
}

/*
 * ==== 4. The stores ====
 *
 * One function per attribute whose store does more than keep its value
 * (new_id and remove_id, two ends of one list, share one), answering as
 * the kernel's store does, with its errnos: what a tool sees of a real
 * kernel is only these answers and the links and uevents that follow,
 * so they are what must be exact.  store() picks one by the path, as
 * sysfs by the attribute; any other attribute keeps what was written.
 */

/*
 * bind_store: find, match, then under the device lock probe; an already
 * bound device is EBUSY, one not ready (7.1) EAGAIN
 */
static int store_bind(const char *bus, const char *drv, const char *id)
{
	char dev[PATHSZ], cur[PATHSZ];
	int r;

	if (dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	if (!drv_match(bus, drv, id, dev))
		return -ENODEV;
	probe_end(dev);
	if (dev_driver(dev, cur, sizeof cur))
		return -EBUSY;
	if (dev_unready(dev))
		return -EAGAIN;
	r = drv_probe(bus, drv, id, dev);
	if (r < 0)
		return r;
	if (r > 0)
		return 0;
	return links_make(bus, drv, id, dev);
}

/*
 * unbind_store: only from the driver the device is bound to (the
 * driver a running probe set counts: the unbind waits for it under the
 * device lock)
 */
static int store_unbind(const char *bus, const char *drv, const char *id)
{
	char dev[PATHSZ], cur[PATHSZ];

	if (dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	if (probe_running(dev, cur, sizeof cur) && !strcmp(cur, drv))
		probe_end(dev);
	if (!dev_driver(dev, cur, sizeof cur) || strcmp(cur, drv))
		return -ENODEV;
	links_drop(bus, drv, id, dev);
	return 0;
}

/*
 * drivers_probe_store: device_attach on the device the bus id names;
 * EINVAL when it fails, which from 7.1 a device not ready makes it do
 */
static int store_probe(const char *bus, const char *id)
{
	char dev[PATHSZ];

	if (dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	return dev_attach(bus, id, dev, 0) < 0 ? -EINVAL : 0;
}

/*
 * driver_set_override: the value ends at the first newline; empty
 * clears. Before 7.0 it takes the device lock (a running probe ends
 * first); from 7.0 only the override's own spinlock.
 */
static int store_override(const char *r, const char *val, size_t len)
{
	char buf[PAGESZ + 2], dev[PATHSZ];
	size_t n;

	if (len >= PAGESZ - 1)
		return -EINVAL;
	if (!kernel_at(7, 0) && !attr_dir(r, dev, sizeof dev))
		probe_end(dev);
	n = strnlen(val, len);
	if (memchr(val, '\n', n))
		n = (const char *)memchr(val, '\n', n) - val;
	if (!n)
		return file_write(r, "(null)\n", 7) ? -EIO : 0;
	memcpy(buf, val, n);
	buf[n] = '\n';
	return file_write(r, buf, n + 1) ? -EIO : 0;
}

/*
 * "vvvv dddd [...]" as new_id and remove_id read it with sscanf("%x %x
 * ..."): fields are counted up to the first one that does not parse.
 * The dynamic id kept: "vvvv dddd", for USB with a non-zero interface
 * class "vvvv dddd cc" (PCI's further fields are not modelled).
 */
static int id_parse(const char *bus, const char *val, char *out, size_t n,
    int maxf)
{
	char buf[PAGESZ + 1], *tok, *save, *end;
	unsigned long f[7];
	int k = 0;

	if (fmt(buf, sizeof buf, "%s", val))
		return -EINVAL;
	for (tok = strtok_r(buf, " \t\n", &save); tok && k < maxf;
	    tok = strtok_r(NULL, " \t\n", &save)) {
		errno = 0;
		f[k] = strtoul(tok, &end, 16);
		if (errno || end == tok || f[k] > 0xffffffff)
			break;
		k++;
		if (*end)
			break;
	}
	if (k < 2)
		return -EINVAL;
	if (!strcmp(bus, "usb") && k >= 3 && f[2]) {
		if (f[2] > 0xff)
			return -EINVAL;
		return fmt(out, n, "%04lx %04lx %02lx", f[0], f[1], f[2]) ?
		    -EINVAL : 0;
	}
	return fmt(out, n, "%04lx %04lx", f[0], f[1]) ? -EINVAL : 0;
}

/*
 * new_id_store and remove_id_store, the two ends of a driver's list of
 * dynamic ids.  The id is read with as many fields as the bus's sscanf
 * takes: PCI's new_id 7 and remove_id 6, USB's new_id 5 and remove_id 2.
 * new_id adds it, then driver_attach binds every unbound device that
 * now matches; PCI refuses an id the driver already has (EEXIST), USB
 * simply adds another.  remove_id forgets it, bound devices staying
 * bound; PCI says ENODEV for an id it does not have, USB compares only
 * vendor and product, drops the first such id and never fails.
 */
static int store_dynid(const char *bus, const char *drv, int add,
    const char *val)
{
	char id[64], p[PATHSZ];
	int usb = !strcmp(bus, "usb"), r;

	r = id_parse(bus, val, id, sizeof id,
	    add ? (usb ? 5 : 7) : (usb ? 2 : 6));
	if (r)
		return r;
	if (fmt(p, sizeof p, "bus/%s/drivers/%s/.fake_dynids", bus, drv))
		return add ? -EINVAL : -ENODEV;
	if (add) {
		if (!usb && lines_has(p, id))
			return -EEXIST;
		if (lines_add(p, id))
			return -ENOMEM;
		driver_attach(bus, drv);
		return 0;
	}
	if (usb)
		return exists(p) && lines_del(p, id, 1) ? -EIO : 0;
	if (!lines_has(p, id))
		return -ENODEV;
	return lines_del(p, id, 0) ? -EIO : 0;
}

/*
 * usbip-host's match_busid_store: "add ID" (again is fine) or "del ID"
 * (ENODEV when absent), anything else EINVAL.  It takes everything
 * after the verb's space, a newline too: "add 1-1\n" adds a bus id no
 * device has (kept here as a literal "\n").
 */
static int store_busid(const char *bus, const char *drv, const char *raw,
    size_t len)
{
	char id[2 * BUSIDSZ + 1], p[PATHSZ];
	size_t i, k = 0, n;

	if (len < 5)
		return -EINVAL;
	n = strnlen(raw + 4, len - 4);
	if (n >= BUSIDSZ)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (raw[4 + i] == '\n') {
			id[k++] = '\\';
			id[k++] = 'n';
		} else {
			id[k++] = raw[4 + i];
		}
	}
	id[k] = 0;
	if (fmt(p, sizeof p, "bus/%s/drivers/%s/.fake_busids", bus, drv))
		return -EINVAL;
	if (!strncmp(raw, "add ", 4)) {
		if (lines_has(p, id))
			return 0;
		return lines_add(p, id) ? -ENOMEM : 0;
	}
	if (!strncmp(raw, "del ", 4)) {
		if (!lines_has(p, id))
			return -ENODEV;
		return lines_del(p, id, 0) ? -EIO : 0;
	}
	return -EINVAL;
}

/* any other attribute: the value simply lands in the backing file */
static int store_plain(const char *r, const char *val, size_t len)
{
	return file_write(r, val, len) ? -errno : 0;
}

/* kstrtobool: 1 or 0 by the first character ('o' by the second), or EINVAL */
static int kstrtobool(const char *s)
{
	switch (s[0]) {
	case 'y': case 'Y': case 't': case 'T': case '1':
		return 1;
	case 'n': case 'N': case 'f': case 'F': case '0':
		return 0;
	case 'o': case 'O':
		if (s[1] == 'n' || s[1] == 'N')
			return 1;
		if (s[1] == 'f' || s[1] == 'F')
			return 0;
		break;
	}
	return -EINVAL;
}

/*
 * A USB interface's authorized (interface_authorized_store, since 4.4).
 * 0 clears the flag and, if it was set, releases the driver as
 * device_release_driver does (an unbind uevent); 1 sets it and probes
 * nothing.  While it is 0, usb_probe_interface answers ENODEV.
 */
static int store_authorized(const char *r, const char *val, const char *raw,
    size_t len)
{
	char dev[PATHSZ], bus[PATHSZ], cur[PATHSZ];
	int on;

	/* a USB device's authorized (a whole device) is not modelled */
	if (attr_dir(r, dev, sizeof dev) || !usb_intf(dev))
		return store_plain(r, raw, len);
	on = kstrtobool(val);
	if (on < 0)
		return on;
	/* usb_(de)authorize_interface take the device lock to change it */
	if (on != intf_authorized(dev))
		probe_end(dev);
	if (on)
		return file_write(r, "1\n", 2) ? -EIO : 0;
	if (!intf_authorized(dev))
		return 0;
	if (file_write(r, "0\n", 2))
		return -EIO;
	if (dev_driver(dev, cur, sizeof cur) && !dev_bus(dev, bus, sizeof bus))
		links_drop(bus, cur, base(dev), dev);
	return 0;
}

/* a digit's value in bases up to 16; 16 for anything else */
static unsigned digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 16;
}

/*
 * kstrtou16 in base 0, its one newline already gone: an optional "+",
 * "0x" and a hex digit for hex, a leading 0 for octal, else decimal;
 * every character a digit, the value at most 0xffff; -1 when not so
 */
static long parse_u16(const char *s)
{
	unsigned long v = 0, d;
	unsigned b = 10;

	if (*s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit(s[2]) < 16) {
		b = 16;
		s += 2;
	} else if (s[0] == '0') {
		b = 8;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		d = digit(*s);
		if (d >= b)
			return -1;
		v = v * b + d;
		if (v > 0xffff)
			return -1;
	}
	return (long)v;
}

/*
 * sriov_numvfs_store (drivers/pci/iov.c): a count kstrtou16 does not
 * take is EINVAL, one above sriov_totalvfs ERANGE; then under the PF's
 * device lock: the count it has already is done; with no driver, or a
 * driver without sriov_configure (no .fake_sriov), ENOENT; 0 disables
 * SR-IOV; another count while VFs are enabled is EBUSY (0 must come
 * first); else the driver enables that many (part 3, SR-IOV)
 */
static int store_numvfs(const char *r, const char *val)
{
	char pf[PATHSZ], bus[PATHSZ], drv[PATHSZ];
	long n = parse_u16(val);
	unsigned long cur;

	if (attr_dir(r, pf, sizeof pf) || n < 0)
		return -EINVAL;
	if ((unsigned long)n > attr_num(pf, "sriov_totalvfs", 0))
		return -ERANGE;
	probe_end(pf);
	cur = attr_num(pf, "sriov_numvfs", 0);
	if ((unsigned long)n == cur)
		return 0;
	if (dev_bus(pf, bus, sizeof bus) || !dev_driver(pf, drv, sizeof drv) ||
	    !drv_sriov(bus, drv, NULL))
		return -ENOENT;
	if (!n) {
		sriov_disable(bus, pf);
		return 0;
	}
	if (cur)
		return -EBUSY;
	return sriov_enable(bus, pf, n);
}

/* sriov_drivers_autoprobe_store: kstrtobool, or EINVAL; no lock taken */
static int store_sriov_autoprobe(const char *r, const char *val)
{
	int on = kstrtobool(val);

	if (on < 0)
		return on;
	return file_write(r, on ? "1\n" : "0\n", 2) ? -EIO : 0;
}

/* one sysfs store; val is NUL-terminated, len is what was written */
static int store(const char *r, const char *raw, size_t len)
{
	char p[PATHSZ], val[PAGESZ + 1], *c[6], *save, *tok;
	int n = 0;

	memcpy(val, raw, len);
	val[len] = 0;
	/* the stores below compare with sysfs_streq: one newline may end it */
	chomp(val);
	if (fmt(p, sizeof p, "%s", r))
		return -EINVAL;
	for (tok = strtok_r(p, "/", &save); tok && n < 6;
	    tok = strtok_r(NULL, "/", &save))
		c[n++] = tok;
	if (n == 5 && !strcmp(c[0], "bus") && !strcmp(c[2], "drivers")) {
		if (!strcmp(c[4], "bind"))
			return store_bind(c[1], c[3], val);
		if (!strcmp(c[4], "unbind"))
			return store_unbind(c[1], c[3], val);
		if (!strcmp(c[4], "new_id"))
			return store_dynid(c[1], c[3], 1, val);
		if (!strcmp(c[4], "remove_id"))
			return store_dynid(c[1], c[3], 0, val);
		if (!strcmp(c[4], "match_busid"))
			return store_busid(c[1], c[3], raw, len);
	}
	if (n == 3 && !strcmp(c[0], "bus") && !strcmp(c[2], "drivers_probe"))
		return store_probe(c[1], val);
	if (!strcmp(base(r), "driver_override"))
		return store_override(r, raw, len);
	if (!strcmp(base(r), "authorized"))
		return store_authorized(r, val, raw, len);
	if (!strcmp(base(r), "sriov_numvfs"))
		return store_numvfs(r, val);
	if (!strcmp(base(r), "sriov_drivers_autoprobe"))
		return store_sriov_autoprobe(r, val);
	return store_plain(r, raw, len);
}

/*
 * ==== 5. The control verbs ====
 *
 * A write to the root's .fake_ctl, one command a write, never logged:
 *	kernel VERSION	the kernel's version, "7.1", into .fake_kernel
 *			(part 3: what changed with it)
 *	attach BUS DRV	driver_attach, as driver_register does it
 *	detach BUS DRV	driver_detach, as driver_unregister does it
 *	probe BUS ID	bus_probe_device, as device_add does it: nothing
 *			when the bus's drivers_autoprobe reads 0
 *	ready BUS ID	the end of device_add, for a device a test made
 *			with .fake_adding (its add uevent sent): it is
 *			ready to probe (7.1), then bus_probe_device; on
 *			PCI also pci_bus_add_device's match_driver
 *	probing BUS ID	bus_probe_device begins: the first driver that
 *			matches probes the device, under its lock, and
 *			nothing shows yet (part 3, probe_begin)
 *	probed BUS ID	that probe ends: it binds, the bind uevent
 *	unplug BUS ID	a hot-unplug, as the fault action unplug:ID, but
 *			the directory is kept aside (.fake_gone) for replug
 *			(a device without children: replug adds it alone)
 *	replug BUS ID	device_add of a new device like it: a new
 *			directory with the old one's files (and modes),
 *			driver_override "(null)", authorized 1, a PF's
 *			sriov_numvfs 0 and sriov_drivers_autoprobe 1 where
 *			it has them, the links, the add uevent, the probe
 *	rmmod BUS DRV	driver_unregister all at once, as the fault action
 *			unregister:, the directory kept aside
 *	insmod BUS DRV	that driver back all at once: its directory and
 *			files, driver_attach (bind uevents), the add uevent
 * The driver core does these on its own, with no sysfs write to ask for
 * them, between the steps a test replays by hand; order.bats holds the
 * step-by-step orderings.  The last four are for endurance runs,
 * thousands of them from a shell without a fork each.  ENODEV for a
 * driver or device that is not there, EINVAL for anything else.
 */

/* where unplug and rmmod keep a directory: .fake_gone/BUS/NAME */
static int gone_path(const char *bus, const char *name, char *p, size_t n)
{
	if (!name_ok(bus) || !name_ok(name))
		return -1;
	mkdirat(rootfd, ".fake_gone", 0755);
	if (fmt(p, n, ".fake_gone/%s", bus))
		return -1;
	mkdirat(rootfd, p, 0755);
	return fmt(p, n, ".fake_gone/%s/%s", bus, name);
}

/* to, made new, with from's regular files (no links, no subdirectories) */
static int dir_copy(const char *from, const char *to)
{
	struct dirent **list;
	int i, n;

	if (mkdirat(rootfd, to, 0755))
		return -1;
	n = scan(from, &list);
	for (i = 0; i < n; i++)
		if (list[i]->d_type == DT_REG && name_ok(list[i]->d_name))
			file_copy(from, to, list[i]->d_name);
	if (n >= 0)
		scan_free(list, n);
	return n < 0;
}

/* a new device's attribute at its first value, where the device has it */
static void attr_reset(const char *dev, const char *name, const char *val)
{
	char p[PATHSZ];

	if (!fmt(p, sizeof p, "%s/%s", dev, name) &&
	    !faccessat(rootfd, p, F_OK, 0))
		file_write(p, val, strlen(val));
}

static int ctl_probe(const char *bus, const char *id)
{
	char dev[PATHSZ];

	if (!name_ok(bus) || dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	bus_probe_device(bus, id, dev, 0);
	return 0;
}

static int ctl_ready(const char *bus, const char *id)
{
	char dev[PATHSZ], p[PATHSZ];

	if (!name_ok(bus) || dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	if (fmt(p, sizeof p, "%s/.fake_adding", dev))
		return -EINVAL;
	unlinkat(rootfd, p, 0);
	bus_probe_device(bus, id, dev, 0);
	return 0;
}

static int ctl_probing(const char *bus, const char *id)
{
	char dev[PATHSZ];

	if (!name_ok(bus) || dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	bus_probe_device(bus, id, dev, 1);
	return 0;
}

static int ctl_probed(const char *bus, const char *id)
{
	char dev[PATHSZ];

	if (!name_ok(bus) || dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	probe_end(dev);
	return 0;
}

/* "MAJOR.MINOR", digits only */
static int ctl_kernel(const char *v)
{
	char buf[64];
	size_t i, dots = 0;

	for (i = 0; v[i]; i++) {
		if (v[i] == '.' && i && v[i - 1] != '.')
			dots++;
		else if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
	}
	if (dots != 1 || v[i - 1] == '.' || fmt(buf, sizeof buf, "%s\n", v))
		return -EINVAL;
	return file_write(".fake_kernel", buf, strlen(buf)) ? -EIO : 0;
}

static int ctl_unplug(const char *bus, const char *id)
{
	char dev[PATHSZ], gone[PATHSZ], p[PATHSZ];

	if (gone_path(bus, id, gone, sizeof gone))
		return -EINVAL;
	if (dev_find(bus, id, dev, sizeof dev))
		return -ENODEV;
	unplug_dev(dev);
	if (!fmt(p, sizeof p, "%s/subsystem", dev))
		unlinkat(rootfd, p, 0);
	rmtree(gone);
	/* the device's path, for replug, beside it */
	if (renameat(rootfd, dev, rootfd, gone) ||
	    fmt(p, sizeof p, "%s.path", gone) || file_write(p, dev, strlen(dev)))
		return -EIO;
	return 0;
}

static int ctl_replug(const char *bus, const char *id)
{
	char dev[PATHSZ], gone[PATHSZ], p[PATHSZ], t[PATHSZ], up[PATHSZ];
	ssize_t len;

	if (gone_path(bus, id, gone, sizeof gone))
		return -EINVAL;
	if (fmt(p, sizeof p, "%s.path", gone))
		return -ENODEV;
	len = file_read(p, dev, sizeof dev - 1);
	if (len <= 0)
		return -ENODEV;
	dev[len] = 0;
	/* a new directory: one open on the old device does not see it */
	if (dir_copy(gone, dev))
		return -EIO;
	attr_reset(dev, "driver_override", "(null)\n");
	attr_reset(dev, "authorized", "1\n");
	attr_reset(dev, "sriov_numvfs", "0\n");
	attr_reset(dev, "sriov_drivers_autoprobe", "1\n");
	if (updirs(up, sizeof up, dev) || fmt(p, sizeof p, "%s/subsystem", dev) ||
	    fmt(t, sizeof t, "%sbus/%s", up, bus) || symlinkat(t, rootfd, p) ||
	    fmt(p, sizeof p, "bus/%s/devices/%s", bus, id) ||
	    fmt(t, sizeof t, "../../../%s", dev) || symlinkat(t, rootfd, p))
		return -EIO;
	dev_event("add", dev, bus, NULL);
	bus_probe_device(bus, id, dev, 0);
	return 0;
}

static int ctl_rmmod(const char *bus, const char *drv)
{
	char dir[PATHSZ], gone[PATHSZ];

	if (gone_path(bus, drv, gone, sizeof gone) ||
	    fmt(dir, sizeof dir, "bus/%s/drivers/%s", bus, drv))
		return -EINVAL;
	if (drv_dir(bus, drv, dir, sizeof dir))
		return -ENODEV;
	driver_detach(bus, drv);
	drv_event("remove", dir);
	return renameat(rootfd, dir, rootfd, gone) ? -EIO : 0;
}

static int ctl_insmod(const char *bus, const char *drv)
{
	char dir[PATHSZ], gone[PATHSZ];

	if (gone_path(bus, drv, gone, sizeof gone) ||
	    fmt(dir, sizeof dir, "bus/%s/drivers/%s", bus, drv))
		return -EINVAL;
	if (renameat(rootfd, gone, rootfd, dir))
		return -ENODEV;
	driver_attach(bus, drv);
	drv_event("add", dir);
	return 0;
}

/* attach and detach walk a driver's devices; the others have their own */
static const struct {
	const char *verb;
	void (*walk)(const char *bus, const char *drv);
	int (*run)(const char *bus, const char *name);
} verbs[] = {
	{ "attach", driver_attach, NULL },
	{ "detach", driver_detach, NULL },
	{ "probe", NULL, ctl_probe },
	{ "ready", NULL, ctl_ready },
	{ "probing", NULL, ctl_probing },
	{ "probed", NULL, ctl_probed },
	{ "unplug", NULL, ctl_unplug },
	{ "replug", NULL, ctl_replug },
	{ "rmmod", NULL, ctl_rmmod },
	{ "insmod", NULL, ctl_insmod },
};

static int ctl(const char *raw, size_t len)
{
	char buf[PAGESZ + 1], dir[PATHSZ], *w[4], *save, *tok;
	size_t i;
	int n = 0;

	memcpy(buf, raw, len);
	buf[len] = 0;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	    tok = strtok_r(NULL, " \t\n", &save)) {
		if (n == 3)
			return -EINVAL;
		w[n++] = tok;
	}
	if (n == 2 && !strcmp(w[0], "kernel"))
		return ctl_kernel(w[1]);
	if (n != 3)
		return -EINVAL;
	for (i = 0; i < sizeof verbs / sizeof *verbs; i++) {
		if (strcmp(w[0], verbs[i].verb))
			continue;
		if (verbs[i].run)
			return verbs[i].run(w[1], w[2]);
		if (drv_dir(w[1], w[2], dir, sizeof dir))
			return -ENODEV;
		verbs[i].walk(w[1], w[2]);
		return 0;
	}
	return -EINVAL;
}

/*
 * ==== 6. The faults ====
 *
 * .fake_faults (its actions: the head of this file) gives one write what
 * a real kernel gives only now and then: an errno the fake's store would
 * not answer, a short write, a device or driver going away just after
 * the store, a probe already running on the device; so a test can show
 * how drvbind gets through each.  A fault is taken before the store
 * runs; unplug:, unregister: and stop act after it.  The faulted write is
 * logged like any other.
 */

/*
 * A probe of drv that was running when a store to one of the device's
 * attributes came: the store takes the device lock, so the probe
 * finishes first and binds the device to drv; but from 7.0 a
 * driver_override store takes none, and the probe runs on (part 3,
 * probe_begin) until something takes the lock.
 */
static void probing(const char *attr, const char *drv)
{
	char dev[PATHSZ], bus[PATHSZ];

	if (attr_dir(attr, dev, sizeof dev) || dev_bus(dev, bus, sizeof bus))
		return;
	probe_begin(dev, drv);
	if (strcmp(base(attr), "driver_override") || !kernel_at(7, 0))
		probe_end(dev);
}

/* unplug:ID: the device of that bus id, on whichever bus, and its tree */
static void unplug(const char *id)
{
	char dev[PATHSZ];
	struct dirent **list;
	int i, n, found = 0;

	n = scan("bus", &list);
	if (n < 0)
		return;
	for (i = 0; i < n && !found; i++)
		found = name_ok(list[i]->d_name) &&
		    !dev_find(list[i]->d_name, id, dev, sizeof dev);
	scan_free(list, n);
	if (!found)
		return;
	unplug_dev(dev);
	rmtree(dev);
}

/*
 * unregister:BUS/DRIVER, driver_unregister all at once: every device
 * the driver holds is unbound (an unbind uevent each), then the remove
 * uevent, sent by kobject_del just before the directory goes (since
 * 5.8).
 */
static void unregister(const char *spec)
{
	char bus[PATHSZ], dir[PATHSZ], *drv;

	if (fmt(bus, sizeof bus, "%s", spec))
		return;
	drv = strchr(bus, '/');
	if (!drv)
		return;
	*drv++ = 0;
	if (drv_dir(bus, drv, dir, sizeof dir))
		return;
	driver_detach(bus, drv);
	drv_event("remove", dir);
	rmtree(dir);
}

/* a fault's path, with the links of its directory resolved like ours */
static int fault_path(const char *path, char *out, size_t n)
{
	char p[PATHSZ], full[PATHSZ], real[PATH_MAX], *slash;
	size_t rl = strlen(backroot);

	if (fmt(p, sizeof p, "%s", path))
		return -1;
	slash = strrchr(p, '/');
	if (!slash)
		return fmt(out, n, "%s", p);
	*slash = 0;
	if (fmt(full, sizeof full, "%s/%s", backroot, p) || !realpath(full, real) ||
	    strncmp(real, backroot, rl) || (real[rl] && real[rl] != '/'))
		return fmt(out, n, "%s", path);
	return fmt(out, n, "%s%s%s", real[rl] ? real + rl + 1 : "",
	    real[rl] ? "/" : "", slash + 1);
}

/*
 * The first .fake_faults line for r: its action goes into act (empty
 * when none); a line without "always" is used up.
 */
static void fault_take(const char *r, char *act, size_t n)
{
	static char buf[FILESZ], out[FILESZ];
	char line[PAGESZ], path[PATHSZ], *l, *next, *f[3], *save;
	size_t len = 0, k;
	int used = 0, i;

	act[0] = 0;
	if (file_read(".fake_faults", buf, sizeof buf) <= 0)
		return;
	for (l = buf; l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		k = strlen(l);
		if (!used && k < sizeof line) {
			memcpy(line, l, k + 1);
			f[0] = strtok_r(line, " \t", &save);
			for (i = 1; i < 3; i++)
				f[i] = f[i - 1] ? strtok_r(NULL, " \t", &save) : NULL;
			if (f[1] && !fault_path(f[0], path, sizeof path) &&
			    !strcmp(path, r)) {
				used = 1;
				fmt(act, n, "%s", f[1]);
				if (!f[2] || strcmp(f[2], "always"))
					continue;
			}
		}
		memcpy(out + len, l, k);
		out[len + k] = '\n';
		len += k + 1;
	}
	if (used)
		file_write(".fake_faults", out, len);
}

/*
 * The fault's part before the store: the errno the write fails with,
 * nothing happening (an unknown action is EIO), or 0 and the store runs
 * (no fault, pass, probing: once its probe has bound the device, and
 * unplug:, unregister: and stop, which act after it).  short is the caller's.
 */
static int fault_before(const char *r, const char *act)
{
	int e;

	if (!act[0] || !strcmp(act, "pass") || !strcmp(act, "stop") ||
	    !strncmp(act, "unplug:", 7) || !strncmp(act, "unregister:", 11))
		return 0;
	if (!strncmp(act, "probing:", 8)) {
		probing(r, act + 8);
		return 0;
	}
	e = errnum(act);
	return e ? e : EIO;
}

/*
 * the fault's part after the store: the device or the driver goes, or
 * the writer is stopped (it stops on its way back from the write, which
 * then returns what the store said)
 */
static void fault_after(const char *act)
{
	if (!strcmp(act, "stop"))
		kill(fuse_get_context()->pid, SIGSTOP);
	else if (!strncmp(act, "unplug:", 7))
		unplug(act + 7);
	else if (!strncmp(act, "unregister:", 11))
		unregister(act + 11);
}

/*
 * ==== 7. The mount ====
 *
 * FUSE's operations on BACKDIR.  Reads pass through; a write is one
 * store (part 4) after the fault its path may have (part 6), logged
 * with its answer; .fake names are hidden but for .fake_ctl, whose
 * writes are the control verbs (part 5).  Nothing can be created,
 * removed or renamed, as in sysfs, where only the kernel makes nodes.
 */

static void time_write(const char *line, size_t n)
{
	char buf[sizeof "18446744073709551615 "];
	struct timespec ts;
	int k;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	k = snprintf(buf, sizeof buf, "%lld ",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	if (write(timefd, buf, k) != k || write(timefd, line, n) != (ssize_t)n)
		perror("fakesys: times");
}

static void log_write(const char *r, const char *val, size_t len,
    const char *result)
{
	char line[4 * PAGESZ + PATHSZ + 64];
	size_t n = 0, i;
	unsigned char ch;

	if (logfd < 0 || fmt(line, sizeof line, "%s ", r))
		return;
	n = strlen(line);
	for (i = 0; i < len; i++) {
		ch = val[i];
		if (ch == '\n')
			n += snprintf(line + n, sizeof line - n, "\\n");
		else if (ch == '\t')
			n += snprintf(line + n, sizeof line - n, "\\t");
		else if (ch == '\\')
			n += snprintf(line + n, sizeof line - n, "\\\\");
		else if (ch < 0x20 || ch == 0x7f)
			n += snprintf(line + n, sizeof line - n, "\\x%02x", ch);
		else
			line[n++] = ch;
	}
	if (fmt(line + n, sizeof line - n, " -> %s\n", result))
		return;
	n += strlen(line + n);
	if (write(logfd, line, n) != (ssize_t)n)
		perror("fakesys: log");
	if (timefd >= 0)
		time_write(line, n);
}

static int fs_getattr(const char *path, struct stat *st,
    struct fuse_file_info *fi)
{
	const char *r = rel(path);

	(void)fi;
	if (hidden(r))
		return -ENOENT;
	if (fstatat(rootfd, r, st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	return 0;
}

static int fs_readlink(const char *path, char *buf, size_t n)
{
	const char *r = rel(path);
	ssize_t len;

	if (hidden(r))
		return -ENOENT;
	len = readlinkat(rootfd, r, buf, n - 1);
	if (len < 0)
		return -errno;
	buf[len] = 0;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
    off_t off, struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	const char *r = rel(path);
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	(void)off;
	(void)fi;
	(void)flags;
	if (hidden(r))
		return -ENOENT;
	fd = openat(rootfd, r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, ".fake", 5))
			continue;
		memset(&st, 0, sizeof st);
		st.st_ino = de->d_ino;
		st.st_mode = de->d_type << 12;
		if (fill(buf, de->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	const char *r = rel(path);
	struct stat st;
	int fd;

	if (hidden(r))
		return -ENOENT;
	/* kernfs: an attribute without a store (no write mode) is EACCES */
	if ((fi->flags & O_ACCMODE) != O_RDONLY &&
	    !fstatat(rootfd, r, &st, 0) && S_ISREG(st.st_mode) &&
	    !(st.st_mode & 0222))
		return -EACCES;
	fd = openat(rootfd, r, (fi->flags & O_ACCMODE) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = fd;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t n, off_t off,
    struct fuse_file_info *fi)
{
	ssize_t len;

	(void)path;
	len = pread(fi->fh, buf, n, off);
	return len < 0 ? -errno : (int)len;
}

static int fs_write(const char *path, const char *buf, size_t n, off_t off,
    struct fuse_file_info *fi)
{
	const char *r = rel(path);
	char act[PAGESZ];
	size_t len = n < PAGESZ ? n : PAGESZ;
	int e;

	(void)off;
	(void)fi;
	if (!strcmp(r, ctl_name)) {
		e = n ? ctl(buf, len) : 0;
		return e < 0 ? e : (int)len;
	}
	/* sysfs never calls a store for an empty write */
	if (!n) {
		log_write(r, buf, 0, "ok");
		return 0;
	}
	/* kernfs: a store through a file kept open after its node went away */
	if (!exists(r)) {
		log_write(r, buf, len, "ENODEV");
		return -ENODEV;
	}
	fault_take(r, act, sizeof act);
	/* short: nothing is stored, and one byte fewer reported written */
	if (!strcmp(act, "short")) {
		log_write(r, buf, len, "short");
		return len - 1;
	}
	e = fault_before(r, act);
	if (e) {
		log_write(r, buf, len, errname(e));
		return -e;
	}
	e = store(r, buf, len);
	log_write(r, buf, len, e < 0 ? errname(-e) : "ok");
	fault_after(act);
	return e < 0 ? e : (int)len;
}

/* sysfs ignores a size change, so "> file" in a shell works */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)size;
	(void)fi;
	return hidden(rel(path)) ? -ENOENT : 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close(fi->fh);
	return 0;
}

/* sysfs has no way to create or remove anything from user space */
static int fs_mkdir(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	return -EPERM;
}

static int fs_mknod(const char *path, mode_t mode, dev_t dev)
{
	(void)path;
	(void)mode;
	(void)dev;
	return -EPERM;
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path;
	(void)mode;
	(void)fi;
	return -EACCES;
}

/* unlink and rmdir */
static int fs_unlink(const char *path)
{
	(void)path;
	return -EPERM;
}

/* link and symlink */
static int fs_link(const char *from, const char *to)
{
	(void)from;
	(void)to;
	return -EPERM;
}

static int fs_rename(const char *from, const char *to, unsigned flags)
{
	(void)from;
	(void)to;
	(void)flags;
	return -EPERM;
}

/*
 * The kernel may keep a name after it went from the backing tree (see
 * fs_init): access(2) and opening a directory to read it ask here, by
 * path, so what is gone is gone.
 */
static int fs_access(const char *path, int mask)
{
	const char *r = rel(path);

	(void)mask;
	return hidden(r) || !exists(r) ? -ENOENT : 0;
}

static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	const char *r = rel(path);
	struct stat st;

	(void)fi;
	if (hidden(r) || fstatat(rootfd, r, &st, 0))
		return -ENOENT;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/*
	 * The kernel keeps the names it looked up, as it keeps kernfs's
	 * dentries, instead of asking here for every component of every
	 * path: a round trip to this process each, whose cost grew as the
	 * machine slowed and was most of what a path-heavy tool paid on
	 * the fake. What reads or writes (open, readlink, getattr, access,
	 * readdir) still comes here by path, and attributes, link targets
	 * and missing names are never kept: a link the driver core moved
	 * reads as it is now, a device that appears is seen at once, and a
	 * file or link that went reads as gone. The kernel answers alone a
	 * walk through a directory that went, and an O_PATH open of it; and
	 * a descriptor of a directory removed and made again (a replug)
	 * shows the new one, where sysfs answers ENOENT.
	 */
	cfg->entry_timeout = 86400;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.access = fs_access,
	.opendir = fs_opendir,
	.getattr = fs_getattr,
	.readlink = fs_readlink,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.release = fs_release,
	.mkdir = fs_mkdir,
	.rmdir = fs_unlink,
	.mknod = fs_mknod,
	.create = fs_create,
	.unlink = fs_unlink,
	.symlink = fs_link,
	.link = fs_link,
	.rename = fs_rename,
};

/* BACKDIR, LOGFILE and FAKESYS_TIMES opened, the control file made */
static int open_files(const char *back, const char *log)
{
	int fd;

	if (!realpath(back, backroot)) {
		perror("fakesys: backing directory");
		return -1;
	}
	rootfd = open(backroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		perror("fakesys: backing directory");
		return -1;
	}
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		perror("fakesys: log");
		return -1;
	}
	if (getenv("FAKESYS_TIMES")) {
		timefd = open(getenv("FAKESYS_TIMES"),
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (timefd < 0) {
			perror("fakesys: FAKESYS_TIMES");
			return -1;
		}
	}
	/* without it (a read-only tree) only the control file is missing */
	fd = openat(rootfd, ctl_name, O_WRONLY | O_CREAT | O_CLOEXEC, 0200);
	if (fd < 0)
		perror("fakesys: .fake_ctl");
	else
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char *fargv[64];
	int fargc = 0, i;

	if (argc < 4 || argc > 60) {
		fputs("usage: fakesys BACKDIR LOGFILE MOUNTPOINT "
		    "[FUSE-OPTION...]\n", stderr);
		return 2;
	}
	if (open_files(argv[1], argv[2]))
		return 1;
	/* no uevent socket (no privilege): the tree still works, silently */
	nlfd = uevent_open(0);
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[3];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-s";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=fakesys,subtype=fakesys";
	for (i = 4; i < argc; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
