# shellcheck shell=bash
# Shared by the bench/ scripts (sourced, not run): builds the binaries and
# sets bin, out, tmp and pid; tmp is removed and a fluxsched left in $pid is
# stopped on exit, and so are a command left running by `waited`, the exec
# agents of the state directories listed in agent_dirs and of any state
# directory under $tmp, and whatever the functions named in exit_hooks stop
# (a script's own daemons, found by pid when the script exits).
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build >/dev/null
bin=$PWD/bin
out=bench/results
mkdir -p "$out"
tmp=$(mktemp -d)
pid=
child=
agent_dirs=()
exit_hooks=()
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$child" ] && kill "$child" 2>/dev/null
	wait 2>/dev/null
	local d h
	for h in ${exit_hooks[@]+"${exit_hooks[@]}"}; do
		"$h" || true
	done
	for d in ${agent_dirs[@]+"${agent_dirs[@]}"} $(find "$tmp" -path '*/agent/*.pid' -printf '%h\n' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
		stop_agents "$d"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# wait_socket: until the fluxsched of $FLUXQ_STATE_DIR serves its socket.
wait_socket() { for _ in $(seq 100); do [ -S "$FLUXQ_STATE_DIR/fluxsched.sock" ] && return; sleep 0.1; done; }

# cpu_ticks PID: the process's user + system CPU time so far, in clock
# ticks (/proc/PID/stat fields 14 and 15; the command name in field 2 may
# hold spaces, so count from its closing parenthesis). 0 if it is gone.
cpu_ticks() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	s=${s##*) }
	# shellcheck disable=SC2086 # split into the fields
	set -- $s
	echo $((${12} + ${13}))
}
# ms_per_job TICKS JOBS: CPU time per job, in milliseconds.
ms_per_job() { awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", 1000 * t / hz / n }'; }
# rss_kb PID: the process's resident memory (VmRSS), in KiB; 0 if gone.
rss_kb() { awk '/^VmRSS:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# agents DIR: the pids of the exec agents serving state directory DIR,
# found by their command line: fluxsched agent --state-dir DIR.
agents() {
	local p argv
	for p in /proc/[0-9]*; do
		{ mapfile -d '' -t argv <"$p/cmdline"; } 2>/dev/null || continue
		if [ "${argv[1]-}" != agent ] || [ "${argv[2]-}" != --state-dir ] || [ "${argv[3]-}" != "$1" ]; then
			continue
		fi
		case "${argv[0]}" in */fluxsched | fluxsched) echo "${p#/proc/}" ;; esac
	done
}
# stop_agents DIR: stop the exec agents of state directory DIR, with
# `fluxsched stop --force` where this fluxsched has it, then any agent
# left by its pid: SIGTERM, and SIGKILL after 5 s.
stop_agents() {
	local a
	if "$bin/fluxsched" stop --help >/dev/null 2>&1; then
		FLUXQ_STATE_DIR=$1 "$bin/fluxsched" stop --force >/dev/null 2>&1 || true
	fi
	for a in $(agents "$1"); do
		stop_pid "$a"
	done
	return 0
}
# stop_pid PID: SIGTERM, and SIGKILL if it is still there after 5 s.
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do alive "$1" || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	return 0
}
# argv0_pids NAME: the pids of the processes whose argv[0] is NAME. A
# script that starts a daemon it is not the parent of (one that forks
# into the background) runs it as `exec -a UNIQUE-NAME`, a name of its
# own run (holding $tmp), and finds it again with this, never by the
# program's name, which other users' processes share.
argv0_pids() {
	local p argv
	for p in /proc/[0-9]*; do
		{ mapfile -d '' -t argv <"$p/cmdline"; } 2>/dev/null || continue
		[ "${argv[0]-}" = "$1" ] && echo "${p#/proc/}"
	done
	return 0
}
# waited CMD...: runs CMD in the background and waits for it, returning its
# status; meanwhile its pid is in $child, so that an exit (a signal to the
# script) stops it. Its standard input is the caller's.
waited() {
	local rc=0
	"$@" <&0 &
	child=$!
	wait "$child" || rc=$?
	child=
	return "$rc"
}
# apt_install PACKAGE...: installs Debian packages with apt-get when we are
# root and have it (apt-get update first, once a run); fails otherwise, or
# if the install fails, saying nothing (the caller says what is missing).
apt_updated=
apt_install() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
	if [ -z "$apt_updated" ]; then
		apt-get update -qq >/dev/null 2>&1 || return 1
		apt_updated=1
	fi
	# Other users' apt-get may hold the lock: wait for it, up to 5 minutes.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$@" >/dev/null 2>&1
}
# alive PID: the process exists and has not exited (a zombie has: a
# detached agent's parent, init, may be slow to reap it).
alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}
