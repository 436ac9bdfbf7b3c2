// One model's throughput, as `npm run bench model` and the GPU benchmark report it: decode tokens/s at batch 1
// and 8 (KV cache, greedy) and training tokens/s (forward + backward + AdamW) on a fixed [batch, time] batch.
import type { Engine } from '../src/gpu/engine.ts';
import { crossEntropy } from '../src/gpu/ops/log_softmax.ts';
import { AdamW } from '../src/gpu/optim/adamw.ts';
import type { CausalLM } from '../src/model/decoder.ts';
import { generate } from '../src/model/generate.ts';

export interface ThroughputPlan {
  /** Row b's prompt ids. */
  prompt: (b: number) => number[];
  /** Tokens of the warm-up generation, then of the timed one. */
  warmTokens: number;
  newTokens: number;
  /** The training batch, the timed steps (after one warm-up step) and the learning rate. */
  batch: number;
  time: number;
  steps: number;
  lr: number;
}

export interface Throughput {
  decode1: number;
  decode8: number;
  train: number;
}

export async function throughput(e: Engine, model: CausalLM, plan: ThroughputPlan): Promise<Throughput> {
  const V = model.cfg.vocabSize;
  const decode = async (B: number) => {
    const prompts = Array.from({ length: B }, (_, b) => plan.prompt(b));
    await generate(model, prompts, { maxNewTokens: plan.warmTokens, temperature: 0, random: () => 0.5 });
    const t0 = performance.now();
    await generate(model, prompts, { maxNewTokens: plan.newTokens, temperature: 0, random: () => 0.5 });
    return (B * plan.newTokens) / ((performance.now() - t0) / 1000);
  };
  const decode1 = await decode(1);
  const decode8 = await decode(8);
  const { batch: B, time: T } = plan;
  const ids = Int32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % V);
  const targets = Int32Array.from({ length: B * T }, (_, i) => (i * 7 + 10) % V);
  model.setTrainable(true);
  const opt = new AdamW(model.trainable(), { lr: plan.lr, maxGradNorm: 1 });
  const step = () =>
    e.tidy(() => {
      const logits = model.forward({ ids, batch: B, time: T });
      const loss = crossEntropy(
        logits.reshape([B * T, V]),
        e.tensor(targets, [B * T], 'i32'),
        e.tensor(new Float32Array(B * T).fill(1), [B * T]),
      );
      e.backward(loss);
      opt.step().dispose();
      opt.zeroGrad();
    });
  step();
  await e.sync();
  const t0 = performance.now();
  for (let s = 0; s < plan.steps; s++) step();
  await e.sync();
  const train = (plan.steps * B * T) / ((performance.now() - t0) / 1000);
  opt.dispose();
  model.setTrainable(false);
  return { decode1, decode8, train };
}
