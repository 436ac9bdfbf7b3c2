#!/usr/bin/env bash
# npm run scale-check: π-Play at scale on TRL (scale/, docs/at-scale.md), checked here on the embedded tiny model.
#   1. a virtual environment with the versions scale/pyproject.toml pins, from pip's package index (made once, then
#      reused: it lives in ~/.cache/piplay, named by the pins' hash; $PIPLAY_SCALE_VENV names another);
#   2. piplay's side: its student and examiner steps (scripts/scale-check/piplay-step.ts), and a one-step run whose
#      questions `npm run dataset` writes as JSONL and parquet;
#   3. the Python tests (scale/tests: TRL's SDFT and SDPO trainers on that JSONL, the loss terms, the self mode, the
#      export of a chat_template.jinja base), then the cross-check (TRL's steps replayed on piplay's rollouts);
#   4. an iteration on 2 processes (accelerate, gloo) from the world to a student folder, and piplay's held-out EM
#      (npm run eval) of the base and of that student.
# It ends with one line: the cross-check's largest relative difference, the iteration, and the EM before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { echo "scale-check: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

# -- 1. the virtual environment
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null || fail "no $PYTHON: the scale check needs Python 3.11 or newer (set \$PYTHON)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "$PYTHON is older than 3.11; set \$PYTHON"
pins=$("$PYTHON" -c '
import tomllib
p = tomllib.load(open("scale/pyproject.toml", "rb"))["project"]
print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))')
hash=$(printf '%s\n' "$pins" | sha256sum | cut -c1-16)
VENV=${PIPLAY_SCALE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/piplay/scale-venv-$hash}
if [ -f "$VENV/.piplay-pins" ] && [ "$(cat "$VENV/.piplay-pins")" = "$pins" ]; then
  say "reusing the virtual environment $VENV"
else
  say "making a virtual environment in $VENV with scale/pyproject.toml's pinned versions from pip's package index"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  printf '%s\n' "$pins" >"$VENV/requirements.txt"
  # One retry per request: an index that cannot be reached fails in seconds, not after pip's five backed-off retries.
  # pip's output goes to a log (its warnings about an extra index it cannot reach are many), shown when it fails.
  log=$(mktemp "${TMPDIR:-/tmp}/piplay-scale-pip.XXXXXX")
  if ! PIP_RETRIES=${PIP_RETRIES:-1} "$VENV/bin/pip" install --disable-pip-version-check --progress-bar off \
    -r "$VENV/requirements.txt" >"$log" 2>&1; then
    grep -v '^WARNING: \(Retrying\|Location\)' "$log" | tail -n 20 >&2
    rm -rf "$VENV" "$log"
    fail "pip could not install scale/pyproject.toml's pinned versions (torch, transformers, trl, ...): it needs a \
package index that has them, the public PyPI or the one pip is configured with (pip config list; \$PIP_INDEX_URL). \
Nothing was kept; run npm run scale-check again once pip reaches an index."
  fi
  rm -f "$log"
  printf '%s' "$pins" >"$VENV/.piplay-pins"
fi
PY="$VENV/bin/python"
export PYTHONPATH="$ROOT/scale${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1
export TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/piplay-scale-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
run() {
  # A step's output goes to its log; on failure the log's end is shown.
  local log="$WORK/$1.log"
  shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    fail "failed: $*"
  fi
}

# -- 2. piplay's side
say "piplay's student and examiner steps on the tiny model"
run piplay-step npx tsx scripts/scale-check/piplay-step.ts "$WORK/piplay.json"
say "a one-step piplay run, and npm run dataset of its questions"
run train npx tsx src/cli/train.ts --out "$WORK/run" --preset demo --iterations 1 --examiner-steps 1 \
  --student-steps 1 --examiner-batch 4 --student-batch 2 --n 2 --eval-at-start off --eval-per-hop 0 \
  --examiner-samples 1 --generation-rounds 1 --rollout-samples 0
run dataset npx tsx src/cli/dataset.ts --run "$WORK/run" --out "$WORK/data.jsonl"
run dataset-parquet npx tsx src/cli/dataset.ts --run "$WORK/run" --out "$WORK/data.parquet"

# -- 3. tests and the cross-check
say "Python tests"
export PIPLAY_STEP_JSON="$WORK/piplay.json" PIPLAY_DATASET="$WORK/data.jsonl"
run pytest "$PY" -m pytest -q -p no:cacheprovider scale/tests -k "not test_crosscheck_against_piplay"
grep -E '^[0-9]+ passed' "$WORK/pytest.log" | sed 's/^/scale-check: pytest: /' >&2
say "cross-check against piplay"
run crosscheck "$PY" -m piplay_scale.crosscheck "$WORK/piplay.json"
grep '^cross-check:' "$WORK/crosscheck.log" | sed 's/^/scale-check: /' >&2
maxdiff=$(sed -n 's/^cross-check: max rel diff \([^ ]*\) .*/\1/p' "$WORK/crosscheck.log")

# -- 4. two processes
E=1
S=2
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
say "an iteration on 2 processes: $E examiner and $S student steps"
run iteration "$VENV/bin/accelerate" launch --config_file scale/configs/cpu-2-processes.yaml --main_process_port "$port" \
  -m piplay_scale.run --out "$WORK/scale" --preset demo --iterations 1 --examiner-steps "$E" --student-steps "$S" \
  --examiner-batch 4 --student-batch 2 --n 4 --examiner-samples 1 --empty-updates apply
summary=$("$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["processes"], format(s["lambda"][-1], "g"), format(s["distill_mean"], ".4g"))' "$WORK/scale/summary.json")
read -r processes lambda dmean <<<"$summary"
[ "$processes" = 2 ] || fail "the iteration ran on $processes processes, not 2"
"$PY" -c 'import sys; sys.exit(not float(sys.argv[1]) > 0)' "$dmean" || fail "D mean is $dmean: the teacher gave no signal"

say "held-out EM of the base and of the student trained on TRL (npm run eval)"
em() {
  run "eval-$1" npx tsx src/cli/eval.ts --model "$2"
  # The last line of npm run eval is its metrics as JSON.
  "$PY" -c '
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("{") and "emByHop" in l][-1]
print(format(100 * json.loads(line)["em"], ".1f") + "%")' "$WORK/eval-$1.log"
}
before=$(em base public/models/piplay-tiny)
after=$(em student "$WORK/scale/student")

echo "scale-check: cross-check max rel diff $maxdiff; $processes processes, $E examiner + $S student steps, lambda $lambda, D mean $dmean; student EM before $before after $after"
