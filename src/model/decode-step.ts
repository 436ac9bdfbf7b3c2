// The fused decoding step: one new token per row through the whole model in 4 dispatches per layer
// (shaders/decode_attention, three decode_matvec; 2 for a small model on a CPU driver, whose MLP half is one
// decode_mlp_lanes) plus 2: the LM head (decode_matvec) and decode_sample, which samples the step's tokens and
// embeds them for the next step (decode_embed does that for ids from the host). The general ops take 16-18 per layer
// (28 more with LoRA): a decoding step of a small model is bound by its dispatches (5-20 µs each in a browser,
// 0.1-0.3 ms on lavapipe) more than by its arithmetic. Two kernel sets (DecodeKernels): GPUs split each dot product
// across a workgroup; CPU drivers take decode_*_lanes.wgsl, with no reduction or barrier across lanes (measured on
// lavapipe: 1.9x the general ops' tokens/s, 1.8x with LoRA; bench/NOTES.md, round 7), a small model's weights read
// through uniform windows (src/gpu/uniform-windows.ts; round 20). A row that sampled a stop id is flagged on the GPU
// and left alone by every later kernel, so the host can read the tokens back every few steps without paying for
// stopped rows. Same numbers as CausalLM.hidden + logits up to the order of f32 sums
// (test/unit/model/decode-step.gpu.test.ts).
import type { DispatchSpec } from '../gpu/engine.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { shardedEmbedding } from '../gpu/ops/embedding.ts';
import { storageFormat } from '../gpu/ops/packed.ts';
import { rmsnorm } from '../gpu/ops/rmsnorm.ts';
import { checkSampleInputs, sampleWorkgroup } from '../gpu/ops/sample.ts';
import { subgroupsOf8 } from '../gpu/ops/util.ts';
import { copy2d } from '../gpu/ops/vocab_head.ts';
import { type RowWindows, rowWindows, windows8, windowsBindings, windowsSource } from '../gpu/uniform-windows.ts';
import type { CausalLM, KVCache } from './decoder.ts';
import { StepProgram } from './decode-program.ts';
import { type DecodeKernels, DecodeState, NONE } from './decode-state.ts';

export type { DecodeKernels };

export type DecodePath = 'fused' | 'general';
let forcedPath: DecodePath | null = null;

/** Forces one decoding path (tests and benchmarks); `null`: fused wherever it applies (fusedDecodeMisfit). */
export function setDecodePath(path: DecodePath | null): void {
  forcedPath = path;
}

let forcedKernels: DecodeKernels | null = null;
/** decode_mlp_lanes ('one' dispatch) or three decode_matvec_lanes ('three') for a layer's MLP half. */
export type LanesMlp = 'one' | 'three';
let forcedLanesMlp: LanesMlp | null = null;

/** Forces how the lanes kernels run a layer's MLP half (tests and benchmarks); `null`: by its size. */
export function setLanesMlp(mlp: LanesMlp | null): void {
  forcedLanesMlp = mlp;
}

/** Forces the fused step's kernels (tests and benchmarks); `null`: by device (decodeKernels). */
export function setDecodeKernels(kernels: DecodeKernels | null): void {
  forcedKernels = kernels;
}

/** Lanes of a workgroup of the 'lanes' kernels: a CPU driver's SIMD width for f32 (lavapipe's default). */
const LANES = 8;
/** Query heads per kv head that decode_attention_lanes takes at most (its MAXH; head dims up to its CHUNK). */
const LANES_MAX_GROUP = 16;
/** Rows per workgroup of decode_attention_lanes (its RT): each projection weight it reads serves this many rows. */
const LANES_ROWS = 4;

/** The kernels the fused step runs for this model on this device. */
export function decodeKernels(model: CausalLM): DecodeKernels {
  if (forcedKernels) return forcedKernels;
  return model.engine.info.isCpu && lanesMisfit(model) === null ? 'lanes' : 'workgroup';
}

