// For the tests that compare training passes: a trainable CausalLM from host weights, full training (every weight
// f32) or LoRA on a frozen base stored as `frozen` (its matrices; norms stay f32), the adapters' B set to small
// random values so that they take part in the pass from the start; and a small left-padded batch.
import type { Engine } from '../../src/gpu/engine.ts';
import type { DType } from '../../src/gpu/tensor.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { CausalLM, type TokenBatch } from '../../src/model/decoder.ts';
import type { initWeights } from '../../src/model/init.ts';
import { LoraSet } from '../../src/model/lora.ts';
import { randn } from './random.ts';

export function trainableModel(
  e: Engine,
  cfg: ModelConfig,
  weights: ReturnType<typeof initWeights>,
  lora: boolean,
  frozen: DType,
): CausalLM {
  const m = CausalLM.fromHost(
    e,
    cfg,
    (n) => weights.get(n),
    (_, shape) => (shape.length === 2 ? frozen : 'f32'),
  );
  if (lora) {
    m.lora = new LoraSet(e, cfg, { rank: 4, alpha: 8, seed: 1 });
    let seed = 10;
    for (const ad of m.lora.adapters.values()) e.write(ad.B, randn(ad.B.size, seed++, 0.05));
  }
  m.setTrainable(true);
  return m;
}

/** Two rows of 6 tokens (ids below 50), the second left-padded by two. */
export const PADDED_BATCH: TokenBatch = {
  ids: Int32Array.from([4, 9, 1, 33, 7, 2, 0, 0, 12, 5, 48, 3]),
  batch: 2,
  time: 6,
  positions: Int32Array.from([0, 1, 2, 3, 4, 5, 0, 0, 0, 1, 2, 3]),
  keyStart: Int32Array.from([0, 2]),
};
