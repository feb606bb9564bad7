#!/usr/bin/env bash
# "Nothing else slower" (issue 28): this tree against BASE, measured in the
# same run, interleaved round by round (the side that goes first alternates),
# so that a noisy machine loads both alike:
#   submit    fluxq submit --cc 1-10000 true on a fresh store (no loop)
#   rss       bench/rss.sh of each tree (HOSTS x 2 cores, JOBS sleep jobs)
#   scale     internal/sched's BenchmarkScale (benchstat when installed)
# Prints the medians per side and the median of the rounds' ratios, and
# writes bench/results/regress.json.
#   BASE=3be13c3 ROUNDS=5 bench/regress.sh
#   ARMS="submit scale" bench/regress.sh      a subset
#   HOSTS=50 JOBS=100 ROUNDS=1 bench/regress.sh   a quick look
. "$(dirname "$0")/lib.sh"
base=${BASE:-3be13c3}
rounds=${ROUNDS:-5}
arms=${ARMS:-submit rss scale}
export HOSTS=${HOSTS:-500} JOBS=${JOBS:-1000}

git rev-parse --verify -q "$base^{commit}" >/dev/null || { echo "regress.sh: BASE $base is not a revision here" >&2; exit 2; }
declare -A tree binof testof
tree[base]=$tmp/base
tree[head]=$PWD
mkdir -p "${tree[base]}"
git archive "$base" | tar -x -C "${tree[base]}"
(cd "${tree[base]}" && make -s build >/dev/null)
binof[base]=${tree[base]}/bin
binof[head]=$bin
for s in base head; do
	case " $arms " in *" scale "*)
		(cd "${tree[$s]}" && go test -c -o "$tmp/sched.test.$s" ./internal/sched)
		testof[$s]=$tmp/sched.test.$s ;;
	esac
done

# results: one line per measure: arm side round value
results=$tmp/results
: >"$results"
record() { echo "$1 $2 $3 $4" >>"$results"; }

submit_arm() {
	local s=$1 r=$2 t0 t1
	local d=$tmp/submit.$s.$r
	mkdir -p "$d"
	t0=$(now)
	FLUXQ_STATE_DIR=$d "${binof[$s]}/fluxq" submit --quiet --cc 1-10000 true
	t1=$(now)
	rm -rf "$d"
	record submit "$s" "$r" "$(rate 10000 "$t0" "$t1")"
}

rss_arm() {
	local s=$1 r=$2 mb
	mb=$(cd "${tree[$s]}" && bash bench/rss.sh | awk '/^together:/ { print $2 }')
	record rss "$s" "$r" "$mb"
}

scale_arm() {
	local s=$1 r=$2
	(cd "${tree[$s]}/internal/sched" && "${testof[$s]}" -test.run '^$' -test.bench '^BenchmarkScale$' -test.count 1) \
		| tee -a "$tmp/scale.$s.txt" | awk -v s="$s" -v r="$r" -v f="$results" '
			/^BenchmarkScale\/fill/ { for (i = 1; i <= NF; i++) if ($(i) == "allocs/s") print "scale.fill", s, r, $(i-1) >> f }
			/^BenchmarkScale\/easy-pass-all/ { print "scale.pass-all", s, r, $3 >> f; next }
			/^BenchmarkScale\/easy-pass/ { print "scale.pass", s, r, $3 >> f }'
}

uptime
for r in $(seq "$rounds"); do
	order=(base head)
	((r % 2 == 0)) && order=(head base)
	for arm in $arms; do
		for s in "${order[@]}"; do "${arm}_arm" "$s" "$r"; done
	done
	echo "regress: round $r of $rounds done ($(uptime | sed 's/.*load/load/'))"
done

# The summary: median per side, and the median of head/base per round.
summary=$(awk '
	{ v[$1, $2, $3] = $4; arms[$1] = 1; rounds[$3] = 1 }
	END {
		for (a in arms) {
			n = 0
			for (r in rounds) if ((a, "base", r) in v && (a, "head", r) in v && v[a, "base", r] > 0) {
				n++; b[n] = v[a, "base", r]; h[n] = v[a, "head", r]; q[n] = v[a, "head", r] / v[a, "base", r]
			}
			print a, n, med(b, n), med(h, n), med(q, n)
		}
	}
	function med(x, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j-1] > x[j]; j--) { t = x[j]; x[j] = x[j-1]; x[j-1] = t }
		return n ? x[int((n + 1) / 2)] : 0
	}' "$results" | sort)
uptime
printf '%-16s %6s %12s %12s %12s\n' measure rounds "base $base" head head/base
echo "$summary" | awk '{ printf "%-16s %6d %12s %12s %12.3f\n", $1, $2, $3, $4, $5 }'
echo "(submit: jobs/s, higher is better; rss: MB, scale.fill: allocs/s; scale.pass*: ns/op, lower is better)"
if [ -f "$tmp/scale.base.txt" ] && command -v benchstat >/dev/null; then
	benchstat "$tmp/scale.base.txt" "$tmp/scale.head.txt" || true
fi
{
	echo "{\"base\": \"$base\", \"rounds\": $rounds, \"measures\": {"
	echo "$summary" | awk 'NR > 1 { printf ",\n" } { printf "  \"%s\": {\"base\": %s, \"head\": %s, \"ratio\": %.4f}", $1, $3, $4, $5 } END { print "" }'
	echo "}}"
} >"$out/regress.json"
