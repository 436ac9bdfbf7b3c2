// hidden's `keep` (CausalLM.hidden): the last layer's attention output projection and MLP run on the kept rows only.
// The kept rows' hidden states and every gradient equal those of the whole pass gathered at those rows (full
// training and LoRA on a BF16 base, with and without activation recompute, Llama, Qwen2's biases and Qwen3's q/k
// norms, rows kept out of order and twice); a prefill that keeps each row's last column (only those queries attend
// in the last layer) or none leaves the same cache and gives the same last rows.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { mul, sum } from '../../../src/gpu/ops/elementwise.ts';
import { gatherRows } from '../../../src/gpu/ops/layout.ts';
import type { DType } from '../../../src/gpu/tensor.ts';
import type { ModelConfig } from '../../../src/model/config.ts';
import type { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { testEngine } from '../../helpers/engine.ts';
import { PADDED_BATCH, trainableModel } from '../../helpers/trainable-model.ts';
import { expectClose } from '../../helpers/compare.ts';
import { randn } from '../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

const base = tinyConfig({ vocabSize: 50, hidden: 32, layers: 3, heads: 4, kvHeads: 2 });
const archs: [string, ModelConfig][] = [
  ['Llama', base],
  ['Qwen2 (biases)', { ...base, attentionBias: true }],
  ['Qwen3 (q/k norms)', { ...base, qkNorm: true }],
];
const batch = PADDED_BATCH;
const D = base.hidden;
/** Out of order, one twice. */
const keep = Int32Array.from([11, 3, 8, 8, 0, 5]);

function model(cfg: ModelConfig, lora: boolean, frozen: DType): CausalLM {
  return trainableModel(e, cfg, initWeights(cfg, { seed: 3 }), lora, frozen);
}

/** The kept rows' hidden states and the trainable tensors' gradients of Σ h·u, kept inside or gathered after. */
async function pass(m: CausalLM, inside: boolean) {
  const u = randn(keep.length * D, 5);
  const h = e.tidy(() => {
    const kept = inside ? m.hidden(batch, undefined, keep) : gatherRows(m.hidden(batch).reshape([12, D]), keep);
    e.backward(sum(mul(kept, e.tensor(u, kept.shape))));
    return e.keep(kept);
  });
  expect(h.shape).toEqual([keep.length, D]);
  const out = await h.readF32();
  h.dispose();
  const grads = await Promise.all(m.trainable().map((t) => t.grad!.readF32()));
  for (const t of m.trainable()) {
    t.grad!.dispose();
    t.grad = null;
  }
  expect(e.tapeLength).toBe(0);
  return { out, grads };
}

describe("hidden's kept rows", () => {
  const cases: [string, boolean, DType, boolean][] = [
    ['full training', false, 'f32', false],
    ['full training, recompute', false, 'f32', true],
    ['LoRA, bf16 base', true, 'bf16', false],
    ['LoRA, bf16 base, recompute', true, 'bf16', true],
  ];
  for (const [arch, cfg] of archs) {
    it.each(cases)(
      `${arch}, %s: the kept rows and every gradient equal the whole pass's`,
      async (_, lora, frozen, re) => {
        const m = model(cfg, lora, frozen);
        m.recompute = re;
        const whole = await pass(m, false);
        const kept = await pass(m, true);
        expectClose(kept.out, whole.out, 1e-5, 1e-6);
        expect(kept.grads.length).toBe(m.trainable().length);
        // The weights' gradients sum over other rows (fewer, a kept row twice): f32 sums in another order.
        kept.grads.forEach((g, i) => expectClose(g, whole.grads[i]!, 1e-4, 1e-5, `gradient ${i}`));
        m.dispose();
      },
    );
  }

  for (const [arch, cfg] of archs) {
    it(`${arch}: a prefill keeping each row's last column, or none, leaves the same cache and last rows`, async () => {
      const m = model(cfg, false, 'f32');
      m.setTrainable(false);
      const last = Int32Array.from([5, 11]);
      const run = async (kept: Int32Array | undefined) => {
        const cache = m.newCache(2, 8);
        const h = e.tidy(() => {
          const out = m.hidden(batch, cache, kept);
          return e.keep(kept ? out : gatherRows(out.reshape([12, D]), last));
        });
        const rows = await h.readF32();
        expect(h.shape).toEqual([kept?.length ?? 2, D]);
        h.dispose();
        expect(cache.length).toBe(6);
        const kv = await Promise.all([...cache.keys, ...cache.values].map((t) => t.readF32()));
        cache.dispose();
        // Only the written columns (the rows' first keys on) are compared: the rest is never read.
        return { rows, kv: kv.map((t) => t.filter((_, i) => i % (8 * 8) < 6 * 8)) };
      };
      const whole = await run(undefined);
      const lastOnly = await run(last);
      const none = await run(new Int32Array(0));
      expectClose(lastOnly.rows, whole.rows, 1e-5, 1e-6);
      expect(none.rows.length).toBe(0);
      for (const other of [lastOnly, none]) whole.kv.forEach((t, i) => expectClose(other.kv[i]!, t, 0, 0));
      m.dispose();
    });
  }

  it('names a kept row outside the batch', () => {
    const m = model(base, false, 'f32');
    expect(() => e.tidy(() => m.hidden(batch, undefined, Int32Array.of(3, 12)))).toThrow(
      /kept row 12 is outside the 2x6 batch/,
    );
    m.dispose();
  });
});
