// The decoder-only causal LM of the Llama / Qwen2 / Qwen3 families, exactly as Hugging Face defines them,
// on the engine's ops. Parameters carry their HF names, so loading, export and checkpoints are name maps.
import type { Engine } from '../gpu/engine.ts';
import type { DType, Tensor } from '../gpu/tensor.ts';
import { add } from '../gpu/ops/elementwise.ts';
import { linear } from '../gpu/ops/matmul.ts';
import { kvAppend, kvMove, gatherRows, type KVMove } from '../gpu/ops/layout.ts';
import { embedding, shardedEmbedding } from '../gpu/ops/embedding.ts';
import { shardedLinear, vocabHead, type VocabHead } from '../gpu/ops/vocab_head.ts';
import { rmsnorm } from '../gpu/ops/rmsnorm.ts';
import { rope } from '../gpu/ops/rope.ts';
import { swiglu } from '../gpu/ops/swiglu.ts';
import { attention, takesQueryColumns } from '../gpu/ops/attention.ts';
import { recomputed } from '../gpu/recompute.ts';
import { expectedTensors, type ModelConfig } from './config.ts';
import type { HostTensor } from './host-weights.ts';
import type { LoraSet } from './lora.ts';
import { maxBindingBytes, parseShardName, shardName, shardRanges } from './vocab.ts';

const EMBED = 'model.embed_tokens.weight';
const LM_HEAD = 'lm_head.weight';

/** A batch of token sequences, all of length `time` (padding is the caller's business). */
export interface TokenBatch {
  /** Row-major [batch, time]. */
  ids: Int32Array;
  /**
   * The ids on the GPU instead (i32, batch x time; `ids` then empty): generation feeds each step's sampled ids
   * straight back, without reading them first. Needs an embedding table in one piece (not vocabulary shards).
   */
  deviceIds?: Tensor;
  batch: number;
  time: number;
  /** Position of each token, [batch * time]; default 0..time-1 in every row. */
  positions?: Int32Array;
  /** First real (non-padding) key index per row, [batch], for left-padded rows; default 0. */
  keyStart?: Int32Array;
  /**
   * Rows packed as prefix trees (src/rl/tree.ts), [batch * time]: the column where each token's subtree ends;
   * the token is seen only by the tokens before it (its descendants). Default: every later token sees it.
   */
  keyEnd?: Int32Array;
}

/** Per-layer key and value caches [batch, kvHeads, capacity, headDim] for incremental decoding. */
export interface KVCache {
  keys: Tensor[];
  values: Tensor[];
  capacity: number;
  /** Tokens already in the cache (the same for every row; rows are left-padded). */
  length: number;
  batch: number;
  /**
   * Keeps only the cache rows `rows` (distinct, in that order) and drops the others, e.g. the sequences
   * that finished decoding, so that the next steps run on a smaller batch.
   */
  keepRows(rows: readonly number[]): void;
  /**
   * Lays the cache out anew with `capacity` positions and a row per move (src/gpu/ops/layout.ts kvMove): row b
   * keeps the run of positions moves[b] names, moved to its new columns; every other position is left unwritten
   * (nothing reads it). One layer at a time, each submitted before the next, so the old and new caches are never
   * whole side by side (test/unit/model/kv-cache-memory.gpu.test.ts). `length` is left to the caller. A cache
   * without it (a test's scripted stand-in) is prefilled whole at every call.
   */
  relayout?(capacity: number, moves: readonly KVMove[]): void;
  dispose(): void;
}

/** What every layer of one forward pass shares: the rows' positions and first keys, the batch shape, the cache. */
interface Rows {
  positions: Tensor;
  keyStart: Tensor | null;
  keyEnd: Tensor | null;
  B: number;
  T: number;
  cache?: KVCache;
  /** The positions on the host (row-major [B, T]). */
  posHost: Int32Array;
}

