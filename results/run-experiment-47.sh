#!/usr/bin/env bash
# Issue 47's experiment: what π-Play's gain is owed to. Base, Dr. Zero, the self control (the same EMA teacher
# reading the student's own prompt), π-Play (full QCP) and π-Play with GT context, seeds 1-5, 3 iterations of the
# demo preset, each trained arm at its own dev-world choice (results/dev-search-47/choice.json, made by
# results/dev-search-47/run.sh before this runs), evaluated on the test world after every iteration (200 questions
# of each of 1 and 2 hops, never seen by pretraining, self-play or the dev search). It resumes: stop it with Ctrl-C
# and run this again; finished runs are kept (their logs are committed, their checkpoints are not).
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/experiment-47
choice=results/dev-search-47/choice.json
[ -e "$choice" ] || { echo "run-experiment-47: $choice is missing: run results/dev-search-47/run.sh first" >&2; exit 1; }
npm run -s experiment -- --out "$out" --preset demo --seeds 1,2,3,4,5 --arms base,drzero,self,piplay,gt \
  --arm-settings "$choice" --iterations 3 --eval-world test --eval-per-hop 200 --eval-hops 1,2 --eval-batch 400 \
  $([ -d "$out/runs" ] && echo --resume)
