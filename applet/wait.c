/* SPDX-License-Identifier: MIT */
/*
 * Waiting: the uevent socket, opened before the first look; a deadline
 * a rule on CLOCK_MONOTONIC; a look at every pending rule after each
 * event; the background child of -b and PID 1; and following (-f): a
 * rule applied again on the uevents that name it, signals read from a
 * signalfd, one follower at a time (place.c), and what a service
 * manager is told (notify.c).
 * Calls place.c, notify.c, set.c, rule.c, conf.c, proc.c, sysfs.c, log.c,
 * parse.c and main.c's flag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
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

/*
 * The state of the waiting: the uevent socket and a follower's signalfd
 * (each -1 while not open), the re-scan interval (0: none), the signals
 * got, where a follower listens for a newer one (place.c; "": the
 * abstract name only), and whether it follows: -f with a uevent socket,
 * since without one nothing says that a device came back.
 */
static struct {
	int sock, sigfd, poll_ms, following;
	unsigned got;
	const char *socket_path;
} w = { .sock = -1, .sigfd = -1 };

/* A uevent, or a signal's siginfo. */
static char buf[EVENT_SZ];

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

/*
 * The follower's signals come as data, not as handlers: blocked, and read
 * from a signalfd beside the uevent socket, so a signal never cuts a
 * rule's procedure short (and no handler needs a sigreturn trampoline).
 */
