/* SPDX-License-Identifier: MIT */
/*
 * uevent ACTION DEVPATH [KEY=VALUE...]
 *	send one kernel-format uevent to NETLINK_KOBJECT_UEVENT group 1,
 *	as the kernel does when a device or driver appears.
 * uevent -n COUNT ACTION DEVPATH [KEY=VALUE...]
 *	the same uevent COUNT times, at once: a burst that overflows the
 *	receive buffer of a listener that is not reading (ENOBUFS).
 * uevent -l [COUNT [MILLISECONDS]]
 *	print the uevents of this network namespace, one a line:
 *	"ACTION@DEVPATH KEY=VALUE..." without ACTION, DEVPATH and SEQNUM;
 *	"listening" goes to stderr once the socket is bound.  Stops after
 *	COUNT events (0: never) or MILLISECONDS without one.
 */
#include <poll.h>
#include <stdlib.h>

#include "uevent.h"

static int listen_events(long count, int ms)
{
	char buf[UEVENT_BUFSZ + 1];
	struct pollfd pfd;
	ssize_t n;
	size_t i;
	long seen = 0;
	int fd, r;

	fd = uevent_open(1);
	if (fd < 0) {
		perror("uevent: unable to open the uevent socket");
		return 1;
	}
	fputs("listening\n", stderr);
	fflush(stderr);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!count || seen < count) {
		r = poll(&pfd, 1, ms > 0 ? ms : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("uevent: poll");
			return 1;
		}
		if (!r)
			break;
		n = recv(fd, buf, UEVENT_BUFSZ, 0);
		if (n < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (n <= 0) {
			perror("uevent: recv");
			return 1;
		}
		buf[n] = 0;
		fputs(buf, stdout);
		for (i = strlen(buf) + 1; i < (size_t)n; i += strlen(buf + i) + 1)
			if (strncmp(buf + i, "ACTION=", 7) &&
			    strncmp(buf + i, "DEVPATH=", 8) &&
			    strncmp(buf + i, "SEQNUM=", 7))
				printf(" %s", buf + i);
		putchar('\n');
		fflush(stdout);
		seen++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long times = 1;
	int fd;

	if (argc >= 2 && !strcmp(argv[1], "-l"))
		return listen_events(argc > 2 ? atol(argv[2]) : 0,
		    argc > 3 ? atoi(argv[3]) : 0);
	if (argc >= 3 && !strcmp(argv[1], "-n")) {
		times = atol(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fputs("usage: uevent [-n COUNT] ACTION DEVPATH [KEY=VALUE...]\n"
		    "       uevent -l [COUNT [MILLISECONDS]]\n", stderr);
		return 2;
	}
	fd = uevent_open(0);
	if (fd < 0) {
		perror("uevent: unable to open the uevent socket");
		return 1;
	}
	while (times-- > 0)
		if (uevent_send(fd, argv[1], argv[2],
		    (const char *const *)argv + 3, argc - 3) < 0) {
			perror("uevent: unable to send");
			return 1;
		}
	return 0;
}
