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
 * Anyone can also keep the name's queue of connections full, so that a
 * knock cannot get in: the newcomer then asks the kernel's socket table
 * (sock_diag) who listens there, finds the process in /proc, and ends
 * an equal with a signal through a pidfd. A newcomer that cannot end
 * the follower before it does not follow: two never both write.
 * Calls trust.c, sysfs.c, proc.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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
	HANDOVER_MS = 4000,	/* how long a newcomer waits, all told, for the follower it replaces to end */
	BACKLOG = 8,
	QUIET_MS = 60000,	/* strangers' knocks: a line a minute at most */
	DIAG_SZ = 8192,		/* a sock_diag answer: netlink's dumps fit the reader's buffer */
};

/* What a knock found at a place: FREE, TAKEN by a stranger (follow without it), or REFUSED (do not follow). */
enum { FREE, TAKEN, REFUSED };

/* place_bind's answer where it has no socket: following without the place, or not at all. */
enum { WITHOUT = -1, NOT_FOLLOWING = -2 };

/* linux/netlink.h, linux/sock_diag.h and linux/unix_diag.h, which musl-gcc does not see. */
enum {
	NETLINK_SOCK_DIAG = 4,
	SOCK_DIAG_BY_FAMILY = 20,
	NLM_F_REQUEST = 1,
	NLM_F_DUMP = 0x300,
	NLMSG_ERROR = 2,
	NLMSG_DONE = 3,
	UDIAG_SHOW_NAME = 0x01,
	UDIAG_SHOW_UID = 0x40,
	UNIX_DIAG_NAME = 0,
	UNIX_DIAG_UID = 7,
	TCP_LISTEN = 10,
};

struct nlmsghdr {
	unsigned nlmsg_len;
	unsigned short nlmsg_type, nlmsg_flags;
	unsigned nlmsg_seq, nlmsg_pid;
};

struct unix_diag_req {
	unsigned char sdiag_family, sdiag_protocol;
	unsigned short pad;
	unsigned udiag_states, udiag_ino, udiag_show, udiag_cookie[2];
};

struct unix_diag_msg {
	unsigned char udiag_family, udiag_type, udiag_state, pad;
	unsigned udiag_ino, udiag_cookie[2];
};

struct rtattr {
	unsigned short rta_len, rta_type;
};

/* Netlink's messages and attributes start on 4 bytes. */
#define ALIGN4(n) (((n) + 3) & ~(size_t)3)

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

/* The listener at a name, as sock_diag has it. */
struct listener {
	unsigned ino, uid;	/* uid: -1U where the kernel did not say */
	int found;
};

/* Who holds a socket: a process of /proc whose fd links to it. */
struct holder {
	char sock[32];		/* "socket:[INODE]", as the fd's link reads */
	char pid[24];		/* the process looked at */
	char fd[24];		/* its fd on the socket; "" until one is found */
};

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
 * its directory, or any directory or link on the way to it, which could
 * point the path elsewhere: there a stale socket's unlink would remove
 * whatever has its name. So the directory is trusted by its whole path
 * (trust.c), and is itself root's or ours, closed to group and others.
 * Missing (no /run, as in PID 1 mode) is not worth a word.
 */
static int dir_trusted(const char *path)
{
	char dir[PATH_SZ], why[TRUST_WHY_SZ];
	const char *slash = NULL, *p;
	int fd;

	for (p = path; *p; p++)
		if (*p == '/')
			slash = p;
	if (!slash) {
		say(LOG_WARNING, "-f: %s: not a path with a directory; no socket there", path);
		return 0;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	fd = trust_open(slash == path ? "/" : dir, O_PATH | O_DIRECTORY, S_IFDIR, why);
	fd_close(fd);
	if (fd >= 0)
		return 1;
	if (why[0])
		say(LOG_WARNING, "-f: %s: %s; no socket there", path, why);
	else if (errno != ENOENT)
		say(LOG_WARNING, "-f: %s: %m; no socket there", path);
	return 0;
}

/* Whether fd can be read (or was closed: a connection, a pidfd's process) before `until'. */
static int fd_wait(int fd, long long until)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long ms = until - now_ms();
	struct timespec ts;

	if (ms < 0)
		ms = 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000;
	return syscall(SYS_ppoll, &pfd, 1, &ts, NULL, 0) > 0;
}

