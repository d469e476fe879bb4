/* SPDX-License-Identifier: MIT */
/*
 * The parsers: rules, the kernel command line, seconds and uevents, on
 * text in memory alone (parse.h). Calls mem.c.
 */
#include <string.h>

#include "parse.h"

/* The kernel's isspace (lib/ctype.c): also 0xa0, which it classes as space. */
static int kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static char *skip_spaces(char *s)
{
	while (kspace((unsigned char)*s))
		s++;
	return s;
}

char *cmdline_next(char **args, char **val)
{
	char *a = skip_spaces(*args), *param;
	size_t i, equals = 0;
	int in_quote = 0, quoted = 0;

	if (!*a)
		return NULL;
	if (*a == '"') {
		a++;
		in_quote = quoted = 1;
	}
	for (i = 0; a[i]; i++) {
		if (kspace((unsigned char)a[i]) && !in_quote)
			break;
		if (!equals && a[i] == '=')
			equals = i;
		if (a[i] == '"')
			in_quote = !in_quote;
	}
	param = a;
	*val = NULL;
	if (equals) {
		a[equals] = '\0';
		*val = a + equals + 1;
		if (**val == '"') {
			(*val)++;
			if (a[i - 1] == '"')
				a[i - 1] = '\0';
		}
	}
	if (quoted && i > 0 && a[i - 1] == '"')
		a[i - 1] = '\0';
	if (a[i])
		a[i++] = '\0';
	*args = skip_spaces(a + i);
	if (!*val && !strcmp(param, "--"))
		return NULL;
	return param;
}

/* The reason a text is refused, into why: -1. */
static int refuse(char why[WHY_SZ], const char *reason)
{
	copy(why, reason);
	return -1;
}

/*
 * A name becomes one component of a path under the sysfs root, so it must
 * not climb out ("..") or descend ("/"); control bytes and anything but
 * printable ASCII would also corrupt the one-line messages and /dev/kmsg.
 * Copies it into dst: 0, or -1 with why saying what is wrong with it.
 */
static int name_copy(char *dst, const char *s, size_t len, const char *what, char why[WHY_SZ])
{
	const char *reason = NULL;
	size_t i;

	if (!len)
		reason = "empty ";
	else if (len >= NAME_SZ)
		reason = "too long a ";
	else if (len == 1 && s[0] == '.')
		reason = "'.' as ";
	for (i = 0; !reason && i < len; i++) {
		unsigned char c = s[i];
		if (c == '.' && i + 1 < len && s[i + 1] == '.')
			reason = "'..' in ";
		else if (c == '/')
			reason = "'/' in ";
		else if (c == '"')
			reason = "'\"' in ";
		else if (c < 0x20 || c == 0x7f)
			reason = "control character in ";
		else if (c > 0x7f)
			reason = "non-ASCII byte in ";
	}
	if (reason) {
		/* Both parts are literals, shorter than WHY_SZ together. */
		copy(why, reason);
		return refuse(why + str_len(why), what);
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

int glob_match(const char *p, const char *s)
{
	const char *star = NULL, *from = s;

	for (;;) {
		if (*p == '*') {
			star = ++p;
			from = s;
		} else if (*p && *s && (*p == '?' || *p == *s)) {
			p++;
			s++;
		} else if (!*p && !*s) {
			return 1;
		} else if (!star || !*from) {
			return 0;
		} else {
			p = star;
			s = ++from;
		}
	}
}

/*
 * A set's items: the first may be a pattern of device ids; the others
 * are ATTR=PATTERN or iommu_group. name_check has kept '/' and ".." out
 * of them, so an attribute is a file of the device's directory or of a
 * parent's. A
 * set is matched against one bus's ids, which other buses may share.
 */
static int set_check(const struct spec *sp, char why[WHY_SZ])
{
	const char *i = sp->dev, *e;

	if (!sp->bus[0])
		return refuse(why, "a set needs its BUS/");
	for (;; i = e + 1) {
		for (e = i; *e && *e != ',' && *e != '='; e++)
			;
		if (e == i)
			return refuse(why, "an empty item in a set");
		if (*e == '=')
			while (*e && *e != ',')
				e++;
		else if (i != sp->dev && after(i, "iommu_group") != e)
			return refuse(why, "not ATTR=PATTERN or iommu_group");
		if (!*e)
			return 0;
	}
}

int rule_parse(struct spec *sp, const char *text, char why[WHY_SZ])
{
	size_t len = str_len(text);
	const char *colon, *slash, *dev = text, *drv;
	size_t devlen, drvlen;

	memset(sp, 0, sizeof *sp);
	if (!len)
		return refuse(why, "empty rule");
	if (len > RULE_TEXT_MAX)
		return refuse(why, "rule too long");
	/* Bus ids contain colons and no driver name does: split at the last. */
	for (colon = text + len; colon > text && colon[-1] != ':'; colon--)
		;
	if (colon-- == text)
		return refuse(why, "no ':' before the driver");
	drv = colon + 1;
	drvlen = len - (size_t)(drv - text);
	/* The kernel keeps quotes that do not open the value: drvbind=1-1:1.0:"A B". */
	if (drvlen >= 2 && drv[0] == '"' && drv[drvlen - 1] == '"') {
		drv++;
		drvlen -= 2;
	}
	/* Device names never contain '/', so a first '/' can only end a bus. */
	for (slash = text; slash < colon && *slash != '/'; slash++)
		;
	if (slash < colon) {
		if (name_copy(sp->bus, text, (size_t)(slash - text), "bus", why))
			return -1;
		dev = slash + 1;
	}
	devlen = (size_t)(colon - dev);
	if (name_copy(sp->dev, dev, devlen, "device", why) || name_copy(sp->drv, drv, drvlen, "driver", why))
		return -1;
	for (dev = sp->dev; *dev; dev++)
		sp->set |= *dev == '*' || *dev == '?' || *dev == ',' || *dev == '=';
	return sp->set ? set_check(sp, why) : 0;
}

int secs_parse(const char *text, unsigned *secs, char why[WHY_SZ])
{
	unsigned long n = 0;

	if (!*text)
		return refuse(why, "empty");
	for (; *text; text++) {
		if (*text < '0' || *text > '9')
			return refuse(why, "not a whole number of seconds");
		n = n * 10 + (unsigned)(*text - '0');
		if (n > TIMEOUT_MAX)
			return refuse(why, "more than a day");
	}
	*secs = (unsigned)n;
	return 0;
}

int uevent_parse(char *msg, size_t len, char **action, char **devpath, const char **subsystem)
{
	char *at, *k;

	if (!len || msg[len - 1] != '\0')
		return -1;
	for (at = msg; *at && *at != '@'; at++)
		;
	if (!*at || at == msg || at[1] != '/')
		return -1;
	*at = '\0';
	*action = msg;
	*devpath = at + 1;
	*subsystem = NULL;
	/* The keys follow the header, each ending at a NUL, the last at msg[len - 1]. */
	for (k = *devpath + str_len(*devpath) + 1; k < msg + len && !*subsystem; k += str_len(k) + 1)
		*subsystem = after(k, "SUBSYSTEM=");
	return 0;
}
