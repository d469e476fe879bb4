/* SPDX-License-Identifier: MIT */
/*
 * Where rules come from: the arguments, the kernel command line
 * (/proc/cmdline, split as the kernel splits it) and the config file;
 * and the drvbind.* parameters. A later rule for a device replaces an
 * earlier one; a bad rule is reported and counted, never fatal.
 * Calls trust.c, parse.c, sysfs.c, log.c, mem.c and main.c's flag.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drvbind.h"

enum {
	CMDLINE_MAX = 4096,	/* the kernel's largest, MIPS; x86-64 and arm64: 2048 */
	CONF_MAX = 8192,
};

/* Zero-initialised, so they cost no bytes in the binary; rules_load sets conf. */
struct conf conf;
struct rule rules[DEVICES_MAX];
char init_path[PATH_SZ];
static char modprobe_buf[PATH_SZ];

/* The rule for DEV on BUS, where either bus may be "" (any), or NULL. */
struct rule *rule_find(const char *bus, const char *dev)
{
	struct rule *r;

	for (r = rules; r < rules + conf.nrules; r++)
		if (!strcmp(r->s.dev, dev) && (!r->s.bus[0] || !bus[0] || !strcmp(r->s.bus, bus)))
			return r;
	return NULL;
}

/*
 * A rule for a device the set p (at rules[idx - 1]) takes: p's copy for
 * dev. Members come after the rules written, in the order of their ids,
 * for the set's line and its moves. NULL: no room left.
 */
struct rule *member_new(const struct rule *p, int idx, const char *dev)
{
	struct rule *r;

	if (conf.nrules == DEVICES_MAX)
		return NULL;
	for (r = rules + conf.nrules++; r[-1].in_set && strcmp(r[-1].s.dev, dev) > 0; r--)
		*r = r[-1];
	*r = *p;
	copy(r->s.dev, dev);
	r->s.set = 0;
	r->in_set = idx;
	return r;
}

/*
 * A follower lives for years, and a set's devices come and go: the slot
 * of a member whose device has gone for good is given back, so that no
 * number of plugs and unplugs fills the table. The members left keep
 * their order; the rules written, which come before them all, keep
 * their places (a member names its set by it).
 */
void members_reap(void)
{
	struct rule *r, *to = rules;

	for (r = rules; r < rules + conf.nrules; r++) {
		if (r->in_set && r->run.gone)
			continue;
		if (to != r)
			*to = *r;
		to++;
	}
	conf.nrules = (int)(to - rules);
}

/* where: "" for the command line and arguments, "FILE:LINE: " for the config. */
static void rule_add(const char *text, const char *where)
{
	struct spec sp;
	char why[WHY_SZ];
	const char *err = rule_parse(&sp, text, why) < 0 ? why : NULL;
	struct rule *r = NULL;

	/* A later rule for the same device replaces the earlier one. */
	if (!err && !(r = rule_find(sp.bus, sp.dev)) && conf.nrules == RULES_MAX)
		err = "more than 64 rules";
	if (err) {
		say(LOG_ERR, "%sbad rule %q: %s", where, text, err);
		conf.bad++;
		return;
	}
	if (!r)
		r = &rules[conf.nrules++];
	/* Its s.drv still reads "none", for the messages and driver_override. */
	*r = (struct rule){ .s = sp, .none = !strcmp(sp.drv, "none") };
	copy(r->bus, sp.bus);
}

/* One drvbind parameter, from the command line or the config file. */
static void param(const char *name, const char *val, const char *where)
{
	const char *err = NULL, *k = after(name, "drvbind");
	char *path = NULL, why[WHY_SZ];

	if (!val)
		val = "";
	if (!k)
		return;
	if (!*k)
		rule_add(val, where);
	else if (*k++ != '.')
		return;
	else if (!strcmp(k, "timeout"))
		err = secs_parse(val, &conf.timeout, why) < 0 ? why : NULL;
	else if (!strcmp(k, "modprobe"))
		conf.modprobe = path = modprobe_buf;
	else if (!strcmp(k, "init"))
		path = init_path;
	else if (strcmp(k, "follow"))
		err = "unknown parameter";
	else if ((*val == '0' || *val == '1') && !val[1])
		conf.follow |= *val == '1';
	else
		err = "not 0 or 1";
	if (path && str_len(val) >= PATH_SZ)
		err = "path too long";
	else if (path)
		copy(path, val);
	if (err) {
		say(LOG_ERR, "%sbad %q=%q: %s", where, name, val, err);
		conf.bad++;
	}
}

