#!/usr/bin/env bash
# Resident memory of fluxsched holding many pending jobs (issue 24, finding
# 6): an instance of this machine's cores, one `sleep 300` job per core
# running, and JOBS more (100,000) submitted in chunks of CHUNK (10,000)
# with `--cc`, which pend because every core is busy: pending in the
# scheduler's queue, not held. Prints fluxsched's VmRSS once they are all
# pending and settled, and VmHWM (its peak, during the submission burst),
# against the issue's 300 MB, the resident bytes per pending job, and the
# resident memory 3 s after a `fluxq stats` (which reads every job), and
# after a restart of fluxsched, which takes every job up again. Runs
# RUNS times (3) on a fresh state directory each and prints the medians.
# Writes bench/results/rss_pending.json (rss_pending_POLICY.json with
# POLICY). Stops every process it started, by pid.
#   bench/rss_pending.sh                   the issue's measure
#   JOBS=10000 RUNS=1 bench/rss_pending.sh     a small one
#   POLICY=easy bench/rss_pending.sh       every pending job in the scheduler's
#                                          queue too (unlimited mode)
. "$(dirname "$0")/lib.sh"
jobs=${JOBS:-100000}
chunk=${CHUNK:-10000}
runs=${RUNS:-3}
policy=${POLICY:-fcfs}
cores=$(nproc)

# hwm_kb PID: the process's peak resident memory (VmHWM), in KiB.
hwm_kb() { field_kb "$1" VmHWM; }
# field_kb PID FIELD: a /proc/PID/status figure in KiB (RssAnon, RssFile...).
field_kb() { awk -v f="$2:" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }'; }

rss_all=() hwm_all=() idle_all=() submit_all=() after_all=() restart_all=() restart_hwm_all=()
for r in $(seq "$runs"); do
	export FLUXQ_STATE_DIR=$tmp/pending$r
	agent_dirs+=("$FLUXQ_STATE_DIR")
	"$bin/fluxsched" run --policy "$policy" >"$tmp/fluxsched$r.log" 2>&1 &
	pid=$!
	wait_socket
	"$bin/fluxq" submit --quiet --cc "1-$cores" sleep 300
	sleep 1
	idle_kb=$(rss_kb "$pid")
	t0=$(now)
	left=$jobs
	while [ "$left" -gt 0 ]; do
		n=$((left < chunk ? left : chunk))
		"$bin/fluxq" submit --quiet --cc "1-$n" sleep 300
		left=$((left - n))
	done
	t1=$(now)
	sleep 5 # let the scheduler's pass and the collector settle
	# Measured before anything reads the jobs back: a listing maps the
	# store's pages into fluxsched (RssFile) and decodes every summary.
	rss=$(rss_kb "$pid")
	hwm=$(hwm_kb "$pid")
	anon=$(field_kb "$pid" RssAnon)
	file=$(field_kb "$pid" RssFile)
	pending=$("$bin/fluxq" stats --json | sed -n 's/.*"SCHED":\([0-9]*\).*/\1/p')
	if [ "${pending:-0}" -lt "$jobs" ]; then
		echo "rss_pending.sh: $pending of $jobs jobs pending" >&2
		exit 1
	fi
	sleep 3 # fluxsched lets go of the store's pages a listing mapped (within 100 ms)
	after=$(rss_kb "$pid")
	rss_all+=("$rss") hwm_all+=("$hwm") idle_all+=("$idle_kb") submit_all+=("$(secs "$t0" "$t1")") after_all+=("$after")
	printf 'run %d: %d pending, VmRSS %s MB (anon %s, file %s), VmHWM %s MB, submitted in %s s; %s MB 3 s after fluxq stats\n' \
		"$r" "$pending" "$(mb "$rss")" "$(mb "$anon")" "$(mb "$file")" "$(mb "$hwm")" "$(secs "$t0" "$t1")" "$(mb "$after")"
	# A restart takes up every pending job from the store.
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
	"$bin/fluxsched" run --policy "$policy" >"$tmp/fluxsched$r.restart.log" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do grep -qs 'jobs loaded' "$tmp/fluxsched$r.restart.log" && break; sleep 0.1; done
	sleep 5
	rrss=$(rss_kb "$pid") rhwm=$(hwm_kb "$pid")
	restart_all+=("$rrss") restart_hwm_all+=("$rhwm")
	printf 'run %d, restarted: VmRSS %s MB, VmHWM %s MB\n' "$r" "$(mb "$rrss")" "$(mb "$rhwm")"
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
	stop_agents "$FLUXQ_STATE_DIR"
	rm -rf "$FLUXQ_STATE_DIR"
done

rss=$(printf '%s\n' "${rss_all[@]}" | median)
hwm=$(printf '%s\n' "${hwm_all[@]}" | median)
idle=$(printf '%s\n' "${idle_all[@]}" | median)
sub=$(printf '%s\n' "${submit_all[@]}" | median)
after=$(printf '%s\n' "${after_all[@]}" | median)
rrss=$(printf '%s\n' "${restart_all[@]}" | median)
rhwm=$(printf '%s\n' "${restart_hwm_all[@]}" | median)
per_job=$(awk -v r="$rss" -v i="$idle" -v n="$jobs" 'BEGIN { printf "%.0f", (r - i) * 1024 / n }')
cat >"$out/rss_pending${POLICY:+_$policy}.json" <<JSON
{"jobs": $jobs, "runs": $runs, "policy": "$policy", "fluxsched_rss_mb": $(mb "$rss"), "fluxsched_hwm_mb": $(mb "$hwm"), "idle_rss_mb": $(mb "$idle"), "bytes_per_pending_job": $per_job, "submit_seconds": $sub, "rss_after_stats_mb": $(mb "$after"), "restart_rss_mb": $(mb "$rrss"), "restart_hwm_mb": $(mb "$rhwm")}
JSON
printf 'pending jobs:        %d (%d cores busy, --policy %s), medians of %d runs\n' "$jobs" "$cores" "$policy" "$runs"
printf 'fluxsched VmRSS:     %s MB (target < 300 MB)\n' "$(mb "$rss")"
printf 'fluxsched VmHWM:     %s MB (the peak, during the submissions)\n' "$(mb "$hwm")"
printf 'per pending job:     %s bytes resident (over the %s MB before the burst)\n' "$per_job" "$(mb "$idle")"
printf 'submitted in:        %s s\n' "$sub"
printf 'after fluxq stats:   %s MB, 3 s after (the listing maps the store and decodes every summary)\n' "$(mb "$after")"
printf 'after a restart:     %s MB, 5 s after the jobs were taken up (peak %s MB)\n' "$(mb "$rrss")" "$(mb "$rhwm")"
