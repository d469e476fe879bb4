/* SPDX-License-Identifier: MIT */
/*
 * benchrun: the measuring end of `make bench`.
 *
 * benchrun CMD [ARG...]
 *	run CMD, wait for it, print one line:
 *	"wall_ns utime_us stime_us maxrss_kb nvcsw nivcsw status"
 *	The rusage is RUSAGE_CHILDREN: every process of the run that was
 *	waited for, so a script's own children count too; maxrss is the
 *	largest one.
 * benchrun -w FROM_MS TO_MS CMD [ARG...]
 *	as above, and before the usage line one more:
 *	"wakeups N" - how many times CMD's own process was switched out
 *	(voluntary_ctxt_switches + nonvoluntary_ctxt_switches of
 *	/proc/PID/status) between FROM_MS and TO_MS after it started.
 * benchrun -m CMD [ARG...]
 *	print "peak_kb N", the largest VmHWM (peak resident set) of any
 *	process of the run, read from /proc/PID/status as each one exits
 *	(ptrace's exit stop): ru_maxrss misses processes this small.
 * benchrun -p LINK TARGET DEVPATH SUBSYSTEM
 *	hot-plug a device prepared in a fake tree's backing directory: make
 *	its bus link LINK -> TARGET (device_add makes that link last) and
 *	send its add uevent. Prints the CLOCK_MONOTONIC time, in ns, taken
 *	just before the link, on the clock the fake kernel stamps its
 *	writes with (FAKESYS_TIMES).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "../fake/uevent.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
	struct timespec ts = { t / 1000000000LL, t % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * The sum of the /proc/PID/status lines that start with one of KEYS
 * (NULL-terminated), or -1 when the process is gone.
 */
static long status_sum(pid_t pid, const char *const *keys)
{
	char path[64], line[256];
	const char *const *k;
	long n = 0;
	size_t len;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		for (k = keys; *k; k++) {
			len = strlen(*k);
			if (!strncmp(line, *k, len))
				n += atol(line + len);
		}
	fclose(f);
	return n;
}

static const char *const switch_keys[] = {
	"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:", NULL
};
static const char *const hwm_keys[] = { "VmHWM:", NULL };

/* every process of the run stops at its exit, where its VmHWM is final */
static int peak(char **argv)
{
	long peak = 0, kb;
	pid_t pid, p;
	int st, sig;

	pid = fork();
	if (pid < 0) {
		perror("benchrun: fork");
		return 1;
	}
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		perror("benchrun: exec");
		_exit(127);
	}
	waitpid(pid, &st, 0);
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT |
	    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE);
	ptrace(PTRACE_CONT, pid, 0, 0);
	for (;;) {
		p = waitpid(-1, &st, __WALL);
		if (p < 0)
			break;
		if (!WIFSTOPPED(st))
			continue;
		sig = 0;
		if (st >> 8 == (SIGTRAP | PTRACE_EVENT_EXIT << 8)) {
			kb = status_sum(p, hwm_keys);
			if (kb > peak)
				peak = kb;
		} else if (WSTOPSIG(st) != SIGTRAP && WSTOPSIG(st) != SIGSTOP) {
			sig = WSTOPSIG(st);
		}
		ptrace(PTRACE_CONT, p, 0, sig);
	}
	printf("peak_kb %ld\n", peak);
	return 0;
}

static int plug(char **argv)
{
	const char *kv[2];
	char sub[256];
	long long t;
	int fd;

	fd = uevent_open(0);
	if (fd < 0) {
		perror("benchrun: uevent socket");
		return 1;
	}
	snprintf(sub, sizeof sub, "SUBSYSTEM=%s", argv[3]);
	kv[0] = sub;
	t = now_ns();
	if (symlink(argv[1], argv[0]) < 0) {
		perror("benchrun: symlink");
		return 1;
	}
	if (uevent_send(fd, "add", argv[2], kv, 1) < 0) {
		perror("benchrun: uevent");
		return 1;
	}
	printf("%lld\n", t);
	return 0;
}

int main(int argc, char **argv)
{
	long long t0, t1, from = -1, to = -1;
	long s0 = 0, s1 = 0;
	struct rusage ru;
	pid_t pid;
	int st;

	if (argc == 6 && !strcmp(argv[1], "-p"))
		return plug(argv + 2);
	if (argc > 2 && !strcmp(argv[1], "-m"))
		return peak(argv + 2);
	argv++;
	if (argc > 4 && !strcmp(argv[0], "-w")) {
		from = atoll(argv[1]) * 1000000LL;
		to = atoll(argv[2]) * 1000000LL;
		argv += 3;
	}
	if (!argv[0]) {
		fputs("usage: benchrun [-w FROM_MS TO_MS] CMD [ARG...]\n"
		    "       benchrun -m CMD [ARG...]\n"
		    "       benchrun -p LINK TARGET DEVPATH SUBSYSTEM\n", stderr);
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("benchrun: fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[0], argv);
		perror("benchrun: exec");
		_exit(127);
	}
	if (from >= 0) {
		sleep_until(t0 + from);
		s0 = status_sum(pid, switch_keys);
		sleep_until(t0 + to);
		s1 = status_sum(pid, switch_keys);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("benchrun: wait");
			return 1;
		}
	t1 = now_ns();
	getrusage(RUSAGE_CHILDREN, &ru);
	if (from >= 0)
		printf("wakeups %ld\n", s0 < 0 || s1 < 0 ? -1 : s1 - s0);
	printf("%lld %ld %ld %ld %ld %ld %d\n", t1 - t0,
	    ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec,
	    ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec,
	    ru.ru_maxrss, ru.ru_nvcsw, ru.ru_nivcsw,
	    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
