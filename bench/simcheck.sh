#!/usr/bin/env bash
# Checks `fluxsched sim` against bench/simref, an independent implementation
# of docs/simulation.md: the same traces and policies through both, and the
# --schedule-out files compared byte for byte. One line per case, with
# each one's wall time: the median of --runs N runs (default 5; 1 for a
# quick check), fluxsched's and simref's interleaved (A B A B ...) so both
# see the same load; every run's schedules are compared. Exit 1 if any
# schedule differs (or a run fails), 2 on a usage error.
#
#   bench/simcheck.sh [--runs N]
#
#   SWF_DIR    where hpc2n-excerpt.swf and lublin_256.swf are
#              (default testdata/swf, the repository's copies)
#   FLUXSCHED  a fluxsched to check instead of building ./cmd/fluxsched;
#              FLUXSCHED=<simref binary> checks this script against simref.
set -euo pipefail
usage() { echo "usage: bench/simcheck.sh [--runs N]" >&2; exit 2; }
nruns=5
while [ $# -gt 0 ]; do
	case $1 in
	--runs)
		[ $# -ge 2 ] || { echo "simcheck.sh: --runs needs a number of runs" >&2; usage; }
		nruns=$2
		shift 2
		;;
	--runs=*) nruns=${1#--runs=}; shift ;;
	-h | --help) usage ;;
	*) echo "simcheck.sh: unknown argument $1" >&2; usage ;;
	esac
done
if ! [[ $nruns =~ ^[0-9]{1,4}$ ]] || [ "$((10#$nruns))" -lt 1 ] || [ "$((10#$nruns))" -gt 1000 ]; then
	echo "simcheck.sh: --runs must be a whole number from 1 to 1000, not $nruns" >&2
	exit 2