/*
 * One message of a sock_diag dump: 1 the last, -1 an error (errno), 0
 * more to come. A listening stream socket bound to name (size bytes,
 * as the address holds them) goes into l.
 */
static int diag_one(const struct nlmsghdr *h, const char *name, size_t size, struct listener *l)
{
	const struct unix_diag_msg *m = (const void *)(h + 1);
	const struct rtattr *at = (const void *)(m + 1);
	size_t left, step;
	unsigned uid = -1U;
	int named = 0;

	if (h->nlmsg_type == NLMSG_DONE)
		return 1;
	if (h->nlmsg_type == NLMSG_ERROR) {
		errno = h->nlmsg_len >= sizeof *h + sizeof(int) ? -*(const int *)(h + 1) : EIO;
		return -1;
	}
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < sizeof *h + sizeof *m ||
	    m->udiag_type != SOCK_STREAM)
		return 0;
	for (left = h->nlmsg_len - sizeof *h - sizeof *m; left >= sizeof *at; left -= step) {
		if (at->rta_len < sizeof *at || at->rta_len > left)
			break;
		if (at->rta_type == UNIX_DIAG_NAME)
			named = at->rta_len - sizeof *at == size && !memcmp(at + 1, name, size);
		else if (at->rta_type == UNIX_DIAG_UID && at->rta_len >= sizeof *at + sizeof uid)
			memcpy(&uid, at + 1, sizeof uid);
		step = ALIGN4(at->rta_len) < left ? ALIGN4(at->rta_len) : left;
		at = (const void *)((const char *)at + step);
	}
	if (named) {
		l->ino = m->udiag_ino;
		l->uid = uid;
		l->found = 1;
	}
	return 0;
}

/*
 * The stream socket listening at a's name, from the kernel's table of
 * the network namespace's unix sockets (sock_diag: the name's bytes as
 * bound, where /proc/net/unix prints them, a newline too, for anyone to
 * forge a line with). 0, or -1 with errno where the table cannot be had.
 */
static int listener_of(const struct sockaddr_un *a, socklen_t len, struct listener *l)
{
	static char buf[DIAG_SZ] __attribute__((aligned(4)));
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = { { sizeof req, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 0, 0 },
		  { AF_UNIX, 0, 0, 1U << TCP_LISTEN, 0, UDIAG_SHOW_NAME | UDIAG_SHOW_UID, { 0, 0 } } };
	int fd = (int)syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	int done = fd < 0 || syscall(SYS_sendto, fd, &req, sizeof req, 0, NULL, 0) < 0 ? -1 : 0;
	const struct nlmsghdr *h;
	long n = 0;

	l->found = 0;
	l->ino = 0;
	l->uid = -1U;
	/* The kernel makes each part of a dump as the last is read: it is there at once. */
	while (!done && (n = syscall(SYS_recvfrom, fd, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL)) > 0) {
		for (h = (const void *)buf; !done && n >= (long)sizeof *h && h->nlmsg_len >= sizeof *h &&
		    (long)h->nlmsg_len <= n; h = (const void *)((const char *)h + ALIGN4(h->nlmsg_len))) {
			done = diag_one(h, a->sun_path, len - offsetof(struct sockaddr_un, sun_path), l);
			n -= (long)ALIGN4(h->nlmsg_len);
		}
	}
	if (!done && n >= 0)
		errno = EIO;
	fd_close(fd);
	return done > 0 ? 0 : -1;
}

static int fd_fn(const char *name, void *ctx)
{
	struct holder *h = ctx;
	char p[64], t[NAME_SZ];

	if (PATH(p, "/proc/", h->pid, "/fd/", name) < 0 || link_base(AT_FDCWD, p, t) < 0 || strcmp(t, h->sock))
		return 0;
	copy(h->fd, name);
	return 1;
}

