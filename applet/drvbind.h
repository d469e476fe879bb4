/* SPDX-License-Identifier: MIT */
/*
 * What the files of drvbind share: the limits, a rule, the run's
 * settings, and each file's functions, listed bottom-up: a file calls
 * only the files listed above its own, and reads main.c's flag[]. Each
 * file's "Calls" line names what it uses (test/calls.sh checks them).
 * Every global has one owner, the file named above it, and only that
 * file writes it; a file's own state is static in it. The rules are
 * conf.c's: it makes them and keeps their number and order; their
 * procedure (rule.c, set.c, wait.c) writes their run and report,
 * move.c what a move changed, and -l (list.c) their `listed'.
 *
 * Words with one meaning each:
 *   look    one reading of a device, and what its rule does about it
 *           (struct look, rule_look); a set's look finds its members
 *   hold    the attribute that keeps other drivers away (driver_override
 *           or authorized); held: the rule wrote it, and it stays
 *   move    a device's change of driver: unbind, bind, verify (move.c)
 *   arm     start a rule's run over from its first step (rule_arm)
 *   settle  a set's end: its one line, or its members taken back
 *   store   one write() of a value to an attribute; write: one by path
 *   step    one of drvbind(8)'s numbered steps; op: one operation of a
 *           move that can fail, as its messages name it
 *
 * How a function fails: it returns -1, and errno says why (SHORT_WRITE
 * and ELSEWHERE below where errno has no word); the parsers, which make
 * words, not errnos, give theirs through a `why' argument. A function
 * with more outcomes than that returns a named enum; one that answers a
 * question returns 1 or 0.
 */
#ifndef DRVBIND_H
#define DRVBIND_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "parse.h"

/* 32-bit musl has a 64-bit time_t: the time64 calls take its timespec. */
#ifdef SYS_clock_gettime64
#undef SYS_clock_gettime
#define SYS_clock_gettime SYS_clock_gettime64
#endif
#ifdef SYS_ppoll_time64
#undef SYS_ppoll
#define SYS_ppoll SYS_ppoll_time64
#endif
/*
 * 32-bit arm's fstat64 fills the kernel's struct stat64, which musl's
 * struct stat starts with there: st_mode and st_uid are where musl has
 * them, as with fstat on the 64-bit architectures.
 */
#ifdef SYS_fstat64
#undef SYS_fstat
#define SYS_fstat SYS_fstat64
#endif

enum {
	RULES_MAX = 64,		/* rules written, sets counted once */
	DEVICES_MAX = 128,	/* devices ruled, a set's members each */
	SET_MAX = 64,		/* devices a set takes */
	PATH_SZ = 4 * NAME_SZ + 64,
	TIMEOUT_DEFAULT = 10,
};

/* What a rule has come to: WAITING until it is DONE or has FAILED. */
enum state { WAITING, DONE, FAILED };

/* What a WAITING rule waits for: rule.c's table says how each comes. */
enum wait {
	FOR_DEVICE,	/* the device, or a first look at it */
	FOR_DRIVER,	/* the driver's bind, unbind or new_id file */
	FOR_BUS,	/* the bus to finish adding the device, held meanwhile */
	FOR_NEW_ID,	/* a USB driver's new_id, looked for every SOON_MS */
	WATCHING,	/* nothing: a none rule unbinds whatever binds */
};

/*
 * The attribute that keeps other drivers from a device: driver_override
 * (PCI, platform, AMBA, SPI, ...), or a USB interface's authorized
 * (Linux 4.4 on). A bus with neither has NO_HOLD_ATTR: only a watch.
 */
enum hold_attr { NO_HOLD_ATTR, OVERRIDE, AUTHORIZED };

/* The operations of a move that can fail, as its messages name them. */
enum op { NO_OP, OP_HOLD, OP_LINK, OP_UNBIND, OP_MATCH_BUSID, OP_BIND, OP_NEW_ID, OP_VERIFY };

/*
 * Why an operation failed, where errno has no word: past every errno
 * the kernel answers (below 4096), so the two never meet. Like errno's,
 * they come in errno.
 */
enum {
	SHORT_WRITE = 4096,	/* the store took part of the value */
	ELSEWHERE,		/* verify: the device is on another driver, or none */
};

/* A failed operation: which, and the errno its call answered (or the above). */
struct fail {
	enum op op;
	int err;
};

/*
 * A rule's run: from rule_arm, which starts it over in one assignment,
 * to DONE or FAILED. Its procedure (rule.c, set.c) writes it; move.c
 * records in it what a move changed, for the rollback.
 */
