/* SPDX-License-Identifier: MIT */
/* Pure parsers of drvbind: no I/O, no globals, so they can be fuzzed alone. */
#ifndef DRVBIND_PARSE_H
#define DRVBIND_PARSE_H

#include <stddef.h>

enum {
	NAME_SZ = 128,		/* bus, device and driver names, with the NUL */
	RULE_TEXT_MAX = 3 * NAME_SZ,
	TIMEOUT_MAX = 86400,	/* seconds; a day is more than any boot */
	WHY_SZ = 64,		/* the reason a parser refuses a text, with the NUL */
};

/* strlen, in mem.c; musl's word-at-a-time one is a hundred bytes more, for names this short. */
size_t str_len(const char *s);

/* mem.c: what follows the prefix p in s, or NULL where s does not start with it. */
const char *after(const char *s, const char *p);

/* mem.c: strcpy; the caller has checked the length. */
void copy(char *d, const char *s);

/*
 * One parsed rule: "[BUS/]DEVICE:DRIVER". An empty bus means "any bus".
 * A set (set = 1) is "BUS/ITEM[,ITEM...]:DRIVER": a pattern of the
 * bus's device ids ('*' and '?' as in the shell), ATTR=PATTERN for a
 * device attribute's value, iommu_group for each match's whole group;
 * dev holds the items as written.
 */
struct spec {
	char dev[NAME_SZ];
	char bus[NAME_SZ];
	char drv[NAME_SZ];
	int set;
};

/* Does s match the shell pattern p ('*' and '?')? 1 or 0. */
int glob_match(const char *p, const char *s);

/*
 * The kernel's own splitting of its command line (kernel/params.c,
 * next_arg): whitespace separates, '"' quotes, quotes around a value are
 * dropped. Cuts the next parameter out of *args in place and advances
 * *args. Returns NULL at the end or at a bare "--" (what follows belongs
 * to init). *val is NULL for a parameter without '='.
 */
char *cmdline_next(char **args, char **val);

/*
 * The parsers of what a user writes make words, not errnos: each
 * returns 0, or -1 with the reason it refuses the text in why.
 */

/* Fills s from text. */
int rule_parse(struct spec *s, const char *text, char why[WHY_SZ]);

/* Decimal seconds 0..TIMEOUT_MAX into *secs, left alone where refused. */
int secs_parse(const char *text, unsigned *secs, char why[WHY_SZ]);

/*
 * A kernel uevent datagram: "ACTION@DEVPATH\0KEY=VALUE\0...". Points
 * *action and *devpath into msg (NUL-terminated there), and *subsystem
 * at SUBSYSTEM='s value (NULL where it has none). Returns -1 for
 * anything else, e.g. udev's "libudev" messages.
 */
int uevent_parse(char *msg, size_t len, char **action, char **devpath, const char **subsystem);

#endif