static void sig_open(void)
{
	unsigned long mask = 1UL << (SIGHUP - 1) | 1UL << (SIGINT - 1) | 1UL << (SIGTERM - 1);

	(void)syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, NULL, sizeof mask);
	w.sigfd = (int)syscall(SYS_signalfd4, -1, &mask, sizeof mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * What a uevent names: the last component of its DEVPATH (a device's
 * bus id, or a driver's name), its SUBSYSTEM (the device's bus, or
 * "drivers"; NULL where it says none), and the DEVPATH itself.
 */
struct event {
	const char *name, *subsystem, *devpath;
};

/*
 * Is the event about the device of rule r, on its bus? A device of the
 * same name elsewhere (a FUSE mount's bdi, which any user can make, is
 * "0:NN") is not; nor is one whose bus is not the rule's.
 */
static int names_dev(const struct rule *r, const char *dev, const struct event *ev)
{
	return !strcmp(ev->name, dev) && (!r->bus[0] || !ev->subsystem || !strcmp(ev->subsystem, r->bus));
}

/* Is it the add of rule r's driver, on the rule's bus where it is known? */
static int names_drv(const struct rule *r, const struct event *ev)
{
	char p[PATH_SZ];

	if (r->none || strcmp(ev->name, r->s.drv) || (ev->subsystem && strcmp(ev->subsystem, "drivers")))
		return 0;
	return !r->bus[0] || (PATH(p, "/bus/", r->bus, "/drivers/", r->s.drv) == 0 && !strcmp(p, ev->devpath));
}

/*
 * Does the event concern rule r: its device, its driver, or for a set a
 * device the set matches or has as a member (a device plugged where a
 * member was must be looked at by the set, which lets it go unless it
 * matches)? No other event costs a rule a look, nor a write.
 */
static int concerns(const struct rule *r, const struct event *ev)
{
	const struct rule *m;
	int group;

	if (names_drv(r, ev))
		return 1;
	if (!r->s.set)
		return names_dev(r, r->s.dev, ev);
	if (ev->subsystem && strcmp(ev->subsystem, r->bus))
		return 0;
	for (m = rules; m < rules + conf.nrules; m++)
		if (m->in_set == r - rules + 1 && names_dev(m, m->s.dev, ev))
			return 1;
	return set_match(r, ev->name, &group) || group;
}

/*
 * Applies rules again, each with the whole timeout from now (rule_arm).
 * ALL: every rule (SIGHUP); START too, for a first pass that says
 * everything and misses every absent device. Else those that are not
 * waiting already and that the event concerns, or all (NULL: events
 * were lost); one that failed only on an add (ADD) of its device or
 * driver, not on the bind and unbind its own rollback made, which would
 * start it over and over.
 */
enum { BOUND, ADD, ALL, START };

static void rules_arm(const struct event *ev, int how)
{
	long long until = now_ms() + conf.timeout * 1000LL;
	struct rule *r;

	for (r = rules; r < rules + conf.nrules; r++) {
		if (how == ALL || how == START ||
		    ((r->run.state == DONE || (r->run.state == FAILED && how == ADD)) && (!ev || concerns(r, ev))))
			rule_arm(r, until);
		if (how == START)
			r->rep.said = r->rep.absent_ok = 0;
	}
}

/*
 * A follower applies a rule again when its device is added, bound or
 * unbound (a replug, a driver loaded or unloaded, a rescan), or when its
 * driver is added (DEVPATH's last component names both).
 */
static void follow_event(char *buf, size_t n)
{
	struct event ev;
	char *action, *devpath, *p;

	if (uevent_parse(buf, n, &action, &devpath, &ev.subsystem) < 0)
		return;
	say(LOG_DEBUG, "uevent %s %s", action, devpath);
	/* add, bind, unbind: no other action starts so (change, move, remove, online, offline). */
	if (!w.following || (*action != 'a' && *action != 'b' && *action != 'u'))
		return;
	ev.devpath = devpath;
	for (ev.name = p = devpath; *p; p++)
		if (*p == '/')
			ev.name = p + 1;
	rules_arm(&ev, *action == 'a' ? ADD : BOUND);
}

/*
 * Sleeps, using no CPU, until a uevent, a signal to a follower, the time
 * `until' (LLONG_MAX: none), or `soon' ms.
 */
static void uevent_wait(long long until, int soon)
{
	struct pollfd pfd[3 + PLACES];
	long long due = place_poll(pfd + 2), wait;
	struct timespec ts;
	ssize_t n;

	/* Strangers' knocks are said once a minute at most, counted (place.c). */
	if (due < until)
		until = due;
	wait = until - now_ms();
	if (soon && wait > soon)
		wait = soon;
	if (wait < 0)
		wait = 0;
	/* No revents to clear: ppoll sets each, and they are read only after it answered. */
	pfd[0].fd = w.sock;
	pfd[1].fd = w.sigfd;
	pfd[0].events = pfd[1].events = POLLIN;
	notify_poll(pfd + 2 + PLACES);
	ts.tv_sec = wait / 1000;
	ts.tv_nsec = wait % 1000 * 1000000;
	/*
	 * The raw call: musl's poll() converts to ppoll itself where poll
	 * is missing (arm64). A socket not open (-1) is not polled.
	 */
	if (syscall(SYS_ppoll, pfd, 3 + PLACES, until == LLONG_MAX && !soon ? NULL : &ts, NULL, 0) <= 0)
		return;
	while (w.sigfd >= 0 && syscall(SYS_read, w.sigfd, buf, 128) == 128)
		w.got |= 1U << *(unsigned *)buf;
	/* A newer follower knocked (place.c): it takes over. */
	if (place_answer(pfd + 2))
		w.got |= 1U << SIGTERM;
	for (;;) {
		n = syscall(SYS_recvfrom, w.sock, buf, sizeof buf, MSG_DONTWAIT, 0, 0);
		/*
		 * ENOBUFS: events were lost; the look at every pending rule
		 * that follows makes up for them, and a follower looks at
		 * every rule that is done again. Not at one that failed: a
		 * flood that any user can cause (FUSE mounts send uevents)
		 * would make it move and roll back again at every overflow;
		 * it starts over on its own device's or driver's next add.
		 */
		if (n < 0 && errno != ENOBUFS)
			break;
		if (n >= 0)
			follow_event(buf, (size_t)n);
		else if (w.following)
			rules_arm(NULL, BOUND);
	}
}

/*
 * With -b the parent returns once what was present is done; the child
 * keeps the uevent socket, so no event is lost in between. With -f the
 * child is the follower.
 */
static int bg_fork(int pending)
{
	pid_t pid = proc_fork();

	if (pid < 0) {
		say(LOG_ERR, "fork: %m; waiting in the foreground");
		return 0;
	}
	if (pid == 0) {
		(void)syscall(SYS_setsid);
		return 0;
	}
	say(LOG_INFO, w.following ? "following %u rule(s) in the background" : "waiting in the background for %u rule(s)",
	    w.following ? conf.nrules : pending);
	return 1;
}

/*
 * A rule's deadline: it has had one last look. A set settles with its
 * devices, and again where one moved; with none yet it waits as a rule
 * for a missing device does.
 */
static void settle(struct rule *r, long long now)
{
	if (r->s.set ? set_settle(r, now) : r->run.state != WAITING)
		return;
	if (now >= r->run.until)
		rule_expire(r);
}

/* What a pass leaves: the rules pending, the next deadline, and how soon to look again. */
struct pass {
	int pending, soon;
	long long until;
};

/* A look at every pending rule, then at their deadlines. */
static void rules_pass(struct pass *ps)
{
	long long now = now_ms();
	struct rule *r;

	ps->pending = ps->soon = 0;
	ps->until = LLONG_MAX;
	while (syscall(SYS_wait4, -1, 0, WNOHANG, 0) > 0)
		;
	members_reap();
	/* A set's members come after it: they are looked at in the same pass. */
	for (r = rules; r < rules + conf.nrules; r++)
		if (r->run.state == WAITING && r->s.set)
			set_look(r);
		else if (r->run.state == WAITING)
			rule_look(r);
	for (r = rules; r < rules + conf.nrules; r++) {
		settle(r, now);
		if (r->run.state != WAITING)
			continue;
		ps->pending++;
		if (r->run.wait == FOR_NEW_ID)
			ps->soon = SOON_MS;
		else if (!ps->soon)
			ps->soon = w.poll_ms;
		if (r->run.until < ps->until)
			ps->until = r->run.until;
	}
}

/*
 * A follower's signals and place, once: in the foreground from the
 * start; with -b (and PID 1) in the child once forked, so that the pid
 * the kernel gives for the socket is the follower's own. -1: it is not
 * to follow (place.c could not end the follower before it).
 */
static int follow_start(void)
{
	if (w.sigfd >= 0)
		return 0;
	sig_open();
	return flag[BG] ? place_take(w.socket_path) : 0;
}

/* SIGHUP: the rules and the parameters read again, all applied again. */
static void reload(void)
{
	w.got &= ~(1U << SIGHUP);
	notify(RELOADING);
	rules_reload();
	rules_arm(NULL, ALL);
}

/*
 * A follower ended by a signal or by another follower misses no device:
 * what it held it hands back, and says so; a device absent then is not
 * missed. What is left waiting otherwise has reached its deadline.
 */
static void rules_end(void)
{
	struct rule *r;

	if (w.got)
		notify(STOPPING);
	place_leave();
	for (r = rules; r < rules + conf.nrules; r++) {
		if (w.got)
			r->rep.absent_ok = 1;
		if (r->run.state == WAITING)
			settle(r, LLONG_MAX);
	}
}

/* The exit status: a follower ended by a signal or by another follower has done what it was for. */
static int rules_status(void)
{
	const struct rule *r;
	int failed = 0;

	log_batch(0);
	if (w.got)
		return 0;
	for (r = rules; r < rules + conf.nrules; r++)
		failed += r->run.state == FAILED;
	return failed || conf.bad;
}

/* Another follower goes on, which this one could not end: status 1, and nothing more done. */
static int not_following(void)
{
	log_batch(0);
	return 1;
}

static int rules_run(void)
{
	struct pass ps;
	int forked = 0, ready = 0;

	log_batch(1);
	/*
	 * A newcomer takes the place before it moves anything, so the
	 * follower it replaces ends before the two could fight over a
	 * device; one that cannot end it does not follow at all.
	 */
	if (w.following && !flag[BG] && place_take(w.socket_path) < 0)
		return not_following();
	rules_arm(NULL, START);
	for (;;) {
		rules_pass(&ps);
		/* SIGINT or SIGTERM: a follower ends, as if its rules had all been applied. */
		if ((!ps.pending && !w.following) || w.got & (1U << SIGINT | 1U << SIGTERM))
			break;
		out_flush();
		/* -b's parent returns once what was present is done. */
		if (flag[BG] && !forked) {
			forked = 1;
			if (bg_fork(ps.pending))
				return rules_status();
		}
		if (w.following) {
			if (follow_start() < 0)
				return not_following();
			/*
			 * Settled: every rule held, failed or timed out, and the
			 * place taken. Units ordered after the follower may
			 * start now.
			 */
			if (!ps.pending && !ready) {
				ready = 1;
				notify(READY);
			} else {
				notify(STATUS);
			}
		}
		uevent_wait(ps.until, ps.soon);
		if (w.got & 1U << SIGHUP) {
			ready = 0;
			reload();
		}
	}
	rules_end();
	return rules_status();
}

/*
 * Waits and applies the rules loaded; the exit status. rescan: the tree
 * need not send uevents (a root given with -r), so look at it every
 * RESCAN_MS too, as where the socket cannot be opened. socket: where a
 * follower listens for a newer one, beside the abstract name.
 */
int rules_apply(int rescan, const char *socket)
{
	w.socket_path = socket;
	if (!conf.nrules && !flag[FOLLOW])
		return conf.bad != 0;
	w.sock = uevent_open();
	/*
	 * Its pages in place from the start: the largest uevent lands in
	 * memory the first pass had already, so a follower's memory is the
	 * same then as after any number of events.
	 */
	memset(buf, 0, sizeof buf);
	if (w.sock < 0 || rescan)
		w.poll_ms = RESCAN_MS;
	w.following = flag[FOLLOW];
	if (w.sock < 0 && w.following) {
		say(LOG_ERR, "-f: no uevent socket: %m; not following");
		w.following = 0;
	}
	return rules_run();
}
