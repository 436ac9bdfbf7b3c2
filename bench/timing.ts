// Timing helpers: warm up, then time batches of calls until a minimum wall time, syncing the GPU.
import type { Engine } from '../src/gpu/engine.ts';

export interface Timing {
  msPerCall: number;
  calls: number;
}

/** Times `fn` (which enqueues GPU work) including a final GPU sync; returns ms per call. */
export async function timeGpu(e: Engine, fn: () => void, minMs = 400, warmup = 2): Promise<Timing> {
  for (let k = 0; k < warmup; k++) fn();
  await e.sync();
  let calls = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (elapsed < minMs || calls < 3) {
    fn();
    calls++;
    if (calls % 4 === 0 || elapsed + 50 > minMs) await e.sync();
    elapsed = performance.now() - t0;
  }
  await e.sync();
  return { msPerCall: (performance.now() - t0) / calls, calls };
}

export function fmt(x: number, digits = 2): string {
  return x.toFixed(digits).padStart(8);
}
