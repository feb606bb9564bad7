#!/usr/bin/env bash
# fluxq against the programs a user of one box compares it with (issue 28):
# N `true` jobs on S slots, run by
#   raw            seq N | xargs -P S (the processes alone)
#   fluxq          a fresh state directory and a running `fluxsched run`;
#                  fluxq submit --cc 1-N true, then fluxq wait --all (timed
#                  from the submit to every job inactive, as
#                  bench/throughput.sh's end to end)
#   task-spooler   a private server (its own TS_SOCKET and TMPDIR) of S
#                  slots; N `tsp true`, then waiting until none is left
#                  queued or running
#   GNU parallel   seq N | parallel -j S -N0 true
# in R interleaved rounds (raw, fluxq, task-spooler, parallel in each), and
# prints the median jobs/s of each and the median of its ratios to raw in
# the same round, as a table, with `uptime` before and after. Writes
# bench/results/peers.json. task-spooler and parallel are installed with
# apt-get when missing and we are root; otherwise their rows say "not
# installed". flux-core is not packaged for this machine: its figures are
# in docs/architecture.md as measured. Every process started is stopped by
# pid on exit.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/peers.sh [--jobs N] [--slots S] [--rounds R] [--arms LIST] [--base DIR]

N `true` jobs on S slots, run by xargs -P S (raw), fluxq, task-spooler
(tsp -S S) and GNU parallel (-j S), in R interleaved rounds; prints each
one's median jobs/s and median ratio to raw in the same round, and writes
bench/results/peers.json.

  --jobs N     jobs per run (default 1000)
  --slots S    jobs at a time (default 2); more than the cores is fine:
               fluxq gets a config of several local hosts with S cores in
               all, each bound to one of this machine's CPUs
  --rounds R   rounds (default 5)
  --arms LIST  which to run, of raw,fluxq,tsp,parallel (default all); raw
               always runs, the ratios being to it
  --base DIR   also run the fluxq and fluxsched in DIR (another build, as
               bin/ of a worktree of main), as the arm "base", right
               after fluxq in each round: two builds compared in one run
  --help       this text
EOF
}

die() {
	echo "peers.sh: $*" >&2
	exit 2
}
# count NAME VALUE: VALUE if it is a whole number of at least 1.
count() {
	if ! [[ $2 =~ ^[0-9]+$ ]] || [ "$((10#$2))" -lt 1 ]; then
		die "$1 wants a whole number of at least 1, not \"$2\""
	fi
	echo "$((10#$2))"
}
jobs=1000 slots=2 rounds=5 want=raw,fluxq,tsp,parallel base=
while [ $# -gt 0 ]; do
	case $1 in
	--help | -h) usage; exit 0 ;;
	--jobs | --slots | --rounds)
		[ $# -ge 2 ] || die "$1 wants a number"
		v=$(count "$1" "$2") || exit 2
		case $1 in --jobs) jobs=$v ;; --slots) slots=$v ;; --rounds) rounds=$v ;; esac
		shift 2 ;;
	--arms)
		[ $# -ge 2 ] || die "--arms wants a list, e.g. raw,fluxq"
		want=$2
		shift 2 ;;
	--arms=*) want=${1#*=}; shift ;;
	--base)
		[ $# -ge 2 ] || die "--base wants a folder holding fluxq and fluxsched"
		base=$2
		shift 2 ;;
	--base=*) base=${1#*=}; shift ;;
	--jobs=* | --slots=* | --rounds=*)
		v=$(count "${1%%=*}" "${1#*=}") || exit 2
		case $1 in --jobs=*) jobs=$v ;; --slots=*) slots=$v ;; --rounds=*) rounds=$v ;; esac
		shift ;;
	*) die "unknown argument \"$1\" (see --help)" ;;
	esac
done

for a in ${want//,/ }; do
	case $a in raw | fluxq | tsp | parallel) ;; *) die "--arms: unknown arm \"$a\" (raw, fluxq, tsp, parallel)" ;; esac
