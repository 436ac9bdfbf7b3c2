// A KV cache laid out anew (KVCache.relayout) or cut to its live rows (keepRows) goes one layer at a time: each
// old layer is released as its new one is made, and submitted at once so that the pool can hand its memory on.
// Released but unsubmitted, every old layer stayed allocated until the loop ended: the old and the new cache
// whole side by side (the memory plan counts one layer: src/selfplay/memory-plan.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { bucketSize } from '../../../src/gpu/buffer-pool.ts';
import { initModel, tinyConfig } from '../../../src/model/init.ts';
import type { CausalLM } from '../../../src/model/decoder.ts';
import { testEngine } from '../../helpers/engine.ts';

let e: Engine;
let model: CausalLM;
beforeAll(async () => {
  e = await testEngine();
  model = initModel(e, tinyConfig({ vocabSize: 64, hidden: 32, layers: 6, heads: 4, kvHeads: 2 }), { seed: 3 });
});
afterAll(() => model.dispose());

/** Bytes of one layer's keys and values for `rows` rows of `capacity` positions, as the pool allocates them. */
const layerBytes = (rows: number, capacity: number) =>
  2 * bucketSize(rows * model.cfg.kvHeads * capacity * model.cfg.headDim * 4);

/** The pool's peak allocated bytes over `fn`, above what was allocated before it. */
async function peakAbove(fn: () => void): Promise<number> {
  await e.sync();
  e.pool.trim();
  e.pool.resetPeak();
  const before = e.memory().allocatedBytes;
  fn();
  await e.sync();
  return e.memory().peakAllocatedBytes - before;
}

describe('a KV cache re-laid out holds about one layer more than the new cache, not a second cache', () => {
  it('relayout', async () => {
    const cache = model.newCache(4, 2048);
    try {
      const moves = [0, 1, 2, 3].map((b) => ({ srcRow: b, srcStart: 100, dstStart: 50 + b, count: 1500 }));
      const extra = await peakAbove(() => cache.relayout!(2400, moves));
      // Above the old cache (allocated before): the new one, less the old layers already given back; at most
      // two old layers (one and the pool's slack) are still there at the peak.
      const L = model.cfg.layers;
      console.log(`relayout: ${extra} bytes above the old cache; a new layer is ${layerBytes(4, 2400)}`);
      expect(extra).toBeLessThanOrEqual(L * layerBytes(4, 2400) - (L - 2) * layerBytes(4, 2048));
    } finally {
      cache.dispose();
    }
  });

  it('keepRows', async () => {
    const cache = model.newCache(8, 2048);
    try {
      const extra = await peakAbove(() => cache.keepRows([0, 2, 4, 6, 7]));
      console.log(`keepRows: ${extra} bytes above the old cache; a new layer is ${layerBytes(5, 2048)}`);
      expect(extra).toBeLessThanOrEqual(2 * layerBytes(8, 2048));
    } finally {
      cache.dispose();
    }
  });
});
