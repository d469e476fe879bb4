/* SPDX-License-Identifier: MIT */
/*
 * drvbind - bind devices to the drivers named on the kernel command line
 *
 * Rules come from /proc/cmdline ("drvbind=[BUS/]DEVICE:DRIVER", repeated),
 * from a config file, or from the arguments. Each device is waited for,
 * then moved to its driver through sysfs: driver_override, unbind, bind,
 * new_id where the driver does not know the device, a check of the
 * resulting driver link, and a rollback to the old driver on any failure.
 *
 * This file: the options, and the order of a run. drvbind.h says which
 * file holds what. No heap: every buffer is fixed and every overflow is
 * reported. Calls conf.c, list.c, wait.c, notify.c, pid1.c, proc.c,
 * sysfs.c, log.c and parse.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drvbind.h"

#define VERSION "0.1"

static const char usage[] =
"usage: drvbind [-bfnqv] [-r SYSFS] [-k CMDLINE] [-c CONF] [-t SECS] [-m MODPROBE] [-s SOCKET] [RULE...]\n"
"       drvbind -l [-r SYSFS] [BUS]\n";

int flag[FLAGS];

static int usage_error(const char *what, char opt)
{
	say(LOG_ERR, "-%s: %s", (char[]){ opt, '\0' }, what);
	(void)!write(2, usage, sizeof usage - 1);
	return 2;
}

/* The options that take a value, in the order of `opts' after the flags. */
enum { CONF, CMDLINE, MODPROBE, ROOT, SECS, SOCKET, VALS };

/*
 * Sets flag[] and val[] from the options. Returns the index of the first
 * rule, or -1 with *status the exit status (-h, -V, a usage error).
 */
static int opts_parse(int argc, char **argv, const char **val, int *status)
{
	/* The flags (flag[]), then the options that take a value (val[]). */
	static const char opts[] = "blnqvfckmrts";
	const char *why;
	int i;

	*status = 0;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i] + 1;
		int k;
		if (!strcmp(a, "-")) {
			i++;
			break;
		}
		for (; *a; a++) {
			for (k = 0; opts[k] && opts[k] != *a; k++)
				;
			if (k < FLAGS) {
				flag[k] = 1;
				continue;
			}
			if (*a == 'h' || *a == 'V') {
				(void)!write(1, *a == 'h' ? usage : "drvbind " VERSION "\n",
				    *a == 'h' ? sizeof usage - 1 : sizeof "drvbind " VERSION);
				return -1;
			}
			if (!opts[k])
				why = "unknown option";
			else if (!(val[k - FLAGS] = a[1] ? a + 1 : argv[++i]))
				why = "missing value";
			else
				break;
			*status = usage_error(why, *a);
			return -1;
		}
	}
	return i;
}

int main(int argc, char **argv, char **envp)
{
	const char *val[VALS] = { NULL }, *root;
	char why[WHY_SZ];
	struct src from;
	unsigned t = 0;
	int i, st, pid1 = syscall(SYS_getpid) == 1;

	/* A background child whose stderr went away must not die of it. */
	sig_set(SIGPIPE, SIG_IGN);
	/* Its arguments are the next init's; what is pending goes to a child. */
	if (pid1) {
		pid1_mount();
		flag[BG] = 1;
		argc = 1;
	}
	if ((i = opts_parse(argc, argv, val, &st)) < 0)
		return st;
	if (val[SECS] && secs_parse(val[SECS], &t, why) < 0)
		return usage_error(why, 't');
	if (flag[LISTING] && argc - i > 1)
		return usage_error("one bus at most", 'l');
	/* At boot the console may be quiet or gone: the kernel log keeps the lines. */
	if (i == argc && !val[CMDLINE])
		log_kmsg(open_at(AT_FDCWD, "/dev/kmsg", O_WRONLY));
	root = val[ROOT] ? val[ROOT] : "/sys";
	if (sys_root(root) < 0) {
		say(LOG_ERR, "%s: not a sysfs tree: %m", root);
		run_end(1, argv, envp);
	}
	/* -l takes a bus, not rules: they come from the config file and the command line. */
	from.n = flag[LISTING] ? 0 : argc - i;
	from.args = argv + i;
	from.file = val[CONF];
	from.cmdline = val[CMDLINE];
	from.secs = val[SECS] ? &t : NULL;
	from.modprobe = val[MODPROBE];
	rules_load(&from);
	if (flag[LISTING]) {
		if (argv[i])
			return list_bus(argv[i]) < 0;
		return list_all() < 0;
	}
	/*
	 * drvbind.follow=1 on the command line or in the config file. A dry
	 * run says its plan and ends: it neither follows nor knocks on a
	 * follower, which would end for it.
	 */
	flag[FOLLOW] = (flag[FOLLOW] | conf.follow) && !flag[DRY];
	/* A follower's service manager is told when it is ready; -b's parent is not the follower. */
	if (flag[FOLLOW] && !flag[BG])
		notify_open(envp);
	/*
	 * A tree given with -r need not send uevents: it is also re-scanned.
	 * The run ends in run_end: as PID 1 in the next init, else in exit.
	 */
	run_end(rules_apply(val[ROOT] != NULL, val[SOCKET] ? val[SOCKET] : "/run/drvbind.sock"), argv, envp);
}