/** Why the 'lanes' kernels cannot run this model on this device, or null. */
function lanesMisfit(model: CausalLM): string | null {
  const c = model.cfg;
  if (!subgroupsOf8(model.engine)) return `the lanes kernels need subgroups of ${LANES} lanes`;
  if (![c.hidden, c.heads * c.headDim, c.intermediate].every((k) => k % 8 === 0))
    return 'a row length is not a multiple of 8';
  const group = c.heads / c.kvHeads;
  // Unrolled over a head dim of 128, decode_attention_lanes took a minute to compile (bench/NOTES.md, round 7).
  if (c.headDim % 4 !== 0 || c.headDim > 64 || group > LANES_MAX_GROUP)
    return 'the heads are not shaped for the lanes kernels (head dim a multiple of 4 up to 64)';
  const R = model.lora?.opts.rank ?? 1;
  if (R > LANES_MAX_RANK) return `the lanes kernels take LoRA ranks up to ${LANES_MAX_RANK}`;
  // decode_attention_lanes' workgroup memory: its rows normed (hn), their projections, head scales and adapter
  // products, and decode_rows' reduction.
  const words = LANES_ROWS * (c.hidden + (group + 2) * c.headDim + group + 1 + 3 * R) + LANES;
  if (4 * words > model.engine.info.limits.maxComputeWorkgroupStorageSize)
    return 'the lanes attention needs more workgroup memory than the device has';
  return null;
}

/**
 * A layer's MLP half (o_proj to down_proj) as one decode_mlp_lanes dispatch, not three decode_matvec_lanes ones:
 * where its weights are at most this many elements (and share a dtype). That kernel spreads only rows over the
 * cores, each workgroup walking every column; a dispatch's fixed cost on lavapipe (45-80 µs) outweighs the
 * columns' parallelism for the embedded model (83k weights a layer), not at SmolLM2-135M's width (3M).
 */
const MLP_ONE_DISPATCH_MAX_WEIGHTS = 1 << 18;

/** decode_mlp_lanes' windows over a layer's o_proj, gate, up and down (rowWindows). */
interface MlpWindows {
  o: RowWindows;
  gate: RowWindows;
  up: RowWindows;
  down: RowWindows;
}

/** The windows decode_mlp_lanes reads a layer's MLP weights through, or null where it does not take the layer. */
function mlpWindows(model: CausalLM, weights: [Tensor, Tensor, Tensor, Tensor]): MlpWindows | null {
  const c = model.cfg;
  const limits = model.engine.info.limits;
  // Its workgroup memory: up to LANES rows normed (hn) and decode_rows' reduction.
  const fits = 4 * (LANES * c.hidden + LANES) <= limits.maxComputeWorkgroupStorageSize;
  // Two windows a matrix and its params.
  const uniforms = 4 * 2 + 1 <= limits.maxUniformBuffersPerShaderStage;
  if (!fits || !uniforms || new Set(weights.map(format)).size > 1) return null;
  if (forcedLanesMlp === 'three') return null;
  const small = c.heads * c.headDim * c.hidden + 3 * c.hidden * c.intermediate <= MLP_ONE_DISPATCH_MAX_WEIGHTS;
  if (!small && forcedLanesMlp !== 'one') return null;
  const tile = LANES * LANES_COLS;
  const [o, gate, up, down] = weights.map((w) => rowWindows(w, tile, 2));
  return o && gate && up && down ? { o, gate, up, down } : null;
}

/**
 * The windows decode_attention_lanes_uniform reads a layer's q, k and v projections through, one each (a lane's
 * uniform load costs about half a storage load on llvmpipe): the embedded model's, not SmolLM2's. Or null.
 */
