#!/usr/bin/env bash
# Checks `fluxsched sim` against bench/simref, an independent implementation
# of docs/simulation.md: the same traces and policies through both, and the
# --schedule-out files compared byte for byte. One line per run; exit 1 if
# any schedule differs (or a run fails).
#
#   SWF_DIR    where hpc2n-excerpt.swf and lublin_256.swf are
#              (default testdata/swf, the repository's copies)
#   FLUXSCHED  a fluxsched to check instead of building ./cmd/fluxsched;
#              FLUXSCHED=<simref binary> checks this script against simref.
set -euo pipefail
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
	rm -f "$a" "$b"
	if ! "$fluxsched" sim --trace "$trace" --nodes "$nodes" --cores-per-node "$cpn" \
		--policy "$policy" "${dflag[@]}" --json --schedule-out "$a" >"$tmp/fluxsched.json" 2>"$tmp/fluxsched.err"; then
		echo "$label: FAILED (fluxsched: $(head -n 1 "$tmp/fluxsched.err"))"
		failed=1
		continue
	fi
	if ! "$tmp/simref" --trace "$trace" "${machine[@]}" \
		--policy "$policy" "${dflag[@]}" --json --schedule-out "$b" >"$tmp/simref.json" 2>"$tmp/simref.err"; then
		echo "$label: FAILED (simref: $(head -n 1 "$tmp/simref.err"))"
		failed=1
		continue
	fi
	if cmp -s "$a" "$b"; then
		echo "$label: $(wc -l <"$b") jobs agree"
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
	echo "$label: DIFFER (first: id ${id:-?}, line $line; fluxsched $(wc -l <"$a") lines, simref $(wc -l <"$b"))"
	diff "$a" "$b" | head -n 10 | sed 's/^/    /' || true
done
exit "$failed"
