#!/usr/bin/env bash
# 16 processes submitting 100 jobs each at once to a running fluxsched
# (issue 3): prints how many distinct ids came back, how many completed,
# and how many client errors there were. Exits 1 unless 1600/1600/0.
. "$(dirname "$0")/lib.sh"
export FLUXQ_STATE_DIR=$tmp/state
"$bin/fluxsched" run >"$tmp/fluxsched.log" 2>&1 &
pid=$!
wait_socket
start=$(date +%s.%N)
for p in $(seq 16); do
  ( for j in $(seq 100); do "$bin/fluxq" submit true >>"$tmp/ids.$p" 2>>"$tmp/errors" || true; done ) &
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
"$bin/fluxq" wait --all || true
end=$(date +%s.%N)
ids=$(cat "$tmp"/ids.* | sort -u | wc -l)
errors=$(wc -l <"$tmp/errors")
completed=$("$bin/fluxq" jobs -a -n -o '{{.result}}' | grep -c '^COMPLETED$' || true)
printf 'distinct ids: %s, completed: %s, client errors: %s, %.1f s\n' "$ids" "$completed" "$errors" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')"
[ "$ids" = 1600 ] && [ "$completed" = 1600 ] && [ "$errors" = 0 ]