function projectionWindows(model: CausalLM, weights: [Tensor, Tensor, Tensor]): RowWindows[] | null {
  const [, wk, wv] = weights;
  if (new Set(weights.map(format)).size > 1 || wk.byteLength !== wv.byteLength) return null;
  // A window a projection and its params.
  if (3 + 1 > model.engine.info.limits.maxUniformBuffersPerShaderStage) return null;
  const windows = weights.map((w) => rowWindows(w, LANES * LANES_COLS, 1));
  return windows.every((w) => w !== null) ? (windows as RowWindows[]) : null;
}

/** decode_mlp_lanes' rows per workgroup: 8, or for 8 rows or fewer a power of two giving two workgroups (cores). */
function mlpRowsPerWorkgroup(n: number): number {
  return n > LANES ? LANES : 2 ** Math.ceil(Math.log2(Math.max(1, Math.ceil(n / 2))));
}

/** Rows per workgroup of decode_matvec (each weight element read serves this many rows). */
const TILE_ROWS = 4;
/** Columns per workgroup of decode_matvec (its COLS; half of them of gate and half of up for `gated`). */
const MATVEC_COLS = 8;
/** Columns per lane of decode_matvec_lanes (its COLS); a workgroup computes LANES rows x LANES * this columns. */
const LANES_COLS = 4;
/** LoRA ranks decode_matvec_lanes takes at most (8 RG). */
const LANES_MAX_RANK = 64;
/** Threads of decode_matvec, and columns per workgroup of decode_embed. */
const WG = 64;
/** (query head, dim) pairs per thread of decode_attention, at most (its PAIRS). */
const PAIRS = 4;

/** Threads of decode_attention: a power of two, at least 64, that gives each thread at most PAIRS pairs. */
function attentionWG(cfg: CausalLM['cfg']): number {
  const pairs = (cfg.heads / cfg.kvHeads) * cfg.headDim;
  return Math.max(64, 2 ** Math.ceil(Math.log2(pairs / PAIRS)));
}

/**
 * Why the fused step cannot run this model for `rows` rows on this device, or null when it can: it needs every
 * projection of a layer in one storage format and its workgroup memory within the device's. (A vocabulary
 * split across bindings, or logits past one, take the general embedding and head around the fused layers.)
 */
export function fusedDecodeMisfit(model: CausalLM, rows: number): string | null {
  if (forcedPath === 'general') return 'the general path is forced';
  // Measured on lavapipe (2 cores): the general ops decode 2.5-4x faster per token there than the 'workgroup'
  // kernels' reductions and barriers; a CPU driver takes the fused step only with the lanes kernels.
  const lanesWhyNot = lanesMisfit(model);
  if (forcedPath === null && model.engine.info.isCpu && lanesWhyNot !== null)
    return `a CPU driver runs the general ops faster (${lanesWhyNot})`;
  const kernels = decodeKernels(model);
  if (kernels === 'lanes' && lanesWhyNot !== null) return lanesWhyNot;
  const c = model.cfg;
  if (c.heads % c.kvHeads !== 0 || c.headDim % 2 !== 0) return 'the heads do not group evenly';
  const memory = kernels === 'lanes' ? null : workgroupMisfit(model);
  if (memory) return memory;
  if (4 * DecodeState.words(model, rows, 64) > maxBinding(model))
    return 'the packed small parameters exceed one binding';
  const projections = ['q', 'k', 'v', 'o'].map((p) => `self_attn.${p}_proj`);
  projections.push(...['gate', 'up', 'down'].map((p) => `mlp.${p}_proj`));
  for (let l = 0; l < c.layers; l++) {
    const pre = `model.layers.${l}`;
    // A model that computes its layers some other way (a test's scripted stand-in) has none of these.
    if (projections.some((n) => !model.params.has(`${pre}.${n}.weight`))) return `layer ${l} has no projection weights`;
    const formats = (names: string[]) => new Set(names.map((n) => format(model.param(`${pre}.${n}.weight`))));
    if (formats(['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj']).size > 1) return 'q/k/v differ in dtype';
    if (formats(['mlp.gate_proj', 'mlp.up_proj']).size > 1) return 'gate/up differ in dtype';
  }
  return null;
}

