// Fused causal attention with grouped-query heads, for training (Tq == Tk) and KV-cache decoding (queries
// are the last positions of a longer key sequence). Two kernel variants with identical semantics:
//   tiled - shaders/attention_fwd.wgsl, attention_bwd.wgsl: K/V (or Q/dO) blocks staged in workgroup
//           memory, several threads per row. Best on real GPUs.
//   rows  - shaders/attention_rows_fwd.wgsl, attention_rows_bwd.wgsl: each invocation a register tile of
//           8-16 rows against blocks of 8 keys (or queries) streamed straight from storage, no workgroup
//           memory. Best on CPU drivers (lavapipe), which load every element lane by lane: the tile makes
//           each load feed several multiply-adds.
//   split - shaders/attention_split_fwd.wgsl: the rows forward with the keys split across the 8 lanes of a
//           subgroup, for kv heads with few query rows (decoding), where 'rows' would leave lanes idle; the
//           backward is the rows one. No prefix-tree mask (keyEnd): with one, the forward is 'lanes' or 'rows'.
//   lanes - shaders/attention_lanes_fwd.wgsl: the rows forward for subgroups of 8 lanes, each key and value
//           row loaded by one lane and broadcast to the others, q and the sums held at fixed indices for a head
//           dim that is a pipeline constant (a multiple of 4 up to LANES_MAX_HEAD_DIM; the forward's arrays sized by
//           it in the shader's text). A CPU driver's forward wherever it applies and 'split' does not.
//           shaders/attention_lanes_bwd.wgsl: the rows backward shaped the same way, a CPU driver's backward wherever
//           the head dim fits it. Only these take queryColumns (some of a pass's queries, by position).
import type { Engine } from '../engine.ts';
import type { Tensor } from '../tensor.ts';
import { expect, subgroupsOf8 } from './util.ts';
import { copy2d } from './vocab_head.ts';

export interface AttentionOptions {
  /** Score scale (default 1 / sqrt(Dh)). */
  scale?: number;
  /** Valid key positions Tk: only k/v time steps [0, Tk) are read (default: k's time dimension). */
  kvLength?: number;
  /** The allocated time dimension of k and v (a cache); checked against k.shape[2] when given. */
  kvCapacity?: number;
  /** Absolute position of query 0 (default Tk - Tq: the queries are the last Tq positions). */
  queryOffset?: number;
  /** i32 [B]: each batch row's first valid key (left padding); earlier keys are masked. */
  keyStart?: Tensor | null;
  /**
   * i32 [B, Tk]: a prefix-tree mask for rows that pack several sequences sharing prefixes as one tree in depth-first
   * order (training passes only: no cacheRows, queryOffset 0). keyEnd[b, j] is the end of key j's subtree, the
   * contiguous range [j, keyEnd[b, j]) of the row; query i then sees key j only if also i < keyEnd[b, j] (j is an
   * ancestor of i or i itself). Subtrees must nest, as depth-first packing makes them (j < j' < keyEnd[b, j]
   * implies keyEnd[b, j'] <= keyEnd[b, j]): the kernels skip a subtree that a tile of queries does not see whole.
   * A plain row is keyEnd = Tk (or more) everywhere: exactly the causal mask.
   */
  keyEnd?: Tensor | null;
  /**
   * i32 [B, Tq]: the position of each query (some of a pass's, not decreasing along a row) instead of
   * queryOffset + i, for a pass that reads only those queries' outputs (CausalLM's last layer). The 'lanes'
   * kernels only (takesQueryColumns); not with cacheRows or queryOffset.
   */
  queryColumns?: Tensor | null;
  /** k and v are a KV cache whose first B rows the batch uses (it may hold more; a pass without a tape only). */
  cacheRows?: boolean;
  /**
   * The layout of q (and o and the gradients): 'heads', [B, Hq, Tq, Dh] (default), or 'tokens', [B, Tq, Hq, Dh], the
   * projections' own layout, which then needs no permute on either pass. k and v take the same layout, except a
   * cache (cacheRows), which is always [B, Hkv, cap, Dh].
   */
  layout?: 'heads' | 'tokens';
}