/** A layer's queries where not every column's: their normed rows [B, Tq, hidden], positions and columns [B, Tq]. */
interface Queries {
  h: Tensor;
  positions: Tensor;
  /** Their columns (attention's queryColumns); absent: the last Tq columns. */
  columns?: Tensor;
}

/** Checks hidden's `keep`: flat rows of a B x T batch. */
function checkKeep(keep: Int32Array, B: number, T: number): void {
  for (const r of keep) {
    if (!(Number.isInteger(r) && r >= 0 && r < B * T)) {
      throw new Error(`piplay: kept row ${r} is outside the ${B}x${T} batch`);
    }
  }
}

/** Whether `keep` is each row's last column, in row order. */
function isLastColumns(keep: Int32Array, B: number, T: number): boolean {
  return keep.length === B && keep.every((r, b) => r === b * T + T - 1);
}

/**
 * The queries the kept rows need, as attention takes them: each batch row's distinct kept columns in order, after
 * as many queries at column 0 as it has fewer than the row with the most (the cheapest: they see one key at most);
 * `flat` their flat rows, `index` where each kept row's query lies among them.
 */
function keptQueries(
  keep: Int32Array,
  B: number,
  T: number,
): { Tq: number; columns: Int32Array; flat: Int32Array; index: Int32Array } {
  const perRow = Array.from({ length: B }, () => new Set<number>());
  for (const r of keep) perRow[Math.floor(r / T)]!.add(r % T);
  const Tq = Math.max(1, ...perRow.map((c) => c.size));
  const columns = new Int32Array(B * Tq);
  const at = new Map<number, number>();
  perRow.forEach((cols, b) => {
    const first = b * Tq + Tq - cols.size;
    [...cols]
      .sort((x, y) => x - y)
      .forEach((t, i) => {
        columns[first + i] = t;
        at.set(b * T + t, first + i);
      });
  });
  const flat = columns.map((t, i) => Math.floor(i / Tq) * T + t);
  return { Tq, columns, flat, index: Int32Array.from(keep, (r) => at.get(r)!) };
}

export class CausalLM {
  /**
   * Every parameter by HF name (tied models have no lm_head.weight); a vocabulary matrix larger than one
   * storage binding is there as its row shards instead (src/model/vocab.ts).
   */
  readonly params = new Map<string, Tensor>();
  /** Optional low-rank adapters on the projections (see lora.ts). */
  lora: LoraSet | null = null;
  /** The model's name in a profile (see src/gpu/profile.ts), e.g. its policy. */
  profileName = 'model';

  /** Whether `hidden` takes ids on the GPU (TokenBatch.deviceIds): its embedding table is in one piece. */
  takesDeviceIds(): boolean {
    return this.vocabShards(EMBED).length === 1;
  }
  /**
   * Recompute each layer's intermediates on the backward pass instead of keeping them from the forward
   * (src/gpu/recompute.ts): a training pass keeps one [tokens, hidden] tensor per layer, not all of them.
   */
  recompute = false;

  constructor(
    readonly engine: Engine,
    readonly cfg: ModelConfig,
  ) {}

  /**
   * Builds the model from host float data by HF name; throws naming any missing tensor or wrong shape.
   * `dtypeOf` picks each weight's GPU dtype (default f32; f16 or bf16 only for frozen matrices, see
   * weight-storage.ts).
   */
  static fromHost(
    engine: Engine,
    cfg: ModelConfig,
    get: (name: string) => HostTensor | undefined,
    dtypeOf: (name: string, shape: number[]) => DType = () => 'f32',
  ): CausalLM {
    const m = new CausalLM(engine, cfg);
    for (const spec of expectedTensors(cfg)) {
      const t = get(spec.name);
      if (!t) throw new Error(`piplay: the checkpoint has no tensor '${spec.name}' that ${cfg.arch} needs`);
      if (t.shape.length !== spec.shape.length || t.shape.some((d, k) => d !== spec.shape[k])) {
        throw new Error(
          `piplay: tensor '${spec.name}' has shape [${t.shape}] but config.json implies [${spec.shape}]; the weights ` +
            'do not match the config',
        );
      }
      const [V, D] = spec.shape as [number, number];
      const dtype = dtypeOf(spec.name, spec.shape);
      // Shards are sized for f32 rows: a 16-bit table gets more shards than it needs, never too few.
      const ranges =
        spec.name === EMBED || spec.name === LM_HEAD
          ? shardRanges(V, D, maxBindingBytes(engine), `'${spec.name}'`)
          : [[0, spec.shape[0]!]];
      for (const [first, end] of ranges) {
        const whole = ranges.length === 1;
        const data = whole ? t.data : t.data.subarray(first * D, end * D);
        const p = engine.keep(engine.tensor(data, whole ? spec.shape : [end - first, D], dtype));
        p.name = whole ? spec.name : shardName(spec.name, first, end);
        m.params.set(p.name, p);
      }
    }
    return m;
  }

