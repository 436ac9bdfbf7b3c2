// The HF `config.json` of a decoder-only model, normalised into the few numbers piplay's decoder needs.
// Three architectures are understood: LlamaForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM. They share
// one block (RMSNorm -> GQA attention with RoPE -> RMSNorm -> SwiGLU MLP) and differ only in:
//   llama  no biases, head_dim = hidden / heads unless given
//   qwen2  q/k/v projections carry biases (o_proj does not)
//   qwen3  no biases, per-head RMSNorm on q and k (q_norm, k_norm) before RoPE, explicit head_dim
// Anything that changes the maths beyond that (RoPE scaling, sliding windows, other activations, o_proj or
// MLP biases) is refused here with a message, rather than silently computed wrong later.

export type Arch = 'llama' | 'qwen2' | 'qwen3';
export type TorchDtype = 'float32' | 'float16' | 'bfloat16';

export interface ModelConfig {
  arch: Arch;
  vocabSize: number;
  /** Model width D (`hidden_size`). */
  hidden: number;
  /** MLP width (`intermediate_size`). */
  intermediate: number;
  layers: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads (GQA); divides `heads`. */
  kvHeads: number;
  /** Per-head width; `heads * headDim` need not equal `hidden` (Qwen3). */
  headDim: number;
  ropeTheta: number;
  rmsEps: number;
  /** lm_head shares model.embed_tokens.weight. */
  tieEmbeddings: boolean;
  /** q_proj, k_proj and v_proj carry biases (Qwen2). o_proj never does in piplay. */
  attentionBias: boolean;
  /** Per-head RMSNorm of q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  maxPositions: number;
  bosId: number | null;
  /** End-of-sequence ids from config.json (may be empty; the tokenizer and generation_config add more). */
  eosIds: number[];
  torchDtype: TorchDtype;
}

/** One parameter tensor as HF names it. */
export interface TensorSpec {
  name: string;
  shape: number[];
}

const ARCHITECTURES: Record<string, Arch> = {
  LlamaForCausalLM: 'llama',
  Qwen2ForCausalLM: 'qwen2',
  Qwen3ForCausalLM: 'qwen3',
};
const CLASS_OF: Record<Arch, string> = {
  llama: 'LlamaForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};
const SUPPORTED = 'piplay supports LlamaForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM';

// HF's defaults for fields a config.json may leave out (transformers' LlamaConfig / Qwen2Config / Qwen3Config).
const DEFAULT_MAX_POSITIONS: Record<Arch, number> = { llama: 2048, qwen2: 32768, qwen3: 32768 };
const DEFAULT_RMS_EPS = 1e-6;
const DEFAULT_ROPE_THETA = 10000;
const QWEN3_DEFAULT_HEAD_DIM = 128;

function fail(field: string, value: unknown, want: string): never {
  throw new Error(`config.json: ${field} = ${show(value)} is not supported; ${want}`);
}

function show(v: unknown): string {
  if (v === undefined) return '(missing)';
  try {
    const s = JSON.stringify(v);
    return s.length > 120 ? s.slice(0, 117) + '...' : s;
  } catch {
    return String(v);
  }
}

/**
 * raw[field] when `ok` accepts it, else an error saying it must be `what`; a missing (or null) field gives
 * the fallback, or an error naming the field when there is none.
 */
function read<T>(
  raw: Record<string, unknown>,
  field: string,
  fallback: T | undefined,
  ok: (v: unknown) => v is T,
  what: string,
): T {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw new Error(`config.json: required field ${field} is missing (${what})`);
  }
  if (!ok(v)) throw new Error(`config.json: ${field} = ${show(v)} must be ${what}`);
  return v;
}

const isPositiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;
const isPositiveNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';

function positiveInt(raw: Record<string, unknown>, field: string, fallback?: number): number {
  const v = read(raw, field, fallback, isPositiveInt, 'a positive integer');
  // Past these no model piplay could hold is possible: refused before any size is computed from them.
  const max = DIMENSION_MAX[field];
  if (max !== undefined && v > max) fail(field, v, `piplay takes at most ${max} (${DIMENSION_WHY})`);
  return v;
}

/** The largest value each model dimension may have. */
const DIMENSION_MAX: Record<string, number> = {
  vocab_size: 1 << 22,
  hidden_size: 1 << 16,
  intermediate_size: 1 << 18,
  num_hidden_layers: 1024,
  num_attention_heads: 1024,
  num_key_value_heads: 1024,
  head_dim: 1024,
  max_position_embeddings: 1 << 24,
};
const DIMENSION_WHY = 'far past any model a WebGPU device can hold; check config.json';

