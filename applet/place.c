/* SPDX-License-Identifier: MIT */
/*
 * The follower's place: where a newer follower finds the one running,
 * and who may make it end. One follower at a time: the initramfs's child
 * lives on in the real root, where a unit may start another, and the
 * newcomer takes over.
 *
 * Two sockets. A path (default /run/drvbind.sock, its owner's alone) in a
 * directory that only root (or drvbind's own uid) may write, so nobody
 * else can hold or reach it; initramfs-tools and systemd move /run into
 * the real root with the socket in it. And the abstract name
 * "@drvbind-follow", for a follower started where /run is missing or
 * later mounted over (PID 1 mode). Any process of the network namespace
 * can reach or take an abstract name, so nothing there is believed
 * without the kernel's word on who is at the other end (SO_PEERCRED):
 * a follower ends only for an equal, root or its own uid; a newcomer
 * knocks only on an equal, and says who holds a name it cannot have.
 * Calls sysfs.c, proc.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "drvbind.h"

enum {
	PATH_PLACE, ABSTRACT_PLACE,
	HANDOVER_MS = 1000,	/* how long a newcomer waits for the follower it knocked on to end */
	BACKLOG = 8,
	QUIET_MS = 60000,	/* strangers' knocks: a line a minute at most */
};

/* What a knock found at a place. */
enum { FREE, TAKEN };

static const char abstract_name[] = "@drvbind-follow";

/* The listening sockets, or -1. */
static int place[PLACES] = { -1, -1 };

/*
 * Strangers' knocks: the first is said at once, the rest counted, and
 * the count said a minute after the last line at most, or when the
 * follower ends. The kernel keeps about ten lines of a /dev/kmsg writer
 * in five seconds: a stream of knocks must not crowd out a move.
 */
static struct {
	unsigned n;		/* knocks not said yet */
	struct ucred last;	/* the last of them */
	long long quiet_until;	/* no line about knocks before then */
} knocks;

/* The socket's own call: musl's getsockopt wrapper is one more layer for the same thing. */
static struct ucred peer_of(int fd)
{
	struct ucred who = { 0, -1, -1 };
	socklen_t n = sizeof who;

	(void)syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, &who, &n);
	return who;
}

/* Root, or the uid drvbind runs as: the only ones that may end a follower or be taken for one. */
static int equal(uid_t uid)
{
	return uid == 0 || uid == (uid_t)syscall(SYS_geteuid);
}

/* Root's (or drvbind's uid's) and closed to group and others: only an equal made it so. */
int fd_trusted(int fd)
{
	struct stat st;

	return fd >= 0 && fd_stat(fd, &st) == 0 && equal(st.st_uid) && !(st.st_mode & 022);
}

/*
 * A unix socket's address: a path, or an abstract name (its first byte,
 * '@' as systemd writes it, becomes a NUL; no trailing NUL counted). 0
 * where name does not fit.
 */
socklen_t unix_addr(struct sockaddr_un *a, const char *name, int abstract)
{
	size_t n = str_len(name);

	if (n >= sizeof a->sun_path)
		return 0;
	a->sun_family = AF_UNIX;
	copy(a->sun_path, name);
	if (abstract)
		a->sun_path[0] = '\0';
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + !abstract);
}

/*
 * A socket file there could be bound or replaced by whoever may write
 * its directory: only root's or our own, closed to group and others.
 * Missing (no /run, as in PID 1 mode) is not worth a word.
 */