done
# The arms in the order each round runs them.
arms=(raw)
for a in fluxq tsp parallel; do
	[[ ,$want, == *,$a,* ]] && arms+=("$a")
	if [ "$a" = fluxq ] && [ -n "$base" ]; then
		[ -x "$base/fluxq" ] && [ -x "$base/fluxsched" ] || die "--base: no fluxq and fluxsched in \"$base\""
		base=$(cd "$base" && pwd)
		arms+=(base)
	fi
done

# shellcheck source=bench/lib.sh source-path=SCRIPTDIR/..
. "$(dirname "$0")/lib.sh"

# The peers: found on PATH by what they say they are (moreutils has a `ts`
# and a `parallel` of its own), installed first if missing and we may.
is_tsp() { "$1" -V </dev/null 2>&1 | grep -q 'Task Spooler'; }
is_parallel() { "$1" --version </dev/null 2>&1 | grep -q '^GNU parallel'; }
find_tsp() {
	local c
	for c in tsp ts; do
		c=$(command -v "$c") && is_tsp "$c" && { echo "$c"; return; }
	done
	return 1
}
find_parallel() {
	local c
	c=$(command -v parallel) && is_parallel "$c" && echo "$c"
}
tsp=$(find_tsp) || tsp=
parallel=$(find_parallel) || parallel=
wants() { [[ " ${arms[*]} " == *" $1 "* ]]; }
missing=()
wants tsp && [ -z "$tsp" ] && missing+=(task-spooler)
wants parallel && [ -z "$parallel" ] && missing+=(parallel)
if [ ${#missing[@]} -gt 0 ]; then
	if apt_install "${missing[@]}"; then
		tsp=$(find_tsp) || tsp=
		parallel=$(find_parallel) || parallel=
	else
		echo "peers.sh: could not install ${missing[*]} (not root, or apt-get failed): their rows say \"not installed\"" >&2
	fi
fi
tsp_version='' parallel_version=''
[ -z "$tsp" ] || tsp_version=$("$tsp" -V </dev/null 2>&1 | sed -n '1s/.*Task Spooler v\([^ ]*\).*/\1/p')
[ -z "$parallel" ] || parallel_version=$("$parallel" --version </dev/null 2>&1 | sed -n '1s/^GNU parallel //p')

seq "$jobs" >"$tmp/seq"

# fluxq's resources: S cores on as many local hosts as it takes, each host
# given this machine's CPUs (the ones this script may run on), so that every
# task is bound to a CPU that exists; the exec agent serves every host.
cpus=()
expand_idset() {
	local r
	for r in ${1//,/ }; do
		case $r in *-*) seq "${r%-*}" "${r#*-}" ;; *) echo "$r" ;; esac
	done
}
mapfile -t cpus < <(expand_idset "$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)")
ncpus=${#cpus[@]}
[ "$ncpus" -ge 1 ] || die "cannot read this process's CPUs from /proc/self/status"
join() { local IFS=,; echo "$*"; }
full=$((slots / ncpus)) rest=$((slots % ncpus))
{
	if [ "$full" -eq 1 ]; then
		printf '[[resource.config]]\nhosts = "node0"\ncores = "%s"\n' "$(join "${cpus[@]}")"
	elif [ "$full" -gt 1 ]; then
		printf '[[resource.config]]\nhosts = "node[0-%d]"\ncores = "%s"\n' $((full - 1)) "$(join "${cpus[@]}")"
	fi
	if [ "$rest" -gt 0 ]; then
		printf '[[resource.config]]\nhosts = "node%d"\ncores = "%s"\n' "$full" "$(join "${cpus[@]:0:rest}")"
	fi
} >"$tmp/fluxq.toml"
hosts=$((full + (rest > 0)))

# Each arm runs the N jobs once and sets r to its jobs/s.
r=
arm_raw() {
	local t0 t1
	t0=$(now)
	waited xargs -P "$slots" -I{} true <"$tmp/seq"
	t1=$(now)
	r=$(rate "$jobs" "$t0" "$t1")
}

# arm_fluxq [NAME]: one run of $bin's fluxq, in a state directory of
# NAME's (fluxq or base) and this round's. Sets cpu to the CPU per job of
# fluxsched and of the exec agent, in ms: what they took from the cores
# the jobs share, read from /proc/PID/stat before they are stopped.
cpu=
arm_fluxq() {
	local name=${1:-fluxq} t0 t1 a fs ag=0
	local log=$tmp/$name.$round.log
	export FLUXQ_STATE_DIR=$tmp/$name.$round
	agent_dirs+=("$FLUXQ_STATE_DIR")
	"$bin/fluxsched" run --config "$tmp/fluxq.toml" >"$log" 2>&1 &
	pid=$!
	wait_socket
	[ -S "$FLUXQ_STATE_DIR/fluxsched.sock" ] || die "fluxsched did not start in 10 s: $(tail -n 1 "$log")"
	t0=$(now)
	waited "$bin/fluxq" submit --quiet --cc "1-$jobs" true
	waited "$bin/fluxq" wait --all
	t1=$(now)
	fs=$(cpu_ticks "$pid")
	for a in $(agents "$FLUXQ_STATE_DIR"); do ag=$((ag + $(cpu_ticks "$a"))); done
	cpu="$(ms_per_job "$fs" "$jobs") $(ms_per_job "$ag" "$jobs")"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	stop_agents "$FLUXQ_STATE_DIR"
	r=$(rate "$jobs" "$t0" "$t1")
}

# The other build's fluxq, run as this one's is.
arm_base() {
	local ours=$bin
	bin=$base
	arm_fluxq base
	bin=$ours
}

# task-spooler's server and the client that waits for each job fork into
# the background: they run as argv[0] $tsp_tag, a name of this run alone,
# and are found again by it (argv0_pids) to be stopped by pid.
tsp_tag="peers-tsp@$tmp"
tsp_dir=
tspc() (
	export TS_SOCKET=$tsp_dir/socket TMPDIR=$tsp_dir TS_SLOTS=$slots
	exec -a "$tsp_tag" "$tsp" "$@"
)
stop_tsp() {
	local p
	[ -n "$tsp_dir" ] && [ -S "$tsp_dir/socket" ] && tspc -K >/dev/null 2>&1
	for p in $(argv0_pids "$tsp_tag"); do stop_pid "$p"; done
	return 0
}
exit_hooks+=(stop_tsp)
arm_tsp() {
	local t0 t1 i left id
	tsp_dir=$tmp/tsp.$round
	mkdir -p "$tsp_dir"
	tspc -S "$slots" >/dev/null # starts the server
	t0=$(now)
	for ((i = 0; i < jobs; i++)); do tspc true >/dev/null; done
	# The last job added, then any still queued or running (at most S-1
	# started before it and may still run).
	tspc -w >/dev/null
	while left=$(tspc -l | awk 'NR > 1 && $2 != "finished" { print $1 }') && [ -n "$left" ]; do
		for id in $left; do tspc -w "$id" >/dev/null || true; done
	done
	t1=$(now)
	stop_tsp
	tsp_dir=
	r=$(rate "$jobs" "$t0" "$t1")
}

arm_parallel() {
	local t0 t1
	t0=$(now)
	waited "$parallel" --will-cite --tmpdir "$tmp" -j "$slots" -N0 true <"$tmp/seq"
	t1=$(now)
	r=$(rate "$jobs" "$t0" "$t1")
}

declare -A installed=([raw]=1 [fluxq]=1 [base]=1 [tsp]=${tsp:+1} [parallel]=${parallel:+1})
declare -A rates=() ratios=() fscpu=() agcpu=()
load_before=$(uptime)
echo "$load_before"
# shellcheck disable=SC2016 # the backquotes are markdown's
printf '%s `true` jobs, %s slots, %s rounds; fluxq on %s local host(s) of %s core(s)\n' "$jobs" "$slots" "$rounds" "$hosts" "$ncpus"
for ((round = 1; round <= rounds; round++)); do
	line="round $round:"
	raw=
	for a in "${arms[@]}"; do
		[ -n "${installed[$a]}" ] || continue
		"arm_$a"
		[ "$a" = raw ] && raw=$r
		rates[$a]+="$r "
		if [ "$a" = fluxq ] || [ "$a" = base ]; then
			fscpu[$a]+="${cpu% *} "
			agcpu[$a]+="${cpu#* } "
		fi
		ratios[$a]+="$(awk -v a="$r" -v b="$raw" 'BEGIN { printf "%.4f", a / b }') "
		line+=" $a $r"
	done
	echo "$line"
done
load_after=$(uptime)

# The table, fastest first, as issue 28's.
label() {
	case $1 in
	raw) echo "raw" ;;
	fluxq) echo "**fluxq**" ;;
	base) echo "fluxq, the build in $base" ;;
	tsp) echo "task-spooler${tsp_version:+ $tsp_version} (\`tsp -S $slots\`)" ;;
	parallel) echo "GNU parallel${parallel_version:+ $parallel_version} (\`-j$slots\`)" ;;
	esac
}
grouped() { awk -v v="$1" 'BEGIN { s = sprintf("%.0f", v); t = ""; while (length(s) > 3) { t = "," substr(s, length(s) - 2) t; s = substr(s, 1, length(s) - 3) } print s t }'; }
ratio() { awk -v v="$1" 'BEGIN { printf(v < 0.1 ? "%.3f" : "%.2f", v) }'; }
declare -A med=() medratio=()
for a in "${arms[@]}"; do
	[ -n "${installed[$a]}" ] || continue
	med[$a]=$(tr ' ' '\n' <<<"${rates[$a]}" | grep . | median)
	medratio[$a]=$(tr ' ' '\n' <<<"${ratios[$a]}" | grep . | median)
