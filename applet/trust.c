/* SPDX-License-Identifier: MIT */
/*
 * A file trusted by its whole path, as sshd's StrictModes trusts one:
 * walked a name at a time from /, through every symbolic link, each
 * directory, link and the file itself checked before the next name is
 * taken from it, and the file opened from the directory that was
 * checked. Calls sysfs.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drvbind.h"

enum { LINKS_MAX = 40 };	/* the kernel's MAXSYMLINKS: a 41st link on one walk is ELOOP */

/* The walk: the directory reached, the path still to go, and why it stopped. */
struct walk {
	int dir;		/* O_PATH, judged */
	int links;		/* links followed */
	unsigned me;		/* our euid */
	char *p;		/* the path still to go, in rest */
	char *why;		/* the caller's, TRUST_WHY_SZ */
	int flags;		/* the caller's, to open the file with */
	mode_t type;		/* the type the file must be: S_IFREG, S_IFDIR */
	char at[PATH_SZ];	/* dir's path, or that of the name judged in it */
	char rest[PATH_SZ];
};

/* w->why: what at is (kind NULL: the file itself); -1. */
static int refuse(struct walk *w, const char *kind, const char *what)
{
	if (kind)
		(void)path_join(w->why, TRUST_WHY_SZ, kind, " ", w->at, " is ", what, (const char *)0);
	else
		copy(w->why, what);
	return -1;
}

/*
 * Whoever may write a directory on the way may put another file, link
 * or directory in place of the next name; whoever owns one may make it
 * writable. So every name is owned by root or by us, and but for a link
 * (whose mode means nothing) writable by neither group nor others. One
 * exception, on the way only (end 0): a sticky directory, as /tmp
 * (mode 1777), or tmpfs's root, which an initramfs's / may be. There
 * only an entry's owner, the directory's and root may rename or remove
 * it, and the entry taken from it is judged to be root's (or ours) in
 * turn, so nobody else can swap it (nor link root's files there where
 * the kernel's fs.protected_hardlinks is on, as most systems have it).
 * The file itself (end 1) has no such exception: others could write it.
 */
static int judge(struct walk *w, const struct stat *st, int end)
{
	/* The file itself is named by the caller's message; a directory asked for is named here. */
	const char *kind = S_ISLNK(st->st_mode) ? "link" : end && w->type != S_IFDIR ? NULL : "directory";
	char own[sizeof "owned by uid 4294967295, not by root or uid 4294967295"], n[24], m[24];

	if (st->st_uid && st->st_uid != w->me) {
		(void)path_join(own, sizeof own, "owned by uid ", num_str(n, st->st_uid), ", not by root",
				w->me ? " or uid " : "", w->me ? num_str(m, w->me) : "", (const char *)0);
		return refuse(w, kind, own);
	}
	if (!S_ISLNK(st->st_mode) && st->st_mode & 022 && (end || !(st->st_mode & S_ISVTX)))
		return refuse(w, kind, "writable by group or others");
	return 0;
}

/* w->dir: / again, judged; at the start, and for an absolute link. */
static int root_open(struct walk *w)
{
	struct stat st;

	fd_close(w->dir);
	copy(w->at, "/");
	w->dir = open_at(AT_FDCWD, "/", O_PATH | O_DIRECTORY);
	if (w->dir < 0 || fd_stat(w->dir, &st) < 0)
		return -1;
	return judge(w, &st, 0);
}

/*
 * The path into w->rest. A relative one is put after the working
 * directory's path (getcwd), so that the walk still starts at / and
 * judges the working directory's ancestors too. The kernel gives the
 * path of a directory that / no longer leads to as "(unreachable)...":
 * ENOENT here, as musl's getcwd says.
 */
static int rest_init(struct walk *w, const char *path)
{
	char cwd[PATH_SZ];

	w->p = w->rest;
	if (!*path) {
		errno = ENOENT;
		return -1;
	}
	if (*path == '/')
		return path_join(w->rest, PATH_SZ, path, (const char *)0);
	if (syscall(SYS_getcwd, cwd, sizeof cwd) < 0)
		return -1;
	if (cwd[0] != '/') {
		errno = ENOENT;
		return -1;
	}
	return path_join(w->rest, PATH_SZ, cwd, "/", path, (const char *)0);
}

/* What name_next says of the name it gives. */
enum { ON_THE_WAY, THE_END, THE_END_A_DIR };

/*
 * The next name of the path still to go, ended in place, and *end
 * whether another follows it, or only a "/", which makes it a directory
 * as the kernel takes it. Where none is left ("/", or a link to it),
 * the walk ends at w->dir itself: ".".
 */
