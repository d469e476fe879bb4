/* SPDX-License-Identifier: MIT */
/*
 * The few libc functions of our own: memcpy and memset, which the
 * compiler calls for struct copies and clears, and three string helpers.
 * Each is a plain loop, smaller than libc's for the few hundred bytes
 * ever copied here. Calls nothing.
 */
#include <stddef.h>

#include "drvbind.h"

size_t str_len(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

/* strcpy; every caller has checked the length. */
void copy(char *d, const char *s)
{
	while ((*d++ = *s++))
		;
}

/* What follows p at the start of s; NULL if s does not start with p. */
const char *after(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return 0;
	return s;
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
