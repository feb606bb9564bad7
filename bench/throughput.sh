#!/usr/bin/env bash
# End-to-end throughput of fluxq on this machine, in one run (issue 3):
#   submit rate      fluxq submit --cc 1-10000 true, no loop running (store direct)
#   end to end       1,000 `true` jobs, submit to all INACTIVE, real execution
#   raw              the same 1,000 processes with xargs -P$(nproc)
#   listing          fluxq jobs -a --json over 100,000 stored jobs
# Prints a summary and writes bench/results/throughput.json.
. "$(dirname "$0")/lib.sh"

# 1. Submit rate.
export FLUXQ_STATE_DIR=$tmp/submit
t0=$(now); "$bin/fluxq" submit --quiet --cc 1-10000 true; t1=$(now)
submit_rate=$(rate 10000 "$t0" "$t1")

# 2. End to end: a running instance, 1,000 jobs, until all are inactive.
export FLUXQ_STATE_DIR=$tmp/e2e
"$bin/fluxsched" run >"$tmp/fluxsched.log" 2>&1 &
pid=$!
wait_socket
t0=$(now)
"$bin/fluxq" submit --quiet --cc 1-1000 true
"$bin/fluxq" wait --all
t1=$(now)
e2e_rate=$(rate 1000 "$t0" "$t1")
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=

# 3. The raw rate of the same processes.
t0=$(now); seq 1000 | xargs -P"$(nproc)" -I{} true; t1=$(now)
raw_rate=$(rate 1000 "$t0" "$t1")

# 4. Listing 100,000 stored jobs.
export FLUXQ_STATE_DIR=$tmp/list
for _ in $(seq 10); do "$bin/fluxq" submit --quiet --cc 1-10000 true; done
t0=$(now); "$bin/fluxq" jobs -a -A --json >"$tmp/jobs.json"; t1=$(now)
list_secs=$(secs "$t0" "$t1")
listed=$(grep -o '"id":' "$tmp/jobs.json" | wc -l)

pct=$(awk -v a="$e2e_rate" -v b="$raw_rate" 'BEGIN { printf "%.1f", 100 * a / b }')
cat >"$out/throughput.json" <<JSON
{"submit_per_s": $submit_rate, "e2e_jobs_per_s": $e2e_rate, "raw_procs_per_s": $raw_rate, "e2e_pct_of_raw": $pct, "list_100k_s": $list_secs, "listed": $listed, "nproc": $(nproc)}
JSON
printf 'submit rate:        %s jobs/s (target >= 5000)\n' "$submit_rate"
printf 'end to end:         %s jobs/s (%s%% of raw; target >= 30%%)\n' "$e2e_rate" "$pct"
printf 'raw (xargs -P%s):    %s procs/s\n' "$(nproc)" "$raw_rate"
printf 'jobs -a --json:     %s s for %s jobs (target < 1 s)\n' "$list_secs" "$listed"
