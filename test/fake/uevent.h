/* SPDX-License-Identifier: MIT */
/*
 * Kernel-format uevents for the fake kernel and the uevent tool.
 *
 * The kernel multicasts "ACTION@DEVPATH\0" followed by KEY=VALUE\0
 * pairs on NETLINK_KOBJECT_UEVENT group 1.  Root may send the same
 * thing from user space; inside a private network namespace only the
 * listeners of that namespace see it.
 */
#ifndef UEVENT_H
#define UEVENT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>

enum { UEVENT_BUFSZ = 2048 };	/* the kernel's UEVENT_BUFFER_SIZE */

static inline int uevent_open(unsigned groups)
{
	struct sockaddr_nl sa;
	int fd;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = groups;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Sequence numbers from the monotonic clock, so that events from the
 * fake kernel and from the uevent tool still increase together.
 */
static inline unsigned long long uevent_seqnum(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int uevent_add(char *buf, size_t *len, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > UEVENT_BUFSZ - *len) {
		errno = E2BIG;
		return -1;
	}
	memcpy(buf + *len, s, n);
	*len += n;
	return 0;
}

/* kv: nkv "KEY=VALUE" strings; SEQNUM is added when kv has none */
static inline int uevent_send(int fd, const char *action,
    const char *devpath, const char *const *kv, int nkv)
{
	struct sockaddr_nl sa;
	char buf[UEVENT_BUFSZ], tmp[UEVENT_BUFSZ];
	size_t len = 0;
	int i, seq = 0, n;

	n = snprintf(tmp, sizeof tmp, "%s@%s", action, devpath);
	if (n < 0 || (size_t)n >= sizeof tmp || uevent_add(buf, &len, tmp))
		goto toolong;
	n = snprintf(tmp, sizeof tmp, "ACTION=%s", action);
	if (n < 0 || (size_t)n >= sizeof tmp || uevent_add(buf, &len, tmp))
		goto toolong;
	n = snprintf(tmp, sizeof tmp, "DEVPATH=%s", devpath);
	if (n < 0 || (size_t)n >= sizeof tmp || uevent_add(buf, &len, tmp))
		goto toolong;
	for (i = 0; i < nkv; i++) {
		if (!strncmp(kv[i], "SEQNUM=", 7))
			seq = 1;
		if (uevent_add(buf, &len, kv[i]))
			goto toolong;
	}
	if (!seq) {
		n = snprintf(tmp, sizeof tmp, "SEQNUM=%llu", uevent_seqnum());
		if (n < 0 || (size_t)n >= sizeof tmp ||
		    uevent_add(buf, &len, tmp))
			goto toolong;
	}
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = 1;
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof sa) < 0)
		return -1;
	return 0;
toolong:
	errno = E2BIG;
	return -1;
}

#endif
