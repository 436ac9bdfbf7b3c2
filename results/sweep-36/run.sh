#!/usr/bin/env bash
# The dev-set sweep that chose the demo preset's learning rate (issue 36): one iteration of the demo preset,
# base, Dr. Zero and π-Play at seed 1, evaluated on the dev world (200 questions of 1 and 2 hops each; never
# the test world). Each point is an experiment folder; results.md has its paired intervals against the base.
set -euo pipefail
cd "$(dirname "$0")/../.."
for lr in "$@"; do
  npm run -s experiment -- --out "results/sweep-36/lr-$lr" --arms base,drzero,piplay --seeds 1 --iterations 1 \
    --eval-world dev --eval-per-hop 200 --eval-hops 1,2 --eval-batch 400 --probe-questions 0 \
    --lr "$lr" --examiner-lr "$lr" $([ -d "results/sweep-36/lr-$lr" ] && echo --resume)
done