  param(name: string): Tensor {
    const p = this.params.get(name);
    if (!p) throw new Error(`piplay: model has no parameter '${name}'`);
    return p;
  }

  /** The tensors an optimizer updates: the adapters when LoRA is on, else every parameter. */
  trainable(): Tensor[] {
    return this.lora ? this.lora.parameters() : [...this.params.values()];
  }

  /** Sets requiresGrad on the trainable tensors (and clears it on frozen ones). */
  setTrainable(on: boolean): void {
    const train = new Set(this.trainable());
    for (const p of this.params.values()) p.requiresGrad = on && train.has(p);
    if (this.lora) for (const p of this.lora.parameters()) p.requiresGrad = on;
  }

  /** The LM head's weight [V, D] (the embedding when tied); see lmHeadShards where it may be sharded. */
  get lmHead(): Tensor {
    const shards = this.lmHeadShards;
    if (shards.length > 1) throw new Error('piplay: the LM head is kept as row shards; use lmHeadShards');
    return shards[0]!;
  }

  /** The LM head's weight as row shards in vocabulary order (one where it fits one storage binding). */
  get lmHeadShards(): Tensor[] {
    return this.vocabShards(this.cfg.tieEmbeddings ? EMBED : LM_HEAD);
  }

  /** A vocabulary matrix by HF name: the one parameter, or its row shards in order. */
  vocabShards(name: string): Tensor[] {
    const whole = this.params.get(name);
    if (whole) return [whole];
    const shards: { first: number; p: Tensor }[] = [];
    for (const [n, p] of this.params) {
      const s = parseShardName(n);
      if (s?.base === name) shards.push({ first: s.first, p });
    }
    if (shards.length === 0) throw new Error(`piplay: model has no parameter '${name}'`);
    return shards.sort((a, b) => a.first - b.first).map((s) => s.p);
  }

  private proj(x: Tensor, name: string, bias = false): Tensor {
    const y = linear(x, this.param(`${name}.weight`), bias ? this.param(`${name}.bias`) : null);
    return this.lora ? this.lora.apply(name, x, y) : y;
  }

  /**
   * Runs the decoder over a batch and returns the final-norm hidden states [batch, time, hidden].
   * With a cache, the batch holds the next `time` tokens of every row: their keys and values are appended
   * and attention sees the whole cache.
   * `keep` (flat rows b * time + t, in any order, repeats allowed) asks for those rows' states only, [keep.length,
   * hidden]: nothing reads the other rows' last-layer outputs, so the last layer runs its attention's output
   * projection and its MLP on the kept rows alone (lastLayer). The policy rows of a training pass are about a third
   * of its rows; a prefill reads one row each.
   */
  hidden(input: TokenBatch, cache?: KVCache, keep?: Int32Array): Tensor {
    const e = this.engine;
    const leave = e.profile?.enterOuter(`forward ${this.profileName}`, input.batch * input.time);
    try {
      return this.hiddenStates(input, cache, keep);
    } finally {
      leave?.();
    }
  }

