#!/usr/bin/env bash
# Listings of many jobs (issue 28): with JOBS (100,000) pending jobs in
# the store, the time of
#   fluxq jobs -a            the table
#   fluxq jobs -a --json     the document
#   fluxq cancel --all       of every pending job (a fresh copy of the
#                            store each time)
# with fluxsched running (the requests go through its socket) and with it
# stopped (the command reads and writes the store itself). Each figure is
# the median of ROUNDS (5) runs: wall seconds, and the CPU seconds of
# fluxq and of fluxsched (user + system) beside them, since on a shared
# machine the wall time is also the load's (uptime is printed with them),
# and fluxq's peak resident memory.
#
# The store: a few hundred finished jobs (completed, failed, timed out,
# killed), the one node drained (fluxres drain 0), then `fluxq submit --cc
# 1-JOBS true` with no fluxsched running, taken up once by a fluxsched
# (the jobs wait in SCHED for the drained node: the INFO column says so).
#
# BASE=REV (a git revision, e.g. main) builds that revision's binaries
# too and runs each measure with both, interleaved (base, this, base,
# this ...), each on its own copy of the same store (built by the base;
# this tree's copy opened once first, which migrates it if this tree's
# schema is newer, and prints how long that took): the before and after
# of one run, side by side, with the ratio. The outputs of both are
# compared byte for byte (cmp) on the same store; a difference fails.
# Writes bench/results/listings.json. Stops every process it started, by
# pid.
#   bench/listings.sh                    this tree alone
#   BASE=main bench/listings.sh          before and after
#   JOBS=10000 ROUNDS=3 bench/listings.sh    a small one
. "$(dirname "$0")/lib.sh"
jobs=${JOBS:-100000}
rounds=${ROUNDS:-5}
base=${BASE:-}

sides=(new)
declare -A binof=([new]=$bin)
if [ -n "$base" ]; then
	echo "listings: building $base"
	mkdir -p "$tmp/base-src" "$tmp/base-bin"
	git archive "$base" | tar -x -C "$tmp/base-src"
	(cd "$tmp/base-src" && CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$tmp/base-bin/" ./cmd/...)
	sides=(base new)
	binof[base]=$tmp/base-bin
fi

# start_sched SIDE DIR: a fluxsched of SIDE on state directory DIR, in
# $pid, once it has taken up the jobs and written its first backup (which
# reads the whole store beside the loop: not the listing's cost).
start_sched() {
	rm -f "$2/fluxq.db.backup"
	FLUXQ_STATE_DIR=$2 "${binof[$1]}/fluxsched" run >"$2.log" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do grep -qs 'jobs loaded' "$2.log" && break; sleep 0.1; done
	FLUXQ_STATE_DIR=$2 wait_socket
	# The backup is written to a temporary file, renamed when done.
	for _ in $(seq 1200); do
		[ -f "$2/fluxq.db.backup" ] && ! compgen -G "$2/fluxq.db.backup.tmp-*" >/dev/null && break
		sleep 0.1
	done
	sleep 0.5
}
stop_sched() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
	stop_agents "$1"
}

# timed OUT CMD...: runs CMD with stdout to OUT and prints "user system
# rss" of it (CPU seconds of CMD and its children, its peak resident
# memory in KiB).
timed() {
	local out=$1
	shift
	/usr/bin/time -o "$tmp/time" -f '%U %S %M' "$@" >"$out" 2>/dev/null || true
	tail -1 "$tmp/time"
}
# rss_of TIMED: the peak resident memory of a timed run, in MB.
rss_of() { awk -v c="$1" 'BEGIN { split(c, a, " "); printf "%.0f", a[3] / 1024 }'; }

