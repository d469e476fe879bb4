/*
 * drvbind - bind devices to the drivers named on the kernel command line
 *
 * Rules come from /proc/cmdline ("drvbind=[BUS/]DEVICE:DRIVER", repeated),
 * from a config file, or from the arguments. Each device is waited for,
 * then moved to its driver through sysfs: driver_override, unbind, bind,
 * new_id where the driver does not know the device, a check of the
 * resulting driver link, and a rollback to the old driver on any failure.
 *
 * No heap: every buffer below is fixed and every overflow is reported.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"

#define VERSION "0.1"

static const char usage[] =
"usage: drvbind [-bnqv] [-r SYSFS] [-k CMDLINE] [-c CONF] [-t SECS] [-m MODPROBE] [RULE...]\n"
"       drvbind -l [-r SYSFS] [BUS]\n"
"RULE is [BUS/]DEVICE:DRIVER; see drvbind(8).\n";

enum {
	RULES_MAX = 64,
	CMDLINE_MAX = 4096,	/* the kernel's largest, MIPS; x86-64 and arm64: 2048 */
	CONF_MAX = 8192,
	PATH_SZ = 4 * NAME_SZ + 64,
	LINE_SZ = 960,		/* /dev/kmsg refuses records over ~992 bytes */
	SHOW_MAX = 80,		/* bytes of a refused rule quoted in its message */
	EVENT_SZ = 8192,
	DIRBUF_SZ = 4096,
	TIMEOUT_DEFAULT = 10,
	SETTLE_MS = 500,	/* how long an unbound device may still be probed */
	RESCAN_MS = 250,	/* re-scan interval where no uevents can come */
	BUSY_RETRIES = 3,
	NETLINK_KOBJECT_UEVENT = 15,
};

enum { LOG_ERR = 3, LOG_WARNING = 4, LOG_INFO = 6, LOG_DEBUG = 7, MORE = 8 };

enum state { WAITING, DONE, FAILED };

/* Not an errno: a check found the device on another driver, or none. */
enum { MISPLACED = -1 };

/* dev_move's fwd for a device whose driver_override names the new driver. */
enum { OVERRIDDEN = 2 };

/* musl-gcc does not see the kernel's uapi headers. */
struct sockaddr_nl {
	unsigned short nl_family;
	unsigned short nl_pad;
	unsigned int nl_pid;
	unsigned int nl_groups;
};

/* The small fields first: x86-64 reaches the first 128 bytes with one-byte offsets. */
struct rule {
	enum state state;
	int none, held, asked, busid;
	int err;		/* bind's refusal while the override holds the device */
	long long settle_at;
	char id[32];		/* the id taught through new_id, for the message */
	struct spec s;
	char bus[NAME_SZ];	/* s.bus, or the bus the device was found on */
	char orig[NAME_SZ];	/* driver before the first change, "" for none */
	char ovr[NAME_SZ];	/* driver_override before the first change */
};

/* The flags -b -l -n -q -v set, in the order of `opts' in main. */
enum { BG, LISTING, DRY, QUIET, VERBOSE };

static struct {
	int sysfd, kmsg, sock, poll_ms;
	int devfd;		/* the device of the rule being looked at, or -1 */
	int flag[5];
	unsigned timeout;
	const char *modprobe;
	int nrules, bad;
} g = { .sysfd = -1, .kmsg = -1, .sock = -1, .devfd = -1, .timeout = TIMEOUT_DEFAULT,
	.modprobe = "/sbin/modprobe" };

/* Apart from g: zero-initialised, so they cost no bytes in the binary. */
static struct rule rules[RULES_MAX];
static char modprobe_buf[PATH_SZ], init_path[PATH_SZ];

/* ---- messages ---- */

/* "<N>" is kept in front for /dev/kmsg; stderr gets the line after it. */
static char line[LINE_SZ];
static size_t line_len;

/*
 * While the rules are looked at (batch), stderr's lines wait here and go
 * out in one write before drvbind sleeps, forks or ends: a write a look,
 * not one a rule. /dev/kmsg takes a record a write: it gets each at once.
 */
static char out[4 * LINE_SZ];
static size_t out_len;
static int batch;

__attribute__((noinline)) static void out_flush(void)
{
	if (out_len)
		(void)!write(2, out, out_len);
	out_len = 0;
}

static void put_c(char c)
{
	if (line_len < sizeof line - 5)
		line[line_len++] = c;
	else
		memcpy(line + sizeof line - 5, "...", 3), line_len = sizeof line - 2;
}

static void put(const char *s)
{
	while (*s)
		put_c(*s++);
}

/* Small integers by hand: the printf family would outweigh the program. */
static char *num_str(char b[24], unsigned long n)
{
	char *p = b + 23;

	*p = '\0';
	do
		*--p = (char)('0' + n % 10);
	while (n /= 10);
	return p;
}

static void put_num(unsigned long n)
{
	char b[24];

	put(num_str(b, n));
}

/*
 * strerror's words for what sysfs, netlink and these calls can answer.
 * musl's whole table is an eighth of the size budget; the rest print
 * as "error N". Each entry: the errno, ':', its text, NUL.
 */
#define E_STR(n) #n
#define E(n, s) E_STR(n) ":" s "\0"
static const char errtab[] =
	E(EPERM, "Operation not permitted") E(ENOENT, "No such file or directory")
	E(EINTR, "Interrupted system call") E(EIO, "I/O error")
	E(ENXIO, "No such device or address") E(EAGAIN, "Resource temporarily unavailable")
	E(ENOMEM, "Out of memory") E(EACCES, "Permission denied")
	E(EBUSY, "Resource busy") E(EEXIST, "File exists") E(ENODEV, "No such device")
	E(EINVAL, "Invalid argument")
	E(ENAMETOOLONG, "Filename too long") E(EOVERFLOW, "Value too large for data type");
