#!/usr/bin/env bash
# Issue 36's experiment: the shipped default with the demo preset (its settings chosen on the dev world,
# results/sweep-36), base, Dr. Zero and π-Play with full, partial and GT context, seeds 1-3, full self-play,
# evaluated on the test world (200 questions of each of 1 and 2 hops, never seen by pretraining, self-play or the
# sweep). It resumes: stop it with Ctrl-C and run this again; finished runs are kept (their logs are in git,
# their checkpoints are not, so a run stopped on another machine starts again).
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/experiment-36
npm run -s experiment -- --out "$out" --preset demo --seeds 1,2,3 --arms base,drzero,piplay,partial,gt \
  --eval-world test --eval-per-hop 200 --eval-hops 1,2 --eval-batch 400 \
  $([ -e "$out/results.md" ] || [ -d "$out/runs" ] && echo --resume)
