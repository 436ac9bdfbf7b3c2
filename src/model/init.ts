// Random initialisation of a new Llama-architecture model, as Hugging Face's LlamaPreTrainedModel does
// it: every projection and the embedding ~ normal(0, initializerRange = 0.02), every RMSNorm weight 1.
// Seeded, so the same config and seed give the same weights. `tinyConfig` sizes the embedded default
// model (a few hundred thousand parameters, small enough to train on a CPU WebGPU driver).
import type { Engine } from '../gpu/engine.ts';
import { expectedTensors, type ModelConfig } from './config.ts';
import { CausalLM } from './decoder.ts';
import { mulberry32 } from './seeded.ts';

export interface TinyConfigOptions {
  vocabSize: number;
  /** Model width (default 96). */
  hidden?: number;
  /** Decoder blocks (default 3). */
  layers?: number;
  /** Query heads (default 4). */
  heads?: number;
  /** Key/value heads (default 2: grouped-query attention, as the Qwen/Llama models piplay targets). */
  kvHeads?: number;
  /** MLP width (default ~8/3 hidden rounded to a multiple of 16, Llama's SwiGLU ratio). */
  intermediate?: number;
  /** Longest sequence the model is meant for (default 1024). */
  maxPositions?: number;
  ropeTheta?: number;
  /** lm_head shares the embedding (default true: it is a large share of a tiny model). */
  tieEmbeddings?: boolean;
  bosId?: number | null;
  eosIds?: number[];
}

/** A LlamaForCausalLM config for a tiny model. */
export function tinyConfig(o: TinyConfigOptions): ModelConfig {
  const hidden = o.hidden ?? 96;
  const heads = o.heads ?? 4;
  const kvHeads = o.kvHeads ?? 2;
  if (hidden % heads !== 0) throw new Error(`tinyConfig: heads ${heads} must divide hidden ${hidden}`);
  if (heads % kvHeads !== 0) throw new Error(`tinyConfig: kvHeads ${kvHeads} must divide heads ${heads}`);
  const headDim = hidden / heads;
  if (headDim % 2 !== 0) throw new Error(`tinyConfig: head width ${headDim} must be even for RoPE`);
  return {
    arch: 'llama',
    vocabSize: o.vocabSize,
    hidden,
    intermediate: o.intermediate ?? Math.max(16, Math.round((hidden * 8) / 3 / 16) * 16),
    layers: o.layers ?? 3,
    heads,
    kvHeads,
    headDim,
    ropeTheta: o.ropeTheta ?? 10000,
    rmsEps: 1e-6,
    tieEmbeddings: o.tieEmbeddings ?? true,
    attentionBias: false,
    qkNorm: false,
    maxPositions: o.maxPositions ?? 1024,
    bosId: o.bosId ?? null,
    eosIds: o.eosIds ?? [],
    torchDtype: 'float32',
  };
}

export interface InitOptions {
  seed?: number;
  /** Standard deviation of projections and embeddings (HF's initializer_range, default 0.02). */
  initializerRange?: number;
}

/** Seeded N(0, 1) draws: mulberry32 + Box-Muller. */
function normals(seed: number): () => number {
  const uniform = mulberry32(seed);
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const v = spare;
      spare = null;
      return v;
    }
    const u = Math.max(uniform(), 1e-12);
    const r = Math.sqrt(-2 * Math.log(u));
    const th = 2 * Math.PI * uniform();
    spare = r * Math.sin(th);
    return r * Math.cos(th);
  };
}

/** Freshly initialised host weights by HF name (norms = 1, biases = 0, everything else N(0, std)). */
export function initWeights(
  cfg: ModelConfig,
  opts: InitOptions = {},
): Map<string, { data: Float32Array; shape: number[] }> {
  const std = opts.initializerRange ?? 0.02;
  const out = new Map<string, { data: Float32Array; shape: number[] }>();
  let k = 0;
  for (const spec of expectedTensors(cfg)) {
    // One stream per tensor (seeded by its position), so adding a tensor never shifts the others.
    const draw = normals(((opts.seed ?? 0) * 7919 + ++k * 104729) >>> 0);
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (spec.name.endsWith('norm.weight')) data.fill(1);
    else if (!spec.name.endsWith('.bias')) for (let i = 0; i < n; i++) data[i] = std * draw();
    out.set(spec.name, { data, shape: spec.shape });
  }
  return out;
}

/** A new randomly initialised model on the GPU. */
export function initModel(engine: Engine, cfg: ModelConfig, opts: InitOptions = {}): CausalLM {
  const host = initWeights(cfg, opts);
  return CausalLM.fromHost(engine, cfg, (name) => host.get(name));
}
