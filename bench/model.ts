// Decode and training throughput of the tiny fixture checkpoints, then of the real small models' shapes
// (SmolLM2-135M, Qwen2.5-0.5B, Qwen3-0.6B: their configs and vocabularies, random f32 weights; minutes on a
// CPU driver, so a short plan: 4 new tokens, one training step of 1 x 64 tokens).
import { existsSync, readFileSync } from 'node:fs';
import type { Engine } from '../src/gpu/engine.ts';
import { filesFromNodeFolder } from '../src/gpu/host/node-files.ts';
import { loadModel } from '../src/model/io.ts';
import { benchRandomModel, RANDOM_MODEL_HEADER } from './random-model.ts';
import { throughput } from './throughput.ts';
import { fmt } from './timing.ts';

const FIXTURES = new URL('../../shared/fixtures/', import.meta.url).pathname;
const MODELS = ['llama_tiny_bf16', 'qwen2_tiny_f16', 'qwen3_tiny_f32'];
const CONFIGS = new URL('./configs/', import.meta.url).pathname;
const REAL: [string, string][] = [
  ['SmolLM2-135M', 'smollm2-135m.json'],
  ['Qwen2.5-0.5B', 'qwen2.5-0.5b-instruct.json'],
  ['Qwen3-0.6B', 'qwen3-0.6b.json'],
];

export async function benchModel(e: Engine): Promise<Record<string, unknown>[]> {
  console.log('\ntiny models: decode (KV cache, greedy) and training (forward + backward + AdamW)');
  console.log('  model              params | decode b=1 tok/s  b=8 tok/s | train tok/s  (batch 4 x 64)');
  const rows: Record<string, unknown>[] = [];
  for (const name of MODELS) {
    const dir = FIXTURES + name;
    if (!existsSync(dir)) continue;
    const model = await loadModel(e, filesFromNodeFolder(dir), { source: name });
    const {
      decode1: d1,
      decode8: d8,
      train,
    } = await throughput(e, model, {
      prompt: (b) => [1 + b, 2, 3, 4],
      warmTokens: 4,
      newTokens: 32,
      batch: 4,
      time: 64,
      steps: 5,
      lr: 1e-4,
    });
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
  console.log('\nreal model shapes, random f32 weights: decode (KV cache, greedy) and training');
  console.log(RANDOM_MODEL_HEADER);
  const plan = { warmTokens: 1, newTokens: 4, batch: 1, time: 64, steps: 1 };
  for (const [name, file] of REAL)
    rows.push(await benchRandomModel(e, name, JSON.parse(readFileSync(CONFIGS + file, 'utf8')) as object, plan));
  return rows;
}
