/* SPDX-License-Identifier: MIT */
/*
 * Messages: the one logger, say(), and what it writes to, stderr and
 * /dev/kmsg; and lines that are no messages (-l's, a datagram), made
 * the same way in their makers' buffers. Small integers and errno's
 * words by hand, since the printf family and musl's strerror table
 * would outweigh the program.
 * Calls write, mem.c and main.c's flag.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "drvbind.h"

enum { SHOW_MAX = 80 };	/* bytes of a refused rule quoted in its message */

/*
 * The logger's state: /dev/kmsg at boot (or -1), which keeps the lines
 * when the console is quiet or gone; the length of what waits in `out';
 * and whether lines wait (batch).
 */
static struct {
	int kmsg, batch;
	size_t out_len;
} lg = { .kmsg = -1 };

/* say()'s line: "<N>" is kept in front for /dev/kmsg; stderr gets the line after it. */
static struct line msg;

/*
 * While the rules are looked at (batch), stderr's lines wait here and go
 * out in one write before drvbind sleeps, forks or ends: one write for
 * a pass over the rules, not one for each rule. /dev/kmsg takes one
 * record a write: it gets each line at once.
 */
static char out[4 * LINE_SZ];

void out_flush(void)
{
	if (lg.out_len)
		(void)!write(2, out, lg.out_len);
	lg.out_len = 0;
}


/* While on, stderr's lines wait for out_flush(); off flushes them. */
void log_batch(int on)
{
	lg.batch = on;
	if (!on)
		out_flush();
}

/* fd: /dev/kmsg, open; every line goes there too, with its priority. */
void log_kmsg(int fd)
{
	lg.kmsg = fd;
}

/*
 * n bytes of the line, whole: where they do not fit, "..." ends the
 * line instead, and nothing more goes on it, so that an escape is never
 * cut in two. The room left keeps the "...", and the newline that ends
 * the line.
 */
static void put_n(struct line *l, const char *s, size_t n)
{
	if (l->cut)
		return;
	if (l->len + n > sizeof l->b - 5) {
		memcpy(l->b + l->len, "...", 3);
		l->len += 3;
		l->cut = 1;
		return;
	}
	memcpy(l->b + l->len, s, n);
	l->len += n;
}

static void put_c(struct line *l, char c)
{
	put_n(l, &c, 1);
}

/* The line's own text: the format's, or a label. A value goes through put_val. */
static void put(struct line *l, const char *s)
{
	while (*s)
		put_c(l, *s++);
}

/* A byte as \xNN, in lowercase hex as the kernel's %02x, whole. */
static void put_hex(struct line *l, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

	put_n(l, e, sizeof e);
}

/*
 * A byte of a value as the kernel shows a /dev/kmsg record to its
 * readers (msg_add_ext_text in printk.c): a control byte, a backslash
 * and every byte from 0x7f on as \xNN, so that the line holds printable
 * ASCII alone. Bytes from 0x80 on go too, UTF-8's with them: the console
 * (vt.c's vc_is_control) takes 0x9b for CSI, as the byte itself where it
 * is not in UTF-8, a byte a valid character may hold (U+201B is e2 80
 * 9b), and as U+009B (c2 9b) where it is; which is safe depends on a
 * locale drvbind cannot know. The names and ids in sysfs are ASCII in
 * practice.
 */
static void put_byte(struct line *l, unsigned char c)
{
	if (c < 0x20 || c >= 0x7f || c == '\\')
		put_hex(l, c);
	else
		put_c(l, (char)c);
}

/*
 * A value read from a device or from sysfs, or given: a serial, a
 * driver's name from its link, a device's from its directory entry, a
 * uevent's DEVPATH. A device chooses its strings, and sysfs hands them
 * on as they came: unescaped, a newline would make a line of the
 * device's own, an escape sequence would have the terminal hide or
 * rewrite what follows. A backslash is escaped as well, so that "\x0a"
 * in a value shows as "\x5cx0a", never as an escaped newline.
 */
static void put_val(struct line *l, const char *s)
{
	for (; *s; s++)
		put_byte(l, (unsigned char)*s);
}

/* Small integers by hand: the printf family would outweigh the program. */
char *num_str(char b[24], unsigned long n)
{
	char *p = b + 23;

	*p = '\0';
	do
		*--p = (char)('0' + n % 10);
	while (n /= 10);
	return p;
}

/* "BUS/DEVICE", or just "DEVICE" where the bus is not known. */
static void put_dev(struct line *l, const char *bus, const char *dev)
{
	if (*bus) {
		put_val(l, bus);
		put_c(l, '/');
	}
	put_val(l, dev);
}

static void put_num(struct line *l, unsigned long n)
{
	char b[24];

	put(l, num_str(b, n));
}

/*
 * strerror's words for what sysfs, netlink and these calls can answer.
 * musl's whole table is an eighth of the size budget; the rest print
 * as "error N". One list makes both tables: the errnos, a byte each
 * (every one here is below 256; gcc warns of one that is not), and
 * their texts, each ending at a NUL, in the same order.
 */
