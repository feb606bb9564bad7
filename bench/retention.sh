#!/usr/bin/env bash
# Bounded growth with retention (issue 24): fluxsched runs with
# [job-manager] inactive-num-limit = LIMIT (1,000) and CYCLES (20) cycles of
# JOBS (1,000) jobs that each write a line of output (so each has a job
# folder) are submitted and waited for. After each cycle, once retention
# has caught up, it prints the store file's size, the jobs folder's
# entries and size, fluxsched's resident memory and the inactive jobs
# left: with retention they stop growing after the first cycles. Writes
# bench/results/retention.json; stops every process it started, by pid.
#   bench/retention.sh                          the issue's measure
#   CYCLES=5 JOBS=200 LIMIT=200 bench/retention.sh   a small one
. "$(dirname "$0")/lib.sh"
cycles=${CYCLES:-20}
jobs=${JOBS:-1000}
limit=${LIMIT:-1000}

printf '[job-manager]\ninactive-num-limit = %d\n' "$limit" >"$tmp/retention.toml"
export FLUXQ_STATE_DIR=$tmp/retention
agent_dirs+=("$FLUXQ_STATE_DIR")
"$bin/fluxsched" run --config "$tmp/retention.toml" >"$tmp/fluxsched.log" 2>&1 &
pid=$!
wait_socket

inactive() { "$bin/fluxq" jobs -a -f inactive -n -o '{{.id}}' | wc -l; }
printf '%5s %12s %12s %10s %10s %9s\n' cycle store_bytes job_folders jobs_kib rss_kib inactive
rows=()
for c in $(seq "$cycles"); do
	"$bin/fluxq" submit --quiet --cc "1-$jobs" echo out
	"$bin/fluxq" wait --all >/dev/null || true
	# Retention purges in batches, a turn each: until it has caught up.
	left=$(inactive)
	for _ in $(seq 300); do
		[ "$left" -le "$limit" ] && break
		sleep 0.1
		left=$(inactive)
	done
	size=$(stat -c %s "$FLUXQ_STATE_DIR/fluxq.db")
	folders=$(find "$FLUXQ_STATE_DIR/jobs" -mindepth 1 -maxdepth 1 | wc -l)
	kib=$(du -sk "$FLUXQ_STATE_DIR/jobs" | cut -f1)
	rss=$(rss_kb "$pid")
	printf '%5d %12d %12d %10d %10d %9d\n' "$c" "$size" "$folders" "$kib" "$rss" "$left"
	rows+=("{\"cycle\": $c, \"store_bytes\": $size, \"job_folders\": $folders, \"jobs_kib\": $kib, \"rss_kib\": $rss, \"inactive\": $left}")
done
kill -INT "$pid"; wait "$pid" 2>/dev/null || true; pid=
stop_agents "$FLUXQ_STATE_DIR"

json=$(IFS=,; echo "${rows[*]}")
echo "{\"limit\": $limit, \"jobs_per_cycle\": $jobs, \"cycles\": [$json]}" >"$out/retention.json"
# The figures of the last cycle against those of the third: growth after
# the first cycles (bbolt reuses the pages purged jobs free).
third=$(sed -n 3p <<<"$(printf '%s\n' "${rows[@]}")")
last=${rows[-1]}
field() { sed -E "s/.*\"$1\": ([0-9]+).*/\1/" <<<"$2"; }
if [ "$cycles" -ge 4 ]; then
	for f in store_bytes job_folders rss_kib; do
		a=$(field "$f" "$third"); b=$(field "$f" "$last")
		awk -v f="$f" -v a="$a" -v b="$b" -v n="$cycles" 'BEGIN { printf "%-12s cycle 3: %d, cycle %d: %d (%+.1f%%)\n", f, a, n, b, (a ? 100 * (b - a) / a : 0) }'
	done
fi
