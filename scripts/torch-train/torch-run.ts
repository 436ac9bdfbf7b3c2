// The training run that test/assets/torch-train/ replays in PyTorch: its model, initial weights and
// batches, built the same way by the test and by the fixture generator (scripts/torch-train/).
import { readFileSync } from 'node:fs';
import { Rng } from '../../src/env/random.ts';
import { initWeights, tinyConfig, type TinyConfigOptions } from '../../src/model/init.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { copyTaskBatch } from '../../src/pretrain/copy-task.ts';
import type { Batch } from '../../src/pretrain/pack.ts';
import type { TrainSettings } from '../../src/pretrain/train.ts';

export const TORCH_TRAIN_DIR = new URL('../../test/assets/torch-train/', import.meta.url);

export interface TorchRunSpec {
  model: TinyConfigOptions;
  initSeed: number;
  batches: { seed: string; rows: number; seq: number; alphabet: number };
  train: TrainSettings;
}

/** What PyTorch measured (torch.json): the loss of every step and, per parameter, statistics of the final weights. */
export interface TorchRunResult {
  loss: number[];
  /** name -> [sum, sum of squares, sum of w[i] * ((i * 7919) % 101 - 50)] of the trained tensor. */
  final: Record<string, [number, number, number]>;
}

export function readTorchRun(): { spec: TorchRunSpec; result: TorchRunResult | null } {
  const spec = JSON.parse(readFileSync(new URL('spec.json', TORCH_TRAIN_DIR), 'utf8')) as TorchRunSpec;
  let result: TorchRunResult | null = null;
  try {
    result = JSON.parse(readFileSync(new URL('torch.json', TORCH_TRAIN_DIR), 'utf8')) as TorchRunResult;
  } catch {
    result = null;
  }
  return { spec, result };
}

export function torchRunModel(spec: TorchRunSpec): { cfg: ModelConfig; weights: ReturnType<typeof initWeights> } {
  const cfg = tinyConfig(spec.model);
  return { cfg, weights: initWeights(cfg, { seed: spec.initSeed }) };
}

/** The run's batches: copy-task rows (copy-task.ts) over the first `alphabet` token ids. */
export function torchRunBatches(spec: TorchRunSpec): Batch[] {
  const rng = new Rng(spec.batches.seed);
  const ids = Array.from({ length: spec.batches.alphabet }, (_, i) => i);
  return Array.from({ length: spec.train.steps }, () =>
    copyTaskBatch(rng, spec.batches.rows, spec.batches.seq, { ids }),
  );
}

/** The statistics torch.json records of each final tensor. */
export function tensorStats(w: Float32Array): [number, number, number] {
  let s = 0;
  let s2 = 0;
  let p = 0;
  for (let i = 0; i < w.length; i++) {
    s += w[i]!;
    s2 += w[i]! * w[i]!;
    p += w[i]! * (((i * 7919) % 101) - 50);
  }
  return [s, s2, p];
}
