#!/bin/sh
# SPDX-License-Identifier: MIT
# calls.sh [DIR]: is every "Calls ..." line of DIR's .c files true?
# DIR is applet/ of this tree unless given. Prints a line for each file
# whose line is wrong, and exits 1 if any is; prints nothing and exits 0
# when every line names exactly the files it uses.
#
# What a file uses is what the linker sees: each .c is compiled alone
# (-O0 -fno-builtin, so that every call written is a call made and none
# is inlined or folded away), and nm lists the symbols it defines and
# the ones it takes from elsewhere. A file uses another when it takes a
# symbol that the other defines: a function it calls or whose address it
# passes, or a global it reads or writes (conf.c's conf and rules, main.c's
# flag). A macro counts as what it expands to: PATH() is a use of sysfs.c's
# path_join. Anything no file of DIR defines is libc's (write, syscall),
# and so are memcpy and memset: mem.c defines them in libc's stead, for
# the compiler's struct copies and clears, and a file that calls them
# calls libc's names, not mem.c's functions.
#
# What a file says is the sentence starting with "Calls" in its header
# comment (the comment before its first #include), wrapped over lines or
# not: every FILE.c it names, with or without a qualifier ("conf.c's
# rules" names conf.c; the words after it are not checked). A sentence
# naming no .c file ("Calls nothing.", "Calls write, and nothing of the
# other files.") says the file uses none. A file without the sentence is
# wrong too: every file says what it uses.
#
# CALLS_CC and CALLS_NM choose the compiler and nm: musl-gcc and nm, the
# ones that build drvbind for the host.
set -eu

if [ $# -gt 0 ]; then
	dir=${1%/}
else
	cd "$(dirname "$0")/.."
	dir=applet
fi
cc=${CALLS_CC:-musl-gcc}
nm=${CALLS_NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $tmp/syms: "FILE.c TYPE SYMBOL" for each symbol a file defines or takes.
broken=0
for f in "$dir"/*.c; do
	b=${f##*/}
	if ! $cc -O0 -fno-builtin -w -c -o "$tmp/$b.o" "$f" 2>"$tmp/$b.err"; then
		echo "$f does not compile, so what it calls is unknown:"
		sed 's/^/  /' "$tmp/$b.err"
		broken=1
		continue
	fi
	$nm -P "$tmp/$b.o" | awk -v f="$b" '{ print f, $2, $1 }' >>"$tmp/syms"
done
[ "$broken" -eq 0 ] || exit 1

# $tmp/said: "FILE.c OTHER.c" for each file its Calls line names, and
# "FILE.c -" for a file that has the line.
for f in "$dir"/*.c; do
	awk -v f="${f##*/}" '
	/^#/ { exit }
	{ sub(/^[ \t]*\/?\*+\/?[ \t]?/, ""); text = text " " $0 }
	END {
		text = text " "
		if (!match(text, /(^|[ \t])Calls[ \t]/))
			exit
		print f, "-"
		s = substr(text, RSTART)
		if (match(s, /\.[ \t]/))	# the sentence ends at a full stop
			s = substr(s, 1, RSTART)
		while (match(s, /[A-Za-z0-9_]+\.c[^A-Za-z0-9_]/)) {
			print f, substr(s, RSTART, RLENGTH - 1)
			s = substr(s, RSTART + RLENGTH - 1)
		}
	}' "$f" >>"$tmp/said"
done

# The two compared, one file at a time, in name order: $tmp/syms read
# twice (who defines what, then who takes it), then $tmp/said.
LC_ALL=C sort -o "$tmp/syms" "$tmp/syms"
touch "$tmp/said"
awk -v dir="$dir" '
FNR == 1 { pass++ }
pass == 1 {
	if ($2 ~ /^[A-Z]$/ && $2 != "U" && $3 != "memcpy" && $3 != "memset")
		owner[$3] = $1
	if (!($1 in files))
		order[++n] = $1
	files[$1] = 1
	next
}
pass == 2 {
	if (($2 == "U" || $2 == "w") && ($3 in owner) && owner[$3] != $1) {
		k = $1 SUBSEP owner[$3]
		uses[k] = (k in uses ? uses[k] ", " : "") $3
	}
	next
}
$2 == "-" { hasline[$1] = 1; next }
{ said[$1, $2] = 1; named[$1] = named[$1] " " $2 }
END {
	bad = 0
	for (i = 1; i <= n; i++) {
		f = order[i]
		if (!(f in hasline)) {
			print dir "/" f " has no Calls line"
			bad = 1
			continue
		}
		for (j = 1; j <= n; j++) {
			g = order[j]
			if (g == f)
				continue
			if ((f SUBSEP g) in uses && !((f SUBSEP g) in said)) {
				print dir "/" f " calls " g " but does not say so (" uses[f, g] ")"
				bad = 1
			}
			if ((f SUBSEP g) in said && !((f SUBSEP g) in uses)) {
				print dir "/" f " says it calls " g " but does not"
				bad = 1
			}
		}
		m = split(named[f], w, " ")
		for (j = 1; j <= m; j++)
			if (!(w[j] in files)) {
				print dir "/" f " says it calls " w[j] ", which is not in " dir
				bad = 1
			}
	}
	exit bad
}' "$tmp/syms" "$tmp/syms" "$tmp/said"
