#!/usr/bin/env bash
# `fluxsched config check` on 1,000 hosts x 4,000 properties (issue 13),
# in the two shapes a site writes them: one [[resource.config]] entry per
# property naming every host ("by-property"), and one entry per host
# listing all its properties ("by-host"). Prints the median wall time of
# RUNS runs (default 3) of each.
# Usage: bench/configcheck.sh [RUNS]
source "$(dirname "$0")/lib.sh"
runs=${1:-3}
hosts=1000 props=4000

awk -v h=$hosts -v p=$props 'BEGIN {
	printf "[[resource.config]]\nhosts = \"n[0-%d]\"\ncores = \"0-3\"\n", h - 1
	for (j = 0; j < p; j++)
		printf "[[resource.config]]\nhosts = \"n[0-%d]\"\nproperties = [\"p%d\"]\n", h - 1, j
}' >"$tmp/by-property.toml"
awk -v h=$hosts -v p=$props 'BEGIN {
	list = "\"p0\""
	for (j = 1; j < p; j++) list = list ", \"p" j "\""
	for (i = 0; i < h; i++)
		printf "[[resource.config]]\nhosts = \"n%d\"\ncores = \"0-3\"\nproperties = [%s]\n", i, list
}' >"$tmp/by-host.toml"

for shape in by-property by-host; do
	ts=()
	for _ in $(seq "$runs"); do
		a=$(now)
		"$bin/fluxsched" config check "$tmp/$shape.toml" >/dev/null
		b=$(now)
		ts+=("$(secs "$a" "$b")")
	done
	echo "config check, $hosts hosts x $props properties, $shape: median $(printf '%s\n' "${ts[@]}" | median) s of $runs (${ts[*]})"
done
