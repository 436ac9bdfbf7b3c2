#!/bin/bash
# Packs what scripts/gpu-bench/run.sh needs on a GPU machine that may lack it, into .gpu-bench/ (ignored
# by git; carry it along): the benchmark bundled into one file (bench.mjs, tfjs-backend-webgpu inside),
# Dawn for Node (node_modules/webgpu, linux-x64 only), this machine's Node binary (node.xz) and the Vulkan
# loader (lib/libvulkan.so.1). About 45 MiB. Run it here, after npm ci.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
pack=.gpu-bench
rm -rf "$pack"
mkdir -p "$pack/lib" "$pack/node_modules/webgpu/dist/linux-x64"
npx esbuild bench/gpu.ts --bundle --platform=node --format=esm --target=node20 --external:webgpu \
  --log-level=warning --outfile="$pack/bench.mjs" \
  --banner:js="import { createRequire as piplayRequire } from 'node:module'; const require = piplayRequire(import.meta.url);"
cp node_modules/webgpu/package.json node_modules/webgpu/index.js "$pack/node_modules/webgpu/"
cp node_modules/webgpu/dist/linux-x64/dawn.node "$pack/node_modules/webgpu/dist/linux-x64/"
xz -6 -T1 -c "$(command -v node)" >"$pack/node.xz"
loader=$(ldconfig -p | awk '/libvulkan.so.1 .*x86-64/ { print $NF; exit }')
if [ -z "$loader" ]; then
  echo "pack: no libvulkan.so.1 on this machine (apt-get install libvulkan1); the pack has no Vulkan loader" >&2
else
  cp -L "$loader" "$pack/lib/libvulkan.so.1"
fi
du -sh "$pack"
