/* SPDX-License-Identifier: MIT */
/*
 * Telling a service manager where the follower stands, so that units
 * ordered after it find the devices where the rules put them: systemd's
 * notify socket ($NOTIFY_SOCKET, one datagram a message, as sd_notify(3)
 * sends them, without libsystemd), and s6's notification fd (a newline,
 * once, on the fd that ./notification-fd names).
 * Calls place.c, conf.c's rules, sysfs.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "drvbind.h"

/* What the rules are counted as. */
enum { HELD, WAITS, FAILS, ABSENT, COUNTS };

/* systemd's socket, connected; s6's fd; or -1. */
static int sd = -1, s6 = -1;

/*
 * s6-supervise runs a service in its directory, where notification-fd
 * names the fd it reads readiness from. Only a pipe is taken for it: a
 * stray file of that name elsewhere must not make drvbind write into
 * some other fd it inherited.
 */
static void s6_open(void)
{
	char buf[16], *p;
	struct stat st;
	int fd = open_at(AT_FDCWD, "notification-fd", O_RDONLY | O_NOFOLLOW), n = 0, ok;

	if (fd < 0)
		return;
	ok = fd_get(fd, buf, sizeof buf) == 0 && *buf;
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
	sd = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (syscall(SYS_connect, sd, &a, len) < 0) {
		say(LOG_WARNING, "NOTIFY_SOCKET=%s: %m; not notifying", v);
		fd_close(sd);
		sd = -1;
	}
}

/*
 * One datagram: what (READY, RELOADING, STOPPING, or STATUS alone) and
 * the rules written (a set once, not each of its devices) held,
 * waiting, failed, and done with a device -f saw go, which systemctl
 * status shows; STATUS alone only where the counts changed. Nothing
 * is counted where no service manager listens.
 */
void notify(int what)
{
	static const char *const say_what[] = { "READY=1\n", "RELOADING=1\nMONOTONIC_USEC=", "STOPPING=1\n", "" };
	static const char *const label[COUNTS] = { "STATUS=held ", ", waiting ", ", failed ", ", absent " };
	static unsigned said[COUNTS] = { -1U, -1U, -1U, -1U };
	unsigned count[COUNTS] = { 0 };
	const struct rule *r;
	struct timespec ts;
	char b[24];
	int i, same = 1;

	if (sd < 0 && s6 < 0)
		return;
	for (r = rules; r < rules + conf.nrules; r++)
		if (!r->in_set)
			count[r->state == WAITING ? WAITS : r->state == FAILED ? FAILS : r->gone ? ABSENT : HELD]++;
	for (i = 0; i < COUNTS; i++) {
		same &= said[i] == count[i];
		said[i] = count[i];
	}
	if (what == STATUS && same)
		return;

	if (what == READY && s6 >= 0) {
		(void)!write(s6, "\n", 1);
		fd_close(s6);
		s6 = -1;
	}
	if (sd < 0)
		return;
	put(say_what[what]);
	/*
	 * systemd 253 on takes a reload as begun only with its time:
	 * CLOCK_MONOTONIC in µs, which a 32-bit long cannot hold, so the
	 * seconds, then the µs as the last six digits of 1000000 + µs.
	 */
	if (what == RELOADING) {
		(void)syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		put(num_str(b, (unsigned long)ts.tv_sec));
		put(num_str(b, (unsigned long)(ts.tv_nsec / 1000 + 1000000)) + 1);
		put_c('\n');
	}
	for (i = 0; i < COUNTS; i++) {
		put(label[i]);
		put(num_str(b, count[i]));
	}
	put_line(sd);
}
