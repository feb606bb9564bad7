#!/usr/bin/env bash
# The table of docs/architecture.md's "Where a short job's time goes"
# (issue 28): a build marking each step of the cycle (-tags cycletrace,
# internal/cycletrace) runs 1,000 `true` jobs on this machine's cores, and
# the medians of its marks are printed, with the wall-clock cycle per slot.
#
#   bench/cycletrace.sh [--jobs N] [--runs N]
. "$(dirname "$0")/lib.sh"

jobs=1000 runs=1
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) jobs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) echo "usage: bench/cycletrace.sh [--jobs N] [--runs N]" >&2; exit 2 ;;
	esac
done
CGO_ENABLED=0 go build -tags 'urfave_cli_no_docs cycletrace' -o "$tmp/bin/" ./cmd/fluxq ./cmd/fluxsched
go build -o "$tmp/table" ./bench/cycletrace
tbin=$tmp/bin
uptime
for ((r = 1; r <= runs; r++)); do
	export FLUXQ_STATE_DIR=$tmp/state.$r FLUXQ_CYCLETRACE=$tmp/marks.$r
	mkdir -p "$FLUXQ_STATE_DIR" "$FLUXQ_CYCLETRACE"
	"$tbin/fluxsched" run >"$FLUXQ_STATE_DIR.log" 2>&1 &
	pid=$!
	wait_socket
	t0=$(now)
	"$tbin/fluxq" submit --quiet --cc 1-"$jobs" true
	"$tbin/fluxq" wait --all >/dev/null
	t1=$(now)
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
	bin=$tbin stop_agents "$FLUXQ_STATE_DIR"
	printf 'run %d: %s jobs/s; a cycle of %s ms per slot (%d slots)\n' "$r" "$(rate "$jobs" "$t0" "$t1")" \
		"$(awk -v n="$jobs" -v a="$t0" -v b="$t1" -v s="$(nproc)" 'BEGIN { printf "%.2f", 1000 * s * (b - a) / n }')" "$(nproc)"
	[ -n "${KEEP:-}" ] && cp -r "$FLUXQ_CYCLETRACE" "$KEEP"; "$tmp/table" "$FLUXQ_CYCLETRACE" || true
done
uptime
