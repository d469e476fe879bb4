/* SPDX-License-Identifier: MIT */
/*
 * knock [-u UID:GID] [-n COUNT] [-w MS] [PLACE...]
 *	connect to a follower's places, as anyone on the machine can try,
 *	and say what happened, one line each. A PLACE that starts with
 *	'@' is an abstract unix name written as /proc/net/unix shows it,
 *	every NUL an '@' (the first followers listened on
 *	"@drvbind-follow@": their name kept a trailing NUL);
 *	anything else a socket path. Default: @drvbind-follow, then
 *	/run/drvbind.sock if it exists.
 *
 *	-u UID:GID  drop to that uid and gid (no supplementary groups)
 *	            first: busybox's setpriv cannot, and a guest has no
 *	            other tool for it
 *	-n COUNT    knock COUNT times on each place, from this one process
 *	            (one pid), each after the last was answered
 *	-w MS       how long to wait for the other end to close (default
 *	            2000)
 *
 * Output, on stdout:
 *	self pid PID uid UID gid GID
 *	PLACE connected peer-pid PID peer-uid UID closed MS
 *	PLACE connected peer-pid PID peer-uid UID open MS
 *	PLACE refused ERRNAME
 * "closed MS": the other end closed the connection (or reset it) MS
 * milliseconds after the connect; "open MS": it was still open after
 * the wait. The peer's pid and uid are the kernel's (SO_PEERCRED): who
 * listens there. Exit status 0, or 2 on a usage error or when the
 * privileges cannot be dropped.
 *
 * Static, with musl (make build/test/knock, which test/qemu/run.sh calls
 * for the lockdown scenario); it runs in the busybox guests of test/qemu.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	static char num[16];

	switch (e) {
	case EACCES: return "EACCES";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOENT: return "ENOENT";
	case EAGAIN: return "EAGAIN";
	case EPERM: return "EPERM";
	case ECONNRESET: return "ECONNRESET";
	}
	snprintf(num, sizeof num, "errno%d", e);
	return num;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void knock(const char *place, int wait_ms)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(place), i;
	socklen_t len;
	struct ucred who = { 0, -1, -1 };
	socklen_t wlen = sizeof who;
	struct pollfd pfd;
	long long t0;
	char c;
	int fd, closed = 0;

	if (n >= sizeof a.sun_path) {
		printf("%s refused too-long\n", place);
		return;
	}
	memcpy(a.sun_path, place, n);
	if (place[0] == '@') {
		for (i = 0; i < n; i++)
			if (a.sun_path[i] == '@')
				a.sun_path[i] = '\0';
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, len) < 0) {
		printf("%s refused %s\n", place, errname(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	t0 = now_ms();
	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &who, &wlen);
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* Closed (EOF or a reset), or nothing more within the wait. */
	while (poll(&pfd, 1, (int)(t0 + wait_ms - now_ms() > 0 ? t0 + wait_ms - now_ms() : 0)) > 0) {
		if (read(fd, &c, 1) <= 0) {
			closed = 1;
			break;
		}
	}
	printf("%s connected peer-pid %d peer-uid %d %s %lld\n", place, (int)who.pid, (int)who.uid,
	       closed ? "closed" : "open", now_ms() - t0);
	close(fd);
}

int main(int argc, char **argv)
{
	static const char *places[] = { "@drvbind-follow", "/run/drvbind.sock" };
	struct stat st;
	int opt, count = 1, wait_ms = 2000, i, k;
	unsigned uid, gid;

	while ((opt = getopt(argc, argv, "u:n:w:")) != -1) {
		switch (opt) {
		case 'u':
			if (sscanf(optarg, "%u:%u", &uid, &gid) != 2) {
				fprintf(stderr, "knock: -u UID:GID\n");
				return 2;
			}
			if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0 || getuid() != uid ||
			    geteuid() != uid || getgid() != gid) {
				perror("knock: dropping privileges");
				return 2;
			}
			break;
		case 'n':
			count = atoi(optarg);
			break;
		case 'w':
			wait_ms = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: knock [-u UID:GID] [-n COUNT] [-w MS] [PLACE...]\n");
			return 2;
		}
	}
	printf("self pid %d uid %u gid %u\n", (int)getpid(), (unsigned)getuid(), (unsigned)getgid());
	fflush(stdout);
	for (k = 0; k < count; k++) {
		if (optind < argc) {
			for (i = optind; i < argc; i++)
				knock(argv[i], wait_ms);
		} else {
			knock(places[0], wait_ms);
			if (stat(places[1], &st) == 0)
				knock(places[1], wait_ms);
		}
		fflush(stdout);
	}
	return 0;
}