/* How file_load takes a file. */
enum {
	MUST = 1,	/* named by the user (-k, -c): missing is an error too */
	CHECKED = 2,	/* the config file: read only where it can be trusted */
};

/*
 * Reads a whole small file into buf; NULL where it is missing,
 * unreadable, untrusted or longer than size - 1, each said (but a
 * missing default config file, which is no error). The kernel's strings
 * end at a NUL, and so does the text here.
 */
static char *file_load(const char *path, char *buf, size_t size, int how)
{
	char why[TRUST_WHY_SZ];
	ssize_t n = 0, len = 0;
	int fd;

	/*
	 * Whoever may write the config file, or swap it for another, chooses
	 * which driver gets which device at the next boot or SIGHUP, and the
	 * programs root runs (drvbind.modprobe=, drvbind.init=). So, as sshd
	 * takes its own files, it is read only where trust_open finds it, and
	 * every directory and link on its path, root's (or drvbind's own
	 * uid's) and not for others to write. A FIFO would hold boot up: a
	 * regular file only.
	 */
	if (how & CHECKED)
		fd = trust_open(path, O_RDONLY | O_NONBLOCK, S_IFREG, why);
	else
		fd = open_at(AT_FDCWD, path, O_RDONLY | O_NONBLOCK);
	if (fd < 0 && how & CHECKED && why[0]) {
		say(LOG_ERR, "%s: %s; not read", path, why);
		conf.bad++;
		return NULL;
	}
	while (fd >= 0 && (n = read(fd, buf + len, size - (size_t)len)) > 0 && (len += n) < (ssize_t)size)
		;
	if (fd >= 0)
		fd_close(fd);
	if (fd < 0 || n < 0) {
		if (how & MUST || errno != ENOENT) {
			say(LOG_ERR, "%s: %m", path);
			conf.bad++;
		}
		return NULL;
	}
	if (len == (ssize_t)size) {
		say(LOG_ERR, "%s: longer than %u bytes; not read", path, (unsigned)size - 1);
		conf.bad++;
		return NULL;
	}
	buf[len] = '\0';
	if ((ssize_t)str_len(buf) < len)
		say(LOG_WARNING, "%s: NUL byte at offset %u; the rest is ignored", path, (unsigned)str_len(buf));
	return buf;
}

static void cmdline_load(const char *path)
{
	static char buf[CMDLINE_MAX + 1];
	char *args = file_load(path, buf, sizeof buf, MUST), *name, *val;

	while (args && (name = cmdline_next(&args, &val)))
		param(name, val, "");
}

/*
 * One rule or drvbind.* parameter a line; a line starting with '#' is a
 * comment. The line is taken whole, so names with spaces need no quotes.
 */
static void conf_load(const char *path, int how)
{
	static char buf[CONF_MAX + 1];
	char where[PATH_SZ + 32], num[24], *p = file_load(path, buf, sizeof buf, how), *next, *end, *eq;
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

/* What rules_load was given, for rules_reload. */
static const struct src *src;

/*
 * The arguments' rules; where there are none, the config file's (-c, or
 * the default where it exists), then the kernel command line's (-k, or
 * /proc/cmdline), which win; then -t and -m, which win over both.
 */
void rules_load(const struct src *from)
{
	int i;

	src = from;
	conf.nrules = conf.bad = conf.follow = 0;
	conf.timeout = TIMEOUT_DEFAULT;
	conf.modprobe = "/sbin/modprobe";
	for (i = 0; i < from->n; i++)
		rule_add(from->args[i], "");
	if (!from->n) {
		conf_load(from->file ? from->file : "/etc/drvbind.conf", from->file ? MUST | CHECKED : CHECKED);
		cmdline_load(from->cmdline ? from->cmdline : "/proc/cmdline");
	}
	if (from->secs)
		conf.timeout = *from->secs;
	if (from->modprobe)
		conf.modprobe = from->modprobe;
	if (flag[DRY])
		conf.timeout = 0;
}

/*
 * SIGHUP to a follower: the rules and parameters again from where they
 * came, as at the start; a file that went bad costs its rules only.
 */
void rules_reload(void)
{
	rules_load(src);
}
