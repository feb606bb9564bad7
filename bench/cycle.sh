#!/usr/bin/env bash
# The start cycle, side by side (issue 28): 1,000 `true` jobs end to end
# through each build given, through task-spooler (`tsp -S SLOTS`, when
# installed) and raw (`xargs -PSLOTS`), in interleaved rounds, with the
# medians and each one's share of raw in the same round.
#
#   bench/cycle.sh [--slots N] [--rounds N] [--jobs N] [--no-tsp] [BIN_DIR...]
#
# Each BIN_DIR holds a fluxq and a fluxsched (default: this tree's bin/,
# built first). With more slots than cores, the instance is given several
# local hosts of the machine's cores (as agent_restart.txtar does), so
# that more jobs are in flight than there are cores.
. "$(dirname "$0")/lib.sh"

slots=$(nproc) rounds=5 jobs=1000 dirs=() tsp=true
while [ $# -gt 0 ]; do
	case $1 in
	--slots) slots=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--no-tsp) tsp=false; shift ;;
	*) dirs+=("$(cd "$1" && pwd)"); shift ;;
	esac
done
[ ${#dirs[@]} -gt 0 ] || dirs=("$bin")
ncores=$(nproc)
hosts=$(((slots + ncores - 1) / ncores))
cat >"$tmp/config.toml" <<TOML
[[resource.config]]
hosts = "node[0-$((hosts - 1))]"
cores = "0-$((ncores - 1))"
TOML

# fluxq_round DIR: the rate of one end-to-end run of that build.
fluxq_round() {
	local d=$1 t0 t1
	export FLUXQ_STATE_DIR=$tmp/state.$RANDOM$RANDOM
	mkdir -p "$FLUXQ_STATE_DIR"
	"$d/fluxsched" run --config "$tmp/config.toml" >"$FLUXQ_STATE_DIR.log" 2>&1 &
	pid=$!
	wait_socket
	t0=$(now)
	"$d/fluxq" submit --quiet --cc 1-"$jobs" true
	"$d/fluxq" wait --all >/dev/null
	t1=$(now)
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
	bin=$d stop_agents "$FLUXQ_STATE_DIR"
	rm -rf "$FLUXQ_STATE_DIR"
	rate "$jobs" "$t0" "$t1"
}

# tsp_round: the same jobs through a task-spooler server of its own.
tsp_round() {
	local t0 t1 i
	export TS_SOCKET=$tmp/ts.sock TMPDIR=$tmp/ts TS_MAXFINISHED=$((jobs + 10))
	mkdir -p "$TMPDIR"
	tsp -S "$slots" >/dev/null
	t0=$(now)
	for ((i = 0; i < jobs; i++)); do tsp true >/dev/null; done
	while tsp -l | grep -Eq ' (running|queued) '; do sleep 0.001; done
	t1=$(now)
	tsp -K >/dev/null 2>&1 || true
	rm -rf "$TMPDIR" "$TS_SOCKET"
	rate "$jobs" "$t0" "$t1"
}

raw_round() {
	local t0 t1
	t0=$(now); seq "$jobs" | xargs -P"$slots" -I{} true; t1=$(now)
	rate "$jobs" "$t0" "$t1"
}

names=(raw)
for d in "${dirs[@]}"; do names+=("$d"); done
$tsp && command -v tsp >/dev/null && names+=(tsp)
declare -A all share
uptime
for ((r = 1; r <= rounds; r++)); do
	line="round $r:"
	declare -A got=()
	for n in "${names[@]}"; do
		case $n in
		raw) v=$(raw_round) ;;
		tsp) v=$(tsp_round) ;;
		*) v=$(fluxq_round "$n") ;;
		esac
		got[$n]=$v
		all[$n]+="$v "
		line+=" $v"
	done
	for n in "${names[@]}"; do
		share[$n]+="$(awk -v a="${got[$n]}" -v b="${got[raw]}" 'BEGIN { printf "%.3f", a / b }') "
	done
	echo "$line"
done
uptime
printf '%d jobs, %d slots, medians of %d:\n' "$jobs" "$slots" "$rounds"
for n in "${names[@]}"; do
	m=$(tr ' ' '\n' <<<"${all[$n]}" | grep . | median)
	s=$(tr ' ' '\n' <<<"${share[$n]}" | grep . | median)
	printf '  %-40s %8s jobs/s  %s of raw\n' "$n" "$m" "$s"
done