static int pid_fn(const char *name, void *ctx)
{
	struct holder *h = ctx;
	char p[64];

	if (*name < '0' || *name > '9' || str_len(name) >= sizeof h->pid)
		return 0;
	copy(h->pid, name);
	/* A process whose fds cannot be read (gone meanwhile) is passed over. */
	return PATH(p, "/proc/", name, "/fd") == 0 && dir_scan(p, fd_fn, h) == 0 && h->fd[0];
}

/*
 * The process that holds the socket inode ino: a look at every fd of
 * every process (root may read them all; dir_scan's openat takes an
 * absolute path as it is). Its pid, or 0 where none is seen (another
 * pid namespace, /proc missing).
 */
static unsigned holder_find(struct holder *h, unsigned ino)
{
	char num[24];
	unsigned pid = 0;
	const char *p;

	copy(h->sock, "socket:[");
	copy(h->sock + 8, num_str(num, ino));
	copy(h->sock + str_len(h->sock), "]");
	h->fd[0] = '\0';
	if (dir_scan("/proc", pid_fn, h) < 0 || !h->fd[0])
		return 0;
	for (p = h->pid; *p; p++)
		pid = pid * 10 + (unsigned)(*p - '0');
	return pid;
}

/*
 * Ends the process that holder_find found holding an equal's socket,
 * and no other: its pidfd names that process alone, and the socket,
 * still found through the pid once the pidfd is open, shows that the
 * pid was not reused meanwhile. SIGTERM: it ends as on any SIGTERM,
 * handing back what it held; its exit is waited for until `until'.
 * FREE, or REFUSED, said.
 */
static int holder_end(const struct holder *h, unsigned pid, const char *name, long long until)
{
	char p[64], t[NAME_SZ];
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), ret = REFUSED;

	if (fd < 0 || PATH(p, "/proc/", h->pid, "/fd/", h->fd) < 0 || link_base(AT_FDCWD, p, t) < 0 ||
	    strcmp(t, h->sock)) {
		/* Gone since the look, or no longer holding the socket: the place may be free. */
		ret = FREE;
	} else if (syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0) < 0) {
		say(LOG_WARNING, "-f: cannot end the follower at %s (pid %u): %m; not following", name, pid);
	} else if (!fd_wait(fd, until)) {
		say(LOG_WARNING, "-f: the follower at %s (pid %u) did not end; not following", name, pid);
	} else {
		say(LOG_INFO, "-f: the follower at %s (pid %u) did not answer, and was ended", name, pid);
		ret = FREE;
	}
	fd_close(fd);
	return ret;
}

/*
 * A knock that cannot get in (a queue kept full: EAGAIN), or that an
 * equal leaves unanswered: who listens there, by the kernel's table and
 * /proc, and an equal ended. e: the knock's errno.
 */
static int knock_past(const struct sockaddr_un *a, socklen_t len, const char *name, long long until, int e)
{
	struct listener l;
	struct holder h;
	unsigned pid;

	if (listener_of(a, len, &l) < 0) {
		say(LOG_WARNING, "-f: %s does not answer, and the kernel does not say who listens there: %m; not following",
		    name);
		return REFUSED;
	}
	/* Bound, not listening: no follower, which listens as it binds. */
	if (!l.found) {
		errno = e;
		say(LOG_WARNING, "-f: %s is held and does not answer: %m; following without it", name);
		return TAKEN;
	}
	pid = holder_find(&h, l.ino);
	if (l.uid != -1U && !equal(l.uid)) {
		say(LOG_WARNING, "-f: %s is held by uid %u (pid %u); following without it", name, l.uid, pid);
		return TAKEN;
	}
	/* No process holds it any longer: the follower that was ending has gone, and the place is free. */
	if (!pid && listener_of(a, len, &l) == 0 && !l.found)
		return FREE;
	if (l.uid == -1U || !pid) {
		say(LOG_WARNING, "-f: %s does not answer, and who listens there cannot be found; not following", name);
		return REFUSED;
	}
	return holder_end(&h, pid, name, until);
}

