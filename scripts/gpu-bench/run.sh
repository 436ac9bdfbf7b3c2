#!/bin/bash
# The GPU benchmark: scripts/gpu-bench/run.sh OUT_DIR [--small]
# Runs bench/gpu.ts (Dawn on the adapter it picks: the GPU through Vulkan where there is one) and, where
# Python has PyTorch, torch_matmul.py (the platform's BLAS); prints the tables and writes gpu-bench.json,
# torch-matmul.json and gpu-bench.log into OUT_DIR. Brings what the machine may lack from .gpu-bench/
# (scripts/gpu-bench/pack.sh): Node (where only Python is installed) and the Vulkan loader. Stops itself
# within 8 minutes. --small: tiny sizes, the dry run on a CPU driver.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-}
if [ -z "$out" ] || [ "${out#-}" != "$out" ]; then
  echo "usage: scripts/gpu-bench/run.sh OUT_DIR [--small]   (OUT_DIR: the folder the results go to)" >&2
  exit 2
fi
shift
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$root"
pack=$root/.gpu-bench
log=$out/gpu-bench.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }

node=$(command -v node || true)
if [ -n "$node" ] && ! "$node" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then node=''; fi
if [ -z "$node" ]; then
  if [ ! -f "$pack/node.xz" ]; then
    say "run.sh: no Node.js 20+ here and no $pack/node.xz; run scripts/gpu-bench/pack.sh on a machine with Node and carry .gpu-bench"
    exit 2
  fi
  mkdir -p /tmp/piplay-node
  if command -v xz >/dev/null; then xz -dc "$pack/node.xz" >/tmp/piplay-node/node
  else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$pack/node.xz" /tmp/piplay-node/node
  fi
  chmod +x /tmp/piplay-node/node
  node=/tmp/piplay-node/node
  say "run.sh: Node from the pack ($("$node" --version))"
fi
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 '; then
  export LD_LIBRARY_PATH=$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  say "run.sh: the Vulkan loader from the pack"
fi
# NVIDIA containers put the driver's Vulkan manifest outside the loader's default search path.
nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nv" ] && ! ls /usr/share/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=$nv
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv | tee -a "$log"

# The Dawn part (7 minutes at most), then the PyTorch part (1 minute at most).
if [ -f "$pack/bench.mjs" ]; then bench=("$node" "$pack/bench.mjs")
else bench=("$node" "$root/node_modules/tsx/dist/cli.mjs" bench/gpu.ts)
fi
timeout 420 "${bench[@]}" "$out" "$@" 2>&1 | grep -v 'artificially reduced' | tee -a "$log"
status=${PIPESTATUS[0]}
[ "$status" = 124 ] && say "run.sh: the Dawn benchmark ran past 7 minutes and was stopped"
# The first Python with PyTorch: the one on PATH, else the system's (Debian's python3-torch).
py=''
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
  timeout 60 "$py" scripts/gpu-bench/torch_matmul.py "$out" "$@" 2>&1 | tee -a "$log"
else
  say "run.sh: no PyTorch in python3 or /usr/bin/python3; no BLAS column"
fi
exit "$status"
