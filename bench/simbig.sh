#!/usr/bin/env bash
# A trace of a million jobs replayed under every policy (issue 28): for
# each policy, fluxsched sim's wall time and peak resident memory, the
# jobs started, skipped and denied, and whether it is within the issue's
# bound (60 s and 2 GB). Writes bench/results/simbig.json.
#
#   bench/simbig.sh [--jobs N] [--nodes N] [--cores-per-node C]
#                   [--policies fcfs,easy,conservative,hybrid]
#                   [--source FILE.swf] [--runs N] [--timeout S]
#
# The trace is made by bench/swfrepeat: copies of --source (default the
# bundled lublin_256.swf, Lublin and Feitelson's workload model) one after
# another in time, renumbered, until it has --jobs records (default
# 1,000,000). Its shape is the source's, and so is its load: the source's
# core-seconds over its span. lublin_256.swf offers 1.06 of 256 cores
# (under fcfs, 3,900 jobs wait at its worst), so on 256 cores a million
# jobs' queue would grow without bound and the replay would measure a
# queue no real machine keeps. The default machine is 96 nodes x 4 cores
# = 384 cores, which the trace loads to 0.71: a busy machine whose queue
# drains, as a real one's does. The script prints the offered load, and
# after each replay its makespan against the trace's span (near 1: the
# queue kept up; well over 1: it did not, and the figures are of a growing
# queue). With another --source or machine, choose --nodes from the
# offered load it prints.
#
# Each replay runs under `timeout` (--timeout, default 900 s: a replay
# that has not finished by then is reported as timed out, not measured);
# with --runs N (default 1: a million-job replay takes minutes today) the
# policies are run in N interleaved rounds and the medians reported.
# Wall time and peak RSS (max resident set) come from GNU time
# (/usr/bin/time, installed with apt-get when missing and root), else
# from /proc/PID/status (VmHWM, read until the process exits).
#
# Exit status: 0 when every replay finished (within the bound or not: the
# table says), 1 when one failed or timed out, 2 on a usage error.
#
#   FLUXSCHED  a fluxsched to measure instead of building ./cmd/fluxsched
set -euo pipefail
usage() {
	echo "usage: bench/simbig.sh [--jobs N] [--nodes N] [--cores-per-node C] [--policies P,...] [--source FILE] [--runs N] [--timeout S]" >&2
	exit 2
}
die() { echo "simbig.sh: $*" >&2; exit 2; }
jobs=1000000 nodes=96 cpn=4 policies=fcfs,easy,conservative,hybrid source= runs=1 limit=900
while [ $# -gt 0 ]; do
	case $1 in
	--jobs | --nodes | --cores-per-node | --policies | --source | --runs | --timeout)
		[ $# -ge 2 ] || die "$1 needs a value"
		case $1 in
		--jobs) jobs=$2 ;;
		--nodes) nodes=$2 ;;
		--cores-per-node) cpn=$2 ;;
		--policies) policies=$2 ;;
		--source) source=$2 ;;
		--runs) runs=$2 ;;
		--timeout) limit=$2 ;;
		esac
		shift 2
		;;
	-h | --help) usage ;;
	*) echo "simbig.sh: unknown argument $1" >&2; usage ;;
	esac
