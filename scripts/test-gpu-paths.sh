#!/usr/bin/env bash
# The kernel tests and the PyTorch fixtures on the paths a GPU in a browser takes (PIPLAY_FORCE_GPU_PATHS=1: every
# kernel's GPU variant, WebGPU's default limits), then on the default paths at lavapipe's subgroup widths 4 and 16
# (LP_NATIVE_VECTOR_WIDTH 128 and 512, where the CPU has AVX-512; Mesa's shader cache ignores the width, so it is
# off). Run by .ci/run after the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== kernel tests and fixtures on the GPU paths (PIPLAY_FORCE_GPU_PATHS=1)"
PIPLAY_FORCE_GPU_PATHS=1 npx vitest run test/unit/gpu test/unit/fixtures test/unit/model/decode-step.gpu.test.ts test/unit/model/generate.gpu.test.ts
if grep -q avx512f /proc/cpuinfo 2>/dev/null; then
  for width in 128 512; do
    echo "== kernel tests and fixtures at subgroup width $((width / 32)) (LP_NATIVE_VECTOR_WIDTH=$width)"
    # The adapter must report the width asked for, or this run would test the default again.
    got=$(MESA_SHADER_CACHE_DISABLE=true LP_NATIVE_VECTOR_WIDTH=$width npm run -s gpu-info 2>/dev/null | grep -o '"subgroupMaxSize": [0-9]*' | grep -o '[0-9]*$')
    if [ "$got" != "$((width / 32))" ]; then
      echo "the adapter reports subgroups of ${got:-?}, not $((width / 32)), under LP_NATIVE_VECTOR_WIDTH=$width" >&2
      exit 1
    fi
    MESA_SHADER_CACHE_DISABLE=true LP_NATIVE_VECTOR_WIDTH=$width npx vitest run test/unit/gpu/ops test/unit/fixtures
  done
else
  echo "== subgroup widths 4 and 16 skipped: this CPU has no AVX-512 (lavapipe cannot use 16 lanes)"
fi