  private hiddenStates(input: TokenBatch, cache?: KVCache, keep?: Int32Array): Tensor {
    const e = this.engine;
    const c = this.cfg;
    const { batch: B, time: T, deviceIds } = input;
    const count = deviceIds ? deviceIds.size : input.ids.length;
    if (count !== B * T) throw new Error(`piplay: ${count} token ids do not fill a ${B}x${T} batch`);
    for (const id of input.ids) {
      if (id < 0 || id >= c.vocabSize)
        throw new Error(`piplay: token id ${id} is outside the vocabulary (size ${c.vocabSize})`);
    }
    const posHost = input.positions ?? defaultPositions(B, T, cache?.length ?? 0);
    const positions = e.tensor(posHost, [B, T], 'i32');
    const keyStart = input.keyStart ? e.tensor(input.keyStart, [B], 'i32') : null;
    if (input.keyEnd && cache) throw new Error('piplay: a prefix-tree batch is for training passes, not a KV cache');
    const keyEnd = input.keyEnd ? e.tensor(input.keyEnd, [B, T], 'i32') : null;
    let x: Tensor;
    if (deviceIds) {
      const table = this.vocabShards(EMBED);
      if (table.length !== 1) throw new Error('piplay: ids on the GPU need an embedding table in one piece');
      x = embedding(table[0]!, deviceIds.reshape([B, T]));
    } else x = shardedEmbedding(this.vocabShards(EMBED), e.tensor(input.ids, [B, T], 'i32'), input.ids);
    // Without a tape (a teacher or reference pass, generation) nothing needs a layer's intermediates once
    // the layer is done: each layer runs in its own tidy, so a pass holds one layer's at a time, not all,
    // and the residual stream of two layers.
    const tidyLayers = !e.recording;
    const saved = [positions, ...(keyStart ? [keyStart] : []), ...(keyEnd ? [keyEnd] : [])];
    const rows: Rows = { positions, keyStart, keyEnd, B, T, cache, posHost };
    if (keep) checkKeep(keep, B, T);
    for (let l = 0; l < c.layers; l++) {
      const kept = l === c.layers - 1 ? keep : undefined;
      const layer = (x: Tensor): Tensor => (kept ? this.lastLayer(l, x, rows, kept) : this.layer(l, x, rows));
      if (tidyLayers) {
        // Without a tape nothing reads a layer's input once the layer is done.
        const next = e.tidy(() => layer(x));
        x.dispose();
        x = next;
      } else if (this.recompute && !cache) x = recomputed(e, x, this.layerParams(l), saved, layer);
      else x = layer(x);
    }
    if (cache) cache.length += T;
    if (keep?.length === 0) return x;
    return rmsnorm(x, this.param('model.norm.weight'), c.rmsEps);
  }

  /** The parameters (and adapters) of decoder layer `l`. */
  private layerParams(l: number): Tensor[] {
    const pre = `model.layers.${l}.`;
    const all = [...this.params.values(), ...(this.lora?.parameters() ?? [])];
    return all.filter((p) => p.name?.startsWith(pre));
  }

  /** One decoder block over x [B, T, hidden]: pre-norm attention, then a pre-norm MLP, each a residual. */
  private layer(l: number, x: Tensor, rows: Rows): Tensor {
    const pre = `model.layers.${l}`;
    x = add(x, this.proj(this.attn(l, this.norm(x, `${pre}.input_layernorm`), rows), `${pre}.self_attn.o_proj`));
    return add(x, this.mlp(l, this.norm(x, `${pre}.post_attention_layernorm`)));
  }

  private norm(x: Tensor, name: string): Tensor {
    return rmsnorm(x, this.param(`${name}.weight`), this.cfg.rmsEps);
  }

