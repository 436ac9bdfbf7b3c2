// Embedding lookup with autograd (shaders/embedding.wgsl, shaders/embedding_links.wgsl).
import type { Tensor } from '../tensor.ts';
import { add } from './elementwise.ts';
import { storageFormat } from './packed.ts';
import { expect } from './util.ts';

/** Workgroup sizes: the gather's threads (one per element), the scatter's columns, the list builder's threads. */
const GATHER_WG = 256;
const SCATTER_WG = 64;
const LINKS_WG = 64;

/**
 * The ascending position lists of each distinct id, as embedding.wgsl's scatter reads them:
 * next[n] = the next position with ids[n]'s id (-1 at the end), starts = the first position of each id.
 */
export function idLists(ids: Int32Array): { next: Int32Array; starts: Int32Array } {
  const next = new Int32Array(ids.length).fill(-1);
  const last = new Map<number, number>();
  const starts: number[] = [];
  for (let n = 0; n < ids.length; n++) {
    const id = ids[n]!;
    const prev = last.get(id);
    if (prev === undefined) starts.push(n);
    else next[prev] = n;
    last.set(id, n);
  }
  return { next, starts: Int32Array.from(starts) };
}

/**
 * Rows of `table` [V, D] picked by `ids` (i32, any shape) -> [...ids.shape, D]. Ids outside [0, V) give
 * zero rows (and an error when `hostIds` is given). The gradient of `table` is a deterministic
 * scatter-add (repeated ids sum in position order). Pass `hostIds`, a host copy of the ids (they come
 * from the host anyway), to build the scatter's position lists on the CPU; without it a GPU pass builds
 * them in O(N^2). Tied LM heads that reuse the table get both gradients summed by the tape. A frozen table
 * may be stored as f16 or bf16; the rows come out f32.
 */
export function embedding(table: Tensor, ids: Tensor, hostIds?: Int32Array): Tensor {
  expect(table, 'embedding table', { rank: 2 });
  expect(ids, 'embedding ids', { dtype: 'i32' });
  const V = table.shape[0]!;
  const N = ids.size;
  if (hostIds) {
    if (hostIds.length !== N) {
      throw new Error(`piplay: embedding: hostIds has ${hostIds.length} values but ids ${ids.describe()} has ${N}`);
    }
    const bad = hostIds.findIndex((id) => id < 0 || id >= V);
    if (bad >= 0)
      throw new Error(
        `piplay: embedding: id ${hostIds[bad]} at position ${bad} is outside the table ${table.describe()}`,
      );
  }
  return lookup(table, ids, hostIds ?? null);
}

/**
 * The embedding of a table kept as row shards ([V_k, D] each, in vocabulary order; see src/model/vocab.ts):
 * each shard gathers the ids in its range (the others give zero rows) and the shard outputs are summed, so
 * every position gets exactly its one row; each shard's gradient is the scatter of its own ids.
 */
export function shardedEmbedding(shards: readonly Tensor[], ids: Tensor, hostIds: Int32Array): Tensor {
  if (shards.length === 1) return embedding(shards[0]!, ids, hostIds);
  const e = ids.engine;
  const V = shards.reduce((n, s) => n + s.shape[0]!, 0);
  const bad = hostIds.findIndex((id) => id < 0 || id >= V);
  if (bad >= 0) {
    throw new Error(`piplay: embedding: id ${hostIds[bad]} at position ${bad} is outside the vocabulary (${V})`);
  }
  let sum: Tensor | null = null;
  let first = 0;
  for (const shard of shards) {
    const rows = shard.shape[0]!;
    const local = hostIds.map((id) => (id >= first && id < first + rows ? id - first : -1));
    const localT = e.tensor(local, ids.shape, 'i32');
    const part = lookup(shard, localT, local);
    localT.dispose(); // the tape holds what the backward needs
    if (sum) {
      const next = add(sum, part);
      sum.dispose();
      part.dispose();
      sum = next;
    } else sum = part;
    first += rows;
  }
  return sum!;
}

/** The gather and its recorded scatter; ids outside [0, V) give zero rows and no gradient. */
function lookup(table: Tensor, ids: Tensor, hostIds: Int32Array | null): Tensor {
  const e = table.engine;
  const [V, D] = table.shape as [number, number];
  const N = ids.size;
  const format = storageFormat(table, 'embedding', 'table');
  const out = e.empty([...ids.shape, D]);
  if (out.size > 0) {
    e.dispatch({
      shader: 'embedding',
      entry: 'gather',
      constants: { GATHER_WG, SRC_FORMAT: format },
      params: { N, D, V, S: 0 },
      bindings: { ids, src: table, out },
      workgroups: e.grid(N * D, GATHER_WG),
    });
  }
  // The caller may reuse its array after this call; the backward pass needs these very ids.
  const host = hostIds && e.recording && table.requiresGrad ? Int32Array.from(hostIds) : null;
  e.record([table, ids], [out], ([g]) => [scatterGrad(ids, g!, V, D, host), null]);
  return out;
}

/** dtable [V, D]: zeros, then each distinct id's row = the sum of its positions' gradient rows. */
function scatterGrad(ids: Tensor, g: Tensor, V: number, D: number, hostIds: Int32Array | null): Tensor {
  const e = ids.engine;
  const N = ids.size;
  const dtable = e.zeros([V, D]);
  if (N === 0 || D === 0) return dtable;
  let next: Tensor;
  let starts: Tensor;
  if (hostIds) {
    const lists = idLists(hostIds);
    next = e.tensor(lists.next, [N], 'i32');
    starts = e.tensor(lists.starts, [lists.starts.length], 'i32');
  } else {
    next = e.empty([N], 'i32');
    starts = e.empty([N], 'i32');
    e.dispatch({
      shader: 'embedding_links',
      constants: { WG: LINKS_WG },
      params: { N },
      bindings: { ids, next, starts },
      workgroups: e.grid(N, LINKS_WG),
    });
  }
  const S = starts.size;
  e.dispatch({
    shader: 'embedding',
    entry: 'scatter',
    constants: { WG: SCATTER_WG },
    params: { N, D, V, S },
    bindings: { ids, src: g, out: dtable, next, starts },
    workgroups: e.grid(S * Math.ceil(D / SCATTER_WG), 1),
  });
  next.dispose();
  starts.dispose();
  return dtable;
}
