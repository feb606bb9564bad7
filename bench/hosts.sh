#!/usr/bin/env bash
# Throughput over ssh hosts against the local launcher, in one run (issue
# 29): N `true` jobs, submit to all inactive, on H hosts (default 4) of
# this machine's CPUs each, run by
#   local   [exec] launcher "local": one exec agent serves the H hosts
#   ssh     [exec] launcher "ssh": H real sshd's made by bench/sshhosts
#           (internal/sshtest: 127.0.0.2, …, each in a UTS namespace of
#           its own), one connection and one exec agent per host
# in R interleaved rounds (local then ssh in each), each on a fresh state
# directory (and fresh remote ones) after one warm-up job of every host
# (-N H), so that neither arm counts starting its agents or connections.
# Prints the median jobs/s of each, the median of the rounds' ratios
# ssh/local (issue 29 asks >= 0.80), the CPU per job of fluxsched, of the
# agents and of ssh and sshd (from /proc/PID/stat), with `uptime` before
# and after; writes bench/results/hosts.json. Needs root and sshd (as the
# ssh tests). Every process started, sshd's and the hosts' agents
# included, is stopped by pid on exit and on error.
#
#   bench/hosts.sh [--hosts H] [--jobs N] [--rounds R]
#   bench/throughput.sh --hosts H ...   (the same)
set -euo pipefail

usage() {
	cat <<'EOF2'
usage: bench/hosts.sh [--hosts H] [--jobs N] [--rounds R]

N `true` jobs on H hosts of this machine's CPUs each, submit to all
inactive, with the local launcher and with the ssh launcher over H real
sshd's on 127.0.0.2 and up (needs root and sshd), in R interleaved rounds;
prints each one's median jobs/s, CPU per job, and the median ratio
ssh/local, and writes bench/results/hosts.json.

  --hosts H    hosts (default 4)
  --jobs N     jobs per run (default 1000)
  --rounds R   rounds (default 5)
  --help       this text
EOF2
}
die() {
	echo "hosts.sh: $*" >&2
	exit 2
}
count() {
	if ! [[ $2 =~ ^[0-9]+$ ]] || [ "$((10#$2))" -lt 1 ]; then
		die "$1 wants a whole number of at least 1, not \"$2\""
	fi
	echo "$((10#$2))"
}
nhosts=4 jobs=1000 rounds=5
while [ $# -gt 0 ]; do
	case $1 in
	--help | -h) usage; exit 0 ;;
	--hosts | --jobs | --rounds)
		[ $# -ge 2 ] || die "$1 wants a number"
		v=$(count "$1" "$2") || exit 2
		case $1 in --hosts) nhosts=$v ;; --jobs) jobs=$v ;; --rounds) rounds=$v ;; esac
		shift 2 ;;
	*) die "unknown argument \"$1\" (see --help)" ;;
	esac
done
[ "$nhosts" -le 250 ] || die "--hosts: at most 250 (127.0.0.2 to 127.0.0.251)"
[ "$(id -u)" = 0 ] || die "needs root (sshd and unshare --uts, as internal/sshtest)"

# shellcheck source=bench/lib.sh source-path=SCRIPTDIR/..
. "$(dirname "$0")/lib.sh"

# The hosts: bench/sshhosts, a coprocess whose standard input is this
# script's (it stops everything when that ends, should this script die
# without its trap), stopped first on exit: cleanup's `wait` waits for
# every child.
go build -o "$tmp/sshhosts" ./bench/sshhosts
hosts_pid=
stop_hosts() {
	[ -n "$hosts_pid" ] || return 0
	kill -TERM "$hosts_pid" 2>/dev/null || true
	wait "$hosts_pid" 2>/dev/null || true
	hosts_pid=
}
# On exit: what runs jobs first (the fluxq in $child, the fluxsched in
# $pid), so that no job is failed by its host going away, then the hosts,
# then lib.sh's cleanup.
on_exit() {
	[ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
	child=
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	pid=
	stop_hosts
	cleanup
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
coproc HOSTS { exec "$tmp/sshhosts" "$tmp/ssh" "$nhosts" 2>"$tmp/sshhosts.log"; }
hosts_pid=$HOSTS_PID
while IFS= read -r line <&"${HOSTS[0]}"; do
	[ "$line" = ready ] && break
	case $line in
	SSH_CONFIG=* | SSH_HOSTS=* | HOST[0-9]*_ADDR=* | HOST[0-9]*_STATE=*) eval "$line" ;;
	*) die "bench/sshhosts said: $line" ;;
	esac
done
[ "${line-}" = ready ] || die "the hosts did not start: $(tail -n 3 "$tmp/sshhosts.log")"

