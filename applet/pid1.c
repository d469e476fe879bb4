/* SPDX-License-Identifier: MIT */
/*
 * PID 1 mode (rdinit= or init=): the kernel's arguments belong to the
 * next init, and an exit would panic the kernel, so whatever fails this
 * ends in an exec or waits forever. Mounts only what is missing and
 * detaches it again before the exec (the sysfs fd keeps working), so the
 * next init finds the machine as the kernel left it. Pending rules go to
 * a background child, as with -b, so the next init starts at once.
 * Calls proc.c, log.c and conf.c's init_path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drvbind.h"

static const char *const mnt[][3] = {
	{ "proc", "/proc", "/proc/self" },
	{ "sysfs", "/sys", "/sys/kernel" },
	{ "devtmpfs", "/dev", "/dev/kmsg" },
};
static int made[3];

void pid1_mount(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (syscall(SYS_faccessat, AT_FDCWD, mnt[i][2], F_OK) == 0)
			continue;
		/* /dev keeps its device nodes: /dev/kmsg is one. */
		made[i] = syscall(SYS_mount, mnt[i][0], mnt[i][1], mnt[i][0],
		    MS_NOSUID | (i < 2 ? MS_NODEV | MS_NOEXEC : 0), NULL) == 0;
	}
}

/*
 * Where every run ends, whatever happened: a process other than PID 1
 * (PID 1's background child too) exits with status; PID 1, which must
 * not exit, undoes its mounts and runs the next init, or waits forever.
 */
void run_end(int status, char **argv, char **envp)
{
	static const char *const init[] = { init_path, "/init", "/sbin/init", "/etc/init", "/bin/init", "/bin/sh" };
	int i;

	if (syscall(SYS_getpid) != 1)
		_exit(status);
	for (i = 0; i < 3; i++)
		if (made[i])
			(void)syscall(SYS_umount2, mnt[i][1], MNT_DETACH);
	sig_set(SIGPIPE, SIG_DFL);
	for (i = 0; i < 6; i++) {
		/* Never this program again: with rdinit=/init it would be /init. */
		if (!*init[i] || !strcmp(init[i], argv[0]))
			continue;
		argv[0] = (char *)init[i];
		execve(init[i], argv, envp);
		/* The one the command line asked for: why it did not run is worth a line. */
		if (!i)
			say(LOG_ERR, "drvbind.init=%s: %m; trying the next init", init_path);
	}
	say(LOG_ERR, "no init to run: %m");
	for (;;)
		(void)syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
}
