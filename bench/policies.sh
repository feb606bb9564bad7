#!/usr/bin/env bash
# The policy comparison of docs/policies.md: `fluxsched sim` on the two
# public SWF traces (hpc2n-excerpt on 120 nodes x 2 cores, lublin_256 on
# 256 x 1) under fcfs, easy and conservative, as a markdown table on
# stdout, with how long each replay took.
# Usage: bench/policies.sh [TRACE_DIR]   (default: testdata/swf, the
# repository's copies; see testdata/swf/SOURCE.md)
source "$(dirname "$0")/lib.sh"
dir=${1:-testdata/swf} # lib.sh has made the repository the working directory
field() { sed -E "s/.*\"$1\":([-0-9.e+]+).*/\1/" <<<"$2"; }
echo "| trace | machine | policy | jobs | makespan (s) | utilization | mean wait (s) | mean bounded slowdown | replay (s) |"
echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for spec in "hpc2n-excerpt 120 2" "lublin_256 256 1"; do
	read -r trace nodes cores <<<"$spec"
	for policy in fcfs easy conservative; do
		a=$(now)
		j=$("$bin/fluxsched" sim --trace "$dir/$trace.swf" --nodes "$nodes" --cores-per-node "$cores" --policy "$policy" --json)
		b=$(now)
		awk -v t="$trace" -v m="$nodes x $cores" -v p="$policy" -v jobs="$(field jobs "$j")" \
			-v mk="$(field makespan "$j")" -v u="$(field utilization "$j")" -v w="$(field mean_wait "$j")" \
			-v s="$(field mean_bounded_slowdown "$j")" -v r="$(secs "$a" "$b")" \
			'BEGIN { printf "| %s | %s | %s | %d | %d | %.1f%% | %.0f | %.2f | %s |\n", t, m, p, jobs, mk, 100 * u, w, s, r }'
	done
done
