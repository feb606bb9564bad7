# Shared by the bench/ scripts (sourced, not run): builds the binaries and
# sets bin, out, tmp and pid; tmp is removed, and a fluxsched left in $pid
# and every exec agent under $tmp are stopped, on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build >/dev/null
bin=$PWD/bin
out=bench/results
mkdir -p "$out"
tmp=$(mktemp -d)
pid=
# stop_agents: every exec agent of a state directory under $tmp (they
# outlive fluxsched), by fluxsched stop, else by their pid file.
stop_agents() {
	local p
	for p in $(find "$tmp" -path '*/agent/*.pid' 2>/dev/null); do
		FLUXQ_STATE_DIR=$(dirname "$(dirname "$p")") "$bin/fluxsched" stop --force >/dev/null 2>&1 ||
			kill "$(cat "$p")" 2>/dev/null || true
	done
}
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; stop_agents; rm -rf "$tmp"; }
trap cleanup EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# wait_socket: until the fluxsched of $FLUXQ_STATE_DIR serves its socket.
wait_socket() { for _ in $(seq 100); do [ -S "$FLUXQ_STATE_DIR/fluxsched.sock" ] && return; sleep 0.1; done; }