fi
nruns=$((10#$nruns))
cd "$(dirname "$0")/.."
swf=${SWF_DIR:-testdata/swf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/simref" ./bench/simref
if [ -n "${FLUXSCHED:-}" ]; then
	fluxsched=$FLUXSCHED
else
	CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$tmp/fluxsched" ./cmd/fluxsched
	fluxsched=$tmp/fluxsched
fi

# trace-file nodes cores-per-node policy [reservation-depth|- [memory]];
# edge.swf is a small synthetic trace of the corner cases the real traces
# lack. The memory arm (a memory per node: --memory, and SWF field 10):
# mem.swf is synthetic, hpc2n-mem.swf derived from the HPC2N excerpt
# (testdata/swf/SOURCE.md), mem-denied.swf a regression trace (a denied
# job's submission makes no pass).
edge=bench/simref/testdata/edge.swf
mem=bench/simref/testdata/mem.swf
hpc2nmem=testdata/swf/hpc2n-mem.swf
memdenied=bench/simref/testdata/mem-denied.swf
runs=(
	"$swf/hpc2n-excerpt.swf 120 2 fcfs"
	"$swf/hpc2n-excerpt.swf 120 2 easy"
	"$swf/hpc2n-excerpt.swf 120 2 conservative"
	"$swf/hpc2n-excerpt.swf 120 2 hybrid 4"
	"$swf/lublin_256.swf 256 1 fcfs"
	"$swf/lublin_256.swf 256 1 easy"
	"$swf/lublin_256.swf 256 1 conservative"
	"$edge 4 2 fcfs"
	"$edge 4 2 easy"
	"$edge 4 2 conservative"
	"$edge 4 2 hybrid 2"
	"$mem 4 2 fcfs - 4G"
	"$mem 4 2 easy - 4G"
	"$mem 4 2 conservative - 4G"
	"$mem 4 2 hybrid 2 4G"
	"$memdenied 7 2 conservative - 2G"
	"$hpc2nmem 120 2 fcfs - 1G"
	"$hpc2nmem 120 2 easy - 1G"
	"$hpc2nmem 120 2 conservative - 1G"
	"$hpc2nmem 120 2 hybrid 4 1G"
)

# timed OUT ERR CMD...: runs CMD with stdout to OUT and stderr to ERR,
# and sets secs to its wall time (bash's clock: no process to start).
timed() {
	local out=$1 err=$2 t0 t1
	shift 2
	t0=$EPOCHREALTIME
	"$@" >"$out" 2>"$err" || return
	t1=$EPOCHREALTIME
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

runs_word="runs, interleaved"
[ "$nruns" -gt 1 ] || runs_word=run
echo "wall times: the median of $nruns $runs_word, a case; $(uptime | sed 's/.*load average/load average/')"
failed=0
for r in "${runs[@]}"; do
	read -r trace nodes cpn policy depth memory <<<"$r"
	name=$(basename "$trace" .swf)
	label="$name $policy"
	dflag=()
	if [ -n "$depth" ] && [ "$depth" != - ]; then
		label="$label (depth $depth)"
		dflag=(--reservation-depth "$depth")
	fi
	# simref takes the nodes apart only with memory; without, their cores.
	machine=(--cores $((nodes * cpn)))
	if [ -n "$memory" ]; then
		label="$label, memory $memory"
		dflag+=(--memory "$memory")
		machine=(--nodes "$nodes" --cores-per-node "$cpn")
	fi
	a=$tmp/fluxsched.jsonl
	b=$tmp/simref.jsonl
	ta=() tb=() why=
	for ((k = 0; k < nruns; k++)); do
		rm -f "$a" "$b"
		if ! timed "$tmp/fluxsched.json" "$tmp/fluxsched.err" "$fluxsched" sim --trace "$trace" --nodes "$nodes" --cores-per-node "$cpn" \
			--policy "$policy" "${dflag[@]}" --json --schedule-out "$a"; then
			why="FAILED (fluxsched: $(head -n 1 "$tmp/fluxsched.err"))"
			break
		fi
		ta+=("$secs")
		if ! timed "$tmp/simref.json" "$tmp/simref.err" "$tmp/simref" --trace "$trace" "${machine[@]}" \
			--policy "$policy" "${dflag[@]}" --json --schedule-out "$b"; then
			why="FAILED (simref: $(head -n 1 "$tmp/simref.err"))"
			break
		fi
		tb+=("$secs")
		cmp -s "$a" "$b" || break
	done
	if [ -n "$why" ]; then
		echo "$label: $why"
		failed=1
		continue
	fi
	if cmp -s "$a" "$b"; then
		echo "$label: $(wc -l <"$b") jobs agree (fluxsched $(printf '%s\n' "${ta[@]}" | median) s, simref $(printf '%s\n' "${tb[@]}" | median) s)"
		continue
	fi
	failed=1
	# The first line that differs, from cmp's message: "differ: byte N,
	# line L", or "EOF on F after byte N, line L" when F stops after L whole
	# lines (so line L+1 differs), or "..., in line L" within a line.
	msg=$(cmp "$a" "$b" 2>&1 || true)
	line=1
	if [[ $msg =~ EOF.*after\ byte\ [0-9]+,\ line\ ([0-9]+) ]]; then
		line=$((BASH_REMATCH[1] + 1))
	elif [[ $msg =~ line\ ([0-9]+) ]]; then
		line=${BASH_REMATCH[1]}
	fi
	first=$(sed -n "${line}p" "$a")
	[ -n "$first" ] || first=$(sed -n "${line}p" "$b")
	id=$(sed -n 's/.*"id": *\(-\{0,1\}[0-9]*\).*/\1/p' <<<"$first")
	echo "$label: DIFFER (first: id ${id:-?}, line $line, run $((k + 1)); fluxsched $(wc -l <"$a") lines, simref $(wc -l <"$b"))"
	diff "$a" "$b" | head -n 10 | sed 's/^/    /' || true
done
exit "$failed"