done
# whole NAME VALUE MIN MAX: VALUE is a whole number from MIN to MAX.
whole() {
	[[ $2 =~ ^[0-9]{1,10}$ ]] && [ "$((10#$2))" -ge "$3" ] && [ "$((10#$2))" -le "$4" ] ||
		die "--$1 must be a whole number from $3 to $4, not $2"
}
whole jobs "$jobs" 1 100000000
whole nodes "$nodes" 1 100000
whole cores-per-node "$cpn" 1 100000
whole runs "$runs" 1 100
whole timeout "$limit" 1 86400
jobs=$((10#$jobs)) nodes=$((10#$nodes)) cpn=$((10#$cpn)) runs=$((10#$runs)) limit=$((10#$limit))
IFS=, read -r -a plist <<<"$policies"
[ ${#plist[@]} -gt 0 ] || die "--policies names no policy"
for p in "${plist[@]}"; do
	case $p in
	fcfs | easy | conservative | hybrid) ;;
	*) die "--policies: unknown policy \"$p\" (fcfs, easy, conservative, hybrid)" ;;
	esac
done
[ -n "$source" ] && { [ -f "$source" ] || die "--source: no such file $source"; source=$(realpath "$source"); }
cd "$(dirname "$0")/.."
source=${source:-$PWD/testdata/swf/lublin_256.swf}
out=bench/results
mkdir -p "$out"
tmp=$(mktemp -d)
child=
cleanup() {
	[ -n "$child" ] && kill "$child" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/swfrepeat" ./bench/swfrepeat
if [ -n "${FLUXSCHED:-}" ]; then
	fluxsched=$FLUXSCHED
else
	CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$tmp/fluxsched" ./cmd/fluxsched
	fluxsched=$tmp/fluxsched
fi
gnutime=/usr/bin/time
if ! "$gnutime" -f %M true >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y -qq time >/dev/null 2>&1 || true
	fi
	"$gnutime" -f %M true >/dev/null 2>&1 || gnutime=
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

trace=$tmp/simbig.swf
"$tmp/swfrepeat" --trace "$source" --jobs "$jobs" --out "$trace"
cores=$((nodes * cpn))
# The trace's shape: records, span, and the load it offers the machine
# (cores x run time over the span, of the records the replay does not
# skip); with the median job size and run time, against the source's.
shape() {
	local kept=$tmp/kept
	awk -v machine="$cores" -v kept="$kept" '
		/^[[:space:]]*;/ || NF == 0 { next }
		{ n++; c = ($8 > 0) ? int($8) : int($5); run = int($4); sub_ = int($2) }
		c <= 0 || sub_ < 0 || run < 0 { next }
		{ k++; work += c * run; print c, run >kept
		  if (k == 1 || sub_ < first) first = sub_; if (sub_ > last) last = sub_ }
		END {
			span = last - first; if (span < 1) span = 1
			printf "%d %d %.3f", n, span, work / span / machine
		}' "$1"
	printf ' %s %s\n' "$(cut -d' ' -f1 "$kept" | median)" "$(cut -d' ' -f2 "$kept" | median)"
	rm -f "$kept"
}
read -r records span load msize mrun <<<"$(shape "$trace")"
read -r _ sspan sload _ _ <<<"$(shape "$source")"
echo "trace: $records records, $(basename "$source") repeated, over $span s ($((span / 86400)) d); median job $msize cores, $mrun s"
echo "machine: $nodes nodes x $cpn cores = $cores cores; offered load $load (the source alone: $sload over $sspan s)"
if awk -v l="$load" 'BEGIN { exit !(l >= 1) }'; then
	echo "simbig.sh: warning: the trace offers $load of the machine: its queue grows without bound; give more --nodes" >&2
fi
echo "bound: 60 s and 2 GB a policy; $runs run(s) a policy, interleaved; $(uptime | sed 's/.*load average/load average/')"

# measure POLICY: one replay; sets wall (s), rss (KB), status (ok,
# timeout, failed) and the summary's figures (from --json).
measure() {
	local p=$1 extra=()
	[ "$p" = hybrid ] && extra=(--reservation-depth 64)
	rm -f "$tmp/sim.json" "$tmp/time"
	local t0=$EPOCHREALTIME rc=0
	if [ -n "$gnutime" ]; then
		"$gnutime" -o "$tmp/time" -f '%e %M' timeout "$limit" "$fluxsched" sim --trace "$trace" \
			--nodes "$nodes" --cores-per-node "$cpn" --policy "$p" "${extra[@]}" --json >"$tmp/sim.json" 2>"$tmp/sim.err" &
		child=$!
		wait "$child" || rc=$?
		child=
		# The last line: GNU time says first when the status is not 0.
		read -r wall rss < <(tail -n 1 "$tmp/time" 2>/dev/null) || { wall=0 rss=0; }
		[[ $wall =~ ^[0-9.]+$ ]] || wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
		[[ $rss =~ ^[0-9]+$ ]] || rss=0
	else
		timeout "$limit" "$fluxsched" sim --trace "$trace" --nodes "$nodes" --cores-per-node "$cpn" \
			--policy "$p" "${extra[@]}" --json >"$tmp/sim.json" 2>"$tmp/sim.err" &
		child=$!
		rss=0
		local pid hwm
		pid=$(pgrep -P "$child" -n 2>/dev/null || true)
		while kill -0 "$child" 2>/dev/null; do
			[ -n "$pid" ] || pid=$(pgrep -P "$child" -n 2>/dev/null || true)
			if [ -n "$pid" ]; then
				hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
				[ -n "$hwm" ] && [ "$hwm" -gt "$rss" ] && rss=$hwm
			fi
			sleep 0.2
		done
		wait "$child" || rc=$?
		child=
		wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	fi
	status=ok
	if [ "$rc" = 124 ]; then
		status=timeout
	elif [ "$rc" != 0 ]; then
		status=failed
	fi
	sjobs=0 sskipped=0 sdenied=0 smakespan=0 sutil=0 swait=0
	if [ "$status" = ok ]; then
		local j
		j=$(cat "$tmp/sim.json")
		field() { sed -n 's/.*"'"$1"'":\([-0-9.e+]*\)[,}].*/\1/p' <<<"$j"; }
		sjobs=$(field jobs) sskipped=$(field skipped) sdenied=$(field denied)
		smakespan=$(field makespan) sutil=$(field utilization) swait=$(field mean_wait)
	fi
}
declare -A walls rsss statuses summary
for ((r = 0; r < runs; r++)); do
	for p in "${plist[@]}"; do
		measure "$p"
		walls[$p]+="$wall "
		rsss[$p]+="$rss "
		# A policy that times out or fails in any round is reported so.
		if [ "${statuses[$p]:-ok}" = ok ]; then
			statuses[$p]=$status
		fi
		if [ "$status" = failed ]; then
			echo "simbig.sh: $p: fluxsched sim failed: $(head -n 1 "$tmp/sim.err")" >&2
		fi
		[ "$status" = ok ] && summary[$p]="$sjobs $sskipped $sdenied $smakespan $sutil $swait"
	done
done

failed=0
rows=()
printf '%-13s %9s %9s %8s %8s %8s %11s %9s %s\n' POLICY WALL MAX_RSS JOBS SKIPPED DENIED UTILIZATION MAKESPAN WITHIN
for p in "${plist[@]}"; do
	wall=$(tr ' ' '\n' <<<"${walls[$p]}" | grep . | median)
	rss=$(tr ' ' '\n' <<<"${rsss[$p]}" | grep . | median)
	rss_mb=$(awk -v k="$rss" 'BEGIN { printf "%.0f", k * 1024 / 1e6 }')
	st=${statuses[$p]}
	read -r sjobs sskipped sdenied smakespan sutil swait <<<"${summary[$p]:-0 0 0 0 0 0}"
	within=false
	if [ "$st" = ok ] && awk -v w="$wall" -v m="$rss" 'BEGIN { exit !(w < 60 && m * 1024 < 2e9) }'; then
		within=true
	fi
	ratio=$(awk -v m="$smakespan" -v s="$span" 'BEGIN { printf "%.2f", m / s }')
	case $st in
	ok)
		printf '%-13s %8.2fs %6s MB %8d %8d %8d %10.1f%% %8sx %s\n' "$p" "$wall" "$rss_mb" "$sjobs" "$sskipped" "$sdenied" \
			"$(awk -v u="$sutil" 'BEGIN { print 100 * u }')" "$ratio" "$([ "$within" = true ] && echo yes || echo no)"
		;;
	timeout)
		printf '%-13s %9s %6s MB %8s %8s %8s %11s %9s %s\n' "$p" ">${limit}s" "$rss_mb" - - - - - "no (timed out after $limit s)"
		failed=1
		;;
	*)
		printf '%-13s %9s %9s %8s %8s %8s %11s %9s %s\n' "$p" - - - - - - - "no (failed)"
		failed=1
		;;
	esac
	rows+=("$(printf '{"policy":"%s","status":"%s","wall_s":%s,"max_rss_kb":%s,"jobs":%s,"skipped":%s,"denied":%s,"makespan":%s,"makespan_over_span":%s,"utilization":%s,"mean_wait":%s,"within_bound":%s,"walls_s":[%s],"max_rss_kbs":[%s]}' \
		"$p" "$st" "$wall" "$rss" "$sjobs" "$sskipped" "$sdenied" "$smakespan" "$ratio" "$sutil" "$swait" "$within" \
		"$(tr ' ' '\n' <<<"${walls[$p]}" | grep . | paste -sd,)" "$(tr ' ' '\n' <<<"${rsss[$p]}" | grep . | paste -sd,)")")
done
echo "(MAKESPAN: the replay's makespan over the trace's span; near 1, the queue kept up)"

{
	printf '{"trace":{"source":"%s","records":%s,"span_s":%s,"offered_load":%s},' "$(basename "$source")" "$records" "$span" "$load"
	printf '"machine":{"nodes":%s,"cores_per_node":%s,"cores":%s},' "$nodes" "$cpn" "$cores"
	printf '"bound":{"wall_s":60,"max_rss_bytes":2000000000},"runs":%s,"timeout_s":%s,"load_average":"%s","policies":[' "$runs" "$limit" "$(cut -d' ' -f1-3 /proc/loadavg)"
	(IFS=,; printf '%s' "${rows[*]}")
	printf ']}\n'
} >"$out/simbig.json"
echo "wrote $out/simbig.json"
exit "$failed"
