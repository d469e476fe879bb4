/* SPDX-License-Identifier: MIT */
/*
 * Telling a service manager where the follower stands, so that units
 * ordered after it find the devices where the rules put them: systemd's
 * notify socket ($NOTIFY_SOCKET, one datagram a message, as sd_notify(3)
 * sends them, without libsystemd), and s6's notification fd (a newline,
 * once, on the fd that ./notification-fd names).
 * Every user may write to systemd's socket, so it may be full: nothing
 * here waits for room. A message that finds no room is lost, but for
 * READY=1, which is sent again, with the counts of the moment, as soon
 * as there is room (notify_poll) or at any later wake.
 * Calls place.c, conf.c's rules, sysfs.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "drvbind.h"

/* What the rules are counted as. */
enum { HELD, WAITS, FAILS, ABSENT, COUNTS };

/*
 * systemd's socket, connected; s6's fd; or -1. READY=1 that either did
 * not take yet (EAGAIN): sd_due, s6_due.
 */
static int sd = -1, s6 = -1, sd_due, s6_due;

/*
 * s6-supervise runs a service in its directory, where notification-fd
 * names the fd it reads readiness from. Only a pipe is taken for it: a
 * stray file of that name elsewhere must not make drvbind write into
 * some other fd it inherited. And only where the file and the directory
 * are root's alone (or drvbind's uid's): a root follower started in
 * /tmp must not take another user's word for which of its fds gets a
 * newline and is closed. O_NONBLOCK: a FIFO of that name would wait for
 * a writer.
 */
static void s6_open(void)
{
	char buf[16], *p;
	struct stat st;
	int fd = open_at(AT_FDCWD, "notification-fd", O_RDONLY | O_NOFOLLOW | O_NONBLOCK), n = 0, ok;
	int dir = fd < 0 ? -1 : open_at(AT_FDCWD, ".", O_PATH | O_DIRECTORY);

	if (fd < 0)
		return;
	ok = fd_stat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (!ok)
		say(LOG_WARNING, "notification-fd: not a regular file; not read");
	else if (!(ok = fd_trusted(fd) && fd_trusted(dir)))
		say(LOG_WARNING, "notification-fd: it or its directory is not root's alone; not read");
	ok = ok && fd_get(fd, buf, sizeof buf) == 0 && *buf;
	fd_close(dir);
	fd_close(fd);
	for (p = buf; ok && *p; p++) {
		ok = *p >= '0' && *p <= '9' && n < 100000;
		n = n * 10 + *p - '0';
	}
	if (ok && fd_stat(n, &st) == 0 && S_ISFIFO(st.st_mode))
		s6 = n;
}

void notify_open(char **envp)
{
	struct sockaddr_un a;
	const char *v = NULL;
	socklen_t len;

	s6_open();
	while (*envp && !(v = after(*envp, "NOTIFY_SOCKET=")))
		envp++;
	if (!v || (*v != '/' && *v != '@'))
		return;
	if (!(len = unix_addr(&a, v, *v == '@'))) {
		say(LOG_WARNING, "NOTIFY_SOCKET: longer than %u bytes; not notifying", (unsigned)sizeof a.sun_path - 1);
		return;
	}
	sd = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (syscall(SYS_connect, sd, &a, len) < 0) {
		say(LOG_WARNING, "NOTIFY_SOCKET=%s: %m; not notifying", v);
		fd_close(sd);
		sd = -1;
	}
}

/* While READY=1 waits for room on systemd's socket, the follower's ppoll wakes when there is some. */
void notify_poll(struct pollfd *pfd)
{
	pfd->fd = sd_due ? sd : -1;
	pfd->events = POLLOUT;
}

/*
 * One datagram to systemd's socket: what (READY, RELOADING, STOPPING,
 * or STATUS alone), then the counts. Whether the socket had no room.
 * The longest, RELOADING=1 with its time and the counts, is under 140
 * bytes: the line is never cut.
 */
static int dg_send(int what, const unsigned *count)
{
	static const char *const say_what[] = { "READY=1\n", "RELOADING=1\n", "STOPPING=1\n", "" };
	struct line dg = { 0 };
	struct timespec ts;
	char s[24], us[24];

	line_put(&dg, say_what[what]);
	/*
	 * systemd 253 on takes a reload as begun only with its time:
	 * CLOCK_MONOTONIC in µs, which a 32-bit long cannot hold, so the
	 * seconds, then the µs as the last six digits of 1000000 + µs.
	 */
	if (what == RELOADING) {
		(void)syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		line_put(&dg, "MONOTONIC_USEC=%s%s\n", num_str(s, (unsigned long)ts.tv_sec),
		    num_str(us, (unsigned long)(ts.tv_nsec / 1000 + 1000000)) + 1);
	}
	line_put(&dg, "STATUS=held %u, waiting %u, failed %u, absent %u", count[HELD], count[WAITS], count[FAILS],
	    count[ABSENT]);
	/* The socket does not block: a datagram goes whole, or not at all. */
	return write(sd, dg.b, dg.len) < 0 && errno == EAGAIN;
}

/*
 * What the follower says: READY (also to s6), RELOADING, STOPPING, or
 * STATUS alone, which goes only where the counts changed. The counts:
 * the rules written (a set once, not each of its devices) held,
 * waiting, failed, and done with a device -f saw go, which systemctl
 * status shows. Nothing is counted where no service manager listens.
 */
void notify(int what)
{
	static unsigned said[COUNTS] = { -1U, -1U, -1U, -1U };
	unsigned count[COUNTS] = { 0 };
	const struct rule *r;
	int i, same = 1, ready = 0;

	if (sd < 0 && s6 < 0)
		return;
	for (r = rules; r < rules + conf.nrules; r++)
		if (!r->in_set)
			count[r->run.state == WAITING ? WAITS : r->run.state == FAILED ? FAILS : r->run.gone ? ABSENT : HELD]++;
	for (i = 0; i < COUNTS; i++) {
		same &= said[i] == count[i];
		said[i] = count[i];
	}
	if (what == READY) {
		s6_due = s6 >= 0;
		sd_due = sd >= 0;
	}
	if (what == STATUS && same && !sd_due && !s6_due)
		return;
	/* s6's pipe is the follower's alone: full, it takes the newline at a later wake. */
	if (s6_due) {
		(void)syscall(SYS_fcntl, s6, F_SETFL, O_NONBLOCK);
		if (write(s6, "\n", 1) == 1 || errno != EAGAIN) {
			fd_close(s6);
			s6 = -1;
			s6_due = 0;
		}
	}
	if (sd < 0)
		return;
	/* READY=1 first, with the counts of now: it says all that STATUS would. */
	if (sd_due) {
		ready = 1;
		sd_due = dg_send(READY, count);
	}
	if (what != READY && !(what == STATUS && ready))
		(void)dg_send(what, count);
}
