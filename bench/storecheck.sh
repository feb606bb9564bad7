#!/usr/bin/env bash
# How long fluxsched's check of its store at start takes (issue 24): a
# store of JOBS jobs (1,000,000) of a real job's record sizes (4.2 GB at
# 1M), built once into DIR and kept there, then checked: the meta check
# every command's open makes, the full walk of every page fluxsched makes
# at start (wall and CPU seconds), and bbolt's own Tx.Check beside it.
# The file is warm in the page cache; on a shared machine the CPU time is
# the check's own, the wall time also the load's.
#   bench/storecheck.sh                   the issue's measure
#   JOBS=100000 bench/storecheck.sh       a small one
#   DIR=/var/tmp/sc bench/storecheck.sh   keep the store somewhere else
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-1000000}
dir=${DIR:-${TMPDIR:-/tmp}/fluxq-storecheck}
mkdir -p "$dir"
echo "storecheck: $jobs jobs in $dir (built on the first run)"
FLUXQ_BENCH_DIR=$dir FLUXQ_BENCH_JOBS=$jobs go test -run '^$' -bench '^BenchmarkCheck$' -benchtime 3x -timeout 60m ./internal/store/ |
	awk '/^BenchmarkCheck\// {
		name = $1; sub(/^BenchmarkCheck\//, "", name); sub(/-[0-9]+$/, "", name)
		wall = $3 / 1e9; cpu = ""; mb = ""
		for (i = 4; i < NF; i++) { if ($(i+1) == "cpu-s/op") cpu = $i; if ($(i+1) == "MB") mb = $i }
		printf "%-16s wall %7.3f s", name, wall
		if (cpu != "") printf "   cpu %7.3f s", cpu
		if (mb != "") printf "   (%s MB store)", mb
		printf "\n"
	} /^(FAIL|ok|PASS)/ { print }'
