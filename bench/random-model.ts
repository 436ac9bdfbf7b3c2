// Models of a config's shapes with seeded random weights, and their throughput rows: real model shapes without
// their weights (npm run bench model, the GPU benchmark).
import type { Engine } from '../src/gpu/engine.ts';
import { expectedTensors, parseConfig } from '../src/model/config.ts';
import { CausalLM } from '../src/model/decoder.ts';
import { throughput } from './throughput.ts';
import { type Roofline, tokenBounds } from './roofline.ts';
import { fmt } from './timing.ts';

/** A model of `config`'s shapes with seeded random weights (uniform, ±0.035; norms 1), in f32. */
export function randomModel(e: Engine, config: object): CausalLM {
  const cfg = parseConfig(config);
  let seed = 1;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.07;
  const specs = new Map(expectedTensors(cfg).map((s) => [s.name, s.shape]));
  return CausalLM.fromHost(e, cfg, (name) => {
    const shape = specs.get(name);
    if (!shape) return undefined;
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (name.endsWith('norm.weight')) data.fill(1);
    else for (let i = 0; i < n; i++) data[i] = rand();
    return { data, shape: [...shape] };
  });
}

/** How much each random-weight model row times: decoded tokens, and the training batch and steps. */
export interface RandomModelPlan {
  warmTokens: number;
  newTokens: number;
  batch: number;
  time: number;
  steps: number;
}

/** The header of the lines benchRandomModel prints. */
export const RANDOM_MODEL_HEADER = '  model              params |  b=1 tok/s  b=8 tok/s | train tok/s';

/**
 * Decode tokens/s at batch 1 and 8 and training tokens/s of `config`'s shapes with random weights: prints one
 * line under RANDOM_MODEL_HEADER and returns the row.
 */
export async function benchRandomModel(
  e: Engine,
  name: string,
  config: object,
  plan: RandomModelPlan,
  roofline?: Roofline,
): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const model = randomModel(e, config);
  const V = model.cfg.vocabSize;
  const { decode1, decode8, train } = await throughput(e, model, {
    ...plan,
    prompt: (b) => Array.from({ length: 16 }, (_, t) => (b * 31 + t * 7 + 1) % V),
    lr: 1e-5,
  });
  const params = model.numParameters();
  const bound = roofline && { b1: tokenBounds(roofline, params, 1), b8: tokenBounds(roofline, params, 8) };
  console.log(
    `  ${name.padEnd(14)} ${String(params).padStart(10)} | ${fmt(decode1, 1)} ${fmt(decode8, 1)} | ` +
      `${fmt(train, 1)} (batch ${plan.batch} x ${plan.time})` +
      (bound ? `; roofline ${fmt(bound.b1.decode, 0)} ${fmt(bound.b8.decode, 0)} | ${fmt(bound.b1.train, 0)}` : ''),
  );
  model.dispose();
  return {
    op: 'model',
    model: name,
    params,
    decodeTokPerSecB1: decode1,
    decodeTokPerSecB8: decode8,
    trainTokPerSec: train,
    ...(bound
      ? { rooflineDecodeB1: bound.b1.decode, rooflineDecodeB8: bound.b8.decode, rooflineTrain: bound.b1.train }
      : {}),
    trainBatch: [plan.batch, plan.time],
    seconds: (performance.now() - t0) / 1000,
  };
}
