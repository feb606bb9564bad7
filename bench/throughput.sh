#!/usr/bin/env bash
# End-to-end throughput of fluxq on this machine, in one run (issues 3, 14):
#   submit rate      fluxq submit --cc 1-10000 true, no loop running (store direct)
#   end to end       1,000 `true` jobs, submit to all INACTIVE, real execution
#   CPU per job      of fluxsched (its whole run) and of the exec agent (its
#                    utime+stime over the run), from /proc/PID/stat
#   raw              the same 1,000 processes with xargs -P$(nproc)
#   listing          fluxq jobs -a --json over 100,000 stored jobs
# Prints a summary and writes bench/results/throughput.json.
#
# `bench/throughput.sh --hosts H [--jobs N] [--rounds R]` is bench/hosts.sh
# instead: end to end over H ssh hosts against the local launcher (issue 29).
if [ "${1-}" = --hosts ]; then
	exec "$(dirname "$0")/hosts.sh" "$@"
fi
. "$(dirname "$0")/lib.sh"

# 1. Submit rate.
export FLUXQ_STATE_DIR=$tmp/submit
t0=$(now); "$bin/fluxq" submit --quiet --cc 1-10000 true; t1=$(now)
submit_rate=$(rate 10000 "$t0" "$t1")

# 2. End to end: a running instance, 1,000 jobs, until all are inactive.
# The exec agent, if this fluxsched has one, is found by its command line
# once the first jobs run (fluxsched may start it late); one already up
# when the run starts is counted from there.
export FLUXQ_STATE_DIR=$tmp/e2e
agent_dirs+=("$FLUXQ_STATE_DIR")
"$bin/fluxsched" run >"$tmp/fluxsched.log" 2>&1 &
pid=$!
wait_socket
agent0=$(agents "$FLUXQ_STATE_DIR" | sed -n 1p)
agent_t0=0
[ -n "$agent0" ] && agent_t0=$(cpu_ticks "$agent0")
t0=$(now)
"$bin/fluxq" submit --quiet --cc 1-1000 true
"$bin/fluxq" wait --all
t1=$(now)
e2e_rate=$(rate 1000 "$t0" "$t1")
sched_ticks=$(cpu_ticks "$pid")
agent=$(agents "$FLUXQ_STATE_DIR" | sed -n 1p)
agent_ticks=0
if [ -n "$agent" ]; then
	[ "$agent" = "$agent0" ] || agent_t0=0
	agent_ticks=$(($(cpu_ticks "$agent") - agent_t0))
fi
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
stop_agents "$FLUXQ_STATE_DIR"
sched_ms=$(ms_per_job "$sched_ticks" 1000)
agent_ms=$(ms_per_job "$agent_ticks" 1000)
cpu_ms=$(ms_per_job $((sched_ticks + agent_ticks)) 1000)

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
agent_found=false
[ -n "$agent" ] && agent_found=true
cat >"$out/throughput.json" <<JSON
{"submit_per_s": $submit_rate, "e2e_jobs_per_s": $e2e_rate, "raw_procs_per_s": $raw_rate, "e2e_pct_of_raw": $pct, "fluxsched_cpu_ms_per_job": $sched_ms, "agent_cpu_ms_per_job": $agent_ms, "agent_found": $agent_found, "cpu_ms_per_job": $cpu_ms, "list_100k_s": $list_secs, "listed": $listed, "nproc": $(nproc)}
JSON
printf 'submit rate:        %s jobs/s (target >= 10000)\n' "$submit_rate"
printf 'end to end:         %s jobs/s (%s%% of raw; target >= 30%%)\n' "$e2e_rate" "$pct"
printf 'raw (xargs -P%s):    %s procs/s\n' "$(nproc)" "$raw_rate"
printf 'CPU per job:        fluxsched %s ms + exec agent %s ms = %s ms (target <= 2 ms)\n' "$sched_ms" "$agent_ms" "$cpu_ms"
[ -n "$agent" ] || printf '                    (no exec agent found: this fluxsched runs a job shell per job)\n'
printf 'jobs -a --json:     %s s for %s jobs (target < 1 s)\n' "$list_secs" "$listed"
