// Decode and training throughput of the tiny fixture checkpoints (and the shipped default model if present).
import { existsSync } from 'node:fs';
import type { Engine } from '../src/gpu/engine.ts';
import { crossEntropy } from '../src/gpu/ops/log_softmax.ts';
import { AdamW } from '../src/gpu/optim/adamw.ts';
import { filesFromNodeFolder } from '../src/gpu/host/node-files.ts';
import { generate } from '../src/model/generate.ts';
import { loadModel } from '../src/model/io.ts';
import { fmt } from './timing.ts';

const FIXTURES = new URL('../../shared/fixtures/', import.meta.url).pathname;
const MODELS = ['llama_tiny_bf16', 'qwen2_tiny_f16', 'qwen3_tiny_f32'];

export async function benchModel(e: Engine): Promise<Record<string, unknown>[]> {
  console.log('\ntiny models: decode (KV cache, greedy) and training (forward + backward + AdamW)');
  console.log('  model              params | decode b=1 tok/s  b=8 tok/s | train tok/s  (batch 4 x 64)');
  const rows: Record<string, unknown>[] = [];
  for (const name of MODELS) {
    const dir = FIXTURES + name;
    if (!existsSync(dir)) continue;
    const model = await loadModel(e, filesFromNodeFolder(dir), { source: name });
    const V = model.cfg.vocabSize;
    const decode = async (B: number) => {
      const prompts = Array.from({ length: B }, (_, b) => [1 + b, 2, 3, 4]);
      const newTokens = 32;
      await generate(model, prompts, { maxNewTokens: 4, temperature: 0, random: () => 0.5 });
      const t0 = performance.now();
      await generate(model, prompts, { maxNewTokens: newTokens, temperature: 0, random: () => 0.5 });
      return (B * newTokens) / ((performance.now() - t0) / 1000);
    };
    const d1 = await decode(1);
    const d8 = await decode(8);
    const [B, T] = [4, 64];
    const ids = Int32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % V);
    const targets = Int32Array.from({ length: B * T }, (_, i) => (i * 7 + 10) % V);
    model.setTrainable(true);
    const opt = new AdamW(model.trainable(), { lr: 1e-4, maxGradNorm: 1 });
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
    const steps = 5;
    const t0 = performance.now();
    for (let s = 0; s < steps; s++) step();
    await e.sync();
    const train = (steps * B * T) / ((performance.now() - t0) / 1000);
    model.setTrainable(false);
    console.log(
      `  ${name.padEnd(17)} ${String(model.numParameters()).padStart(7)} |   ${fmt(d1, 1)}   ${fmt(d8, 1)} |   ${fmt(train, 1)}`,
    );
    rows.push({
      op: 'model',
      model: name,
      params: model.numParameters(),
      decodeTokPerSecB1: d1,
      decodeTokPerSecB8: d8,
      trainTokPerSec: train,
    });
    model.dispose();
  }
  return rows;
}
