#!/usr/bin/env bash
# Runs a command N times in a row and stops at its first failure: a flaky test's check.
#   bash scripts/repeat.sh 20 npx vitest run test/e2e/app.test.ts
# Prints "run k/N: pass|FAIL (s)" per run and ends with "passed N of N in a row" or the failing run's number.
set -u
n=${1:?usage: repeat.sh N command...}
shift
for ((k = 1; k <= n; k++)); do
  start=$SECONDS
  if "$@" >"${REPEAT_LOG:-/tmp/repeat-last.log}" 2>&1; then
    echo "run $k/$n: pass ($((SECONDS - start)) s)"
  else
    echo "run $k/$n: FAIL ($((SECONDS - start)) s), output in ${REPEAT_LOG:-/tmp/repeat-last.log}"
    echo "failed at run $k of $n"
    exit 1
  fi
done
echo "passed $n of $n in a row"
