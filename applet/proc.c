/* SPDX-License-Identifier: MIT */
/*
 * The process: signal dispositions, fork and the monotonic clock, each
 * as the raw system call, since musl's wrappers bring machinery along
 * that a single-threaded program does not need; and the start of the
 * program. Calls nothing here.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "drvbind.h"

/* The raw call: musl's signal() brings sigaction's restorer machinery along. */
void sig_set(int sig, void (*handler)(int))
{
	/* The kernel's layout; its sigset is 64 bits on every architecture. */
	struct { void (*handler)(int); unsigned long flags; void *restorer; unsigned long mask[8 / sizeof(long)]; } sa = { handler, 0, 0, { 0 } };

	(void)syscall(SYS_rt_sigaction, sig, &sa, NULL, sizeof sa.mask);
}

/* Single-threaded, no locks to reset: the bare system call is enough. */
pid_t proc_fork(void)
{
	return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

long long now_ms(void)
{
	struct timespec ts;

	/* The raw call: musl's vDSO lookup costs more bytes than the call saves. */
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* glibc (the sanitizer builds) starts the program its own way. */
#ifndef __GLIBC__
/*
 * musl's thread descriptor (struct pthread, which its headers do not
 * show), with room to spare; errno lives in it.
 */
static long thread[128];

int __init_tp(void *td);

/*
 * The program's start, in place of musl's, which crt1.o calls with main.
 * musl's sets up thread-local storage for a program that has none, reads
 * the auxiliary vector for what drvbind never calls (the vDSO, hwcaps,
 * secure mode), and runs constructors and atexit handlers it has none
 * of: over a KiB. musl's own functions need the thread pointer alone,
 * which __init_tp sets.
 */
int __libc_start_main(int (*m)(int, char **, char **), int argc, char **argv)
{
	(void)__init_tp(thread);
	_exit(m(argc, argv, argv + argc + 1));
}
#endif