#undef E

static void put_err(int e)
{
	const char *t;
	int n;

	if (!e) {
		put("short write");
		return;
	}
	for (t = errtab; *t; t += str_len(t) + 1) {
		for (n = 0; *t != ':'; t++)
			n = n * 10 + *t - '0';
		if (n == e) {
			put(t + 1);
			return;
		}
	}
	put("error ");
	put_num((unsigned)e);
}

/* Quotes text that was refused: it may hold any byte, and any length. */
static void put_show(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n;

	put_c('"');
	for (n = 0; *s && n < SHOW_MAX; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			put("\\x");
			put_c(hex[c >> 4]);
			put_c(hex[c & 15]);
		} else {
			put_c((char)c);
		}
	}
	put(*s ? "\"..." : "\"");
}

/*
 * The one logger, errno kept. "%s" a string, "%q" refused input quoted,
 * "%u" a number, "%e" errno's text (0: a short write), "%r" a rule's
 * device as "BUS/DEVICE" (just "DEVICE" while its bus is not known).
 * The line goes to /dev/kmsg (at boot) with its priority, and to stderr
 * unless -q hides it. MORE: the line goes on in the next call.
 */
static void say(int prio, const char *fmt, ...)
{
	const struct rule *r;
	va_list ap;
	int e = errno, n;

	if (prio == LOG_DEBUG && !g.flag[VERBOSE])
		return;
	if (!line_len) {
		line_len = 3;
		put("drvbind: ");
	}
	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put_c(*fmt);
			continue;
		}
		switch (*++fmt) {
		case 's': put(va_arg(ap, const char *)); break;
		case 'q': put_show(va_arg(ap, const char *)); break;
		case 'u': put_num(va_arg(ap, unsigned)); break;
		case 'e': n = va_arg(ap, int); if (n >= 0) put_err(n); break;
		case 'r':
			r = va_arg(ap, const struct rule *);
			if (r->bus[0]) {
				put(r->bus);
				put_c('/');
			}
			put(r->s.dev);
			break;
		}
	}
	va_end(ap);
	if (!(prio & MORE)) {
		line[line_len++] = '\n';
		line[0] = '<', line[1] = (char)('0' + prio), line[2] = '>';
		if (g.kmsg >= 0 && prio != LOG_DEBUG)
			(void)!write(g.kmsg, line, line_len);
		if (!g.flag[QUIET] || prio <= LOG_WARNING) {
			if (out_len + line_len > sizeof out)
				out_flush();
			memcpy(out + out_len, line + 3, line_len - 3);
			out_len += line_len - 3;
			if (!batch)
				out_flush();
		}
		line_len = 0;
	}
	errno = e;
}

static const char *drv_or_none(const char *d)
{
	return *d ? d : "none";
}

/* ---- small string and file helpers, smaller than libc's ---- */

/* strcpy; every caller has checked the length. */
static void copy(char *d, const char *s)
{
	while ((*d++ = *s++))
		;
}

/* What follows p at the start of s; NULL if s does not start with p. */
static const char *after(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return 0;
	return s;
}

/* errno kept: it is the answer of the call before. */
static void fd_close(int fd)
{
	int e = errno;

	(void)syscall(SYS_close, fd);
	errno = e;
}

/* The raw call: musl's openat is a variadic wrapper; every fd here is close-on-exec. */
static int open_at(int dirfd, const char *path, int flags)
{
	return (int)syscall(SYS_openat, dirfd, path, flags | O_CLOEXEC);
}

/* ---- the process ---- */

/* The raw call: musl's signal() brings sigaction's restorer machinery along. */
static void sig_set(int sig, void (*handler)(int))
{
	/* The kernel's layout; its sigset is 64 bits on every architecture. */
	struct { void (*handler)(int); unsigned long flags; void *restorer; unsigned long mask[8 / sizeof(long)]; } sa = { handler, 0, 0, { 0 } };

	(void)syscall(SYS_rt_sigaction, sig, &sa, NULL, sizeof sa.mask);
}

/*
 * Where the compiler does not inline them (arm64, arm), struct copies and
 * clears call these; libc's unrolled versions cost more than half a
 * kilobyte for the few hundred bytes ever copied here. The attribute
 * keeps the loops from being turned back into calls to themselves; it
 * is gcc's, and the clang builds (the sanitizer runs, against glibc)
 * keep their libc's.
 */
#ifndef __clang__
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}
#endif