static const char *name_next(struct walk *w, int *end)
{
	char *c, *e;

	for (c = w->p; *c == '/'; c++)
		;
	*end = THE_END;
	if (!*c)
		return ".";
	for (e = c; *e && *e != '/'; e++)
		;
	w->p = e;
	if (*e) {
		*w->p++ = '\0';
		*end = THE_END_A_DIR;
	}
	for (e = w->p; *e == '/'; e++)
		;
	if (*e)
		*end = ON_THE_WAY;
	return c;
}

/* w->at, for the name c in it: "." stays, ".." goes up (/ stays /), a name goes down. */
static int at_move(struct walk *w, const char *c)
{
	size_t len = str_len(w->at), n = str_len(c);

	if (c[0] == '.' && !c[1])
		return 0;
	if (c[0] == '.' && c[1] == '.' && !c[2]) {
		while (len > 1 && w->at[len - 1] != '/')
			len--;
		w->at[len > 1 ? len - 1 : 1] = '\0';
		return 0;
	}
	if (len == 1)
		len = 0;
	if (len + 1 + n >= PATH_SZ) {
		errno = ENAMETOOLONG;
		return -1;
	}
	w->at[len] = '/';
	copy(w->at + len + 1, c);
	return 0;
}

/*
 * The link fd, judged, named w->at in w->dir: its target goes in front
 * of the path still to go, to be walked from / (absolute) or from
 * w->dir. Read from the fd itself (readlinkat's empty path, Linux 2.6.39
 * on), so what is followed is what was judged.
 */
static int link_follow(struct walk *w, int fd)
{
	char t[PATH_SZ], n[24];
	size_t len = str_len(w->p);
	ssize_t tl;

	if (++w->links > LINKS_MAX) {
		(void)path_join(w->why, TRUST_WHY_SZ, "symbolic link loop (more than ", num_str(n, LINKS_MAX), " links)",
				(const char *)0);
		return -1;
	}
	tl = syscall(SYS_readlinkat, fd, "", t, sizeof t);
	if (tl < 0)
		return -1;
	if ((size_t)tl + 1 + len >= sizeof t) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (len)
		t[tl++] = '/';
	memcpy(t + tl, w->p, len + 1);
	copy(w->rest, t);
	w->p = w->rest;
	if (t[0] == '/')
		return root_open(w);
	return at_move(w, "..");
}

/* The end of the walk, judged as the file itself, and of the type asked for. */
static int end_judge(struct walk *w, const struct stat *st)
{
	if ((st->st_mode & S_IFMT) != w->type)
		return refuse(w, NULL, w->type == S_IFDIR ? "not a directory" : "not a regular file");
	return judge(w, st, 1);
}

/*
 * The end of the walk, name c in w->dir (st: its O_PATH look): judged
 * before it is opened at all (a FIFO would hold the reader up), then
 * opened with the caller's flags without following a link, and judged
 * again on the fd opened: what was judged is what is read.
 */
static int end_open(struct walk *w, const char *c, struct stat *st)
{
	int fd;

	if (end_judge(w, st) < 0)
		return -1;
	fd = open_at(w->dir, c, w->flags | O_NOFOLLOW);
	if (fd >= 0 && (fd_stat(fd, st) < 0 || end_judge(w, st) < 0)) {
		fd_close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * One name c of the path, in w->dir: a link is judged and followed, a
 * directory on the way judged and made w->dir, the end opened into
 * *ret. 1: go on; 0: the walk is over.
 */
static int step(struct walk *w, const char *c, int end, int *ret)
{
	struct stat st;
	int fd = open_at(w->dir, c, O_PATH | O_NOFOLLOW), go = 0;

	if (fd < 0 || fd_stat(fd, &st) < 0 || at_move(w, c) < 0) {
		fd_close(fd);
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		go = judge(w, &st, 0) == 0 && link_follow(w, fd) == 0;
	} else if (!S_ISDIR(st.st_mode) && end != THE_END) {
		errno = ENOTDIR;
	} else if (end) {
		*ret = end_open(w, c, &st);
	} else if (judge(w, &st, 0) == 0) {
		fd_close(w->dir);
		w->dir = fd;
		return 1;
	}
	fd_close(fd);
	return go;
}

/*
 * path opened with flags, where it is of the type (S_IFREG, S_IFDIR) and
 * trusted by its whole path; else -1, and why says what was not
 * ("directory /etc/x is writable by group or others"), or is "" where
 * errno says (ENOENT: a name on the way is missing).
 */
int trust_open(const char *path, int flags, mode_t type, char why[TRUST_WHY_SZ])
{
	struct walk w;
	const char *c;
	int end, fd = -1;

	w.dir = -1;
	w.links = 0;
	w.me = (unsigned)syscall(SYS_geteuid);
	w.why = why;
	w.flags = flags;
	w.type = type;
	why[0] = '\0';
	if (rest_init(&w, path) == 0 && root_open(&w) == 0)
		do
			c = name_next(&w, &end);
		while (step(&w, c, end, &fd));
	fd_close(w.dir);
	return fd;
}
