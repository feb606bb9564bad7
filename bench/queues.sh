#!/usr/bin/env bash
# The cost of RFC 33 queues (issue 4): submit rate and end-to-end
# throughput with one anonymous queue and with 16 named queues (each with
# defaults and limits, all started), measured the same way on the same
# machine, the median of three runs each. Target: 16 queues within 10% of
# one. Prints a summary and writes bench/results/queues.json.
. "$(dirname "$0")/lib.sh"

# 16 queues, q1 the default, each with a default duration and limits.
{
	echo '[policy.jobspec.defaults.system]'
	echo 'queue = "q1"'
	echo 'duration = "1h"'
	echo '[policy.limits]'
	echo 'duration = "8h"'
	for i in $(seq 16); do
		echo "[queues.q$i.policy.limits]"
		echo 'job-size.max.ncores = 64'
		echo 'job-size.max.nnodes = 4'
	done
} >"$tmp/q16.toml"
: >"$tmp/q1.toml"

start() { # config: start fluxsched on a fresh state dir, all queues started
	"$bin/fluxsched" run --config "$1" >"$tmp/fluxsched.log" 2>&1 &
	pid=$!
	wait_socket
	"$bin/fluxq" queue start --all >/dev/null
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

measure() { # name config queues...: prints "submit e2e"
	local cfg=$1; shift
	# Submit rate, store direct, after a loop has recorded the queues.
	export FLUXQ_STATE_DIR=$tmp/s$RANDOM
	start "$cfg"; stop
	local t0 t1 s e
	t0=$(now); "$bin/fluxq" submit --quiet --cc 1-10000 true; t1=$(now)
	s=$(rate 10000 "$t0" "$t1")
	# End to end: 16 submissions of 63 jobs, spread over the queues given.
	export FLUXQ_STATE_DIR=$tmp/e$RANDOM
	start "$cfg"
	t0=$(now)
	local qs=("$@") i qn
	for i in $(seq 0 15); do
		qn=
		[ ${#qs[@]} -gt 0 ] && qn=${qs[i % ${#qs[@]}]}
		"$bin/fluxq" submit --quiet ${qn:+-q "$qn"} --cc 1-63 true
	done
	"$bin/fluxq" wait --all
	t1=$(now)
	e=$(rate 1008 "$t0" "$t1")
	stop
	echo "$s $e"
}

one_s=(); one_e=(); many_s=(); many_e=()
queues=$(seq -f 'q%g' 16)
for _ in 1 2 3; do
	read -r s e < <(measure "$tmp/q1.toml")
	one_s+=("$s"); one_e+=("$e")
	# shellcheck disable=SC2086
	read -r s e < <(measure "$tmp/q16.toml" $queues)
	many_s+=("$s"); many_e+=("$e")
done
s1=$(printf '%s\n' "${one_s[@]}" | median); e1=$(printf '%s\n' "${one_e[@]}" | median)
s16=$(printf '%s\n' "${many_s[@]}" | median); e16=$(printf '%s\n' "${many_e[@]}" | median)
ps=$(awk -v a="$s16" -v b="$s1" 'BEGIN { printf "%.1f", 100 * a / b }')
pe=$(awk -v a="$e16" -v b="$e1" 'BEGIN { printf "%.1f", 100 * a / b }')
cat >"$out/queues.json" <<JSON
{"submit_per_s_1": $s1, "submit_per_s_16": $s16, "submit_pct": $ps, "e2e_jobs_per_s_1": $e1, "e2e_jobs_per_s_16": $e16, "e2e_pct": $pe, "runs": {"submit_1": [$(IFS=,; echo "${one_s[*]}")], "submit_16": [$(IFS=,; echo "${many_s[*]}")], "e2e_1": [$(IFS=,; echo "${one_e[*]}")], "e2e_16": [$(IFS=,; echo "${many_e[*]}")]}, "nproc": $(nproc)}
JSON
printf 'submit rate:  1 queue %s jobs/s, 16 queues %s jobs/s (%s%%; target >= 90%%)\n' "$s1" "$s16" "$ps"
printf 'end to end:   1 queue %s jobs/s, 16 queues %s jobs/s (%s%%; target >= 90%%)\n' "$e1" "$e16" "$pe"
