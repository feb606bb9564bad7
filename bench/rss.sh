#!/usr/bin/env bash
# Resident memory of an instance running many jobs (issue 14): a config of
# HOSTS local hosts of 2 cores (500), JOBS `sleep 300` jobs (1,000) all
# running; prints the VmRSS of fluxsched and of the exec agent (if this
# fluxsched has one) and their sum against 100 MB, then cancels every job
# and stops every process it started, by pid. Writes bench/results/rss.json.
#   bench/rss.sh                  the issue's measure
#   HOSTS=50 JOBS=100 bench/rss.sh    a small one
. "$(dirname "$0")/lib.sh"
hosts=${HOSTS:-500}
jobs=${JOBS:-1000}

printf '[[resource.config]]\nhosts = "node[0-%d]"\ncores = "0-1"\n' $((hosts - 1)) >"$tmp/hosts.toml"
export FLUXQ_STATE_DIR=$tmp/rss
agent_dirs+=("$FLUXQ_STATE_DIR")
"$bin/fluxsched" run --config "$tmp/hosts.toml" >"$tmp/fluxsched.log" 2>&1 &
pid=$!
wait_socket
"$bin/fluxq" submit --quiet --cc "1-$jobs" sleep 300

# Until every job runs (10 minutes at most).
running=0
for _ in $(seq 3000); do
	running=$("$bin/fluxq" jobs -f running -n -o '{{.id}}' | wc -l)
	[ "$running" -ge "$jobs" ] && break
	sleep 0.2
done
if [ "$running" -lt "$jobs" ]; then
	echo "rss.sh: only $running of $jobs jobs run after 10 minutes" >&2
	exit 1
fi
sleep 2 # let the instance settle once the last job started

sched_kb=$(rss_kb "$pid")
agent=$(agents "$FLUXQ_STATE_DIR" | sed -n 1p)
agent_kb=0
[ -n "$agent" ] && agent_kb=$(rss_kb "$agent")
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }'; }
sum_kb=$((sched_kb + agent_kb))

# Cancel everything, wait for it to end, then stop what was started.
"$bin/fluxq" cancel --all --quiet
"$bin/fluxq" wait --all >/dev/null 2>&1 || true
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
stop_agents "$FLUXQ_STATE_DIR"

agent_found=false
[ -n "$agent" ] && agent_found=true
cat >"$out/rss.json" <<JSON
{"hosts": $hosts, "jobs": $jobs, "fluxsched_rss_mb": $(mb "$sched_kb"), "agent_rss_mb": $(mb "$agent_kb"), "agent_found": $agent_found, "sum_rss_mb": $(mb "$sum_kb")}
JSON
printf 'hosts x cores:      %d x 2, %d sleep jobs running\n' "$hosts" "$jobs"
printf 'fluxsched VmRSS:    %s MB\n' "$(mb "$sched_kb")"
if [ -n "$agent" ]; then
	printf 'exec agent VmRSS:   %s MB\n' "$(mb "$agent_kb")"
else
	printf 'exec agent VmRSS:   none found (this fluxsched runs a job shell per job)\n'
fi
printf 'together:           %s MB (target < 100 MB)\n' "$(mb "$sum_kb")"
