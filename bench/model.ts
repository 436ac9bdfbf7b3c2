// Decode and training throughput of the tiny fixture checkpoints (and the shipped default model if present).
import { existsSync } from 'node:fs';
import type { Engine } from '../src/gpu/engine.ts';
import { filesFromNodeFolder } from '../src/gpu/host/node-files.ts';
import { loadModel } from '../src/model/io.ts';
import { throughput } from './throughput.ts';
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
  return rows;
}