  /**
   * The last decoder block where only the rows `keep` are read: every row's keys and values, but the attention's
   * output projection and the MLP on the kept rows only ([keep.length, hidden]). Only the kept rows' queries attend
   * where attention takes query columns (a CPU driver's lanes kernels), or where a cache's kept rows are each row's
   * last column (a prefill); where none are kept, the block only appends its keys and values.
   */
  private lastLayer(l: number, x: Tensor, rows: Rows, keep: Int32Array): Tensor {
    const e = this.engine;
    const c = this.cfg;
    const { B, T } = rows;
    const pre = `model.layers.${l}`;
    const h = this.norm(x, `${pre}.input_layernorm`);
    const flat = (t: Tensor) => t.reshape([B * T, t.size / (B * T)]);
    if (keep.length === 0) {
      if (rows.cache) this.keysAndValues(l, h, rows);
      return e.empty([0, c.hidden]);
    }
    const positionsOf = (at: Int32Array, Tq: number) =>
      e.tensor(
        Int32Array.from(at, (r) => rows.posHost[r]!),
        [B, Tq],
        'i32',
      );
    let o: Tensor;
    if (rows.cache && isLastColumns(keep, B, T)) {
      const queries = { h: gatherRows(flat(h), keep).reshape([B, 1, c.hidden]), positions: positionsOf(keep, 1) };
      o = this.attn(l, h, rows, queries).reshape([B, c.heads * c.headDim]);
    } else if (!rows.cache && takesQueryColumns(e, c.headDim)) {
      const q = keptQueries(keep, B, T);
      const queries = {
        h: gatherRows(flat(h), q.flat).reshape([B, q.Tq, c.hidden]),
        positions: positionsOf(q.flat, q.Tq),
        columns: e.tensor(q.columns, [B, q.Tq], 'i32'),
      };
      o = gatherRows(this.attn(l, h, rows, queries).reshape([B * q.Tq, c.heads * c.headDim]), q.index);
    } else o = gatherRows(flat(this.attn(l, h, rows)), keep);
    const kept = add(gatherRows(flat(x), keep), this.proj(o, `${pre}.self_attn.o_proj`));
    return add(kept, this.mlp(l, this.norm(kept, `${pre}.post_attention_layernorm`)));
  }

  /** Layer l's keys and values [B, T, kvHeads, Dh] of normed rows h, rotated (and appended to the cache when given). */
  private keysAndValues(l: number, h: Tensor, { positions, B, T, cache }: Rows): { k: Tensor; v: Tensor } {
    const c = this.cfg;
    const pre = `model.layers.${l}.self_attn`;
    let k = this.proj(h, `${pre}.k_proj`, c.attentionBias).reshape([B, T, c.kvHeads, c.headDim]);
    const v = this.proj(h, `${pre}.v_proj`, c.attentionBias).reshape([B, T, c.kvHeads, c.headDim]);
    if (c.qkNorm) k = this.norm(k, `${pre}.k_norm`);
    k = rope(k, positions, c.ropeTheta);
    if (cache) kvAppend(k, v, cache.keys[l]!, cache.values[l]!, cache.length);
    return { k, v };
  }

  /**
   * Causal self-attention of layer `l` over normed rows h [B, T, hidden] (appending to `cache` when given), before
   * its output projection: [B, Tq, heads * Dh]. The queries are every row's, or `queries`' where only those attend.
   */
  private attn(l: number, h: Tensor, rows: Rows, queries?: Queries): Tensor {
    const { keyStart, keyEnd, B, T, cache } = rows;
    const c = this.cfg;
    const Dh = c.headDim;
    const pre = `model.layers.${l}.self_attn`;
    const hq = queries?.h ?? h;
    const Tq = hq.shape[1]!;
    let q = this.proj(hq, `${pre}.q_proj`, c.attentionBias).reshape([B, Tq, c.heads, Dh]);
    if (c.qkNorm) q = this.norm(q, `${pre}.q_norm`);
    q = rope(q, queries?.positions ?? rows.positions, c.ropeTheta);
    const { k, v } = this.keysAndValues(l, h, rows);
    // Attention reads q, k and v as the projections lay them out ([B, T, heads, Dh]) and writes o so: no permutes.
    let o: Tensor;
    if (cache) {
      o = attention(q, cache.keys[l]!, cache.values[l]!, {
        kvLength: cache.length + T,
        kvCapacity: cache.capacity,
        keyStart: keyStart ?? undefined,
        cacheRows: true,
        layout: 'tokens',
      });
    } else {
      const queryColumns = queries?.columns;
      o = attention(q, k, v, {
        keyStart: keyStart ?? undefined,
        keyEnd: keyEnd ?? undefined,
        layout: 'tokens',
        queryColumns,
      });
    }
    return o.reshape([B, Tq, c.heads * Dh]);
  }