# 1. The store, built once with the base's binaries when there is a base
# (an older schema than this tree's is migrated by this tree's fluxsched
# when it first opens a copy: masterof[new]), else with this tree's.
first=${sides[0]}
master=$tmp/master
export FLUXQ_STATE_DIR=$master
agent_dirs+=("$master")
echo "listings: building a store of $jobs pending jobs"
"${binof[$first]}/fluxsched" run >"$tmp/master.log" 2>&1 &
pid=$!
wait_socket
"${binof[$first]}/fluxq" submit --quiet --cc 1-150 true
"${binof[$first]}/fluxq" submit --quiet --cc 1-30 false
"${binof[$first]}/fluxq" submit --quiet --cc 1-4 -t 1s sleep 5
"${binof[$first]}/fluxq" submit --quiet --cc 1-2 sh -c 'kill -9 $$'
"${binof[$first]}/fluxq" wait --all >/dev/null 2>&1 || true
stop_sched "$master"
"${binof[$first]}/fluxres" drain 0 bench
t0=$(now)
"${binof[$first]}/fluxq" submit --quiet --cc "1-$jobs" true
t1=$(now)
echo "listings: submitted $jobs jobs in $(secs "$t0" "$t1") s (no fluxsched); taking them up"
start_sched "$first" "$master"
stop_sched "$master"
unset FLUXQ_STATE_DIR
declare -A masterof=([$first]=$master)
if [ -n "$base" ]; then
	# This tree's copy: opened once by this tree's fluxsched, which
	# moves it to its schema if need be (the time it takes is printed).
	masterof[new]=$tmp/master-new
	agent_dirs+=("$tmp/master-new")
	rm -rf "$tmp/master-new"
	mkdir -p "$tmp/master-new"
	cp "$master/fluxq.db" "$tmp/master-new/"
	t0=$(now)
	start_sched new "$tmp/master-new"
	t1=$(now)
	stop_sched "$tmp/master-new"
	echo "listings: this tree's first start on the base's store (a migration if the schema moved): $(secs "$t0" "$t1") s"
