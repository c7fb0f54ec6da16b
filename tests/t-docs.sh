#!/bin/bash
# t-docs: every option in fs/opts.c's table is in man/dsfs.8 and `dsfs --help`, every stats key and Prometheus metric in man/dsfs-stats.1, and both man pages render without warnings.
set -euo pipefail

srcdir=${srcdir:-.}
man="$srcdir/../man/dsfs.8"
opts_c="$srcdir/../fs/opts.c"
dsfs="${top_builddir:-..}/fs/dsfs"
failed=0

fail()
{
	echo "t-docs: $*" >&2
	failed=1
}

for f in "$man" "$opts_c"; do
	[[ -r $f ]] || { echo "t-docs: cannot read $f" >&2; exit 1; }
done
[[ -x $dsfs ]] || { echo "t-docs: $dsfs not built" >&2; exit 1; }

# Option names: the first string of every entry of dsfs_opt_table, such as
# DSFS_OPT("entry_timeout=%s", ...) -> "entry_timeout=", FUSE_OPT_KEY("-f",
# ...) -> "-f" or { "verify", ... } -> "verify"; comment lines are skipped.
# "rw" and "ro" are accepted and ignored, so they need no documentation.
mapfile -t names < <(
	awk '/dsfs_opt_table\[\][[:space:]]*=/ { t = 1; next }
	     t && /FUSE_OPT_END/ { exit }
	     t && !/^[[:space:]]*(\/\*|\*)/ && match($0, /"[^"]*"/) {
		s = substr($0, RSTART + 1, RLENGTH - 2)
		sub(/=.*/, "=", s)
		print s
	     }' "$opts_c" | grep -vx -e rw -e ro
)
if ((${#names[@]} < 5)); then
	fail "found only ${#names[@]} options in $opts_c; has the table's format changed?"
	exit 1
fi

# The man page as text: \- is a hyphen, font changes and \& vanish.
man_text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' \
	       -e 's/\\[&%]//g' "$man")
help_text=$("$dsfs" --help 2>&1) || fail "dsfs --help exited with $?"

# The name as a whole word, not part of a longer option ("-d" is not in
# "--debug"); a "name=" is followed by its value.
has_option()
{
	local re=${1//./\\.} tail='([^[:alnum:]_-]|$)'

	[[ $1 == *= ]] && tail=
	grep -Eq -- "(^|[^[:alnum:]_-])${re}${tail}" <<<"$2"
}

for name in "${names[@]}"; do
	has_option "$name" "$man_text" || fail "option '$name' is not in man/dsfs.8"
	has_option "$name" "$help_text" || fail "option '$name' is not in dsfs --help"
done

# check_render PAGE: groff renders the man page without a warning.
check_render()
{
	local warnings

	warnings=$(groff -man -ww -z "$1" 2>&1) || fail "groff failed on $1"
	if [[ -n $warnings ]]; then
		fail "groff -man -ww warns about $1:"
		echo "$warnings" >&2
	fi
}

check_render "$man"

# dsfs-stats(1): every key of the stats snapshot (fs/stats.c) and every
# Prometheus metric (tools/render_prom.c) is named, and it renders cleanly.
stats_man="$srcdir/../man/dsfs-stats.1"
stats_text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\[&%]//g' "$stats_man")
mapfile -t keys < <(grep -o 'put[a-z_0-9]*(&\?d, "[a-z_.]*' "$srcdir/../fs/stats.c" |
	sed 's/.*"//; s/.*\.//' | sort -u)
mapfile -t metrics < <(grep -o '"dsfs_[a-z_]*"' "$srcdir/../tools/render_prom.c" |
	tr -d '"' | sort -u)
if ((${#keys[@]} < 20 || ${#metrics[@]} < 20)); then
	fail "found only ${#keys[@]} stats keys and ${#metrics[@]} metrics; has the code's format changed?"
fi
for k in "${keys[@]}" "${metrics[@]}"; do
	has_option "$k" "$stats_text" || fail "'$k' is not in man/dsfs-stats.1"
done
stats_help=$("${top_builddir:-..}/tools/dsfs-stats" --help 2>&1) || fail "dsfs-stats --help exited with $?"
for o in --json --watch --prometheus --set; do
	has_option "$o" "$stats_help" || fail "'$o' is not in dsfs-stats --help"
done
check_render "$stats_man"

((failed == 0)) && echo "t-docs: ${#names[@]} options documented: ${names[*]}; ${#keys[@]} stats keys and ${#metrics[@]} metrics in dsfs-stats(1)"
exit "$failed"