  /** The SwiGLU MLP of layer `l` over normed rows h. */
  private mlp(l: number, h: Tensor): Tensor {
    const pre = `model.layers.${l}.mlp`;
    return this.proj(swiglu(this.proj(h, `${pre}.gate_proj`), this.proj(h, `${pre}.up_proj`)), `${pre}.down_proj`);
  }

  /** Vocabulary logits of hidden rows: [..., hidden] -> [..., vocab]. */
  logits(hidden: Tensor): Tensor {
    const leave = this.engine.profile?.enterOuter(`forward ${this.profileName}`);
    try {
      const shards = this.lmHeadShards;
      if (shards.length === 1) return linear(hidden, shards[0]!);
      const D = this.cfg.hidden;
      const z = shardedLinear(hidden.reshape([hidden.size / D, D]), shards);
      return z.reshape([...hidden.shape.slice(0, -1), this.cfg.vocabSize]);
    } finally {
      leave?.();
    }
  }

  /**
   * The LM head over hidden rows [..., hidden] with logits times `scale`, for row ops that read logits chunk
   * by chunk (src/gpu/ops/vocab_head.ts): the logits are materialised only where they fit one binding.
   */
  head(hidden: Tensor, scale = 1): VocabHead {
    const D = this.cfg.hidden;
    const leave = this.engine.profile?.enterOuter(`forward ${this.profileName}`);
    try {
      const h = hidden.rank === 2 ? hidden : hidden.reshape([hidden.size / D, D]);
      return vocabHead(h, this.lmHeadShards, scale);
    } finally {
      leave?.();
    }
  }

  /** Logits at chosen flat positions (row b, time t -> b*time + t) only: [rows.length, vocab]. */
  logitsAt(hidden: Tensor, rows: Int32Array): Tensor {
    const D = this.cfg.hidden;
    return this.logits(gatherRows(hidden.reshape([hidden.size / D, D]), rows));
  }

  /** The LM head (see head) at chosen flat positions (row b, time t -> b*time + t) only. */
  headAt(hidden: Tensor, rows: Int32Array, scale = 1): VocabHead {
    const D = this.cfg.hidden;
    return this.head(gatherRows(hidden.reshape([hidden.size / D, D]), rows), scale);
  }

  /** Full logits [batch, time, vocab]. */
  forward(input: TokenBatch): Tensor {
    return this.logits(this.hidden(input));
  }