/** Workgroup memory the kernels may use (the engine's required minimum). */
const WG_BYTES = 16384;
/** Threads per workgroup of the 'tiled' kernels (their WG). */
const WG = 64;
/** Largest head dimension: 16 threads per row x 8 vec4s each. */
export const ATTENTION_MAX_HEAD_DIM = 512;
/**
 * Sizes of the workgroup arrays in the CPU-driver pipelines (the shaders' default TILE and PART), which
 * serve every head dimension: [vec4s per tile, slots per partial-sum array].
 */
const CPU_ARRAYS = { fwd: [384, 1024], bwd: [320, 704] } as const;

/** Threads per workgroup of the 'rows' kernels (their WG). */
const ROWS_THREADS = 16;
/**
 * Rows per thread of the 'rows' kernels, as their shaders' TR and KR declare: query rows of the forward and of
 * dq, key rows of dK/dV. The split forward's workgroup takes one tile of SPLIT_TILE query rows.
 */
const ROWS_TILE = { fwd: 16, dq: 8, dkv: 8 } as const;
/** Query rows (dq) and key rows (dkv) per workgroup of the 'rows' backward. */
const ROWS_PER_GROUP = { dq: ROWS_TILE.dq * ROWS_THREADS, dkv: ROWS_TILE.dkv * ROWS_THREADS };
const SPLIT_TILE = 4;

/**
 * Largest number of SPLIT_TILE-row tiles per kv head for which a CPU driver's forward splits the keys across
 * lanes ('split'): the rows kernel would run those 16 rows on one lane of its subgroup, the others idle.
 */
const SPLIT_MAX_TILES = 4;

/** Query rows per lane of the 'lanes' forward (its TR); its workgroup is one subgroup of 8 lanes. */
const LANES_TILE = 4;
/** Query rows (forward, dq) and key rows (dkv) per workgroup of the 'lanes' kernels: 8 lanes of LANES_TILE. */
const LANES_PER_GROUP = { dq: LANES_TILE * 8, dkv: LANES_TILE * 8 };
/** Largest head dim of the 'lanes' forward (its MAXDH): its loops over the head dim are unrolled. */
const LANES_MAX_HEAD_DIM = 64;

export type AttentionVariant = 'rows' | 'split' | 'lanes' | 'tiled';
let forcedVariant: AttentionVariant | null = null;

/**
 * Forces one kernel variant for every shape (tests and benchmarks; 'split' and 'lanes' need subgroups of 8 lanes
 * and fall back to 'rows' where they do not apply); `null` picks by device and shape (CPU driver, subgroups of 8
 * lanes: split for few query rows per kv head, else lanes where the head dim fits it, else rows; GPU: tiled).
 */
export function setAttentionVariant(v: AttentionVariant | null): void {
  forcedVariant = v;
}

/** The kernel family: 'rows' (its forward maybe split, see forwardVariant) or 'tiled'. */
function variant(e: Engine): 'rows' | 'tiled' {
  return (forcedVariant ?? (e.info.isCpu ? 'rows' : 'tiled')) === 'tiled' ? 'tiled' : 'rows';
}

/** The SPLIT_TILE-row tiles of a kv head's query rows: the 'split' kernel's workgroups along x. */
function rowTiles(g: Geometry): number {
  return Math.ceil(((g.Hq / g.Hkv) * g.Tq) / SPLIT_TILE);
}

function forwardVariant(e: Engine, g: Geometry, tree: boolean): AttentionVariant {
  if (variant(e) === 'tiled') return 'tiled';
  if (!subgroupsOf8(e) || forcedVariant === 'rows') return 'rows';
  if (!tree && (forcedVariant === 'split' || (forcedVariant === null && rowTiles(g) <= SPLIT_MAX_TILES)))
    return 'split';
  return lanesFit(e, g.Dh) ? 'lanes' : 'rows';
}

/** Whether attention takes queryColumns on this engine at head dim Dh: the 'lanes' kernels run it both ways. */
export function takesQueryColumns(e: Engine, Dh: number): boolean {
  return variant(e) === 'rows' && lanesFit(e, Dh);
}

