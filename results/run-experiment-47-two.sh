#!/usr/bin/env bash
# Issue 47's test experiment on two processes: one leaves the second of two cores half idle (a dev-search run took
# 380-530 s alone, 550-600 s beside a second one: about 1.5x the runs an hour).
# A: results/run-experiment-47.sh, every job in order (seed 1: base, drzero, self, piplay, gt; then seed 2, ...).
# B: one trained job at a time from the other end (seed 5: gt, piplay, self, drzero; then seed 4, ...) into
#    results/experiment-47-b, each finished one moved (logs only) into A's runs/ before A gets there; A then keeps it
#    ("finished before, kept"), as --resume does. B stops at the first job A has begun. A job computes the same in
#    either process (its settings are A's: --eval-at-start off, as beside a base arm; checked on a short run: the
#    result.json of a job run by both matched in everything but the wall time).
# Both resume: stop both with Ctrl-C (pkill -INT -f "^node --import tsx src/cli/experiment.ts") and run this again.
# WORKTREE: where to run (default: this checkout); OUT_A, OUT_B, A_CMD, B_ARGS, B_SEEDS, B_ARMS, B_LOG: for a trial.
set -uo pipefail
cd "${WORKTREE:-$(dirname "$0")/..}"
A=${OUT_A:-results/experiment-47}
B=${OUT_B:-results/experiment-47-b}
mkdir -p "$A/runs" "$B/runs"
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
  [ -e "$B/runs/$job/result.json" ] && [ ! -e "$A/runs/$job" ] || return 0
  rm -rf "$tmp"; mkdir -p "$tmp"
  (cd "$B/runs/$job" && tar cf - --exclude checkpoints --exclude student --exclude piplay.lock .) |
    (cd "$tmp" && tar xf -)
  if mv -T "$tmp" "$A/runs/$job" 2>/dev/null; then echo "B: $job moved into $A/runs"
  else rm -rf "$tmp"; echo "B: A began $job first"
  fi
}
for seed in $seeds; do
  for arm in $arms; do
    job=$arm-seed$seed
    adopt "$job"
    [ -e "$A/runs/$job" ] && { echo "B: A has $job; B stops $(date -u)"; break 2; }
    kill -0 "$apid" 2>/dev/null || { echo "B: A has exited; B stops"; break 2; }
    echo "B: $job starts $(date -u)"
    nice -n 10 npm run -s experiment -- --out "$B" --seeds "$seed" --arms "$arm" "${common[@]}" --resume \
      >> "${B_LOG:-experiment-47-b.log}" 2>&1 || { echo "B: $job stopped (rc $?)"; break 2; }
    adopt "$job"
  done
done
wait "$apid"; echo "A exited rc $? $(date -u)"
