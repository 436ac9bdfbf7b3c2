#!/usr/bin/env bash
# Copies a run's or an experiment's folder SRC into DST (made where missing), logs only: not the weights
# (checkpoints/, student/), the folder's lock, or an experiment's runs/ (each run is copied on its own). Only those
# entries of SRC itself are left out, not ones of the same name deeper down.
#   bash scripts/copy-logs.sh SRC DST
set -euo pipefail
src=${1:?usage: copy-logs.sh SRC DST}
dst=${2:?usage: copy-logs.sh SRC DST}
[ -d "$src" ] || { echo "copy-logs: $src is not a folder" >&2; exit 1; }
mkdir -p "$dst"
(cd "$src" && tar cf - --anchored --exclude ./checkpoints --exclude ./student --exclude ./piplay.lock --exclude ./runs .) |
  (cd "$dst" && tar xf -)
