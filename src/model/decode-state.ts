// The state buffer of one fused decoding call (shaders/lib/decode_rows.wgsl has the layout): each row's first
// key, base position and stop flag, the stop ids, the RoPE frequencies, and every layer's small parameters
// (norm weights, biases, LoRA adapters) packed into one buffer, so that a step's kernels bind one buffer for
// all of them and stay within WebGPU's 8 storage buffers per kernel. The parameters are copied in when the
// call starts (they may have been trained since the last call), on the GPU, without a dispatch.
import type { Tensor } from '../gpu/tensor.ts';
import type { StepProgram } from './decode-program.ts';
import { ropeFrequencies } from '../gpu/ops/rope.ts';
import type { ModelConfig } from './config.ts';
import type { CausalLM } from './decoder.ts';

/**
 * The fused step's kernels: 'workgroup' for GPUs (threads of a workgroup split each dot product and reduce in
 * workgroup memory, so weight reads coalesce), 'lanes' for CPU drivers (decode_*_lanes.wgsl: a workgroup is one
 * subgroup whose lanes each own output columns, with no reduction across lanes: a CPU driver runs a workgroup's
 * lanes as one SIMD loop and pays for every barrier). Chosen once per decoding call (decode-step.ts).
 */
export type DecodeKernels = 'workgroup' | 'lanes';

/** A word offset in the state; NONE where the parameter does not exist (no bias, no adapter). */
export const NONE = 0xffffffff;

/** Where layer l's small parameters are, in words; LoRA entries point at A [rank, in], then B [out, rank]. */
export interface LayerOffsets {
  inputNorm: number;
  postNorm: number;
  qNorm: number;
  kNorm: number;
  bias: { q: number; k: number; v: number };
  lora: Record<'q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down', number>;
}

const PROJ = {
  q: 'self_attn.q_proj',
  k: 'self_attn.k_proj',
  v: 'self_attn.v_proj',
  o: 'self_attn.o_proj',
  gate: 'mlp.gate_proj',
  up: 'mlp.up_proj',
  down: 'mlp.down_proj',
} as const;

export class DecodeState {
  readonly buffer: Tensor;
  /** Row capacity (the call's batch). */
  readonly rows: number;
  readonly stopAt: number;
  readonly freqAt: number;
  readonly finalNorm: number;
  readonly layers: LayerOffsets[];
  /** Words of the whole state. */
  readonly words: number;
  /** The steps' dispatches for the current batch and cache (decode-step.ts makes them), or null. */
  program: StepProgram | null = null;
  /** Whether rowsX holds the next step's embedded rows (decodeSample made them, no step has taken them). */
  embedded = false;
  private x: Tensor | null = null;

  /** Words the state of `rows` rows and `stops` stop ids takes for this model. */
  static words(model: CausalLM, rows: number, stops: number): number {
    return layout(model, rows, stops).words;
  }

  constructor(
    readonly model: CausalLM,
    rows: number,
    stopIds: readonly number[],
    /** The kernels every step of this call runs. */
    readonly kernels: DecodeKernels,
  ) {
    const e = model.engine;
    const c = model.cfg;
    this.rows = rows;
    const { words, copies, stopAt, freqAt, finalNorm, layers } = layout(model, rows, stopIds.length);
    this.stopAt = stopAt;
    this.freqAt = freqAt;
    this.finalNorm = finalNorm;
    this.layers = layers;
    this.words = words;
    const host = new Uint32Array(this.freqAt + c.headDim);
    host[this.stopAt] = stopIds.length;
    host.set(
      Uint32Array.from(stopIds, (id) => id >>> 0),
      this.stopAt + 1,
    );
    host.set(new Uint32Array(ropeFrequencies(c.headDim, c.ropeTheta).buffer), this.freqAt);
    this.buffer = e.keep(e.empty([words], 'i32'));
    e.writeWords(this.buffer, 0, host);
    e.copyInto(this.buffer, copies);
  }

