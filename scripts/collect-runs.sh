#!/usr/bin/env bash
# Copies the finished points of a long search or experiment run in another worktree into this one, logs only
# (no weights, checkpoints or locks): bash scripts/collect-runs.sh /work/exp results/dev-search-47
# A point is finished when its results.md is written; unfinished ones stay where they run.
set -euo pipefail
from=${1:?usage: collect-runs.sh WORKTREE FOLDER}
folder=${2:?usage: collect-runs.sh WORKTREE FOLDER}
cd "$(dirname "$0")/.."
(cd "$from" && find "$folder" -name results.md -printf '%h\n') | while read -r point; do
  mkdir -p "$point"
  (cd "$from/$point" && tar cf - --exclude checkpoints --exclude student --exclude piplay.lock .) | (cd "$point" && tar xf -)
  echo "$point"
done