/**
 * Why the 'workgroup' kernels do not fit this device, or null: their threads and workgroup memory (the 'lanes'
 * kernels take one subgroup and a few hundred words, within WebGPU's default limits; lanesMisfit bounds them).
 */
function workgroupMisfit(model: CausalLM): string | null {
  const c = model.cfg;
  const limits = model.engine.info.limits;
  const R = model.lora?.opts.rank ?? 1;
  const group = c.heads / c.kvHeads;
  const awg = attentionWG(c);
  const attentionWords = c.hidden + 3 * R + (group + 2) * c.headDim + 4 * group + 1 + awg + group * awg;
  const matvecWords = 4 * MATVEC_COLS * WG + WG + 4 + 8 * R;
  if (awg > limits.maxComputeInvocationsPerWorkgroup) return 'a kv head has too many query heads';
  if (4 * Math.max(attentionWords, matvecWords) > limits.maxComputeWorkgroupStorageSize) {
    return 'the kernels need more workgroup memory than the device has';
  }
  return null;
}

function maxBinding(model: CausalLM): number {
  const limits = model.engine.info.limits;
  return Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
}

function format(t: Tensor): number {
  return storageFormat(t, 'decode', 'weight');
}

/** The state of one fused decoding call over `rows` rows, or null where the fused step does not apply. */
export function fusedDecodeState(model: CausalLM, rows: number, stopIds: readonly number[]): DecodeState | null {
  return fusedDecodeMisfit(model, rows) === null ? new DecodeState(model, rows, stopIds, decodeKernels(model)) : null;
}

/** A step's input already embedded: the state's rows (DecodeState.rowsX) hold it, made by the last decodeSample. */
export const EMBEDDED = 'embedded' as const;

/**
 * One decoding step of the `n` live rows (slot k of the state is row k): their tokens in (ids, i32 [n], on the
 * GPU or the host, or EMBEDDED), logits [n, vocab] out; appends each row's key and value at the cache's length.
 * The step's position and cache slot come from the state (lib/decode_rows.wgsl): `step`, the call's step count,
 * must be what the state holds (decode_sample advances it; the host sets it at a read: DecodeState.setRows).
 * A vocabulary split across bindings needs the ids on the host. The logits belong to the state when the fused
 * head applies (valid until the next step: do not dispose them), else to the caller.
 */
export function decodeStep(
  st: DecodeState,
  ids: Tensor | Int32Array | typeof EMBEDDED,
  n: number,
  cache: KVCache,
  step: number,
): Tensor {
  const leave = st.model.engine.profile?.enterOuter(`forward ${st.model.profileName}`, n);
  try {
    return fusedStep(st, ids, n, cache, step);
  } finally {
    leave?.();
  }
}

function fusedStep(
  st: DecodeState,
  ids: Tensor | Int32Array | typeof EMBEDDED,
  n: number,
  cache: KVCache,
  step: number,
): Tensor {
  const model = st.model;
  const e = model.engine;
  const c = model.cfg;
  // The rows' embeddings: made by the last step's decodeSample, or looked up here.
  const x = st.rowsX(n);
  if (ids === EMBEDDED) {
    if (!st.embedded) throw new Error('piplay: decodeStep: the rows were not embedded by the last step');
  } else embedRows(st, ids, n, x);
  st.embedded = false;
  const len0 = cache.length - step;
  // The step's dispatches, made once for this batch and cache and recorded every step (a one-piece table; with a
  // vocabulary across bindings the ids come from the host and the rows are embedded anew, so as they are).
  let program = st.program;
  if (!program?.serves(n, cache, len0, x)) {
    program?.dispose();
    st.program = null;
    program = st.program = new StepProgram(e, n, cache, len0, x, (bufs) => stepSpecs(st, n, cache, len0, x, bufs), {
      o: [n, c.heads * c.headDim],
      act: [n, c.intermediate],
      logits: fusedHead(model, n) ? [n, c.vocabSize] : null,
    });
  }
  program.run();
  cache.length += 1;
  if (program.logits) return program.logits;
  const h = rmsnorm(x, model.param('model.norm.weight'), c.rmsEps);
  return model.logits(h);
}