/** Whether the 'lanes' kernels run head dim Dh (a forward not taken by 'split', and every backward). */
function lanesFit(e: Engine, Dh: number): boolean {
  const allowed = forcedVariant === null || forcedVariant === 'lanes';
  return allowed && subgroupsOf8(e) && Dh % 4 === 0 && Dh <= LANES_MAX_HEAD_DIM;
}

let forcedFixed: boolean | null = null;

/**
 * For the tiled variant: forces the GPU (`true`: compile-time layouts) or CPU-driver (`false`) pipelines;
 * `null` picks by device.
 */
export function setAttentionFixedLayout(fixed: boolean | null): void {
  forcedFixed = fixed;
}

/**
 * Thread layout for a head dimension: nc threads per row, cv vec4s each, bk keys (or queries) per block.
 * On GPUs each layout compiles its own pipeline with the sizes as constants (`FIXED`); CPU drivers use
 * one pipeline for every layout, with the shaders' default array sizes.
 */
function layout(e: Engine, Dh: number, pass: 'fwd' | 'bwd') {
  let nc = 1;
  while (Math.ceil(Dh / nc) > 32) nc *= 2;
  const cv = Math.ceil(Math.ceil(Dh / nc) / 4);
  const vec4s = nc * cv;
  let bk: number;
  let constants: Record<string, number | boolean> = { WG };
  if (!(forcedFixed ?? !e.info.isCpu)) {
    const [tile, part] = CPU_ARRAYS[pass];
    bk = Math.min(Math.floor(tile / vec4s), Math.floor(part / WG));
  } else {
    // Two [bk, vec4s] tiles plus WG partial sums per block item (two of them, and (lse, D), backward).
    const perItem = 32 * vec4s + (pass === 'bwd' ? 8 * WG + 8 : 4 * WG);
    bk = Math.min(32, Math.floor(WG_BYTES / perItem));
    constants = { WG, FIXED: true, NC: nc, CV: cv, BK: bk, TILE: bk * vec4s, PART: WG * bk };
  }
  return { nc, cv, bk, rows: WG / nc, constants };
}

/** A per-engine i32 placeholder bound when there is no key mask (the kernels then never read it). */
const placeholders = new WeakMap<Engine, Tensor>();
function placeholder(e: Engine): Tensor {
  let t = placeholders.get(e);
  if (!t || t.isDisposed) {
    t = e.keep(e.tensor(new Int32Array(1), [1], 'i32'));
    placeholders.set(e, t);
  }
  return t;
}

interface Geometry {
  B: number;
  Hq: number;
  Hkv: number;
  Tq: number;
  Tk: number;
  cap: number;
  Dh: number;
  off: number;
  scale: number;
  /** Strides of a head and of a time step in q (qH, qT) and in k (kH, kT): the layouts (attention_inputs.wgsl). */
  qH: number;
  qT: number;
  kH: number;
  kT: number;
}

/**
 * The key mask as the kernels bind it, in their one i32 binding `keyStart` (the backward kernels bind the 8 storage
 * buffers WebGPU guarantees, so the subtree ends cannot have one of their own): [B] first keys, then, with a tree,
 * the [B, Tk] subtree ends from word `ends` (0: none). The kernels read it in shaders/lib/attention_key_mask.wgsl.
 */
interface KeyMask {
  buffer: Tensor | null;
  hasKeyStart: boolean;
  ends: number;
  /** Where the query columns start in the buffer (0: none). */
  cols: number;
}

/**
 * keyStart, keyEnd and the query columns in one tensor: the ends copied after the first keys (left unset, unread,
 * without keyStart), the columns after them.
 */
function keyMask(keyStart: Tensor | null, keyEnd: Tensor | null, cols: Tensor | null, B: number): KeyMask {
  if (!keyEnd && !cols) return { buffer: keyStart, hasKeyStart: keyStart !== null, ends: 0, cols: 0 };
  const e = (keyEnd ?? cols)!.engine;
  const colsAt = B + (keyEnd?.size ?? 0);
  const buffer = e.empty([colsAt + (cols?.size ?? 0)], 'i32');
  if (keyStart) copy2d(keyStart, buffer, { R: 1, C: B, sStride: 0, dStride: 0 });
  if (keyEnd) copy2d(keyEnd, buffer, { R: 1, C: keyEnd.size, sStride: 0, dOff: B, dStride: 0 });
  if (cols) copy2d(cols, buffer, { R: 1, C: cols.size, sStride: 0, dOff: colsAt, dStride: 0 });
  return { buffer, hasKeyStart: keyStart !== null, ends: keyEnd ? B : 0, cols: cols ? colsAt : 0 };
}