  /**
   * Sets the rows' first keys, base positions and stop flags (slot k of the batch: entry k of each), and the
   * call's step: the next step to decode (after the writes the GPU has done so far).
   */
  setRows(keyStart: ArrayLike<number>, basePos: ArrayLike<number>, stopped: ArrayLike<boolean>, step: number): void {
    const n = keyStart.length;
    const words = new Uint32Array(3 * this.rows + 1);
    const signed = new Int32Array(words.buffer);
    for (let k = 0; k < n; k++) {
      signed[k] = keyStart[k]!;
      signed[this.rows + k] = basePos[k]!;
      words[2 * this.rows + k] = stopped[k] ? 1 : 0;
    }
    words[3 * this.rows] = step;
    this.model.engine.writeWords(this.buffer, 0, words);
  }

  /**
   * Flags the rows in batch slots `ks` stopped, leaving every other row's flag as the GPU has it: for rows the host
   * stopped (a stop string) while later steps are already queued, whose sampler may be flagging rows of its own.
   */
  stopRows(ks: readonly number[]): void {
    for (const k of ks) this.model.engine.writeWords(this.buffer, 2 * this.rows + k, Uint32Array.of(1));
  }

  /** The rows' embeddings [n, hidden] the steps read and update (made anew, not embedded, when n changes). */
  rowsX(n: number): Tensor {
    if (this.x?.shape[0] !== n) {
      this.program?.dispose();
      this.program = null;
      this.x?.dispose();
      const e = this.model.engine;
      this.x = e.keep(e.empty([n, this.model.cfg.hidden]));
      this.embedded = false;
    }
    return this.x;
  }

  dispose(): void {
    this.program?.dispose();
    this.program = null;
    this.x?.dispose();
    this.x = null;
    this.buffer.dispose();
  }
}

/**
 * Words of the state of `rows` rows and `stops` stop ids of a `cfg` model whose adapters hold `adapterFloats`
 * values (0 without LoRA): what the memory plan counts (it equals DecodeState.words; a test holds them equal).
 */
export function stateWords(cfg: ModelConfig, rows: number, stops: number, adapterFloats: number): number {
  const bias = cfg.attentionBias ? (cfg.heads + 2 * cfg.kvHeads) * cfg.headDim : 0;
  const perLayer = 2 * cfg.hidden + (cfg.qkNorm ? 2 * cfg.headDim : 0) + bias;
  return 3 * rows + 2 + stops + cfg.headDim + cfg.layers * perLayer + cfg.hidden + adapterFloats;
}

/** Where everything goes in the state, and the parameter copies that fill it. */
function layout(model: CausalLM, rows: number, stops: number) {
  const c = model.cfg;
  const copies: { src: Tensor; at: number }[] = [];
  const layers: LayerOffsets[] = [];
  let words = 3 * rows + 1; // the rows' keyStart, basePos and stop flags, then the step (lib/decode_rows.wgsl)
  const place = (src: Tensor | undefined): number => {
    if (!src) return NONE;
    if (src.dtype !== 'f32')
      throw new Error(`piplay: the fused decoding step packs f32 parameters, got ${src.describe()}`);
    const at = words;
    copies.push({ src, at });
    words += src.size;
    return at;
  };
  const stopAt = words;
  words += 1 + stops;
  const freqAt = words;
  words += c.headDim;
  const lora = model.lora;
  const adapter = (name: string): number => {
    const ad = lora?.adapters.get(name);
    if (!ad) return NONE;
    const at = place(ad.A);
    place(ad.B);
    return at;
  };
  for (let l = 0; l < c.layers; l++) {
    const pre = `model.layers.${l}`;
    const param = (name: string) => model.params.get(`${pre}.${name}`);
    const loraAt = {} as LayerOffsets['lora'];
    for (const [k, name] of Object.entries(PROJ)) loraAt[k as keyof typeof PROJ] = adapter(`${pre}.${name}`);
    layers.push({
      inputNorm: place(param('input_layernorm.weight')),
      postNorm: place(param('post_attention_layernorm.weight')),
      qNorm: c.qkNorm ? place(param('self_attn.q_norm.weight')) : NONE,
      kNorm: c.qkNorm ? place(param('self_attn.k_norm.weight')) : NONE,
      bias: c.attentionBias
        ? {
            q: place(param('self_attn.q_proj.bias')),
            k: place(param('self_attn.k_proj.bias')),
            v: place(param('self_attn.v_proj.bias')),
          }
        : { q: NONE, k: NONE, v: NONE },
      lora: loraAt,
    });
  }
  const finalNorm = place(model.params.get('model.norm.weight'));
  return { words, copies, stopAt, freqAt, finalNorm, layers };
}