struct run {
	enum state state;
	enum wait wait;		/* while WAITING */
	enum hold_attr hold;	/* what can hold the device, found at the look */
	int held;		/* the hold written: other drivers are kept away */
	int asked;		/* modprobe asked for the driver */
	int looked;		/* a set looked at since armed: its failed members armed again */
	int busid;		/* "add DEVICE" written to usbip-host's match_busid */
	int gone;		/* -f saw its device go: not in its set's line */
	int ovr_read;		/* ovr read by the run's first look */
	struct fail refused;	/* the refusal it waits on, said at the deadline */
	long long new_id_until;	/* FOR_NEW_ID until then; 0: not waited for */
	long long until;	/* the run's deadline */
	char id[32];		/* the id taught through new_id, for the message */
	char orig[NAME_SZ];	/* driver before the first change, "" for none */
	char ovr[NAME_SZ];	/* the hold's value before the first change, "" unset */
};

/* What a rule has said, and what it need not say. */
struct report {
	int said;		/* its outcome said: looking again, say what changes only */
	int absent_ok;		/* its device absent at the deadline is no failure */
	int news;		/* moved or held anew since its set's line: a member's news, for the set */
	int listed;		/* -l listed its device (list.c): not absent */
};

/*
 * One rule: what was written (s, none), where its device is, its run
 * and its report. A set's member (in_set) is a rule of its own, made by
 * its set from the set's (conf.c's member_new). The small fields first:
 * x86-64 reaches the first 128 bytes with one-byte offsets.
 */
struct rule {
	int none;		/* the driver is "none": unbound, and kept so */
	int in_set;		/* a member of the set at rules[in_set - 1], or 0 */
	int spare;		/* a device a none set has no room for: one look, nothing kept open */
	struct report rep;
	struct run run;
	struct spec s;
	char bus[NAME_SZ];	/* s.bus, or the bus the device was found on */
};

/*
 * One look at one device (rule.c): the device, by its bus and bus id,
 * and the files the look has open, each -1 while not: the device's
 * directory, which proves it is there and from which its driver link
 * and hold are one step; its hold, read and then written; its driver's
 * bind, found and then written. A look with nothing open goes by path.
 */
struct look {
	const char *bus, *dev;
	int dir, hold, bind;
	char hold_path[PATH_SZ];	/* the hold's path, for its messages */
};

/* main.c: the flags -b -l -n -q -v -f set, in the order of `opts' there. */
enum { BG, LISTING, DRY, QUIET, VERBOSE, FOLLOW, FLAGS };
extern int flag[FLAGS];

/* mem.c: memcpy and memset, for gcc's struct copies; its string helpers are in parse.h. */

/*
 * log.c: a line of LINE_SZ at most, since /dev/kmsg refuses records over
 * ~992 bytes. say() makes its own; a line that is no message (-l's, a
 * datagram) is made in its maker's struct line, which starts zeroed, by
 * line_put, and goes out with line_write.
 */
enum { LINE_SZ = 960 };
struct line {
	size_t len;
	int cut;		/* it was full: "..." ends it, and nothing more goes on */
	char b[LINE_SZ];
};
enum { LOG_ERR = 3, LOG_WARNING = 4, LOG_INFO = 6, LOG_DEBUG = 7 };
void say(int prio, const char *fmt, ...);
const char *err_str(int e);
void line_put(struct line *l, const char *fmt, ...);
void line_write(struct line *l, int fd);
char *num_str(char b[24], unsigned long n);
const char *drv_or_none(const char *d);
void out_flush(void);
void log_batch(int on);
void log_kmsg(int fd);

/* sysfs.c: every path below is relative to the root sys_root opened. */
int sys_root(const char *root);
int sys_dirfd(void);
void fd_close(int fd);
int open_at(int dirfd, const char *path, int flags);
int fd_stat(int fd, struct stat *st);
int path_join(char *p, size_t size, ...);
#define PATH(p, ...) path_join(p, sizeof p, __VA_ARGS__, (const char *)0)
int sys_open(const char *path, int flags);
int sys_exists(const char *path);
int attr_store(int fd, const char *path, const char *val);
int attr_write(const char *path, const char *val);
int fd_get(int fd, char *buf, size_t size);
int attr_read(const char *path, char *buf, size_t size);
int link_base(int dirfd, const char *path, char *name);
int parent_read(const char *link, const char *attr, char *buf, size_t size);
int dir_scan(const char *path, int (*fn)(const char *name, void *ctx), void *ctx);
int dir_next(const char *path, char *name);