function params(g: Geometry, l: { nc: number; cv: number; bk: number }, mask: KeyMask) {
  return { ...rowsParams(g, mask), nc: l.nc, cv: l.cv, bk: l.bk };
}

/** Uniform of the 'rows' kernels. */
function rowsParams(g: Geometry, mask: KeyMask) {
  const { Hq, Hkv, Tq, Tk, cap, Dh, off, scale, qH, qT, kH, kT } = g;
  const keys = { hasKeyStart: mask.hasKeyStart ? 1 : 0, keyEnds: mask.ends, queryCols: mask.cols };
  return { Hq, Hkv, Tq, Tk, cap, Dh, off, scale, ...keys, qH, qT, kH, kT };
}

/** The constants of the 'rows' kernels. */
const ROWS_CONSTANTS = { WG: ROWS_THREADS };

function checkGrid(e: Engine, x: number, what: string): void {
  const cap = e.info.limits.maxComputeWorkgroupsPerDimension;
  if (x > cap)
    throw new Error(`piplay: attention: ${what} needs ${x} workgroups in one dimension, more than this GPU's ${cap}`);
}

/**
 * Causal softmax(scale * q kᵀ) v with grouped-query heads, fused (the [Tq, Tk] scores are never stored).
 *
 * q [B, Hq, Tq, Dh]; k, v [B, Hkv, cap, Dh] (or token-major, see `layout`; k and v may have more rows with
 * `cacheRows`: the first B are read) with Hq a
 * multiple of Hkv (query head h reads kv head floor(h / (Hq / Hkv))); returns o [B, Hq, Tq, Dh]. Only the first
 * `kvLength` (Tk) time steps of k/v are valid. Query i sits at absolute position `queryOffset` + i (default
 * Tk - Tq) and attends to keys j with keyStart[b] <= j <= queryOffset + i (and, with keyEnd, i < keyEnd[b, j]). A
 * query that sees no key gets zeros. Differentiable in q, k and v (gradients of k and v have k's shape, zero at
 * positions no query sees).
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, opts: AttentionOptions = {}): Tensor {
  const e = q.engine;
  expect(q, 'attention q', { dtype: 'f32', rank: 4 });
  expect(k, 'attention k', { dtype: 'f32', rank: 4 });
  expect(v, 'attention v', { dtype: 'f32', shape: k.shape });
  const tokens = opts.layout === 'tokens';
  if (opts.layout !== undefined && !tokens && opts.layout !== 'heads') {
    throw new Error(`piplay: attention: layout must be 'heads' or 'tokens', got '${String(opts.layout)}'`);
  }
  const kvTokens = tokens && !opts.cacheRows;
  const [B, Tq, Hq, Dh] = batchTimeHeads(q, tokens);
  const [Bk, cap, Hkv, Dk] = batchTimeHeads(k, kvTokens);
  // k and v may hold more rows than q where they are a cache whose first B rows the batch uses (cacheRows).
  if (Bk < B || (Bk > B && (!opts.cacheRows || e.recording)) || Dk !== Dh) {
    throw new Error(
      `piplay: attention: k ${k.describe()} does not match q ${q.describe()} (batch and head dim must agree)`,
    );
  }
  if (Hkv === 0 || Hq % Hkv !== 0) {
    throw new Error(`piplay: attention: q has ${Hq} heads, not a multiple of k's ${Hkv} kv heads`);
  }
  if (Dh < 1 || Dh > ATTENTION_MAX_HEAD_DIM) {
    throw new Error(`piplay: attention: head dim ${Dh} is outside 1..${ATTENTION_MAX_HEAD_DIM}`);
  }
  if (opts.kvCapacity !== undefined && opts.kvCapacity !== cap) {
    throw new Error(`piplay: attention: kvCapacity ${opts.kvCapacity} but k ${k.describe()} has ${cap} time steps`);
  }
  const Tk = opts.kvLength ?? cap;
  if (!Number.isInteger(Tk) || Tk < 0 || Tk > cap) {
    throw new Error(`piplay: attention: kvLength ${Tk} is outside 0..${cap} (k's time steps)`);
  }
  const cols = opts.queryColumns ?? null;
  if (cols) {
    expect(cols, 'attention queryColumns', { dtype: 'i32', shape: [B, Tq] });
    if (opts.cacheRows || opts.queryOffset !== undefined || !takesQueryColumns(e, Dh)) {
      throw new Error(
        'piplay: attention: queryColumns need the lanes kernels (a CPU driver with 8-lane subgroups, a head dim up ' +
          `to ${LANES_MAX_HEAD_DIM}) and go with neither cacheRows nor queryOffset (check takesQueryColumns)`,
      );
    }
  }
  // With query columns the queries' positions are theirs (off is unused).
  const off = cols ? 0 : (opts.queryOffset ?? Tk - Tq);
  if (!Number.isInteger(off) || off < 0 || (!cols && off + Tq > Tk)) {
    throw new Error(
      `piplay: attention: queries at positions ${off}..${off + Tq - 1} must lie within the ${Tk} valid keys ` +
        `(queryOffset ${opts.queryOffset ?? 'default'}, Tq ${Tq})`,
    );
  }
  const keyStart = opts.keyStart ?? null;
  if (keyStart) expect(keyStart, 'attention keyStart', { dtype: 'i32', shape: [B] });
  const keyEnd = opts.keyEnd ?? null;
  if (keyEnd) {
    expect(keyEnd, 'attention keyEnd', { dtype: 'i32', shape: [B, Tk] });
    if (opts.cacheRows || off !== 0) {
      throw new Error(
        `piplay: attention: keyEnd (a prefix-tree mask) is for training passes over whole rows; it cannot go with ` +
          `${opts.cacheRows ? 'cacheRows' : `queryOffset ${off}`} (drop keyEnd, or run the queries from position 0)`,
      );
    }
  }
  const scale = opts.scale ?? 1 / Math.sqrt(Dh);
  // [head, time step] strides of a head-major or token-major tensor.
  const strides = (tokensFirst: boolean, H: number, T: number): [number, number] =>
    tokensFirst ? [Dh, H * Dh] : [T * Dh, Dh];
  const [qH, qT] = strides(tokens, Hq, Tq);
  const [kH, kT] = strides(kvTokens, Hkv, cap);
  const geo: Geometry = { B, Hq, Hkv, Tq, Tk, cap, Dh, off, scale, qH, qT, kH, kT };
  const mask = keyMask(keyStart, keyEnd, cols, B);
  const maskBuffer = mask.buffer ?? placeholder(e);

  const o = e.empty(q.shape);
  const stats = e.empty([B, Hq, Tq, 2]); // (lse, D) per query row, head-major in either layout
  const fwd = cols ? 'lanes' : forwardVariant(e, geo, keyEnd !== null);
  if (o.size > 0 && fwd === 'split') {
    const x = rowTiles(geo);
    checkGrid(e, x, `${Hq / Hkv} x ${Tq} query rows per kv head`);
    e.dispatch({
      shader: 'attention_split_fwd',
      constants: { WG: 8 },
      params: rowsParams(geo, mask),
      bindings: { q, k, v, keyStart: maskBuffer, o, stats },
      workgroups: [x, Hkv, B],
    });
  } else if (o.size > 0 && fwd === 'lanes') {
    const x = Math.ceil(((Hq / Hkv) * Tq) / LANES_PER_GROUP.dq);
    checkGrid(e, x, `${Hq / Hkv} x ${Tq} query rows per kv head`);
    e.dispatch({
      shader: 'attention_lanes_fwd',
      constants: { WG: 8, DH: Dh },
      // Its q and sums arrays sized by the head dim itself, which NIR then unrolls whole (13-15% faster on lavapipe
      // at Dh 24 than with arrays of LANES_MAX_HEAD_DIM; the backward was slower so, bench/NOTES.md round 18).
      source: { MAXDH: Dh },
      params: rowsParams(geo, mask),
      bindings: { q, k, v, keyStart: maskBuffer, o, stats },
      workgroups: [x, Hkv, B],
    });
  } else if (o.size > 0 && fwd === 'rows') {
    const x = Math.ceil(((Hq / Hkv) * Tq) / (ROWS_TILE.fwd * ROWS_THREADS));
    checkGrid(e, x, `${Hq / Hkv} x ${Tq} query rows per kv head`);
    e.dispatch({
      shader: 'attention_rows_fwd',
      constants: ROWS_CONSTANTS,
      params: rowsParams(geo, mask),
      bindings: { q, k, v, keyStart: maskBuffer, o, stats },
      workgroups: [x, Hkv, B],
    });
  } else if (o.size > 0) {
    const l = layout(e, Dh, 'fwd');
    const x = Math.ceil(((Hq / Hkv) * Tq) / l.rows);
    checkGrid(e, x, `${Hq / Hkv} x ${Tq} query rows per kv head`);
    e.dispatch({
      shader: 'attention_fwd',
      constants: l.constants,
      params: params(geo, l, mask),
      bindings: { q, k, v, keyStart: maskBuffer, o, stats },
      workgroups: [x, Hkv, B],
    });
  }
  e.record(
    [q, k, v],
    [o],
    ([dO]) => attentionBackward(q, k, v, o, stats, dO!, mask, geo),
    mask.buffer ? [stats, mask.buffer] : [stats],
  );
  // The tape holds these for the backward if it recorded one; otherwise they are freed now.
  stats.dispose();
  if (keyEnd || cols) mask.buffer!.dispose();
  return o;
}

/** A rank-4 q or k as [batch, time, heads, head dim], from its layout (token-major or head-major). */
function batchTimeHeads(x: Tensor, tokensFirst: boolean): [number, number, number, number] {
  const [b, s1, s2, d] = x.shape as [number, number, number, number];
  return tokensFirst ? [b, s1, s2, d] : [b, s2, s1, d];
}