#define ERRORS(E) \
	E(EPERM, "Operation not permitted") E(ENOENT, "No such file or directory") \
	E(EINTR, "Interrupted system call") E(EIO, "I/O error") \
	E(ENXIO, "No such device or address") E(EAGAIN, "Resource temporarily unavailable") \
	E(ENOMEM, "Out of memory") E(EACCES, "Permission denied") \
	E(EBUSY, "Resource busy") E(EEXIST, "File exists") E(ENODEV, "No such device") \
	E(ENOTDIR, "Not a directory") E(EINVAL, "Invalid argument") \
	E(ENAMETOOLONG, "Filename too long") E(EOVERFLOW, "Value too large for data type") \
	E(EADDRINUSE, "Address in use") E(ECONNREFUSED, "Connection refused")
#define E_NUM(n, s) n,
#define E_TEXT(n, s) s "\0"
static const unsigned char errnos[] = { ERRORS(E_NUM) };
static const char errtexts[] = ERRORS(E_TEXT);

/* errno's text, or that of one of drvbind's own reasons (SHORT_WRITE). */
const char *err_str(int e)
{
	static char unknown[24] = "error ";
	const char *t = errtexts;
	char num[24];
	size_t i;

	if (e == SHORT_WRITE)
		return "short write";
	for (i = 0; i < sizeof errnos; i++, t += str_len(t) + 1)
		if (errnos[i] == e)
			return t;
	copy(unknown + 6, num_str(num, (unsigned)e));
	return unknown;
}

/* Quotes text that was refused: it may hold any byte, and any length. */
static void put_show(struct line *l, const char *s)
{
	size_t n;

	put_c(l, '"');
	for (n = 0; *s && n < SHOW_MAX; s++, n++) {
		if (*s == '"')
			put_hex(l, '"');
		else
			put_byte(l, (unsigned char)*s);
	}
	put(l, *s ? "\"..." : "\"");
}

/* One conversion of say()'s format: the character after the '%'. */
static void put_arg(struct line *l, char conv, va_list *ap)
{
	const struct rule *r;
	const char *s;
	int n;

	switch (conv) {
	case 's':
	case 'q':
		s = va_arg(*ap, const char *);
		if (conv == 's')
			put_val(l, s);
		else
			put_show(l, s);
		break;
	case 'r':
		r = va_arg(*ap, const struct rule *);
		put_dev(l, r->bus, r->s.dev);
		break;
	case 'u':
		put_num(l, va_arg(*ap, unsigned));
		break;
	case 'e':
	case 'm':
		n = conv == 'm' ? errno : va_arg(*ap, int);
		if (n >= 0)
			put(l, err_str(n));
		break;
	}
}

/*
 * say()'s line goes to /dev/kmsg (at boot) with its priority, and to
 * stderr unless -q hides it.
 */
static void msg_end(int prio)
{
	msg.b[msg.len++] = '\n';
	msg.b[0] = '<', msg.b[1] = (char)('0' + prio), msg.b[2] = '>';
	if (lg.kmsg >= 0 && prio != LOG_DEBUG)
		(void)!write(lg.kmsg, msg.b, msg.len);
	if (!flag[QUIET] || prio <= LOG_WARNING) {
		if (lg.out_len + msg.len > sizeof out)
			out_flush();
		memcpy(out + lg.out_len, msg.b + 3, msg.len - 3);
		lg.out_len += msg.len - 3;
		if (!lg.batch)
			out_flush();
	}
}

/*
 * The format's conversions: "%s" a string, "%q" refused input quoted,
 * "%u" a number, "%e" an errno's text (or SHORT_WRITE's), "%m" errno's
 * own, "%r" a rule's device as "BUS/DEVICE" (just "DEVICE" while its
 * bus is not known). The format's own text goes as it is; what "%s"
 * and "%r" bring is a value, escaped (put_val): it may come from a
 * device.
 */
static void put_fmt(struct line *l, const char *fmt, va_list *ap)
{
	for (; *fmt; fmt++)
		if (*fmt != '%')
			put_c(l, *fmt);
		else
			put_arg(l, *++fmt, ap);
}

/* The one logger: one whole message a call, errno kept; its format as put_fmt's. */
void say(int prio, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	if (prio == LOG_DEBUG && !flag[VERBOSE])
		return;
	msg.len = 3;
	msg.cut = 0;
	put(&msg, "drvbind: ");
	va_start(ap, fmt);
	put_fmt(&msg, fmt, &ap);
	va_end(ap);
	msg_end(prio);
	errno = e;
}

/* Adds to a line that is no message (-l's, a datagram) what fmt says, as say() would. */
void line_put(struct line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_fmt(l, fmt, &ap);
	va_end(ap);
}

/* A line that line_put made goes to fd, with its newline, in one write. */
void line_write(struct line *l, int fd)
{
	l->b[l->len++] = '\n';
	(void)!write(fd, l->b, l->len);
}

const char *drv_or_none(const char *d)
{
	return *d ? d : "none";
}

