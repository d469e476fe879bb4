#!/bin/sh
# SPDX-License-Identifier: MIT
# make check's tiers, each timed:
#
#   test/tier.sh FILE NAME COMMAND...   runs COMMAND, then adds
#                                       "NAME SECONDS ok|failed" to FILE
#   test/tier.sh FILE                   prints FILE as a table with the
#                                       total; fails if a tier failed
#
# A tier that fails does not stop the ones after it: one run of make
# check says everything that is wrong, and how long each part took.
set -u

file=$1
shift
if [ $# -eq 0 ]; then
	[ -s "$file" ] || { echo "tier.sh: no tier ran ($file is empty)" >&2; exit 1; }
	echo
	echo "make check, tier by tier:"
	awk '{ printf "  %-12s %4d min %02d s  %s\n", $1, $2 / 60, $2 % 60, $3; t += $2 }
		$3 != "ok" { bad++ }
		END { printf "  %-12s %4d min %02d s  %s\n", "total", t / 60, t % 60,
			bad ? bad " failed" : "all passed"; exit bad != 0 }' "$file"
	exit
fi

name=$1
shift
start=$(cut -d ' ' -f 1 /proc/uptime)
"$@"
st=$?
end=$(cut -d ' ' -f 1 /proc/uptime)
mkdir -p "$(dirname "$file")"
echo "$name $(echo "$start $end" | awk '{ printf "%d", $2 - $1 + 0.5 }') $([ "$st" -eq 0 ] && echo ok || echo failed)" >>"$file"
exit "$st"
