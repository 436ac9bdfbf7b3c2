#!/usr/bin/env bash
# Issue 47's test experiment on two processes: one leaves the second of two cores half idle (a dev-search run took
# 380-530 s alone, 550-600 s beside a second one: about 1.5x the runs an hour).
# A: results/run-experiment-47.sh, every job in order (seed 1: base, drzero, self, piplay, gt; then seed 2, ...).
# B: one trained job at a time from the other end (seed 5: gt, piplay, self, drzero; then seed 4, ...) into
#    runs/experiment-47-b (scratch, not committed), each finished one copied (logs only) into A's runs/ before A gets
#    there; A then keeps it ("finished before, kept"), as --resume does. B stops at the first job A has begun. A job
#    computes the same in either process (its settings are A's: --eval-at-start off, as beside a base arm; checked on
#    a short run: the result.json of a job run by both matched in everything but the wall time).
# Stop: touch runs/experiment-47-b-stop (B starts no further job), then
#   pkill -INT -f "src/cli/experiment.ts --out (results|runs)/experiment-47"
# (both processes checkpoint and exit); run this again to resume both.
# WORKTREE: where to run (default: this checkout); for a trial, A_CMD with OUT_A (A's command and its folder), and
# B_ARGS, B_SEEDS, B_ARMS, OUT_B, B_LOG.
set -uo pipefail
copy_logs=$(cd "$(dirname "$0")/.." && pwd)/scripts/copy-logs.sh # this checkout's (the worktree may predate it)
cd "${WORKTREE:-$(dirname "$0")/..}" || exit 1
if [ -n "${OUT_A:-}" ] && [ -z "${A_CMD:-}" ]; then
  echo "OUT_A needs A_CMD: run-experiment-47.sh writes results/experiment-47" >&2
  exit 2
fi
A=${OUT_A:-results/experiment-47}
B=${OUT_B:-runs/experiment-47-b}
mkdir -p "$A/runs" "$B/runs" || exit 1
rm -f "$B-stop"
if [ -n "${A_CMD:-}" ]; then eval "$A_CMD" &
else nice -n 10 bash results/run-experiment-47.sh >> experiment-47.log 2>&1 &
fi
apid=$!
# run-experiment-47.sh's settings; --eval-at-start off is what a trained arm gets beside the base arm.
args="--preset demo --arm-settings results/dev-search-47/choice.json --iterations 3 --eval-world test"
args+=" --eval-per-hop 200 --eval-hops 1,2 --eval-batch 400 --probe-questions 0 --eval-at-start off"
read -r -a common <<< "${B_ARGS:-$args}"
seeds=${B_SEEDS:-5 4 3 2}
arms=${B_ARMS:-gt piplay self drzero}
adopt() { # a finished job of B into A's runs/, logs only, unless A has begun it
  local job=$1 tmp="$A/runs/.adopt-$1"
  [ -e "$B/runs/$job/result.json" ] || return 0
  if [ -e "$A/runs/$job" ]; then
    [ -e "$B-copied/$job" ] || echo "B: A began $job first; B's run of it stays in $B/runs"
    return 0
  fi
  rm -rf "$tmp" && mkdir -p "$tmp" || return 1
  if ! bash "$copy_logs" "$B/runs/$job" "$tmp"; then
    rm -rf "$tmp"
    echo "B: copying $job failed; left in $B/runs"
    return 1
  fi
  # rename(2): fails where A has begun the job and written to its folder. (A folder A made a moment ago and has
  # not written to yet would be replaced: A checks for result.json first and then writes at once, so the window is
  # the few milliseconds between.)
  if mv -T "$tmp" "$A/runs/$job" 2>/dev/null; then
    mkdir -p "$B-copied" && touch "$B-copied/$job"
    echo "B: $job copied into $A/runs"
  else
    rm -rf "$tmp"
    echo "B: A began $job first; B's run of it stays in $B/runs"
  fi
}
for seed in $seeds; do
  for arm in $arms; do
    job=$arm-seed$seed
    adopt "$job" || break 2
    [ -e "$B/runs/$job/result.json" ] && continue # B ran it before (and A has it now, or began it first)
    [ -e "$A/runs/$job" ] && { echo "B: A has begun $job; B stops $(date -u)"; break 2; }
    [ -e "$B-stop" ] && { echo "B: $B-stop is there; B stops"; break 2; }
    kill -0 "$apid" 2>/dev/null || { echo "B: A has exited; B stops"; break 2; }
    echo "B: $job starts $(date -u)"
    nice -n 10 npm run -s experiment -- --out "$B" --seeds "$seed" --arms "$arm" "${common[@]}" --resume \
      >> "${B_LOG:-experiment-47-b.log}" 2>&1 || { echo "B: $job stopped (rc $?)"; break 2; }
    adopt "$job" || break 2
  done
done
wait "$apid"
echo "A exited rc $? $(date -u)"