# The resources of both arms: H hosts, each of this machine's CPUs (so
# that every task is bound to one that exists).
cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
[ -n "$cpus" ] || die "cannot read this process's CPUs from /proc/self/status"
names="host[1-$nhosts]" addrs="127.0.0.[2-$((nhosts + 1))]"
[ "$nhosts" -gt 1 ] || names=host1 addrs=127.0.0.2
printf '[[resource.config]]\nhosts = "%s"\ncores = "%s"\n' "$names" "$cpus" >"$tmp/local.toml"
cat >"$tmp/ssh.toml.in" <<EOF
$(cat "$tmp/local.toml")

[exec]
launcher = "ssh"
remote-path = "$bin/fluxsched"
remote-state-dir = "$tmp/remote.ROUND/{host}"
ssh-options = ["-F", "$SSH_CONFIG"]

[[exec.hosts]]
host = "$names"
address = "$addrs"
EOF
slots=$((nhosts * $(awk -v s="$cpus" 'BEGIN { n = 0; k = split(s, r, ","); for (i = 1; i <= k; i++) { if (split(r[i], ab, "-") == 2) n += ab[2] - ab[1] + 1; else n++ } print n }')))

# The pids of the processes in the hosts' namespaces (agents, bridges,
# sshd's sessions) and of fluxsched's ssh clients: their CPU is counted.
remote_pids() {
	local p ns
	for p in /proc/[0-9]*; do
		ns=$(readlink "$p/ns/uts" 2>/dev/null) || continue
		[ -n "${host_ns[$ns]-}" ] && echo "${p#/proc/}"
	done
	return 0
}
declare -A host_ns=()
for ((i = 1; i <= nhosts; i++)); do
	p=$(cat "$tmp/ssh/host$i/sshd.pid" 2>/dev/null) || continue
	ns=$(readlink "/proc/$p/ns/uts") && host_ns[$ns]=1
