#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fuzz/run.sh SECONDS TARGET...   (make fuzz; make check runs it short)
#
# For each parser: first every input of the committed corpus once
# (test/fuzz/corpus/TARGET: real command lines, rules and uevents, and
# every input that ever broke something), then SECONDS of fuzzing that
# grows build/fuzz/work/TARGET. A finding stops the run and is left in
# build/fuzz/TARGET-crash-*; once fixed, commit it into the corpus.
set -eu

cd "$(dirname "$0")/../.."
secs=$1
shift
for t; do
	case $t in
	cmdline) max=4097 ;;	# the kernel's longest command line and its NUL
	uevent) max=8192 ;;	# drvbind's receive buffer
	*) max=512 ;;		# a rule is refused beyond 384 bytes
	esac
	bin=build/fuzz/$t log=build/fuzz/$t.log
	"$bin" test/fuzz/corpus/"$t"/* >"$log" 2>&1 || {
		cat "$log" >&2
		echo "fuzz $t: an input of test/fuzz/corpus/$t fails (above)" >&2
		exit 1
	}
	mkdir -p build/fuzz/work/"$t"
	if ! "$bin" -max_total_time="$secs" -max_len="$max" -timeout=10 \
		-artifact_prefix=build/fuzz/"$t"- -print_final_stats=1 \
		build/fuzz/work/"$t" test/fuzz/corpus/"$t" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		echo "fuzz $t: a finding, its input in build/fuzz/$t-*" >&2
		exit 1
	fi
	awk -v t="$t" -v n="$(find test/fuzz/corpus/"$t" -type f | wc -l)" '
		/^stat::number_of_executed_units:/ { runs = $2 }
		/^Done [0-9]+ runs in/ { secs = $5 }
		END { printf "fuzz %s: %d seeds replayed, %d runs in %d s, 0 findings\n", t, n, runs, secs }' "$log"
done
