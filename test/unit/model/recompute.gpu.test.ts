// Activation recompute (CausalLM.recompute, src/gpu/recompute.ts): the gradients of a training pass with each
// layer recomputed on the backward pass equal, bit for bit, those of the pass that keeps every intermediate, for full
// training and for LoRA on an f32, BF16 and F16 (where the adapter has shader-f16) frozen base, over
// left-padded rows and two accumulated backward passes; and the pass keeps less memory.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { mul, sum } from '../../../src/gpu/ops/elementwise.ts';
import type { DType } from '../../../src/gpu/tensor.ts';
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

const cfg = { ...tinyConfig({ vocabSize: 50, hidden: 32, layers: 3, heads: 4, kvHeads: 2 }), qkNorm: true };
const weights = initWeights(cfg, { seed: 3 });
const batch = PADDED_BATCH;

function model(lora: boolean, frozen: DType): CausalLM {
  return trainableModel(e, cfg, weights, lora, frozen);
}

/** Two accumulated backward passes of Σ logits·u: the trainable tensors' gradients and the most bytes live. */
async function gradients(m: CausalLM, recompute: boolean) {
  m.recompute = recompute;
  await e.sync();
  e.pool.resetPeak();
  const before = e.memory().liveBytes;
  for (const seed of [1, 2]) {
    e.tidy(() => {
      const logits = m.forward(batch);
      e.backward(sum(mul(logits, e.tensor(randn(logits.size, seed), logits.shape))));
    });
  }
  await e.sync();
  const peak = e.memory().peakLiveBytes - before;
  const grads = await Promise.all(m.trainable().map((t) => t.grad!.readF32()));
  expect(e.tapeLength).toBe(0);
  return { grads, peak };
}

describe('activation recompute', () => {
  const cases: [string, boolean, DType][] = [
    ['full training', false, 'f32'],
    ['LoRA, f32 base', true, 'f32'],
    ['LoRA, bf16 base', true, 'bf16'],
    ['LoRA, f16 base', true, 'f16'],
  ];
  it.each(cases)('%s: the gradients equal those without recompute', async (_, lora, frozen) => {
    if (frozen === 'f16' && !e.info.f16) return; // this adapter has no shader-f16
    const kept = model(lora, frozen);
    const again = model(lora, frozen);
    const a = await gradients(kept, false);
    const b = await gradients(again, true);
    expect(a.grads.length).toBe(kept.trainable().length);
    const names = kept.trainable().map((t) => t.name);
    // The recomputed layer runs the same kernels on the same input and the gradients add up in the same
    // order: bit for bit the same.
    a.grads.forEach((g, k) => {
      expect(
        g.some((v) => v !== 0),
        `${names[k]} has a gradient`,
      ).toBe(true);
      expectClose(b.grads[k]!, g, 0, 0, `gradient of ${names[k]}`);
    });
    expect(b.peak, `peak with recompute ${b.peak} B vs ${a.peak} B without`).toBeLessThan(a.peak);
    kept.dispose();
    again.dispose();
  });
});