/* Single-threaded, no locks to reset: the bare system call is enough. */
static pid_t proc_fork(void)
{
	return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

/* ---- time ---- */

/* 32-bit musl has a 64-bit time_t: the time64 calls take its timespec. */
#ifdef SYS_clock_gettime64
#undef SYS_clock_gettime
#define SYS_clock_gettime SYS_clock_gettime64
#endif
#ifdef SYS_ppoll_time64
#undef SYS_ppoll
#define SYS_ppoll SYS_ppoll_time64
#endif

static long long now_ms(void)
{
	struct timespec ts;

	/* The raw call: musl's vDSO lookup costs more bytes than the call saves. */
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- sysfs access, all relative to g.sysfd ---- */

/* Joins a NULL-terminated list of parts into p; -1 (ENAMETOOLONG) if it does not fit. */
static int path_join(char *p, size_t size, ...)
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
#define PATH(p, ...) path_join(p, sizeof p, __VA_ARGS__, (const char *)0)

/*
 * Every name in a path is checked to hold no "/" and no "..", so what
 * opens here stays below the sysfs root.
 */
static int sys_open(const char *path, int flags)
{
	return open_at(g.sysfd, path, flags);
}

static int sys_exists(const char *path)
{
	/* The raw call: musl's faccessat carries a fork helper for AT_EACCESS. */
	return syscall(SYS_faccessat, g.sysfd, path, F_OK) == 0;
}

/* One write() of the whole value: sysfs stores take a value per write. errno 0: short. */
static int fd_put(int fd, const char *path, const char *val)
{
	size_t len = str_len(val);
	ssize_t n;

	say(LOG_DEBUG, "write %s %q", path, val);
	n = write(fd, val, len);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = 0;
	return -1;
}

/*
 * Writes to an attribute that is open already (fd), or else opens it
 * for the one write. One look at a rule keeps its driver_override and
 * its driver's bind open, so that reading and then writing one, or
 * finding and then writing the other, costs one open; sysfs takes a
 * store at any file offset.
 */
static int attr_put(int fd, const char *path, const char *val)
{
	int own = fd < 0, ret;

	if (own && (fd = sys_open(path, O_WRONLY)) < 0) {
		say(LOG_DEBUG, "write %s %q", path, val);
		return -1;
	}
	ret = fd_put(fd, path, val);
	if (own)
		fd_close(fd);
	return ret;
}

static int attr_write(const char *path, const char *val)
{
	return attr_put(-1, path, val);
}

/* Reads a whole attribute (sysfs returns it in one read) without its newline. */
static int fd_get(int fd, char *buf, size_t size)
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

static int attr_read(const char *path, char *buf, size_t size)
{
	int fd = sys_open(path, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = fd_get(fd, buf, size);
	fd_close(fd);
	return ret;
}

/* The last component of a link's target: the driver a "driver" link names. */
static int link_base(int dirfd, const char *path, char *name)
{
	char t[PATH_SZ];
	const char *b;
	ssize_t n = syscall(SYS_readlinkat, dirfd, path, t, sizeof t);

	if (n < 0)
		return -1;
	if ((size_t)n == sizeof t) {
		errno = ENAMETOOLONG;
		return -1;
	}
	t[n] = '\0';
	for (b = t + n; b > t && b[-1] != '/'; b--)
		;
	if (str_len(b) >= NAME_SZ) {
		errno = ENAMETOOLONG;
		return -1;
	}
	copy(name, b);
	return 0;
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
static int dir_scan(const char *path, int (*fn)(const char *name, void *ctx), void *ctx)
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

/* ---- devices and drivers ---- */

/* "bus/BUS/devices/DEVICE/ATTR" or "bus/BUS/drivers/DRIVER/ATTR" into p[PATH_SZ]. */
static int node_path(char *p, const char *bus, const char *kind, const char *name, const char *attr)
{
	return path_join(p, PATH_SZ, "bus/", bus, kind, name, attr ? "/" : "", attr ? attr : "",
	    (const char *)0);
}

static int dev_path(char *p, const struct rule *r, const char *attr)
{
	return node_path(p, r->bus, "/devices/", r->s.dev, attr);
}

/* The driver's directory or attribute exists. */
static int drv_has(const struct rule *r, const char *drv, const char *attr)
{
	char p[PATH_SZ];

	return node_path(p, r->bus, "/drivers/", drv, attr) == 0 && sys_exists(p);
}

/*
 * Where a device's attribute at `path' (from the root) is opened: while
 * a rule is looked at, g.devfd is its device's directory (rule_look),
 * and the attribute is one step from it; otherwise the root.
 */
static int dev_at(const char **path, const char *attr)
{
	if (g.devfd < 0)
		return g.sysfd;
	*path = attr;
	return g.devfd;
}

/* The driver a device is bound to now, "" for none. */
static int dev_driver(const char *bus, const char *dev, char *drv)
{
	char p[PATH_SZ];
	const char *at = p;
	int dirfd;

	drv[0] = '\0';
	if (node_path(p, bus, "/devices/", dev, "driver") < 0)
		return -1;
	dirfd = dev_at(&at, "driver");
	if (link_base(dirfd, at, drv) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

static int dev_write(const struct rule *r, const char *attr, const char *val)
{
	char p[PATH_SZ];

	if (dev_path(p, r, attr) < 0)
		return -1;
	return attr_write(p, val);
}

/* fd: the attribute open already, or -1. */
static int drv_put(const struct rule *r, const char *drv, const char *attr, const char *val, int fd)
{
	char p[PATH_SZ];

	if (node_path(p, r->bus, "/drivers/", drv, attr) < 0)
		return -1;
	return attr_put(fd, p, val);
}

static int drv_write(const struct rule *r, const char *drv, const char *attr, const char *val)
{
	return drv_put(r, drv, attr, val, -1);
}

struct find_ctx {
	const char *dev;
	char hit[2][NAME_SZ];
	int hits;
};

static int find_fn(const char *bus, void *ctx)
{
	struct find_ctx *c = ctx;
	char p[PATH_SZ];

	if (str_len(bus) >= NAME_SZ || PATH(p, "bus/", bus, "/devices/", c->dev) < 0 || !sys_exists(p))
		return 0;
	copy(c->hit[c->hits > 0], bus);
	return ++c->hits > 1;
}

/*
 * Sets r->bus once the device is there. Without a bus in the rule every
 * bus is searched; a bus id found on two buses is the rule's failure.
 * Returns 1 found, 0 not (yet), -1 failed.
 */
static int dev_find(struct rule *r)
{
	struct find_ctx c = { .dev = r->s.dev };
	char p[PATH_SZ];

	if (r->s.bus[0])
		return dev_path(p, r, NULL) == 0 && sys_exists(p);
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
 */
static int dev_id(const struct rule *r, char *id, size_t size)
{
	char a[16], b[16], c[16];

	if (id_read(r, "vendor", a) == 0 && id_read(r, "device", b) == 0)
		return path_join(id, size, a, " ", b, (const char *)0);
	if (id_read(r, "../idVendor", a) == 0 && id_read(r, "../idProduct", b) == 0 &&
	    id_read(r, "bInterfaceClass", c) == 0)
		return path_join(id, size, a, " ", b, " ", c, (const char *)0);
	errno = ENOENT;
	return -1;
}

/* Asks modprobe for a driver once, without waiting: its uevent says when it is there. */
static void drv_request(struct rule *r)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	char *argv[] = { (char *)g.modprobe, "-q", "--", r->s.drv, NULL };
	pid_t pid;

	if (r->asked || !*g.modprobe || g.flag[DRY])
		return;
	r->asked = 1;
	say(LOG_DEBUG, "asking %s for %s", g.modprobe, r->s.drv);
	pid = proc_fork();
	if (pid == 0) {
		sig_set(SIGPIPE, SIG_DFL);
		execve(g.modprobe, argv, envp);
		_exit(127);
	}
	if (pid < 0)
		say(LOG_ERR, "fork: %e", errno);
}

/* ---- the procedure of one rule ---- */

/* "BUS/DEV: OLD -> NEW", with the id taught where new_id was needed. */
static void say_moved(struct rule *r, const char *to)
{
	say(MORE, "%r: %s%s -> %s", r, g.flag[DRY] ? "would move " : "", drv_or_none(r->orig), to);
	say(LOG_INFO, r->id[0] ? " (new_id \"%s\")" : "", r->id);
	r->state = DONE;
}

static void say_stays(struct rule *r, const char *drv)
{
	say(LOG_INFO, "%r: %s%s%s", r, g.flag[DRY] ? "would stay " : "already ", *drv ? "on " : "unbound", drv);
	r->state = DONE;
}

/*
 * Bind said ENODEV: the driver's id table does not have the device. Teach
 * it the device's id through new_id, bind unless the kernel already did
 * (it binds every unbound match on new_id, and a second bind says EBUSY),
 * then take the id back out so the driver does not grab other devices
 * with that id later.
 */
static const char *teach(struct rule *r)
{
	char id[sizeof r->id], cur[NAME_SZ];
	const char *step = NULL;
	int e;

	if (dev_id(r, id, sizeof id) < 0) {
		errno = ENODEV;
		return "bind";
	}
	if (drv_write(r, r->s.drv, "new_id", id) < 0)
		return "new_id";
	copy(r->id, id);
	if (dev_driver(r->bus, r->s.dev, cur) < 0)
		step = "driver link";
	else if (!cur[0] && drv_write(r, r->s.drv, "bind", r->s.dev) < 0 && errno != EBUSY)
		step = "bind";
	e = errno;
	/* Not every bus has remove_id (ENOENT): there the id stays. */
	if (drv_write(r, r->s.drv, "remove_id", id) < 0 && errno != ENOENT)
		say(LOG_WARNING, "%r: %s/remove_id \"%s\": %e", r, r->s.drv, id, errno);
	errno = e;
	return step;
}

/* "add ID" or "del ID" for usbip-host's list of the devices it may take. */
static int busid_write(struct rule *r, const char *verb)
{
	char v[NAME_SZ + 4];

	copy(v, verb);
	copy(v + 4, r->s.dev);
	return drv_write(r, r->s.drv, "match_busid", v);
}

/*
 * Moves the device to `to' ("" for no driver): unbind, bind, then check
 * the driver link, since the success of a write is no proof (a probe
 * that binds nothing succeeds too). A native driver may still be probing
 * a device that just appeared: an unbind that says ENODEV or a bind that
 * says EBUSY means the device changed hands meanwhile, so look again.
 * fwd: the rule's own move, where match_busid and new_id apply (new_id
 * not with an override, OVERRIDDEN: that matches whatever the ids); `cur'
 * holds the driver just read and `bind' is the new driver's bind, open.
 * Returns NULL, or the failed step with errno set (MISPLACED: on `cur').
 */
static const char *dev_move(struct rule *r, const char *to, int fwd, int bind, char *cur)
{
	int tries, e;

	for (tries = 0; tries < BUSY_RETRIES; tries++) {
		if ((tries || !fwd) && dev_driver(r->bus, r->s.dev, cur) < 0)
			return "driver link";
		if (!strcmp(cur, to))
			return NULL;
		if (cur[0] && drv_write(r, cur, "unbind", r->s.dev) < 0) {
			if (errno == ENODEV)
				continue;
			return "unbind";
		}
		if (!*to)
			continue;
		/* usbip-host takes only the USB devices listed in its match_busid. */
		if (fwd && !r->busid && !strcmp(r->bus, "usb") && drv_has(r, to, "match_busid")) {
			if (busid_write(r, "add ") < 0)
				return "match_busid";
			r->busid = 1;
		}
		if (drv_put(r, to, "bind", r->s.dev, fwd ? bind : -1) == 0)
			break;
		e = errno;
		if (fwd == 1 && e == ENODEV && drv_has(r, to, "new_id")) {
			const char *step = teach(r);
			if (step)
				return step;
			break;
		}
		errno = e;
		if (e != EBUSY || tries == BUSY_RETRIES - 1)
			return "bind";
	}
	if (dev_driver(r->bus, r->s.dev, cur) < 0)
		return "verify";
	errno = MISPLACED;
	return strcmp(cur, to) ? "verify" : NULL;
}

/*
 * Puts the device back as it was: the old override, the old driver. A
 * device that had a driver must not be left without one.
 */
static const char *rollback(struct rule *r, int ovr)
{
	char cur[NAME_SZ], p[PATH_SZ];
	const char *step = NULL;

	if (r->busid) {
		r->busid = 0;
		(void)busid_write(r, "del ");
	}
	/* A zero-byte write never reaches sysfs; "\n" clears the override. */
	if (ovr && dev_write(r, "driver_override", r->ovr[0] ? r->ovr : "\n") < 0)
		return "driver_override";
	if (r->orig[0] && (step = dev_move(r, r->orig, 0, -1, cur)) && errno == MISPLACED)
		errno = cur[0] ? EBUSY : ENODEV;
	/* A device held while its driver loaded had no driver only because of the hold. */
	if (!r->orig[0] && r->held && node_path(p, r->bus, "/drivers_probe", "", NULL) == 0)
		(void)attr_write(p, r->s.dev);
	return step;
}

/* Reports the failure of a step and the rollback's result on one line. */
static void rule_fail(struct rule *r, const char *step, const char *cur, int ovr)
{
	int err = errno, rerr;
	const char *rb;
	char now[NAME_SZ];

	/*
	 * The rollback goes by path: a device unplugged and plugged again
	 * during the look is a new directory, which the one open since
	 * (g.devfd) no longer shows.
	 */
	g.devfd = -1;
	rb = rollback(r, ovr);
	rerr = errno;

	/* Where it had no driver, the rollback's drivers_probe may have found one. */
	if (r->orig[0] || dev_driver(r->bus, r->s.dev, now) < 0)
		copy(now, r->orig);

	/* One line for both: /dev/kmsg keeps about ten lines in five seconds. */
	say(MORE, "%r: %s -> %s failed at %s: ", r, drv_or_none(r->orig), r->none ? "none" : r->s.drv, step);
	if (err == MISPLACED)
		say(MORE, *cur ? "bound to %s" : "not bound", cur);
	else
		say(MORE, "%e", err);
	if (r->id[0])
		say(MORE, " after new_id \"%s\"", r->id);
	if (rb)
		say(LOG_ERR, "; rollback to %s failed at %s: %e", now, rb, rerr);
	else
		say(LOG_ERR, r->orig[0] ? "; back on %s" : now[0] ? "; now on %s" : "; left unbound", now);
	r->state = FAILED;
}

/* The override now keeps every other driver from the device until the rule ends. */
static void hold(struct rule *r)
{
	r->held = 1;
	say(LOG_DEBUG, "%r: held for %s by driver_override", r, r->s.drv);
}

/*
 * Steps 3 to 7 of a rule: override, unbind, bind, verify, or roll back.
 * ovr: the device has driver_override, at `op', open as `ofd' (or -1);
 * `bind' is the new driver's bind, open (or -1).
 */
static void rule_move(struct rule *r, const char *cur, int ovr, int ofd, const char *op, int bind)
{
	const char *to = r->none ? "" : r->s.drv, *step;
	char now[NAME_SZ];

	/* "none" in driver_override keeps every driver away, also later ones. */
	if (!strcmp(cur, to) && !(r->none && ovr && strcmp(r->ovr, "none"))) {
		/* A held override lets the kernel bind the driver as it registers. */
		if (r->held)
			say_moved(r, to);
		else
			say_stays(r, to);
		return;
	}
	copy(r->orig, cur);
	copy(now, cur);
	if (!g.flag[DRY]) {
		if (ovr && attr_put(ofd, op, r->none ? "none" : to) < 0)
			step = "driver_override";
		else
			step = dev_move(r, to, ovr ? OVERRIDDEN : 1, bind, now);
		/*
		 * Until the bus has finished adding a new device (PCI sets
		 * match_driver after the add uevent), bind says ENODEV even
		 * for the driver its override names, and then the kernel binds
		 * that driver itself. A device without a driver stays held so;
		 * at the deadline it is handed back.
		 */
		if (step && ovr && !cur[0] && errno == ENODEV && !strcmp(step, "bind")) {
			r->err = ENODEV;
			hold(r);
			return;
		}
		if (step) {
			rule_fail(r, step, now, ovr);
			return;
		}
	}
	if (strcmp(cur, to))
		say_moved(r, drv_or_none(to));
	else
		say_stays(r, to);
}

/*
 * One look at a rule: the device's driver and override, the driver's
 * bind. The override and the bind stay open for the move (attr_put):
 * fd[0] and fd[1]; fd[2] is the device's directory.
 */
static void rule_look(struct rule *r, long long now, int *fd)
{
	char cur[NAME_SZ], dp[PATH_SZ], op[PATH_SZ], bp[PATH_SZ], v[NAME_SZ] = "";
	const char *at = op;
	int *ofd = &fd[0], *bind = &fd[1], ovr, dirfd;

	/*
	 * The device's directory, opened through the bus's link, proves the
	 * device is there; its driver link, read now and again after the
	 * move, and its override are then one step from it. Where the bus is
	 * not known yet, or the open fails, every path starts at the root.
	 */
	if (r->bus[0] && dev_path(dp, r, "") == 0 && (fd[2] = sys_open(dp, O_PATH | O_DIRECTORY)) >= 0)
		g.devfd = fd[2];
	else if (dev_find(r) <= 0)
		return;
	if (dev_driver(r->bus, r->s.dev, cur) < 0) {
		say(LOG_ERR, "%r: cannot read driver link: %e", r, errno);
		r->state = FAILED;
		return;
	}
	dirfd = dev_at(&at, "driver_override");
	ovr = dev_path(op, r, "driver_override") == 0 &&
	    ((*ofd = open_at(dirfd, at, O_RDWR)) >= 0 || errno != ENOENT);
	/* Kept for the rollback, until the hold changes it; "(null)" is the kernel's word for unset. */
	if (*ofd >= 0 && fd_get(*ofd, v, sizeof v) == 0 && !r->held && strcmp(v, "(null)"))
		copy(r->ovr, v);
	if (r->none && !cur[0] && !ovr && !g.flag[DRY]) {
		/*
		 * No driver_override on this bus: an unbound device that has
		 * just appeared may still be probed by its native driver a
		 * moment after its add event. Only a quiet settle time proves
		 * that it stays unbound; a bind meanwhile is undone on the
		 * next look, which the bind's uevent brings.
		 */
		if (!r->settle_at)
			r->settle_at = now + SETTLE_MS;
		if (now >= r->settle_at)
			say_stays(r, "");
		return;
	}
	/*
	 * The kernel makes a driver's directory before its bind file and
	 * sends the add uevent last: only the bind file says it is there.
	 */
	if (!r->none && strcmp(cur, r->s.drv) && node_path(bp, r->bus, "/drivers/", r->s.drv, "bind") == 0 &&
	    (*bind = sys_open(bp, O_WRONLY)) < 0 && errno == ENOENT) {
		drv_request(r);
		/* Keep the native driver from taking the device while its driver loads. */
		if (!cur[0] && ovr && !r->held && !g.flag[DRY] && g.timeout && attr_put(*ofd, op, r->s.drv) == 0)
			hold(r);
		return;
	}
	rule_move(r, cur, ovr, *ofd, op, *bind);
}

static void rule_step(struct rule *r, long long now)
{
	int fd[3] = { -1, -1, -1 }, i;

	rule_look(r, now, fd);
	g.devfd = -1;
	/*
	 * A rule that has ended leaves its three files to exit, which
	 * closes them all at once (RULES_MAX rules, three each, at most);
	 * one that waits on closes them, and opens them again next time.
	 */
	if (r->state == WAITING)
		for (i = 0; i < 3; i++)
			if (fd[i] >= 0)
				fd_close(fd[i]);
}

/* The deadline passed: say what is missing, and hand a held device back. */
static void rule_expire(struct rule *r)
{
	char cur[NAME_SZ] = "";

	if (r->settle_at) {
		say_stays(r, "");
		return;
	}
	if (dev_find(r) <= 0) {
		if (r->state != FAILED)
			say(LOG_ERR, "%r: device not found (waited %u s)", r, g.timeout);
	} else if (r->err) {
		errno = r->err;
		rule_fail(r, "bind", "", 1);
	} else {
		/* The native driver may have a held device back: nothing is lost. */
		if (r->held)
			(void)rollback(r, 1);
		(void)dev_driver(r->bus, r->s.dev, cur);
		say(LOG_ERR, "%r: driver %s not found; %s%s%s (waited %u s)", r, r->s.drv,
		    r->held ? "now " : "stays ", cur[0] ? "on " : "unbound", cur, g.timeout);
	}
	r->state = FAILED;
}

/* ---- waiting ---- */

/*
 * Opened before the first scan, so that nothing that appears between the
 * scan and the first poll is missed.
 */
static int uevent_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = (int)syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    NETLINK_KOBJECT_UEVENT);
	int size = 1 << 20;

	if (fd < 0)
		return -1;
	/* Coldplug sends thousands of events; overflow (ENOBUFS) only costs a re-scan. */
	(void)syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
	if (syscall(SYS_bind, fd, &sa, sizeof sa) < 0) {
		fd_close(fd);
		return -1;
	}
	return fd;
}

/* Sleeps, using no CPU, until a uevent, the time `until', or the next re-scan. */
static void uevent_wait(long long until)
{
	static char buf[EVENT_SZ];
	struct pollfd pfd = { .fd = g.sock, .events = POLLIN };
	long long wait = until - now_ms();
	struct timespec ts;
	char *action, *devpath;
	ssize_t n;

	if (g.poll_ms && wait > g.poll_ms)
		wait = g.poll_ms;
	if (wait < 0)
		wait = 0;
	ts.tv_sec = wait / 1000;
	ts.tv_nsec = wait % 1000 * 1000000;
	/* The raw call: musl's poll() converts to ppoll itself where poll is missing (arm64). */
	if (syscall(SYS_ppoll, &pfd, g.sock >= 0, &ts, NULL, 0) <= 0)
		return;
	for (;;) {
		n = syscall(SYS_recvfrom, g.sock, buf, sizeof buf, MSG_DONTWAIT, 0, 0);
		/* ENOBUFS: events were lost; the look at every pending rule that follows makes up for them. */
		if (n < 0 && errno == ENOBUFS)
			continue;
		if (n < 0)
			break;
		if (g.flag[VERBOSE] && uevent_parse(buf, (size_t)n, &action, &devpath) == 0)
			say(LOG_DEBUG, "uevent %s %s", action, devpath);
	}
}

/*
 * With -b the parent returns once what was present is done; the child
 * keeps the uevent socket, so no event is lost in between.
 */
static int bg_fork(int pending)
{
	pid_t pid = proc_fork();

	if (pid < 0) {
		say(LOG_ERR, "fork: %e; waiting in the foreground", errno);
		return 0;
	}
	if (pid == 0) {
		(void)syscall(SYS_setsid);
		return 0;
	}
	say(LOG_INFO, "waiting in the background for %u rule(s)", pending);
	return 1;
}

static int rules_run(void)
{
	long long deadline = now_ms() + g.timeout * 1000LL, now, next;
	int i, pending, failed = 0, forked = 0;

	batch = 1;
	for (;;) {
		now = now_ms();
		next = deadline;
		pending = 0;
		while (syscall(SYS_wait4, -1, 0, WNOHANG, 0) > 0)
			;
		for (i = 0; i < g.nrules; i++) {
			struct rule *r = &rules[i];
			if (r->state != WAITING)
				continue;
			rule_step(r, now);
			if (r->state != WAITING)
				continue;
			pending++;
			if (r->settle_at && r->settle_at < next)
				next = r->settle_at;
		}
		if (!pending || now >= deadline)
			break;
		out_flush();
		if (g.flag[BG] && !forked && (forked = 1) && bg_fork(pending))
			goto count;
		uevent_wait(next);
	}
	for (i = 0; i < g.nrules; i++)
		if (rules[i].state == WAITING)
			rule_expire(&rules[i]);
count:
	batch = 0;
	out_flush();
	for (i = 0; i < g.nrules; i++)
		failed += rules[i].state == FAILED;
	return failed || g.bad;
}

/* ---- where rules come from ---- */

/* where: "" for the command line and arguments, "FILE:LINE: " for the config. */
static void rule_add(const char *text, const char *where)
{
	struct spec sp;
	const char *err = rule_parse(&sp, text);
	struct rule *r;
	int i = 0;

	if (!err) {
		/* A later rule for the same device replaces the earlier one. */
		while (i < g.nrules && (strcmp(rules[i].s.dev, sp.dev) ||
		    (rules[i].s.bus[0] && sp.bus[0] && strcmp(rules[i].s.bus, sp.bus))))
			i++;
		if (i == RULES_MAX)
			err = "more than 64 rules";
	}
	if (err) {
		say(LOG_ERR, "%sbad rule %q: %s", where, text, err);
		g.bad++;
		return;
	}
	if (i == g.nrules)
		g.nrules++;
	r = &rules[i];
	memset(r, 0, sizeof *r);
	r->s = sp;
	copy(r->bus, sp.bus);
	r->none = !strcmp(sp.drv, "none");
}

/* One drvbind parameter, from the command line or the config file. */
static void param(const char *name, const char *val, const char *where)
{
	const char *err = NULL, *k = after(name, "drvbind");
	char *path = NULL;

	if (!val)
		val = "";
	if (!k)
		return;
	if (!*k)
		rule_add(val, where);
	else if (*k++ != '.')
		return;
	else if (!strcmp(k, "timeout"))
		err = secs_parse(val, &g.timeout);
	else if (!strcmp(k, "modprobe"))
		g.modprobe = path = modprobe_buf;
	else if (!strcmp(k, "init"))
		path = init_path;
	else
		err = "unknown parameter";
	if (path && str_len(val) >= PATH_SZ)
		err = "path too long";
	else if (path)
		copy(path, val);
	if (err) {
		say(LOG_ERR, "%sbad %q=%q: %s", where, name, val, err);
		g.bad++;
	}
}

/*
 * Reads a whole small file. Returns its length, or -1: missing,
 * unreadable, or not fitting in size - 1 (EFBIG). The kernel's strings
 * end at a NUL, and so does the text here.
 */
static ssize_t file_read(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open_at(AT_FDCWD, path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, size - (size_t)len)) > 0 && (len += n) < (ssize_t)size)
		;
	fd_close(fd);
	if (n < 0)
		return -1;
	if (len == (ssize_t)size) {
		errno = EFBIG;
		return -1;
	}
	buf[len] = '\0';
	if ((ssize_t)str_len(buf) < len)
		say(LOG_WARNING, "%s: NUL byte at offset %u; the rest is ignored", path, (unsigned)str_len(buf));
	return len;
}

/* must: -c named it, so its absence is an error; the default may be missing. */
static char *file_load(const char *path, char *buf, size_t size, int must)
{
	if (file_read(path, buf, size) >= 0)
		return buf;
	if (must || errno != ENOENT) {
		if (errno == EFBIG)
			say(LOG_ERR, "%s: longer than %u bytes; not read", path, (unsigned)size - 1);
		else
			say(LOG_ERR, "%s: %e", path, errno);
		g.bad++;
	}
	return NULL;
}

static void cmdline_load(const char *path)
{
	static char buf[CMDLINE_MAX + 1];
	char *args = file_load(path, buf, sizeof buf, 1), *name, *val;

	while (args && (name = cmdline_next(&args, &val)))
		param(name, val, "");
}

/*
 * One rule or drvbind.* parameter a line; a line starting with '#' is a
 * comment. The line is taken whole, so names with spaces need no quotes.
 */
static void conf_load(const char *path, int must)
{
	static char buf[CONF_MAX + 1];
	char where[PATH_SZ + 32], num[24], *p = file_load(path, buf, sizeof buf, must), *next, *end, *eq;
	const char *k;
	unsigned lineno = 0;

	for (; p && *p; p = next) {
		for (end = p; *end && *end != '\n'; end++)
			;
		next = *end ? end + 1 : end;
		lineno++;
		/* Blanks and stray control bytes (a CR) around the line go. */
		while (end > p && (unsigned char)end[-1] <= ' ')
			end--;
		*end = '\0';
		while (*p && (unsigned char)*p <= ' ')
			p++;
		if (!*p || *p == '#')
			continue;
		if (path_join(where, sizeof where, path, ":", num_str(num, lineno), ": ", (const char *)0) < 0)
			copy(where, "config: ");
		if ((k = after(p, "drvbind")) && (*k == '=' || *k == '.')) {
			for (eq = p; *eq && *eq != '='; eq++)
				;
			if (*eq)
				*eq++ = '\0';
			else
				eq = NULL;
			param(p, eq, where);
		} else {
			rule_add(p, where);
		}
	}
}

/* ---- listing ---- */

static int list_dev(const char *dev, void *bus)
{
	char p[PATH_SZ], drv[NAME_SZ], ovr[NAME_SZ];

	line_len = 0;
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
	(void)!write(1, line, line_len);
	line_len = 0;
	return 0;
}

static int list_bus(const char *bus, void *unused)
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

/* ---- main ---- */

/* Waits and applies the rules loaded; the exit status. */
static int rules_apply(void)
{
	if (!g.nrules)
		return g.bad != 0;
	g.sock = uevent_open();
	if (g.sock < 0)
		g.poll_ms = RESCAN_MS;
	return rules_run();
}

/*
 * PID 1 (rdinit= or init=): the kernel's arguments belong to the next
 * init, and an exit would panic the kernel, so whatever fails this ends
 * in an exec or waits forever. Mounts only what is missing and detaches
 * it again before the exec (the sysfs fd keeps working), so the next
 * init finds the machine as the kernel left it. Pending rules go to a
 * background child, as with -b, so the next init starts at once.
 */
static const char *const mnt[][3] = {
	{ "proc", "/proc", "/proc/self" },
	{ "sysfs", "/sys", "/sys/kernel" },
	{ "devtmpfs", "/dev", "/dev/kmsg" },
};
static int made[3];

static void pid1_mount(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (syscall(SYS_faccessat, AT_FDCWD, mnt[i][2], F_OK) == 0)
			continue;
		/* /dev keeps its device nodes: /dev/kmsg is one. */
		made[i] = syscall(SYS_mount, mnt[i][0], mnt[i][1], mnt[i][0],
		    MS_NOSUID | (i < 2 ? MS_NODEV | MS_NOEXEC : 0), NULL) == 0;
	}
	g.flag[BG] = 1;
}

static void pid1_exec(int status, char **argv, char **envp)
{
	static const char *const init[] = { init_path, "/init", "/sbin/init", "/etc/init", "/bin/init", "/bin/sh" };
	int i;

	if (syscall(SYS_getpid) != 1)
		_exit(status);
	for (i = 0; i < 3; i++)
		if (made[i])
			(void)syscall(SYS_umount2, mnt[i][1], MNT_DETACH);
	sig_set(SIGPIPE, SIG_DFL);
	for (i = 0; i < 6; i++) {
		/* Never this program again: with rdinit=/init it would be /init. */
		if (!*init[i] || !strcmp(init[i], argv[0]))
			continue;
		argv[0] = (char *)init[i];
		execve(init[i], argv, envp);
	}
	say(LOG_ERR, "no init to run: %e", errno);
	for (;;)
		(void)syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
}

static int usage_error(const char *what, char opt)
{
	say(LOG_ERR, "-%s: %s", (char[]){ opt, '\0' }, what);
	(void)!write(2, usage, sizeof usage - 1);
	return 2;
}

int main(int argc, char **argv, char **envp)
{
	/* The options that take a value, in the order of `opts'. */
	enum { CONF, CMDLINE, MODPROBE, ROOT, SECS };
	const char *val[5] = { NULL }, *root = "/sys", *err;
	/* Five flags (g.flag), then five options that take a value (val). */
	static const char opts[] = "blnqvckmrt";
	unsigned t = 0;
	int i, pid1 = syscall(SYS_getpid) == 1;

	/* A background child whose stderr went away must not die of it. */
	sig_set(SIGPIPE, SIG_IGN);
	if (pid1) {
		pid1_mount();
		argc = 1;
	}
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i] + 1;
		int k;
		if (!strcmp(a, "-")) {
			i++;
			break;
		}
		for (; *a; a++) {
			for (k = 0; opts[k] && opts[k] != *a; k++)
				;
			if (k < 5) {
				g.flag[k] = 1;
				continue;
			}
			if (*a == 'h' || *a == 'V') {
				(void)!write(1, *a == 'h' ? usage : "drvbind " VERSION "\n",
				    *a == 'h' ? sizeof usage - 1 : sizeof "drvbind " VERSION);
				return 0;
			}
			if (!opts[k])
				return usage_error("unknown option", *a);
			k -= 5;
			val[k] = a[1] ? a + 1 : argv[++i];
			if (!val[k])
				return usage_error("missing value", *a);
			break;
		}
	}
	if (val[SECS] && (err = secs_parse(val[SECS], &t)))
		return usage_error(err, 't');
	if (g.flag[LISTING] && argc - i > 1)
		return usage_error("one bus at most", 'l');
	/* At boot the console may be quiet or gone: the kernel log keeps the lines. */
	if (i == argc && !val[CMDLINE])
		g.kmsg = open_at(AT_FDCWD, "/dev/kmsg", O_WRONLY);
	/* A tree given with -r need not send uevents: it is also re-scanned. */
	if (val[ROOT]) {
		root = val[ROOT];
		g.poll_ms = RESCAN_MS;
	}
	/* Only a base for the *at calls: O_PATH does not open the directory itself. */
	g.sysfd = open_at(AT_FDCWD, root, O_PATH | O_DIRECTORY);
	if (g.sysfd < 0 || !sys_exists("bus/")) {
		say(LOG_ERR, "%s: not a sysfs tree: %e", root, g.sysfd < 0 ? errno : ENOENT);
		if (pid1)
			pid1_exec(1, argv, envp);
		return 1;
	}
	if (g.flag[LISTING])
		return (argv[i] ? list_bus(argv[i], NULL) : dir_scan("bus", list_bus, NULL)) < 0;

	if (i < argc) {
		while (i < argc)
			rule_add(argv[i++], "");
	} else {
		conf_load(val[CONF] ? val[CONF] : "/etc/drvbind.conf", val[CONF] != NULL);
		cmdline_load(val[CMDLINE] ? val[CMDLINE] : "/proc/cmdline");
	}
	/* -t and -m win over what the command line and the config file say. */
	if (val[SECS])
		g.timeout = t;
	if (val[MODPROBE])
		g.modprobe = val[MODPROBE];
	if (g.flag[DRY])
		g.timeout = 0;
	i = rules_apply();
	if (pid1)
		pid1_exec(i, argv, envp);
	return i;
}