/** Whether the LM head runs as decode_matvec (a table in one binding, its logits within one). */
function fusedHead(model: CausalLM, n: number): boolean {
  const c = model.cfg;
  return (
    model.lmHeadShards.length === 1 &&
    4 * n * c.vocabSize <= maxBinding(model) &&
    Math.ceil(c.vocabSize / MATVEC_COLS) <= model.engine.info.limits.maxComputeWorkgroupsPerDimension
  );
}

/**
 * The dispatches of one step over `n` rows: per layer the attention half (decode_attention) and three matvecs
 * (o_proj + residual, gate/up + SwiGLU, down_proj + residual), then the LM head where it is fused (into
 * bufs.logits). They read the rows' embeddings `x` and update them in place.
 */
function stepSpecs(
  st: DecodeState,
  n: number,
  cache: KVCache,
  len0: number,
  x: Tensor,
  bufs: { o: Tensor; act: Tensor; logits: Tensor | null },
): DispatchSpec[] {
  const model = st.model;
  const c = model.cfg;
  const D = c.hidden;
  const state = st.buffer;
  const lora = model.lora;
  const R = lora?.opts.rank ?? 1;
  const loraScale = lora?.scale ?? 0;
  const group = c.heads / c.kvHeads;
  const tile = Math.min(TILE_ROWS, n);
  // decode_matvec_lanes' rows per workgroup: LANES, or the call's rows rounded up to a power of two.
  const lanesTile = Math.min(LANES, 2 ** Math.ceil(Math.log2(n)));
  const lanes = st.kernels === 'lanes';
  const specs: DispatchSpec[] = [];
  const matvec = (entry: string, K: number, N: number, params: object, bindings: Record<string, Tensor>) => {
    const w = bindings['w']!;
    const all = { rows: st.rows, n, K, N, eps: c.rmsEps, normAt: 0, lora: NONE, lora2: NONE, loraScale, ...params };
    if (lanes) {
      specs.push({
        shader: 'decode_matvec_lanes',
        entry,
        constants: { WG: LANES, R, W_FORMAT: format(w), TR: lanesTile },
        params: all,
        // One matrix read as both w and w2 (the kernel's entries share tiles that reach both).
        bindings: { w2: w, ...bindings, state },
        workgroups: [Math.ceil(N / (LANES * LANES_COLS)), Math.ceil(n / lanesTile)],
      });
      return;
    }
    const cols = entry === 'gated' ? MATVEC_COLS / 2 : MATVEC_COLS;
    specs.push({
      shader: 'decode_matvec',
      entry,
      constants: { WG, TILE_ROWS: tile, R, W_FORMAT: format(w) },
      params: all,
      bindings: { ...bindings, state },
      workgroups: [Math.ceil(N / cols), Math.ceil(n / tile)],
    });
  };
  const { o, act } = bufs;
  for (let l = 0; l < c.layers; l++) {
    const pre = `model.layers.${l}`;
    const at = st.layers[l]!;
    const wq = model.param(`${pre}.self_attn.q_proj.weight`);
    const wk = model.param(`${pre}.self_attn.k_proj.weight`);
    const wv = model.param(`${pre}.self_attn.v_proj.weight`);
    const pw = lanes ? projectionWindows(model, [wq, wk, wv]) : null;
    specs.push({
      shader: pw ? 'decode_attention_lanes_uniform' : lanes ? 'decode_attention_lanes' : 'decode_attention',
      ...(pw ? { source: { Q_WORDS: pw[0]!.words[0]!, K_WORDS: pw[1]!.words[0]! } } : {}),
      constants: lanes
        ? { WG: LANES, DH: c.headDim, GROUP: group, R, W_FORMAT: format(wq), HN: (LANES_ROWS * D) / 4 }
        : { WG: attentionWG(c), D, DH: c.headDim, GROUP: group, R, W_FORMAT: format(wq) },
      params: {
        rows: st.rows,
        Hkv: c.kvHeads,
        cap: cache.capacity,
        len0,
        eps: c.rmsEps,
        scale: 1 / Math.sqrt(c.headDim),
        freqAt: st.freqAt,
        normAt: at.inputNorm,
        qNormAt: at.qNorm,
        kNormAt: at.kNorm,
        biasQ: at.bias.q,
        biasK: at.bias.k,
        biasV: at.bias.v,
        loraQ: at.lora.q,
        loraK: at.lora.k,
        loraV: at.lora.v,
        loraScale,
        ...(lanes ? { D, n } : {}),
      },
      bindings: {
        x,
        ...(pw ? { wq: pw[0]!.windows[0]!, wk: pw[1]!.windows[0]!, wv: pw[2]!.windows[0]! } : { wq, wk, wv }),
        state,
        kCache: cache.keys[l]!,
        vCache: cache.values[l]!,
        o,
      },
      workgroups: [c.kvHeads, lanes ? Math.ceil(n / LANES_ROWS) : n],
    });
    const wo = model.param(`${pre}.self_attn.o_proj.weight`);
    const wg = model.param(`${pre}.mlp.gate_proj.weight`);
    const wu = model.param(`${pre}.mlp.up_proj.weight`);
    const wd = model.param(`${pre}.mlp.down_proj.weight`);
    const win = lanes ? mlpWindows(model, [wo, wg, wu, wd]) : null;
    if (win) {
      const tr = mlpRowsPerWorkgroup(n);
      specs.push({
        shader: 'decode_mlp_lanes',
        constants: { WG: LANES, R, W_FORMAT: format(wo), TR: tr, HN: (tr * D) / 4 },
        source: { ...windowsSource(win.o, 'O'), ...windowsSource(win.gate, 'GU'), ...windowsSource(win.down, 'D') },
        params: {
          rows: st.rows,
          n,
          A: c.heads * c.headDim,
          D,
          I: c.intermediate,
          eps: c.rmsEps,
          oSplit: win.o.perWindow,
          guSplit: win.gate.perWindow,
          dSplit: win.down.perWindow,
          normAt: at.postNorm,
          loraO: at.lora.o,
          loraGate: at.lora.gate,
          loraUp: at.lora.up,
          loraDown: at.lora.down,
          loraScale,
        },
        bindings: {
          inp: o,
          state,
          x,
          y: act,
          ...windowsBindings(win.o, 'wo'),
          ...windowsBindings(win.gate, 'wg'),
          ...windowsBindings(win.up, 'wu'),
          ...windowsBindings(win.down, 'wd'),
        },
        workgroups: [Math.ceil(n / tr)],
      });
      continue;
    }
    matvec('residual', c.heads * c.headDim, D, { lora: at.lora.o }, { inp: o, w: wo, x });
    matvec(
      'gated',
      D,
      c.intermediate,
      { normAt: at.postNorm, lora: at.lora.gate, lora2: at.lora.up },
      { x, w: wg, w2: wu, y: act },
    );
    matvec('residual', c.intermediate, D, { lora: at.lora.down }, { inp: act, w: wd, x });
  }
  if (bufs.logits) {
    const head = model.lmHeadShards[0]!;
    const hw = lanes ? windows8(head, LANES * LANES_COLS) : null;
    if (hw) {
      specs.push({
        shader: 'decode_head_lanes',
        constants: { WG: LANES, W_FORMAT: format(head), TR: lanesTile, PER_WINDOW: hw.perWindow },
        source: windowsSource(hw),
        params: { rows: st.rows, n, K: D, N: c.vocabSize, eps: c.rmsEps, normAt: st.finalNorm },
        bindings: { state, x, y: bufs.logits, ...windowsBindings(hw) },
        workgroups: [Math.ceil(c.vocabSize / (LANES * LANES_COLS)), Math.ceil(n / lanesTile)],
      });
    } else {
      matvec('head', D, c.vocabSize, { normAt: st.finalNorm }, { x, w: head, y: bufs.logits });
    }
  }
  return specs;
}

