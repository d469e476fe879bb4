/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harnesses for the pure parsers of applet/parse.c, one per
 * build: -DTARGET_CMDLINE, -DTARGET_RULE or -DTARGET_UEVENT (make fuzz).
 * Each input is copied into a heap block of exactly its own size, so
 * that AddressSanitizer sees a read one byte past the end. Besides the
 * sanitizers, each harness checks what the parser promises: pointers
 * that stay inside the input, names that cannot leave their directory,
 * a rule that says exactly what its text says.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../applet/parse.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: broken promise: %s\n", \
	__FILE__, __LINE__, #c); abort(); } } while (0)

/* Each build uses some of the helpers below. */
#define HELPER static __attribute__((unused))

HELPER int inside(const char *p, const char *buf, size_t size)
{
	return p >= buf && p < buf + size;
}

/* A name that rule_parse accepted: one path component, printable ASCII. */
HELPER void name_ok(const char *s, int may_be_empty)
{
	size_t n = strlen(s), i;

	CHECK(n < NAME_SZ);
	CHECK(n > 0 || may_be_empty);
	CHECK(strcmp(s, ".") != 0);
	CHECK(!strstr(s, ".."));
	for (i = 0; i < n; i++)
		CHECK(s[i] > 0x20 - 1 && s[i] < 0x7f && s[i] != '/' && s[i] != '"');
}

/* secs_parse against the plain arithmetic it stands for. */
HELPER void secs_check(const char *text)
{
	unsigned secs = 12345;
	char why[WHY_SZ] = "";
	int ret = secs_parse(text, &secs, why);
	size_t n = strlen(text), i;
	int digits = n > 0;
	unsigned long long v = 0;

	for (i = 0; i < n; i++) {
		if (text[i] < '0' || text[i] > '9')
			digits = 0;
		else if (v <= TIMEOUT_MAX)
			v = v * 10 + (unsigned)(text[i] - '0');
	}
	if (digits && v <= TIMEOUT_MAX) {
		CHECK(ret == 0 && !*why);
		CHECK(secs == v);
	} else {
		CHECK(ret == -1 && *why && strlen(why) < WHY_SZ);
		CHECK(secs == 12345);
	}
}

/* rule_parse, and that the parts it kept spell the rule's text again. */
HELPER void rule_check(const char *text)
{
	struct spec s;
	char why[WHY_SZ] = "";
	int ret = rule_parse(&s, text, why);
	char back[3 * NAME_SZ + 8];
	size_t n = strlen(text);

	if (ret) {
		CHECK(ret == -1 && *why && strlen(why) < WHY_SZ);
		return;
	}
	CHECK(!*why);
	CHECK(n <= RULE_TEXT_MAX);
	name_ok(s.bus, 1);
	name_ok(s.dev, 0);
	name_ok(s.drv, 0);
	CHECK(!strchr(s.drv, ':'));
	/* A set: exactly where the device part holds a set's character, and always with its bus. */
	CHECK(s.set == (strpbrk(s.dev, "*?,=") != NULL));
	CHECK(!s.set || *s.bus);
	/* The matcher ends on any pattern and name, and a pattern matches itself without '?' or '*'. */
	if (glob_match(s.dev, s.drv) && !strpbrk(s.dev, "*?"))
		CHECK(!strcmp(s.dev, s.drv));
	CHECK(glob_match(s.drv, s.drv) || strpbrk(s.drv, "*?"));
	snprintf(back, sizeof back, "%s%s%s:%s", s.bus, *s.bus ? "/" : "", s.dev, s.drv);
	if (strcmp(back, text)) {
		/* Only the driver's surrounding quotes may be dropped. */
		snprintf(back, sizeof back, "%s%s%s:\"%s\"", s.bus, *s.bus ? "/" : "", s.dev, s.drv);
		CHECK(!strcmp(back, text));
	}
}

#if defined TARGET_CMDLINE
/* A command line as /proc/cmdline gives it: text up to the first NUL. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *args = buf, *name, *val, *last = buf;
	size_t params = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	while ((name = cmdline_next(&args, &val))) {
		/* Each parameter takes at least one byte: the loop ends. */
		CHECK(++params <= size);
		CHECK(inside(name, buf, size + 1) && name >= last);
		/* A lone '"' at the end is an empty parameter, as in the kernel. */
		CHECK(inside(args, buf, size + 1) && args > last && (args > name || !*name));
		CHECK(!val || (inside(val, buf, size + 1) && val > name && val <= args));
		last = args;
		if (!strcmp(name, "drvbind"))
			rule_check(val ? val : "");
		else if (!strcmp(name, "drvbind.timeout"))
			secs_check(val ? val : "");
	}
	free(buf);
	return 0;
}
#elif defined TARGET_RULE
/* One rule as its value arrives: a string, up to the first NUL. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	rule_check(buf);
	secs_check(buf);
	free(buf);
	return 0;
}
#elif defined TARGET_UEVENT
/* A netlink datagram: any bytes, any length, NULs anywhere. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1), *action = NULL, *devpath = NULL;
	const char *subsystem = NULL;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (uevent_parse(buf, size, &action, &devpath, &subsystem) == 0) {
		CHECK(size > 0 && buf[size - 1] == '\0');
		CHECK(action == buf && *action && !strchr(action, '@'));
		CHECK(inside(devpath, buf, size) && devpath[0] == '/');
		CHECK(devpath == action + strlen(action) + 1);
		CHECK(!subsystem || (inside(subsystem, buf, size) && subsystem > devpath + strlen(devpath) &&
		    !strncmp(subsystem - 10, "SUBSYSTEM=", 10)));
	}
	free(buf);
	return 0;
}
#else
#error "define TARGET_CMDLINE, TARGET_RULE or TARGET_UEVENT"
#endif