/** [dq, dk, dv] for an upstream gradient dO (no autograd of its own). */
function attentionBackward(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  o: Tensor,
  stats: Tensor,
  dO: Tensor,
  mask: KeyMask,
  g: Geometry,
): [Tensor, Tensor, Tensor] {
  const e = q.engine;
  const dq = e.empty(q.shape);
  const dk = e.empty(k.shape);
  const dv = e.empty(v.shape);
  if (q.size === 0) {
    if (dk.size > 0) {
      e.fill(dk, 0);
      e.fill(dv, 0);
    }
    return [dq, dk, dv];
  }
  const rows = variant(e) === 'rows';
  const lanes = rows && lanesFit(e, g.Dh);
  const l = rows ? null : layout(e, g.Dh, 'bwd');
  const kernel = {
    shader: lanes ? 'attention_lanes_bwd' : rows ? 'attention_rows_bwd' : 'attention_bwd',
    constants: lanes ? { WG: 8, DH: g.Dh } : l ? l.constants : ROWS_CONSTANTS,
    params: l ? params(g, l, mask) : rowsParams(g, mask),
  };
  const inputs = { q, k, v, keyStart: mask.buffer ?? placeholder(e), stats, dO };
  // dq first: it also writes D = rowsum(dO * O) into stats, which dkv reads.
  const perGroup = lanes ? LANES_PER_GROUP : l ? { dq: l.rows, dkv: l.rows } : ROWS_PER_GROUP;
  const xq = Math.ceil(((g.Hq / g.Hkv) * g.Tq) / perGroup.dq);
  checkGrid(e, xq, 'the dq pass');
  e.dispatch({ ...kernel, entry: 'dq', bindings: { ...inputs, out: dq, aux: o }, workgroups: [xq, g.Hkv, g.B] });
  const xk = Math.ceil(g.cap / perGroup.dkv);
  checkGrid(e, xk, 'the dk/dv pass');
  e.dispatch({ ...kernel, entry: 'dkv', bindings: { ...inputs, out: dk, aux: dv }, workgroups: [xk, g.Hkv, g.B] });
  return [dq, dk, dv];
}
