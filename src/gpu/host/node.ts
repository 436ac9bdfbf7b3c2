// The Node host: Dawn through the npm `webgpu` package, shaders read from the `shaders/` folder.
// On a machine without a GPU, Dawn runs on a CPU Vulkan driver (Mesa lavapipe; docs/testing.md).
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { GpuHost } from './types.ts';

function findShadersDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'shaders');
    if (existsSync(join(candidate, 'matmul.wgsl'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('piplay: cannot find the shaders/ folder next to the sources');
}

let cached: GpuHost | null = null;

/**
 * How long a wait for the GPU polls back to back before it polls on a timer. Dawn's Node binding polls its events
 * with setImmediate while any of its promises is pending: a busy loop that takes a whole core. A GPU's short waits
 * (a decoding step's read-back) end within the spin. A CPU driver (lavapipe, 2 cores) needs that core for the very
 * work being waited on (a 400-question evaluation: 151 s busy-polling, 108 s on a timer), and its waits are
 * longer than the timer's millisecond, so there the wait polls on the timer from the start.
 */
const SPIN_MS = 2;

/**
 * Counts the engine's waits; while one has lasted its spin (SPIN_MS, or none on a CPU driver), setImmediate
 * callbacks run on a timer (>= 1 ms).
 */
function timerPolling(): <T>(p: Promise<T>, cpuDriver: boolean) => Promise<T> {
  let waiting = 0;
  let until = 0;
  const immediate = globalThis.setImmediate;
  const patched = (fn: (...a: unknown[]) => void, ...args: unknown[]) =>
    waiting > 0 && performance.now() >= until ? setTimeout(fn, 0, ...args) : immediate(fn, ...args);
  globalThis.setImmediate = Object.assign(patched, immediate) as unknown as typeof setImmediate;
  return async (p, cpuDriver) => {
    if (waiting++ === 0) until = performance.now() + (cpuDriver ? 0 : SPIN_MS);
    try {
      return await p;
    } finally {
      waiting--;
    }
  };
}

export function nodeHost(): GpuHost {
  if (cached) return cached;
  const shadersDir = findShadersDir();
  const sources = new Map<string, string>();
  let gpu: GPU | null = null;
  const require = createRequire(import.meta.url);
  try {
    const webgpu = require('webgpu') as { create(opts: string[]): GPU; globals: object };
    // Dawn's classes (GPUBufferUsage, ...) become globals, as in a browser.
    Object.assign(globalThis, webgpu.globals);
    gpu = webgpu.create([]);
  } catch (e) {
    gpu = null;
    process.emitWarning(`piplay: could not load the npm 'webgpu' package: ${(e as Error).message}`);
  }
  cached = {
    name: 'node',
    gpu,
    waitFor: timerPolling(),
    shaderSource(name: string): string {
      let src = sources.get(name);
      if (src === undefined) {
        src = readFileSync(join(shadersDir, `${name}.wgsl`), 'utf8'); // 'lib/x' reads shaders/lib/x.wgsl
        sources.set(name, src);
      }
      return src;
    },
    missingGpuHelp:
      'No WebGPU adapter was found. On a machine without a GPU install a CPU Vulkan driver ' +
      '(as root: `bash scripts/setup-drivers.sh`, which installs Mesa lavapipe), or point ' +
      'VK_ICD_FILENAMES at one, e.g. VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json.',
  };
  return cached;
}