fi
total=$("${binof[$first]}/fluxq" --state-dir "$master" stats --json | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
echo "listings: $total jobs in the store ($(du -m "$master/fluxq.db" | cut -f1) MB)"

# copy SRC DST: a copy of a stopped instance's store, alone.
# copy MASTER DIR: a fresh copy of the store, flushed to the disk before
# it is measured. Unflushed, the copy's few hundred MB of dirty pages
# were written back during the command measured next, and a write's
# fdatasync at its commit waited for all of them (0.2-0.35 s of a direct
# cancel --all): the copy's cost, not the command's.
copy() { rm -rf "$2"; mkdir -p "$2"; cp "$1/fluxq.db" "$2/"; sync "$2/fluxq.db"; }

declare -A res
# record KEY SIDE WALL CPU RSS
record() { res[$1.$2.wall]+="$3 "; res[$1.$2.cpu]+="$4 "; res[$1.$2.rss]+="$5 "; }
med() { printf '%s\n' $1 | median; }

# 2. Listings through the socket: one fluxsched per side, each on its
# own copy of the store, both idle while the other lists.
for s in "${sides[@]}"; do copy "${masterof[$s]}" "$tmp/run-$s"; done
declare -A spid
for s in "${sides[@]}"; do
	start_sched "$s" "$tmp/run-$s"
	spid[$s]=$pid
	pid=
done
for r in $(seq "$rounds"); do
	for s in "${sides[@]}"; do
		for what in table json; do
			args=(jobs -a)
			[ "$what" = json ] && args+=(--json)
			c0=$(cpu_ticks "${spid[$s]}")
			t0=$(now)
			c=$(FLUXQ_STATE_DIR=$tmp/run-$s timed "$tmp/out-run-$what-$s" "${binof[$s]}/fluxq" "${args[@]}")
			t1=$(now)
			c1=$(cpu_ticks "${spid[$s]}")
			cpu=$(awk -v c="$c" -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { split(c, a, " "); printf "%.2f", a[1] + a[2] + t / hz }')
			record "run.$what" "$s" "$(secs "$t0" "$t1")" "$cpu" "$(rss_of "$c")"
		done
	done
	echo "listings: socket round $r done ($(uptime | sed 's/.*load/load/'))"
done
for s in "${sides[@]}"; do
	pid=${spid[$s]}
	stop_sched "$tmp/run-$s"
done

# 3. Listings of the store itself (no fluxsched): the same store for both.
for r in $(seq "$rounds"); do
	for s in "${sides[@]}"; do
		for what in table json; do
			args=(jobs -a)
			[ "$what" = json ] && args+=(--json)
			t0=$(now)
			c=$(FLUXQ_STATE_DIR=${masterof[$s]} timed "$tmp/out-direct-$what-$s" "${binof[$s]}/fluxq" "${args[@]}")
			t1=$(now)
			record "direct.$what" "$s" "$(secs "$t0" "$t1")" "$(awk -v c="$c" 'BEGIN { split(c, a, " "); printf "%.2f", a[1] + a[2] }')" "$(rss_of "$c")"
		done
	done
	echo "listings: direct round $r done ($(uptime | sed 's/.*load/load/'))"
done

# 4. cancel --all of every pending job: a fresh copy each time, through
# a fluxsched started on it, and with none.
for r in $(seq "$rounds"); do
	for s in "${sides[@]}"; do
		d=$tmp/cancel-$s
		copy "${masterof[$s]}" "$d"
		agent_dirs+=("$d")
		start_sched "$s" "$d"
		c0=$(cpu_ticks "$pid")
		t0=$(now)
		c=$(FLUXQ_STATE_DIR=$d timed "$tmp/out-cancel-$s" "${binof[$s]}/fluxq" cancel --all)
		t1=$(now)
		c1=$(cpu_ticks "$pid")
		cpu=$(awk -v c="$c" -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { split(c, a, " "); printf "%.2f", a[1] + a[2] + t / hz }')
		record run.cancel "$s" "$(secs "$t0" "$t1")" "$cpu" "$(rss_of "$c")"
		left=$(FLUXQ_STATE_DIR=$d "$bin/fluxq" stats --json | sed -n 's/.*"SCHED":\([0-9]*\).*/\1/p')
		stop_sched "$d"
		[ "${left:-0}" -eq 0 ] || { echo "listings: $left jobs still pending after cancel --all ($s)" >&2; exit 1; }

		copy "${masterof[$s]}" "$d"
		t0=$(now)
		c=$(FLUXQ_STATE_DIR=$d timed "$tmp/out-cancel-direct-$s" "${binof[$s]}/fluxq" cancel --all)
		t1=$(now)
		record direct.cancel "$s" "$(secs "$t0" "$t1")" "$(awk -v c="$c" 'BEGIN { split(c, a, " "); printf "%.2f", a[1] + a[2] }')" "$(rss_of "$c")"
		left=$("$bin/fluxq" --state-dir "$d" stats --json | sed -n 's/.*"SCHED":\([0-9]*\).*/\1/p')
		[ "${left:-0}" -eq 0 ] || { echo "listings: $left jobs still pending after cancel --all, direct ($s)" >&2; exit 1; }
		rm -rf "$d"
	done
	echo "listings: cancel round $r done ($(uptime | sed 's/.*load/load/'))"
done

# 5. The outputs: the same bytes from both sides.
if [ -n "$base" ]; then
	for f in run-table run-json direct-table direct-json; do
		cmp -s "$tmp/out-$f-base" "$tmp/out-$f-new" || { echo "listings: $f: the outputs of $base and this tree differ" >&2; exit 1; }
	done
	echo "listings: outputs identical (jobs -a and --json, socket and direct)"
fi
lines=$(($(wc -l <"$tmp/out-direct-table-new") - 1))
[ "$lines" -eq "$total" ] || { echo "listings: jobs -a listed $lines of $total jobs" >&2; exit 1; }

printf '\n%d jobs (%d pending), medians of %d, %s\n' "$total" "$jobs" "$rounds" "$(uptime | sed 's/^ *//')"
# Each side: wall seconds, CPU seconds (fluxq's, and fluxsched's through
# the socket), fluxq's peak resident MB; then the ratios base/new of the
# wall and CPU medians.
printf '%-30s' "measure"
for s in "${sides[@]}"; do printf '%28s' "$s (wall s, cpu s, MB)"; done
[ -n "$base" ] && printf '%16s' "ratio wall/cpu"
printf '%8s\n' "target"
json="{\"jobs\": $jobs, \"total\": $total, \"rounds\": $rounds, \"base\": \"$base\""
for key in run.table run.json run.cancel direct.table direct.json direct.cancel; do
	case $key in
	*.table) name="fluxq jobs -a" target="< 1 s" ;;
	*.json) name="fluxq jobs -a --json" target="< 1 s" ;;
	*.cancel) name="fluxq cancel --all" target="< 2 s" ;;
	esac
	case $key in run.*) name="$name (socket)" ;; *) name="$name (direct)" ;; esac
	printf '%-30s' "$name"
	for s in "${sides[@]}"; do
		w=$(med "${res[$key.$s.wall]}") c=$(med "${res[$key.$s.cpu]}") m=$(med "${res[$key.$s.rss]}")
		printf '%12s %7s %7s' "$w" "$c" "$m"
		json+=", \"${key/./_}_${s}_s\": $w, \"${key/./_}_${s}_cpu_s\": $c, \"${key/./_}_${s}_rss_mb\": $m"
	done
	if [ -n "$base" ]; then
		printf '%16s' "$(awk -v a="$(med "${res[$key.base.wall]}")" -v b="$(med "${res[$key.new.wall]}")" \
			-v c="$(med "${res[$key.base.cpu]}")" -v d="$(med "${res[$key.new.cpu]}")" \
			'BEGIN { printf "%.2fx %.2fx", a / b, (d > 0 ? c / d : 0) }')"
	fi
	printf '%8s\n' "$target"
done
echo "$json}" >"$out/listings.json"