/*
 * Knocks on whatever holds the place: FREE once it was an equal that has
 * ended (or nothing listens: a socket file left by a follower that
 * died), TAKEN by a stranger, REFUSED where an equal may still be there;
 * said. The socket does not block: a holder that never accepts must not
 * hold the newcomer up either. An equal has half the time to answer.
 */
static int knock(const struct sockaddr_un *a, socklen_t len, const char *name, long long until)
{
	int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct ucred who;
	int closed;

	if (syscall(SYS_connect, fd, a, len) < 0) {
		fd_close(fd);
		/* A path nobody listens on is ours to replace; an abstract name is not. */
		if (a->sun_path[0] && errno == ECONNREFUSED)
			return FREE;
		return knock_past(a, len, name, until, errno);
	}
	who = peer_of(fd);
	if (!equal(who.uid)) {
		fd_close(fd);
		say(LOG_WARNING, "-f: %s is held by uid %u (pid %u); following without it", name, (unsigned)who.uid,
		    (unsigned)who.pid);
		return TAKEN;
	}
	/* The follower ends as on SIGTERM; its end closes the connection. */
	closed = fd_wait(fd, until - HANDOVER_MS / 2);
	fd_close(fd);
	return closed ? FREE : knock_past(a, len, name, until, EAGAIN);
}

/*
 * Binds and listens at one place (path, or the abstract name where
 * NULL), knocking on what holds it first, until `until'. The path's
 * file is its owner's alone (umask 077): connecting takes write
 * permission on it, so nobody else may even knock there. The socket,
 * or WITHOUT or NOT_FOLLOWING.
 */
static int place_bind(const char *path, long long until)
{
	struct timespec nap = { 0, 10000000 };
	struct sockaddr_un a;
	socklen_t len;
	const char *name = path ? path : abstract_name;
	int fd, got, ok;
	mode_t mask;

	if (!(len = unix_addr(&a, name, !path))) {
		say(LOG_WARNING, "-f: %s: longer than %u bytes; no socket there", path, (unsigned)sizeof a.sun_path - 1);
		return WITHOUT;
	}
	if (path && !dir_trusted(path))
		return WITHOUT;
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	for (;;) {
		mask = umask(077);
		ok = syscall(SYS_bind, fd, &a, len) == 0;
		umask(mask);
		if (ok && syscall(SYS_listen, fd, BACKLOG) == 0)
			return fd;
		if (ok || errno != EADDRINUSE || now_ms() >= until)
			break;
		if ((got = knock(&a, len, name, until)) != FREE) {
			fd_close(fd);
			return got == TAKEN ? WITHOUT : NOT_FOLLOWING;
		}
		/* Only root (or we) could have made a socket file in a trusted directory. */
		if (path)
			(void)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
		/* The old follower's end frees an abstract name a moment after its connection closes. */
		(void)syscall(SYS_nanosleep, &nap, NULL);
	}
	fd_close(fd);
	/* Held still, after every holder seen has ended: one more may be coming. */
	if (errno == EADDRINUSE) {
		say(LOG_WARNING, "-f: %s: %m; not following", name);
		return NOT_FOLLOWING;
	}
	say(LOG_WARNING, "-f: %s: %m; following without it", name);
	return WITHOUT;
}

/* Both places, in one HANDOVER_MS: 0, or -1 where the newcomer is not to follow. */
int place_take(const char *path)
{
	long long until = now_ms() + HANDOVER_MS;
	int p = path && *path ? place_bind(path, until) : WITHOUT;
	int q = p == NOT_FOLLOWING ? WITHOUT : place_bind(NULL, until);

	place[PATH_PLACE] = p < 0 ? -1 : p;
	place[ABSTRACT_PLACE] = q < 0 ? -1 : q;
	return p == NOT_FOLLOWING || q == NOT_FOLLOWING ? -1 : 0;
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
