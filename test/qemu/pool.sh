# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# Sourced by run.sh and board.sh.
#
# pool FUNCTION ARG...: FUNCTION ARG in the background for each ARG,
# QEMU_JOBS at a time (default: the number of CPUs; each TCG guest keeps
# one busy); the next starts as soon as one has ended (each ends by its
# QEMU_TIMEOUT at the latest). Returns when all have ended.
pool() {
	pool_fn=$1
	shift
	pool_jobs=${QEMU_JOBS:-$(nproc 2>/dev/null || echo 1)}
	pool_pids=
	for pool_arg; do
		while :; do
			pool_left='' pool_n=0
			for pool_p in $pool_pids; do
				if kill -0 "$pool_p" 2>/dev/null; then
					pool_left="$pool_left $pool_p" pool_n=$((pool_n + 1))
				else
					wait "$pool_p" || true
				fi
			done
			pool_pids=$pool_left
			[ "$pool_n" -ge "$pool_jobs" ] || break
			sleep 0.5
		done
		"$pool_fn" "$pool_arg" &
		pool_pids="$pool_pids $!"
	done
	for pool_p in $pool_pids; do wait "$pool_p" || true; done
}