/** Whether decodeSample can embed this model's tokens (its table is one binding). */
export function samplesEmbed(model: CausalLM): boolean {
  return model.vocabShards('model.embed_tokens.weight').length === 1;
}

/**
 * Samples one token per row of a step's logits [n, vocab], as sample() does (the same ids and log-probs), and
 * readies the next step on the way (shaders/decode_sample.wgsl): each live row's token embedding in `x` and its
 * stop flag, what decode_embed would do at the start of that step, one dispatch fewer a step. Needs a table in
 * one binding (samplesEmbed).
 */
export function decodeSample(
  st: DecodeState,
  logits: Tensor,
  n: number,
  opts: { temperature: number; topP: number; uniforms: Tensor },
): { ids: Tensor; logprobs: Tensor } {
  const model = st.model;
  const e = model.engine;
  const c = model.cfg;
  const table = model.vocabShards('model.embed_tokens.weight');
  if (table.length !== 1) throw new Error('piplay: decodeSample needs an embedding table in one binding');
  checkSampleInputs(logits, n, c.vocabSize, opts);
  const ids = e.empty([n], 'i32');
  const logprobs = e.empty([n]);
  const x = st.rowsX(n);
  e.dispatch({
    shader: 'decode_sample',
    constants: { WG: sampleWorkgroup(e.info.isCpu, opts.temperature, opts.topP), W_FORMAT: format(table[0]!) },
    params: {
      B: n,
      V: c.vocabSize,
      temperature: opts.temperature,
      topP: opts.topP,
      rows: st.rows,
      D: c.hidden,
      stopAt: st.stopAt,
    },
    bindings: { logits, uniforms: opts.uniforms, ids, logprobs, table: table[0]!, state: st.buffer, x },
    workgroups: e.grid(n, 1),
  });
  st.embedded = true;
  return { ids, logprobs };
}

