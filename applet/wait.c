/* SPDX-License-Identifier: MIT */
/*
 * Waiting: the uevent socket, opened before the first look; one
 * CLOCK_MONOTONIC deadline for the whole run; a look at every pending
 * rule after each event; and the background child of -b and PID 1.
 * Calls rule.c, proc.c, sysfs.c, log.c and parse.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drvbind.h"

enum {
	EVENT_SZ = 8192,
	RESCAN_MS = 250,	/* re-scan interval where no uevents can come */
	SOON_MS = 50,		/* a rule looks again soon (rule.c: new_id) */
	NETLINK_KOBJECT_UEVENT = 15,
};

/* musl-gcc does not see the kernel's uapi headers. */
struct sockaddr_nl {
	unsigned short nl_family;
	unsigned short nl_pad;
	unsigned int nl_pid;
	unsigned int nl_groups;
};

/* The uevent socket (or -1), and the re-scan interval (0: none). */
static int sock = -1, poll_ms;

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

/* Sleeps, using no CPU, until a uevent, the time `until', or `soon' ms. */
static void uevent_wait(long long until, int soon)
{
	static char buf[EVENT_SZ];
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	long long wait = until - now_ms();
	struct timespec ts;
	char *action, *devpath;
	ssize_t n;

	if (soon && wait > soon)
		wait = soon;
	if (wait < 0)
		wait = 0;
	ts.tv_sec = wait / 1000;
	ts.tv_nsec = wait % 1000 * 1000000;
	/* The raw call: musl's poll() converts to ppoll itself where poll is missing (arm64). */
	if (syscall(SYS_ppoll, &pfd, sock >= 0, &ts, NULL, 0) <= 0)
		return;
	for (;;) {
		n = syscall(SYS_recvfrom, sock, buf, sizeof buf, MSG_DONTWAIT, 0, 0);
		/* ENOBUFS: events were lost; the look at every pending rule that follows makes up for them. */
		if (n < 0 && errno == ENOBUFS)
			continue;
		if (n < 0)
			break;
		if (flag[VERBOSE] && uevent_parse(buf, (size_t)n, &action, &devpath) == 0)
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
	long long deadline = now_ms() + conf.timeout * 1000LL, now;
	int i, pending, soon, failed = 0, forked = 0;

	log_batch(1);
	for (;;) {
		now = now_ms();
		pending = 0;
		soon = poll_ms;
		while (syscall(SYS_wait4, -1, 0, WNOHANG, 0) > 0)
			;
		for (i = 0; i < conf.nrules; i++) {
			struct rule *r = &rules[i];
			if (r->state != WAITING)
				continue;
			rule_step(r);
			pending += r->state == WAITING;
			if (r->state == WAITING && r->again)
				soon = SOON_MS;
		}
		if (!pending || now >= deadline)
			break;
		out_flush();
		if (flag[BG] && !forked && (forked = 1) && bg_fork(pending))
			goto count;
		uevent_wait(deadline, soon);
	}
	for (i = 0; i < conf.nrules; i++)
		if (rules[i].state == WAITING)
			rule_expire(&rules[i]);
count:
	log_batch(0);
	for (i = 0; i < conf.nrules; i++)
		failed += rules[i].state == FAILED;
	return failed || conf.bad;
}

/*
 * Waits and applies the rules loaded; the exit status. rescan: the tree
 * need not send uevents (a root given with -r), so look at it every
 * RESCAN_MS too, as where the socket cannot be opened.
 */
int rules_apply(int rescan)
{
	if (!conf.nrules)
		return conf.bad != 0;
	sock = uevent_open();
	if (sock < 0 || rescan)
		poll_ms = RESCAN_MS;
	return rules_run();
}