done
# ticks_of PIDS...: the sum of their CPU ticks; of children waited for
# (cutime, cstime) too, for the sshd session processes that end.
ticks_of() {
	local t=0 p
	for p in "$@"; do t=$((t + $(cpu_ticks "$p"))); done
	echo "$t"
}
children_of() { local p; for p in /proc/[0-9]*; do [ "$(awk '{ print $4 }' "$p/stat" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"; done; return 0; }

# Each arm runs the N jobs once and sets r (jobs/s) and the CPU per job
# (ms) of fluxsched (sched_ms), of the agents (agent_ms) and, for ssh, of
# ssh, sshd's sessions and the bridges (link_ms).
r= sched_ms= agent_ms= link_ms= link_kinds=
run_arm() {
	local arm=$1 t0 t1 config log=$tmp/fluxsched.$1.$round.log a s0 s1 rp0 rp1 ag0=0 ag1=0 lk0=0 lk1=0 p
	export FLUXQ_STATE_DIR=$tmp/$arm.$round
	agent_dirs+=("$FLUXQ_STATE_DIR")
	config=$tmp/local.toml
	if [ "$arm" = ssh ]; then
		config=$tmp/ssh.$round.toml
		sed "s/ROUND/$round/" "$tmp/ssh.toml.in" >"$config"
		for ((i = 1; i <= nhosts; i++)); do agent_dirs+=("$tmp/remote.$round/host$i"); done
	fi
	"$bin/fluxsched" run --config "$config" >"$log" 2>&1 &
	pid=$!
	wait_socket
	[ -S "$FLUXQ_STATE_DIR/fluxsched.sock" ] || die "fluxsched did not start in 10 s: $(tail -n 1 "$log")"
	# One job on every host: the agents started and, for ssh, every
	# connection made, before the clock starts.
	waited "$bin/fluxq" submit --quiet --wait -N "$nhosts" -n "$nhosts" true || die "$arm: the warm-up job failed: $(tail -n 3 "$log")"
	agents_now() {
		if [ "$arm" = local ]; then agents "$FLUXQ_STATE_DIR"; else
			for ((i = 1; i <= nhosts; i++)); do agents "$tmp/remote.$round/host$i"; done
		fi
	}
	# The link's processes, by kind: fluxsched's ssh clients, the
	# bridges, and sshd's processes in the hosts' namespaces.
	link_now() {
		[ "$arm" = ssh ] || return 0
		local p argv
		for p in $(children_of "$pid"); do
			argv=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
			case $argv in ssh\ *) echo "ssh $p" ;; esac
		done
		for p in $(remote_pids); do
			argv=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
			case $argv in
			*" agent --attach "*) echo "bridge $p" ;;
			*" agent --state-dir "*) ;;
			*) echo "sshd $p" ;;
			esac
		done
	}
	mapfile -t ag < <(agents_now)
	mapfile -t lk < <(link_now)
	kind_pids() { local k p; for k in "${lk[@]}"; do p=${k#* }; [ "${k%% *}" = "$1" ] && echo "$p"; done; return 0; }
	mapfile -t lk_ssh < <(kind_pids ssh)
	mapfile -t lk_sshd < <(kind_pids sshd)
	mapfile -t lk_bridge < <(kind_pids bridge)
	s0=$(cpu_ticks "$pid")
	ag0=$(ticks_of "${ag[@]}")
	lk0=$(ticks_of "${lk_ssh[@]}" "${lk_sshd[@]}" "${lk_bridge[@]}")
	k0=("$(ticks_of "${lk_ssh[@]}")" "$(ticks_of "${lk_sshd[@]}")" "$(ticks_of "${lk_bridge[@]}")")
	t0=$(now)
	waited "$bin/fluxq" submit --quiet --cc "1-$jobs" true
	waited "$bin/fluxq" wait --all
	t1=$(now)
	s1=$(cpu_ticks "$pid")
	ag1=$(ticks_of "${ag[@]}")
	lk1=$(ticks_of "${lk_ssh[@]}" "${lk_sshd[@]}" "${lk_bridge[@]}")
	k1=("$(ticks_of "${lk_ssh[@]}")" "$(ticks_of "${lk_sshd[@]}")" "$(ticks_of "${lk_bridge[@]}")")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	stop_agents "$FLUXQ_STATE_DIR"
	if [ "$arm" = ssh ]; then
		for ((i = 1; i <= nhosts; i++)); do stop_agents "$tmp/remote.$round/host$i"; done
	fi
	r=$(rate "$jobs" "$t0" "$t1")
	sched_ms=$(ms_per_job $((s1 - s0)) "$jobs")
	agent_ms=$(ms_per_job $((ag1 - ag0)) "$jobs")
	link_ms=$(ms_per_job $((lk1 - lk0)) "$jobs")
	link_kinds="ssh $(ms_per_job $((k1[0] - k0[0])) "$jobs"), sshd $(ms_per_job $((k1[1] - k0[1])) "$jobs"), bridges $(ms_per_job $((k1[2] - k0[2])) "$jobs")"
}

declare -A rates=() cpu=()
ratios=
load_before=$(uptime)
echo "$load_before"
# shellcheck disable=SC2016 # the backquotes are markdown's
printf '%s `true` jobs on %s hosts of %s CPUs (%s slots), %s rounds\n' "$jobs" "$nhosts" "$cpus" "$slots" "$rounds"
for ((round = 1; round <= rounds; round++)); do
	line="round $round:"
	for arm in local ssh; do
		run_arm "$arm"
		rates[$arm]+="$r "
		cpu[$arm.sched]+="$sched_ms " cpu[$arm.agent]+="$agent_ms " cpu[$arm.link]+="$link_ms "
		if [ "$arm" = local ]; then
			lr=$r
			line+=" local $r jobs/s (CPU ms/job: fluxsched $sched_ms, agent $agent_ms);"
		else
			line+=" ssh $r jobs/s (fluxsched $sched_ms, agents $agent_ms, $link_kinds)"
		fi
	done
	ratios+="$(awk -v a="$r" -v b="$lr" 'BEGIN { printf "%.4f", a / b }') "
	echo "$line"
done
load_after=$(uptime)

med() { tr ' ' '\n' <<<"$1" | grep . | median; }
echo
printf '| %s `true` jobs, %s hosts, %s slots | jobs/s | fluxsched ms/job | agents ms/job | ssh, sshd, bridges ms/job |\n| --- | ---: | ---: | ---: | ---: |\n' "$jobs" "$nhosts" "$slots"
for arm in local ssh; do
	link=$(med "${cpu[$arm.link]}")
	[ "$arm" = local ] && link=-
	printf '| %s | %s | %s | %s | %s |\n' "$arm" "$(med "${rates[$arm]}")" "$(med "${cpu[$arm.sched]}")" "$(med "${cpu[$arm.agent]}")" "$link"
done
ratio=$(med "$ratios")
echo
printf 'ssh/local: median %s of the rounds'"'"' ratios (%s); issue 29 asks >= 0.80\n' "$ratio" "${ratios% }"
echo "medians of $rounds rounds"
echo "$load_after"

json_list() { tr ' ' '\n' <<<"$1" | grep . | paste -sd, -; }
cat >"$out/hosts.json" <<JSON
{"jobs": $jobs, "hosts": $nhosts, "slots": $slots, "rounds": $rounds, "nproc": $(nproc), "local_jobs_per_s": [$(json_list "${rates[local]}")], "ssh_jobs_per_s": [$(json_list "${rates[ssh]}")], "ratios_ssh_to_local": [$(json_list "$ratios")], "median_local_jobs_per_s": $(med "${rates[local]}"), "median_ssh_jobs_per_s": $(med "${rates[ssh]}"), "median_ratio": $ratio, "uptime_before": "${load_before#"${load_before%%[! ]*}"}", "uptime_after": "${load_after#"${load_after%%[! ]*}"}"}
JSON