/**
 * The rows' embeddings into x [n, hidden]: decode_embed (which also flags rows whose token is a stop id) where the
 * table is one binding, else the general sharded lookup of host ids, copied in.
 */
function embedRows(st: DecodeState, ids: Tensor | Int32Array, n: number, x: Tensor): void {
  const model = st.model;
  const e = model.engine;
  const D = model.cfg.hidden;
  const table = model.vocabShards('model.embed_tokens.weight');
  if (table.length > 1) {
    if (!(ids instanceof Int32Array)) throw new Error('piplay: a vocabulary split across bindings needs host ids');
    e.tidy(() =>
      copy2d(shardedEmbedding(table, e.tensor(ids, [n], 'i32'), ids), x, { R: 1, C: n * D, sStride: 0, dStride: 0 }),
    );
    return;
  }
  const onGpu = ids instanceof Int32Array ? e.tensor(ids, [n], 'i32') : ids;
  e.dispatch({
    shader: 'decode_embed',
    constants: { WG, W_FORMAT: format(table[0]!) },
    params: { rows: st.rows, D, V: model.cfg.vocabSize, stopAt: st.stopAt },
    bindings: { ids: onGpu, table: table[0]!, state: st.buffer, x },
    workgroups: [Math.ceil(D / WG), n],
  });
  if (ids instanceof Int32Array) onGpu.dispose();
}