/*
 * trust.c: a file (or directory) opened only where its whole path is
 * trusted; why, where it is not, says what on the path is refused and
 * why ("" where errno says), and holds the longest such words.
 */
enum { TRUST_WHY_SZ = PATH_SZ + sizeof "directory  is owned by uid 4294967295, not by root or uid 4294967295" };
int trust_open(const char *path, int flags, mode_t type, char why[TRUST_WHY_SZ]);

/* proc.c */
void sig_set(int sig, void (*handler)(int));
pid_t proc_fork(void);
long long now_ms(void);

/* conf.c: the run's settings, and the rules loaded. */
struct conf {
	unsigned timeout;
	const char *modprobe;
	int nrules, bad;
	int follow;		/* drvbind.follow=1: main.c sets -f */
};
extern struct conf conf;
extern struct rule rules[DEVICES_MAX];
extern char init_path[PATH_SZ];
/* Where the rules and settings come from: main.c's arguments and options. */
struct src {
	int n;			/* rules in args (PID 1's arguments are the next init's) */
	char **args;
	const char *file, *cmdline;	/* -c and -k, or NULL */
	const unsigned *secs;	/* -t, or NULL */
	const char *modprobe;	/* -m, or NULL */
};
void rules_load(const struct src *from);
void rules_reload(void);
struct rule *rule_find(const char *bus, const char *dev);
struct rule *member_new(const struct rule *p, int idx, const char *dev);
void members_reap(void);

/* device.c: a device is a look's (its bus and bus id), or named by them. */
int node_path(char *p, const char *bus, const char *kind, const char *name, const char *attr);
int dev_path(char *p, const struct look *lk, const char *attr);
int dev_there(const struct look *lk);
int dev_driver(const struct look *lk, char *drv);
int dev_write(const struct look *lk, const char *attr, const char *val);
int dev_id(const struct look *lk, char *id, size_t size);
int drv_has(const struct look *lk, const char *drv, const char *attr);
int drv_write(const struct look *lk, const char *drv, const char *attr, const char *val);
int drivers_probe(const struct look *lk);
int bus_find(const char *dev, char found[2][NAME_SZ]);
void drv_request(const char *drv);

/*
 * move.c: a move of the looked-at device for rule r, and its rollback.
 * BACK, to where the device was (the rollback, a watch); the rule's
 * OWN move, where match_busid and new_id apply; or OVERRIDDEN, its own
 * move over an override, which matches whatever the ids (so no new_id).
 */
enum how { BACK, OWN, OVERRIDDEN };
struct move {
	const char *to;		/* the driver, "" for none */
	enum how how;
	char cur[NAME_SZ];	/* the driver at the last read of the link */
	struct fail f;		/* where it failed */
};
const char *hold_name(enum hold_attr attr);
const char *op_name(const struct rule *r, enum op op);
int fail(struct fail *f, enum op op);
int drv_registering(const struct fail *f);
int teachable(const struct look *lk, const struct rule *r);
int dev_move(struct look *lk, struct rule *r, struct move *m);
int rollback(struct look *lk, struct rule *r, struct fail *f);
void none_kept(const struct rule *r, const struct look *lk, char *back, size_t size);

/* rule.c */
void rule_arm(struct rule *r, long long until);
void rule_look(struct rule *r);
int rule_there(struct rule *r);
void rule_expire(struct rule *r);
void rule_undo(struct rule *r);

/* set.c */
int set_match(const struct rule *p, const char *dev, int *group);
void set_look(struct rule *p);
int set_settle(struct rule *p, long long now);

/* place.c: the follower's sockets (PLACES of them), for ppoll. */
struct pollfd;
struct sockaddr_un;
enum { PLACES = 2 };
int fd_trusted(int fd);
socklen_t unix_addr(struct sockaddr_un *a, const char *name, int abstract);
int place_take(const char *path);
long long place_poll(struct pollfd *pfd);
int place_answer(const struct pollfd *pfd);
void place_leave(void);

/* notify.c: what notify() says, and the rules it counts. */
enum { READY, RELOADING, STOPPING, STATUS };
void notify_open(char **envp);
void notify_poll(struct pollfd *pfd);
void notify(int what);

/* wait.c */
int rules_apply(int rescan, const char *socket);

/* list.c: -l BUS, and -l. */
int list_bus(const char *bus);
int list_all(void);

/* pid1.c: PID 1's mounts, and the end of every run, PID 1's or not. */
void pid1_mount(void);
__attribute__((noreturn)) void run_end(int status, char **argv, char **envp);

#endif