static int dir_trusted(const char *path)
{
	char dir[PATH_SZ];
	const char *slash = NULL, *p;
	struct stat st;
	int fd, ok;

	for (p = path; *p; p++)
		if (*p == '/')
			slash = p;
	if (!slash) {
		say(LOG_WARNING, "-f: %s: not a path with a directory; no socket there", path);
		return 0;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	fd = open_at(AT_FDCWD, slash == path ? "/" : dir, O_PATH | O_DIRECTORY);
	ok = fd >= 0 && fd_stat(fd, &st) == 0;
	fd_close(fd);
	if (!ok) {
		if (errno != ENOENT)
			say(LOG_WARNING, "-f: %s: %m; no socket there", path);
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || !equal(st.st_uid) || st.st_mode & 022) {
		say(LOG_WARNING, "-f: %s: its directory is not root's alone; no socket there", path);
		return 0;
	}
	return 1;
}

/*
 * Knocks on whatever holds the place: FREE once it was an equal that has
 * ended (or nothing listens: a socket file left by a follower that
 * died), TAKEN otherwise, said. The socket does not block: a holder that
 * never accepts must not hold the newcomer up either.
 */
static int knock(const struct sockaddr_un *a, socklen_t len, const char *name)
{
	struct timespec ts = { HANDOVER_MS / 1000, HANDOVER_MS % 1000 * 1000000 };
	int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct ucred who;

	if (syscall(SYS_connect, fd, a, len) < 0) {
		fd_close(fd);
		/* A path nobody listens on is ours to replace; an abstract name is not. */
		if (a->sun_path[0] && errno == ECONNREFUSED)
			return FREE;
		say(LOG_WARNING, "-f: %s is held and does not answer: %m; following without it", name);
		return TAKEN;
	}
	who = peer_of(fd);
	if (!equal(who.uid)) {
		fd_close(fd);
		say(LOG_WARNING, "-f: %s is held by uid %u (pid %u); following without it", name, (unsigned)who.uid,
		    (unsigned)who.pid);
		return TAKEN;
	}
	/* The follower ends as on SIGTERM; its end closes the connection. */
	(void)syscall(SYS_ppoll, &pfd, 1, &ts, NULL, 0);
	fd_close(fd);
	if (pfd.revents)
		return FREE;
	say(LOG_WARNING, "-f: another follower keeps its place at %s; following without it", name);
	return TAKEN;
}

/*
 * Binds and listens at one place (path, or the abstract name where
 * NULL), knocking on what holds it first. The path's file is its
 * owner's alone (umask 077): connecting takes write permission on it,
 * so nobody else may even knock there.
 */
static int place_bind(const char *path)
{
	struct timespec nap = { 0, 10000000 };
	struct sockaddr_un a;
	socklen_t len;
	const char *name = path ? path : abstract_name;
	int fd, i, ok;
	mode_t mask;

	if (!(len = unix_addr(&a, name, !path))) {
		say(LOG_WARNING, "-f: %s: longer than %u bytes; no socket there", path, (unsigned)sizeof a.sun_path - 1);
		return -1;
	}
	if (path && !dir_trusted(path))
		return -1;
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* The old follower's end frees an abstract name a moment after its connection closes. */
	for (i = 0; i < HANDOVER_MS / 10; i++) {
		mask = umask(077);
		ok = syscall(SYS_bind, fd, &a, len) == 0;
		umask(mask);
		if (ok && syscall(SYS_listen, fd, BACKLOG) == 0)
			return fd;
		if (ok || errno != EADDRINUSE)
			break;
		if (i == 0 && knock(&a, len, name) == TAKEN) {
			fd_close(fd);
			return -1;
		}
		/* Only root (or we) could have made a socket file in a trusted directory. */
		if (path)
			(void)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
		else
			(void)syscall(SYS_nanosleep, &nap, NULL);
	}
	say(LOG_WARNING, "-f: %s: %m; following without it", name);
	fd_close(fd);
	return -1;
}

void place_take(const char *path)
{
	place[PATH_PLACE] = path && *path ? place_bind(path) : -1;
	place[ABSTRACT_PLACE] = place_bind(NULL);
}

/* Strangers' knocks not said yet: how many, and the last. */
static void knocks_say(void)
{
	say(LOG_WARNING, "-f: %u more knock(s) by other users, the last by uid %u (pid %u); ignored", knocks.n,
	    (unsigned)knocks.last.uid, (unsigned)knocks.last.pid);
	knocks.n = 0;
	knocks.quiet_until = now_ms() + QUIET_MS;
}

/* A stranger knocked: said at once where nothing was said for a minute, else counted. */
static void knocked(struct ucred who)
{
	long long now = now_ms();

	if (knocks.n || now < knocks.quiet_until) {
		knocks.n++;
		knocks.last = who;
		return;
	}
	say(LOG_WARNING, "-f: uid %u (pid %u) knocked, and may not end a follower of uid %u; ignored",
	    (unsigned)who.uid, (unsigned)who.pid, (unsigned)syscall(SYS_geteuid));
	knocks.quiet_until = now + QUIET_MS;
}

/*
 * The places to poll, in pfd[PLACES]; the count of knocks said where it
 * is due. The time the next count is due, or LLONG_MAX.
 */
long long place_poll(struct pollfd *pfd)
{
	int i;

	for (i = 0; i < PLACES; i++) {
		pfd[i].fd = place[i];
		pfd[i].events = POLLIN;
	}
	/* Due: said now, not left in the batch (log.c) while the follower sleeps. */
	if (knocks.n && now_ms() >= knocks.quiet_until) {
		knocks_say();
		out_flush();
	}
	return knocks.n ? knocks.quiet_until : LLONG_MAX;
}

/* The follower ends: the knocks it counted are said. */
void place_leave(void)
{
	if (knocks.n)
		knocks_say();
}

/*
 * Answers the knocks on the places pfd says are ready: 1 when an equal
 * knocked, and the follower is to end. Its connection stays open until
 * the follower's exit closes it: that is how the newcomer knows it is
 * gone. A stranger's is closed at once, and counted (knocked).
 */
int place_answer(const struct pollfd *pfd)
{
	struct ucred who;
	int i, n, c, end = 0;

	for (i = 0; i < PLACES; i++) {
		if (!pfd[i].revents)
			continue;
		/*
		 * BACKLOG knocks a wake at most: a stream of them must not
		 * keep the follower from its uevents; the rest wake it again.
		 */
		for (n = 0; n < BACKLOG && (c = (int)syscall(SYS_accept4, place[i], NULL, NULL,
		    SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0; n++) {
			who = peer_of(c);
			if (equal(who.uid)) {
				if (!end)
					say(LOG_INFO, "another follower takes over");
				end = 1;
				continue;
			}
			fd_close(c);
			knocked(who);
		}
	}
	return end;
}
