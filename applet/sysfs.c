/* SPDX-License-Identifier: MIT */
/*
 * Sysfs access: every path is relative to one directory fd on the sysfs
 * root (sysfd), so nothing escapes the root and the fd survives a
 * `mount --move` of /sys. Paths joined with their length checked,
 * attributes read and written whole, links read, directories scanned
 * on a fixed buffer. Calls log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drvbind.h"

enum { DIRBUF_SZ = 4096 };

/* An O_PATH base for the *at calls, set once by sys_root. */
static int sysfd = -1;

/* errno kept: it is the answer of the call before. */
void fd_close(int fd)
{
	int e = errno;

	(void)syscall(SYS_close, fd);
	errno = e;
}

/* The raw call: musl's openat is a variadic wrapper; every fd here is close-on-exec. */
int open_at(int dirfd, const char *path, int flags)
{
	return (int)syscall(SYS_openat, dirfd, path, flags | O_CLOEXEC);
}

/* The raw call: musl's fstat goes through fstatat and /proc/self/fd, half a KiB. */
int fd_stat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

/* Joins a NULL-terminated list of parts into p; -1 (ENAMETOOLONG) if it does not fit. */
int path_join(char *p, size_t size, ...)
{
	va_list ap;
	const char *s;
	size_t len = 0, n;
	int ret = 0;

	va_start(ap, size);
	while ((s = va_arg(ap, const char *))) {
		n = str_len(s);
		if (len + n >= size) {
			ret = -1;
			break;
		}
		memcpy(p + len, s, n);
		len += n;
	}
	va_end(ap);
	p[len] = '\0';
	if (ret)
		errno = ENAMETOOLONG;
	return ret;
}


/*
 * Every name in a path is checked to hold no "/" and no "..", so what
 * opens here stays below the sysfs root.
 */
int sys_open(const char *path, int flags)
{
	return open_at(sysfd, path, flags);
}

int sys_exists(const char *path)
{
	/* The raw call: musl's faccessat carries a fork helper for AT_EACCESS. */
	return syscall(SYS_faccessat, sysfd, path, F_OK) == 0;
}

/*
 * Writes to an attribute that is open already (fd), or else opens it
 * for the one write. One look at a rule keeps its driver_override and
 * its driver's bind open, so that reading and then writing one, or
 * finding and then writing the other, costs one open; sysfs takes a
 * store at any file offset. One write() of the whole value: sysfs
 * stores take a value per write. 0; or -1, errno set: SHORT_WRITE
 * where the store took part of the value.
 */
int attr_store(int fd, const char *path, const char *val)
{
	size_t len = str_len(val);
	int own = fd < 0, err;
	ssize_t n;

	if (own)
		fd = sys_open(path, O_WRONLY);
	/* -v shows every write tried, also one whose open failed. */
	say(LOG_DEBUG, "write %s %q", path, val);
	if (fd < 0)
		return -1;
	n = write(fd, val, len);
	err = errno;
	if (own)
		fd_close(fd);
	if (n == (ssize_t)len)
		return 0;
	errno = n < 0 ? err : SHORT_WRITE;
	return -1;
}

int attr_write(const char *path, const char *val)
{
	return attr_store(-1, path, val);
}

/* Reads a whole attribute (sysfs returns it in one read) without its newline. */
int fd_get(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size);

	if (n < 0)
		return -1;
	if ((size_t)n == size) {
		errno = EOVERFLOW;
		return -1;
	}
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