function positiveNumber(raw: Record<string, unknown>, field: string, fallback: number): number {
  return read(raw, field, fallback, isPositiveNumber, 'a positive number');
}

function bool(raw: Record<string, unknown>, field: string, fallback: boolean): boolean {
  return read(raw, field, fallback, isBool, 'true or false');
}

function tokenId(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new Error(`config.json: ${field} = ${show(v)} must be a token id (a non-negative integer)`);
  }
  return v;
}

function archOf(raw: Record<string, unknown>): Arch {
  const archs = raw['architectures'];
  if (archs !== undefined && archs !== null) {
    if (!Array.isArray(archs) || archs.length === 0 || archs.some((a) => typeof a !== 'string')) {
      throw new Error(`config.json: architectures = ${show(archs)} must be a list of class names; ${SUPPORTED}`);
    }
    if (archs.length > 1) fail('architectures', archs, `a single architecture is expected; ${SUPPORTED}`);
    const arch = ARCHITECTURES[archs[0] as string];
    if (!arch) fail('architectures', archs, SUPPORTED);
    return arch;
  }
  // No `architectures`: fall back on model_type.
  const mt = raw['model_type'];
  if (mt === 'llama' || mt === 'qwen2' || mt === 'qwen3') return mt;
  if (mt === undefined) {
    throw new Error(`config.json: neither architectures nor model_type is given; ${SUPPORTED}`);
  }
  return fail('model_type', mt, SUPPORTED);
}

/** RoPE base from `rope_theta`, or from transformers v5's `rope_parameters`; refuses any RoPE scaling. */
function ropeThetaOf(raw: Record<string, unknown>): number {
  const scaling = raw['rope_scaling'];
  if (scaling !== undefined && scaling !== null) {
    const kind =
      typeof scaling === 'object'
        ? ((scaling as Record<string, unknown>)['rope_type'] ?? (scaling as Record<string, unknown>)['type'])
        : scaling;
    if (kind !== 'default') {
      fail(
        'rope_scaling',
        scaling,
        `RoPE scaling (${show(kind)}) is not implemented; piplay supports plain RoPE (rope_scaling null)`,
      );
    }
  }
  const params = raw['rope_parameters'];
  if (params !== undefined && params !== null) {
    if (typeof params !== 'object' || Array.isArray(params)) fail('rope_parameters', params, 'an object is expected');
    const p = params as Record<string, unknown>;
    const kind = p['rope_type'] ?? p['type'] ?? 'default';
    if (kind !== 'default') {
      fail('rope_parameters.rope_type', kind, "piplay supports plain RoPE (rope_type 'default') only");
    }
    // transformers v5 keeps the base here; it takes precedence over a top-level rope_theta.
    if (p['rope_theta'] !== undefined && p['rope_theta'] !== null)
      return positiveNumber(p, 'rope_theta', DEFAULT_ROPE_THETA);
  }
  return positiveNumber(raw, 'rope_theta', DEFAULT_ROPE_THETA);
}

function dtypeOf(raw: Record<string, unknown>): TorchDtype {
  const field = raw['torch_dtype'] !== undefined ? 'torch_dtype' : 'dtype';
  const v = raw[field];
  if (v === undefined || v === null) return 'float32';
  if (v === 'float32' || v === 'float16' || v === 'bfloat16') return v;
  if (v === 'float') return 'float32';
  if (v === 'half') return 'float16';
  return fail(field, v, 'piplay supports float32, float16 and bfloat16 checkpoints');
}

/**
 * Parses an HF config.json (text or parsed object) into a ModelConfig. Throws an Error naming the field, its
 * value and what piplay supports when the model is not one piplay can run exactly.
 */
