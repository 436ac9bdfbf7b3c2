#!/usr/bin/env bash
# Issue 47's dev-world search: the same grid for every trained arm, on the dev world (never the test world).
#   teacher arms (self, piplay, gt): --lr (= --examiner-lr) 5e-5, 1e-4, 2e-4 x --lambda 0.1,0.03,0.03 (the
#     papers' instruct-base schedule, the demo preset's) and 0.3,0.1,0.1 (three times stronger)
#   drzero: --lr (= --examiner-lr) 5e-5, 1e-4, 2e-4 x --beta 0 (its paper: KL-free) and 0.01 (a small k3 KL)
# Each point: the demo preset, 2 iterations, seeds 11 and 12 (not the test seeds 1-5), held-out EM on 200 dev
# questions (100 of 1 and 2 hops) after each iteration. Every arm's choice is the point with the highest mean dev
# EM after iteration 2 (scripts/dev-search-choice.ts writes choice.json and README.md; the rule is stated there).
# Seed 11 of every point runs before seed 12, so a stopped search has a whole first seed.
# It resumes: stop it with Ctrl-C and run it again; each finished point is kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=results/dev-search-47
common=(--preset demo --iterations 2 --eval-world dev --eval-per-hop 100 --eval-hops 1,2 --eval-batch 200
  --probe-questions 0 --drift-questions 16)
run() { # folder, then the experiment's arguments
  local out=$1
  shift
  npm run -s experiment -- --out "$out" "${common[@]}" "$@" $([ -d "$out/runs" ] && echo --resume)
}
[ -e "$root/base/results.md" ] || run "$root/base" --arms base --seeds 11
for seed in 11 12; do
  for lr in 5e-5 1e-4 2e-4; do
    for lambda in 0.1,0.03,0.03 0.3,0.1,0.1; do
      out="$root/teacher-arms/lr-${lr}_lambda-${lambda}/seed-$seed"
      [ -e "$out/runs/gt-seed$seed/result.json" ] ||
        run "$out" --arms self,piplay,gt --seeds "$seed" --lr "$lr" --examiner-lr "$lr" --lambda "$lambda" \
          --eval-at-start off
    done
    for beta in 0 0.01; do
      out="$root/drzero/lr-${lr}_beta-${beta}/seed-$seed"
      [ -e "$out/runs/drzero-seed$seed/result.json" ] ||
        run "$out" --arms drzero --seeds "$seed" --lr "$lr" --examiner-lr "$lr" --beta "$beta" --eval-at-start off
    done
  done
done
npx tsx scripts/dev-search-choice.ts "$root"