int attr_read(const char *path, char *buf, size_t size)
{
	int fd = sys_open(path, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = fd_get(fd, buf, size);
	fd_close(fd);
	return ret;
}

/* A link's target, whole, into t[PATH_SZ]: its length, or -1. */
static ssize_t link_read(int dirfd, const char *path, char *t)
{
	ssize_t n = syscall(SYS_readlinkat, dirfd, path, t, PATH_SZ);

	if (n == PATH_SZ) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (n >= 0)
		t[n] = '\0';
	return n;
}

/* The last component of a link's target: the driver a "driver" link names. */
int link_base(int dirfd, const char *path, char *name)
{
	char t[PATH_SZ];
	const char *b;
	ssize_t n = link_read(dirfd, path, t);

	if (n < 0)
		return -1;
	for (b = t + n; b > t && b[-1] != '/'; b--)
		;
	if (t + n - b >= NAME_SZ) {
		errno = ENAMETOOLONG;
		return -1;
	}
	copy(name, b);
	return 0;
}

/*
 * udev's ATTRS{}: the attribute `attr' of the device that the bus link
 * `link' leads to, or of its nearest parent that has one. Every bus link
 * leads into devices/ ("../../../devices/PATH"); PATH is walked down from
 * there a directory at a time, none of them a link (O_NOFOLLOW) and none
 * "..", so that no tree, however it is linked, leads the walk out of
 * devices/. The deepest directory with the attribute wins. 0, or -1
 * where none has it or the walk stops short (its one caller asks only
 * whether the value matches).
 */
int parent_read(const char *link, const char *attr, char *buf, size_t size)
{
	char t[PATH_SZ], *c, *e;
	int dir, fd, ret = -1;

	if (link_read(sysfd, link, t) < 0 || !(c = (char *)after(t, "../../../devices/")))
		return -1;
	dir = sys_open("devices", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	for (; *c; c = e) {
		for (e = c; *e && *e != '/'; e++)
			;
		if (*e)
			*e++ = '\0';
		fd = strcmp(c, "..") ? open_at(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW) : -1;
		fd_close(dir);
		/* Short of the device, a parent's value is not the nearest. */
		if ((dir = fd) < 0)
			return -1;
		if ((fd = open_at(dir, attr, O_RDONLY | O_NOFOLLOW)) >= 0) {
			ret = fd_get(fd, buf, size);
			fd_close(fd);
		}
	}
	fd_close(dir);
	return ret;
}

struct dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * Calls fn for every entry of a directory but "." and "..". getdents64 on
 * a fixed buffer: musl's opendir would allocate. fn returns non-zero to stop.
 */
int dir_scan(const char *path, int (*fn)(const char *name, void *ctx), void *ctx)
{
	/* On the stack: listing scans a bus's devices inside the scan of the buses. */
	char buf[DIRBUF_SZ] __attribute__((aligned(8)));
	int fd = sys_open(path, O_RDONLY | O_DIRECTORY), stop = 0;
	long n = 0, off;

	if (fd < 0)
		return -1;
	while (!stop && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (off = 0; !stop && off < n; ) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			/* "." and "..": no bus, device or driver name starts with a dot. */
			if (d->d_name[0] != '.')
				stop = fn(d->d_name, ctx);
		}
	}
	fd_close(fd);
	return n < 0 || stop < 0 ? -1 : 0;
}

struct next {
	char *name;
	char prev[NAME_SZ];
};

static int next_fn(const char *name, void *ctx)
{
	struct next *n = ctx;

	if (str_len(name) < NAME_SZ && strcmp(name, n->prev) > 0 && (!n->name[0] || strcmp(name, n->name) < 0))
		copy(n->name, name);
	return 0;
}

/*
 * The entry of a directory that comes after `name' in strcmp's order,
 * into name ("" in: the first; "" out: none after it). A scan a name:
 * sorted without keeping the names. 0, or -1 with errno.
 */
int dir_next(const char *path, char *name)
{
	struct next n;

	n.name = name;
	copy(n.prev, name);
	name[0] = '\0';
	return dir_scan(path, next_fn, &n);
}

/*
 * Only a base for the *at calls: O_PATH does not open the directory
 * itself. 0, or -1 with errno saying why root is no sysfs tree (ENOENT:
 * it has no bus/).
 */
int sys_root(const char *root)
{
	sysfd = open_at(AT_FDCWD, root, O_PATH | O_DIRECTORY);
	if (sysfd < 0)
		return -1;
	if (sys_exists("bus/"))
		return 0;
	errno = ENOENT;
	return -1;
}

/* The root's fd, for a path that another directory fd may stand in for. */
int sys_dirfd(void)
{
	return sysfd;
}