done
echo
# shellcheck disable=SC2016
printf '| %s `true` jobs, %s slots | jobs/s | of raw `xargs -P%s` |\n| --- | ---: | ---: |\n' "$(grouped "$jobs")" "$slots" "$slots"
for a in $(for k in "${!med[@]}"; do echo "${med[$k]} $k"; done | sort -rn | awk '{ print $2 }'); do
	printf '| %s | %s | %s |\n' "$(label "$a")" "$(grouped "${med[$a]}")" "$(ratio "${medratio[$a]}")"
done
for a in "${arms[@]}"; do
	[ -n "${installed[$a]}" ] || printf '| %s | not installed | |\n' "$(label "$a")"
done
echo
echo "medians of $rounds rounds; ratios are each round's rate over raw's in the same round"
for a in fluxq base; do
	[ -n "${fscpu[$a]-}" ] || continue
	printf '%s: CPU per job, fluxsched %s ms, exec agent %s ms (medians)\n' "$a" \
		"$(tr ' ' '\n' <<<"${fscpu[$a]}" | grep . | median)" "$(tr ' ' '\n' <<<"${agcpu[$a]}" | grep . | median)"
done
echo "$load_after"

# bench/results/peers.json: every round's figures and the medians.
json_list() { tr ' ' '\n' <<<"$1" | grep . | paste -sd, -; }
{
	printf '{"jobs": %s, "slots": %s, "rounds": %s, "nproc": %s, "fluxq_hosts": %s, "uptime_before": "%s", "uptime_after": "%s", "arms": [' \
		"$jobs" "$slots" "$rounds" "$(nproc)" "$hosts" "${load_before#"${load_before%%[! ]*}"}" "${load_after#"${load_after%%[! ]*}"}"
	sep=
	for a in "${arms[@]}"; do
		if [ -n "${installed[$a]}" ]; then
			printf '%s{"arm": "%s", "installed": true, "jobs_per_s": [%s], "ratios_to_raw": [%s], "median_jobs_per_s": %s, "median_ratio_to_raw": %s' \
				"$sep" "$a" "$(json_list "${rates[$a]}")" "$(json_list "${ratios[$a]}")" "${med[$a]}" "${medratio[$a]}"
			if [ -n "${fscpu[$a]-}" ]; then
				printf ', "fluxsched_cpu_ms_per_job": [%s], "agent_cpu_ms_per_job": [%s]' "$(json_list "${fscpu[$a]}")" "$(json_list "${agcpu[$a]}")"
			fi
			printf '}'
		else
			printf '%s{"arm": "%s", "installed": false}' "$sep" "$a"
		fi
		sep=", "
	done
	printf '], "task_spooler_version": "%s", "parallel_version": "%s"}\n' "$tsp_version" "$parallel_version"
} >"$out/peers.json"