  /**
   * An empty KV cache for `batch` rows of up to `capacity` tokens. Its memory is not cleared: every kernel reads
   * a row's keys from its first key up to the cache's length, all written before (by a prefill, a step or
   * kv_move), and clearing a large cache was a fifth of a second per call on lavapipe.
   */
  newCache(batch: number, capacity: number): KVCache {
    const e = this.engine;
    const c = this.cfg;
    const keys: Tensor[] = [];
    const values: Tensor[] = [];
    for (let l = 0; l < c.layers; l++) {
      keys.push(e.keep(e.empty([batch, c.kvHeads, capacity, c.headDim])));
      values.push(e.keep(e.empty([batch, c.kvHeads, capacity, c.headDim])));
    }
    return {
      keys,
      values,
      capacity,
      length: 0,
      batch,
      keepRows(rows) {
        if (rows.length === this.batch && rows.every((r, i) => r === i)) return;
        const idx = Int32Array.from(rows);
        const take = (t: Tensor): Tensor => {
          const [B, ...rest] = t.shape;
          const kept = e.noGrad(() =>
            e.tidy(() => e.keep(gatherRows(t.reshape([B!, t.size / B!]), idx).reshape([idx.length, ...rest]))),
          );
          t.dispose();
          return kept;
        };
        for (let l = 0; l < keys.length; l++) {
          keys[l] = take(keys[l]!);
          values[l] = take(values[l]!);
          e.flush(); // the old layer's buffers become the pool's to reuse (see relayout)
        }
        this.batch = idx.length;
      },
      relayout(capacity, moves) {
        for (let l = 0; l < keys.length; l++) {
          const moved = e.noGrad(() => kvMove(keys[l]!, values[l]!, capacity, moves));
          keys[l]!.dispose();
          values[l]!.dispose();
          keys[l] = e.keep(moved.keys);
          values[l] = e.keep(moved.values);
          // Submitted at once, the old layer's buffers are free before the next layer allocates (a released buffer
          // waits for the next submission: src/gpu/buffer-pool.ts); else every old layer would stay beside the new.
          e.flush();
        }
        this.batch = moves.length;
        this.capacity = capacity;
      },
      dispose() {
        for (const t of [...keys, ...values]) t.dispose();
      },
    };
  }

  /** Parameter count (without adapters). */
  numParameters(): number {
    let n = 0;
    for (const p of this.params.values()) n += p.size;
    return n;
  }

  /** Copies every parameter to the host, by HF name (for export and checkpoints). */
  /**
   * The weights on the host, by HF name. With `mergeLora`, adapted projections carry their adapters folded
   * in (an export); without, the frozen base weights (what adapters are trained on).
   */
  async toHost(opts: { mergeLora?: boolean } = {}): Promise<Map<string, HostTensor>> {
    const out = new Map<string, HostTensor>();
    for await (const [name, t] of this.hostTensors(opts)) out.set(name, t);
    return out;
  }

  /**
   * The weights read back one tensor at a time (as toHost gives them), so a caller that converts or writes
   * each as it comes holds one f32 tensor on the host, not the whole model.
   */
  async *hostTensors(opts: { mergeLora?: boolean } = {}): AsyncGenerator<[string, HostTensor]> {
    const joined = new Set<string>();
    const lora = opts.mergeLora ? this.lora : null;
    for (const [name, p] of this.params) {
      const shard = parseShardName(name);
      if (shard) {
        if (!joined.has(shard.base)) {
          joined.add(shard.base);
          yield [shard.base, await this.joinShards(shard.base)];
        }
        continue;
      }
      if (!lora || !name.endsWith('.weight')) {
        yield [name, { data: await p.readF32(), shape: [...p.shape] }];
        continue;
      }
      const e = this.engine;
      const w = e.noGrad(() => e.tidy(() => lora.merged(name.slice(0, -'.weight'.length), p)));
      const data = await w.readF32();
      if (w !== p) w.dispose();
      yield [name, { data, shape: [...p.shape] }];
    }
  }

  /** The rows of a sharded vocabulary matrix joined on the host (one shard read back at a time). */
  async joinShards(name: string): Promise<HostTensor> {
    const shards = this.vocabShards(name);
    const D = shards[0]!.shape[1]!;
    const V = shards.reduce((n, s) => n + s.shape[0]!, 0);
    const data = new Float32Array(V * D);
    let at = 0;
    for (const s of shards) {
      data.set(await s.readF32(), at);
      at += s.size;
    }
    return { data, shape: [V, D] };
  }

  dispose(): void {
    for (const p of this.params.values()) p.dispose();
    this.params.clear();
    this.lora?.dispose();
  }
}

function defaultPositions(B: number, T: number, offset: number): Int32Array {
  const pos = new Int32Array(B * T);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) pos[b * T + t] = offset + t;
  return pos;
}
