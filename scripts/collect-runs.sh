#!/usr/bin/env bash
# Copies the finished runs of a long search or experiment that runs in another worktree into this one, logs only
# (no weights, checkpoints or locks): bash scripts/collect-runs.sh /work/exp results/dev-search-47
# For each experiment folder (one with a results.md), its reports and each run of runs/ that has its result.json;
# a run still going stays where it runs.
set -euo pipefail
from=${1:?usage: collect-runs.sh WORKTREE FOLDER}
folder=${2:?usage: collect-runs.sh WORKTREE FOLDER}
cd "$(dirname "$0")/.."
copy() { bash scripts/copy-logs.sh "$from/$1" "$1"; } # a folder of $from, into the same place here
(cd "$from" && find "$folder" -name results.md -printf '%h\n') | while read -r point; do
  copy "$point"
  for run in "$from/$point"/runs/*/; do
    [ -e "$run/result.json" ] || continue
    copy "$point/runs/$(basename "$run")"
    echo "$point/runs/$(basename "$run")"
  done
done