export function parseConfig(json: string | object): ModelConfig {
  let raw: unknown = json;
  if (typeof json === 'string') {
    try {
      raw = JSON.parse(json);
    } catch (e) {
      throw new Error(`config.json is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error('config.json must hold a JSON object');
  }
  const r = raw as Record<string, unknown>;
  const arch = archOf(r);

  const mt = r['model_type'];
  if (mt !== undefined && mt !== arch) {
    fail('model_type', mt, `${CLASS_OF[arch]} (from architectures) has model_type "${arch}"`);
  }

  const act = r['hidden_act'] ?? 'silu';
  if (act !== 'silu' && act !== 'swish')
    fail('hidden_act', act, 'piplay supports the SwiGLU MLP with hidden_act "silu" only');

  if (r['use_sliding_window'] === true) {
    fail(
      'use_sliding_window',
      true,
      'sliding-window attention is not implemented; piplay supports full causal attention',
    );
  }
  const layerTypes = r['layer_types'];
  if (Array.isArray(layerTypes) && layerTypes.some((t) => t !== 'full_attention')) {
    const other = layerTypes.find((t) => t !== 'full_attention');
    fail('layer_types', other, 'piplay supports "full_attention" layers only (no sliding-window layers)');
  }
  if (r['mlp_bias'] === true) fail('mlp_bias', true, 'piplay supports MLPs without biases');

  // Attention biases: Qwen2 always has q/k/v biases (and none on o_proj). Llama's and Qwen3's
  // `attention_bias` puts a bias on o_proj as well, which piplay's decoder does not implement.
  let attentionBias: boolean;
  if (arch === 'qwen2') {
    attentionBias = true;
  } else {
    const ab = bool(r, 'attention_bias', false);
    if (ab) {
      fail(
        'attention_bias',
        true,
        `in ${CLASS_OF[arch]} it adds an o_proj bias, which piplay does not implement; piplay supports ` +
          "attention_bias false (or Qwen2's q/k/v biases)",
      );
    }
    attentionBias = false;
  }

  const vocabSize = positiveInt(r, 'vocab_size');
  const hidden = positiveInt(r, 'hidden_size');
  const intermediate = positiveInt(r, 'intermediate_size');
  const layers = positiveInt(r, 'num_hidden_layers');
  const heads = positiveInt(r, 'num_attention_heads');
  const kvHeads = positiveInt(r, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) {
    throw new Error(
      `config.json: num_key_value_heads = ${kvHeads} does not divide num_attention_heads = ${heads}; ` +
        'grouped-query attention needs each key/value head shared by a whole number of query heads',
    );
  }
  let headDim: number;
  if (r['head_dim'] !== undefined && r['head_dim'] !== null) {
    headDim = positiveInt(r, 'head_dim');
  } else if (arch === 'qwen3') {
    headDim = QWEN3_DEFAULT_HEAD_DIM; // Qwen3Config's default, as transformers applies it
  } else {
    if (hidden % heads !== 0) {
      throw new Error(
        `config.json: num_attention_heads = ${heads} does not divide hidden_size = ${hidden}, and no head_dim is given`,
      );
    }
    headDim = hidden / heads;
  }
  if (headDim % 2 !== 0) throw new Error(`config.json: head_dim = ${headDim} must be even for RoPE`);

  const eosRaw = r['eos_token_id'];
  let eosIds: number[];
  if (eosRaw === undefined || eosRaw === null) eosIds = [];
  else if (Array.isArray(eosRaw)) eosIds = eosRaw.map((v, i) => tokenId(v, `eos_token_id[${i}]`));
  else eosIds = [tokenId(eosRaw, 'eos_token_id')];
  const bosRaw = r['bos_token_id'];
  const bosId = bosRaw === undefined || bosRaw === null ? null : tokenId(bosRaw, 'bos_token_id');
  // An end-of-text id the model cannot produce would never stop a rollout.
  for (const [field, id] of [
    ...eosIds.map(
      (id, i) => [eosRaw !== null && Array.isArray(eosRaw) ? `eos_token_id[${i}]` : 'eos_token_id', id] as const,
    ),
    ...(bosId === null ? [] : [['bos_token_id', bosId] as const]),
  ]) {
    if (id >= vocabSize) fail(field, id, `a token id must be below vocab_size = ${vocabSize}`);
  }

  return {
    arch,
    vocabSize,
    hidden,
    intermediate,
    layers,
    heads,
    kvHeads,
    headDim,
    ropeTheta: ropeThetaOf(r),
    rmsEps: positiveNumber(r, 'rms_norm_eps', DEFAULT_RMS_EPS),
    tieEmbeddings: bool(r, 'tie_word_embeddings', false),
    attentionBias,
    qkNorm: arch === 'qwen3',
    maxPositions: positiveInt(r, 'max_position_embeddings', DEFAULT_MAX_POSITIONS[arch]),
    bosId,
    eosIds,
    torchDtype: dtypeOf(r),
  };
}

/**
 * A valid HF config.json object for `cfg` (JSON.stringify it to write the file). Fields of `base` (the
 * config.json the model was loaded from) are kept unless piplay's normalised values replace them.
 */
export function configToJson(cfg: ModelConfig, base?: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (base) {
    for (const [k, v] of Object.entries(base)) {
      if (k === 'rope_parameters' || k === 'dtype') continue; // rewritten below as rope_theta / torch_dtype
      out[k] = v;
    }
  }
  Object.assign(out, {
    architectures: [CLASS_OF[cfg.arch]],
    model_type: cfg.arch,
    vocab_size: cfg.vocabSize,
    hidden_size: cfg.hidden,
    intermediate_size: cfg.intermediate,
    num_hidden_layers: cfg.layers,
    num_attention_heads: cfg.heads,
    num_key_value_heads: cfg.kvHeads,
    hidden_act: 'silu',
    max_position_embeddings: cfg.maxPositions,
    rms_norm_eps: cfg.rmsEps,
    rope_theta: cfg.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: cfg.tieEmbeddings,
    torch_dtype: cfg.torchDtype,
    bos_token_id: cfg.bosId,
    eos_token_id: cfg.eosIds.length === 0 ? null : cfg.eosIds.length === 1 ? cfg.eosIds[0] : [...cfg.eosIds],
    attention_dropout: 0.0,
  });
  if (cfg.arch === 'qwen3' || cfg.headDim * cfg.heads !== cfg.hidden) out['head_dim'] = cfg.headDim;
  if (cfg.arch === 'llama' || cfg.arch === 'qwen3') out['attention_bias'] = false;
  if (cfg.arch === 'llama') out['mlp_bias'] = false;
  if (cfg.arch === 'qwen2' || cfg.arch === 'qwen3') out['use_sliding_window'] = false;
  if ('layer_types' in out) out['layer_types'] = Array.from({ length: cfg.layers }, () => 'full_attention');
  return out;
}

/** The HF parameter names and shapes of a checkpoint for `cfg`, in HF's module order. */
export function expectedTensors(cfg: ModelConfig): TensorSpec[] {
  const D = cfg.hidden;
  const q = cfg.heads * cfg.headDim;
  const kv = cfg.kvHeads * cfg.headDim;
  const I = cfg.intermediate;
  const out: TensorSpec[] = [{ name: 'model.embed_tokens.weight', shape: [cfg.vocabSize, D] }];
  for (let l = 0; l < cfg.layers; l++) {
    const p = `model.layers.${l}.`;
    out.push({ name: p + 'self_attn.q_proj.weight', shape: [q, D] });
    if (cfg.attentionBias) out.push({ name: p + 'self_attn.q_proj.bias', shape: [q] });
    out.push({ name: p + 'self_attn.k_proj.weight', shape: [kv, D] });
    if (cfg.attentionBias) out.push({ name: p + 'self_attn.k_proj.bias', shape: [kv] });
    out.push({ name: p + 'self_attn.v_proj.weight', shape: [kv, D] });
    if (cfg.attentionBias) out.push({ name: p + 'self_attn.v_proj.bias', shape: [kv] });
    out.push({ name: p + 'self_attn.o_proj.weight', shape: [D, q] });
    if (cfg.qkNorm) {
      out.push({ name: p + 'self_attn.q_norm.weight', shape: [cfg.headDim] });
      out.push({ name: p + 'self_attn.k_norm.weight', shape: [cfg.headDim] });
    }
    out.push({ name: p + 'mlp.gate_proj.weight', shape: [I, D] });
    out.push({ name: p + 'mlp.up_proj.weight', shape: [I, D] });
    out.push({ name: p + 'mlp.down_proj.weight', shape: [D, I] });
    out.push({ name: p + 'input_layernorm.weight', shape: [D] });
    out.push({ name: p + 'post_attention_layernorm.weight', shape: [D] });
  }
  out.push({ name: 'model.norm.weight', shape: [D] });
  if (!cfg.tieEmbeddings) out.push({ name: 'lm_head.weight', shape: [cfg.vocabSize, D] });
  return out;
}

/** Number of parameters of the model (the tied lm_head counted once). */
export function parameterCount(cfg: ModelConfig): number {
  let n = 0;
  for (const t of expectedTensors(cfg)) n += t.shape.reduce((a, b) => a * b, 1);
  return n;
}
