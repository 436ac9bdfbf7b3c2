// Data movement: KV-cache appends and moves, row gathers.
import type { Engine } from '../engine.ts';
import type { Tensor } from '../tensor.ts';
import { expect } from './util.ts';

/** Workgroup size of the kv_append and gather_rows kernels. */
const WG = 256;

/**
 * keys[b, h, start + t, :] = k[b, t, h, :] and values[...] = v[b, t, h, :] for k and v [B, Tnew, H, Dh] and
 * caches [B', H, capacity, Dh] (B' >= B: rows past B are left alone): one dispatch per layer and step. No autograd.
 */
export function kvAppend(k: Tensor, v: Tensor, keys: Tensor, values: Tensor, start: number): void {
  const e = k.engine;
  expect(k, 'kvAppend keys', { rank: 4, dtype: 'f32' });
  const [B, Tnew, H, Dh] = k.shape as [number, number, number, number];
  expect(v, 'kvAppend values', { shape: [B, Tnew, H, Dh], dtype: 'f32' });
  const capacity = keys.shape[2]!;
  // A cache may hold more rows than the batch: the batch's rows are its first B.
  const rows = Math.max(B, keys.shape[0]!);
  expect(keys, 'kvAppend key cache', { shape: [rows, H, capacity, Dh], dtype: 'f32' });
  expect(values, 'kvAppend value cache', { shape: [rows, H, capacity, Dh], dtype: 'f32' });
  if (start + Tnew > capacity) {
    throw new Error(`piplay: KV cache full: ${start} + ${Tnew} tokens exceed its capacity of ${capacity}`);
  }
  if (k.size === 0) return;
  // Four elements a thread where a head row is whole vec4s (shaders/kv_append_vec4.wgsl).
  const vec4 = Dh % 4 === 0;
  e.dispatch({
    shader: vec4 ? 'kv_append_vec4' : 'kv_append',
    constants: { WG },
    params: { B, Tnew, H, Dh, capacity, start },
    bindings: { k, v, keys, values },
    workgroups: e.grid(vec4 ? k.size / 4 : k.size, WG),
  });
}

/** Where row b of a moved KV cache comes from: `count` positions of old row `srcRow` from `srcStart`, at `dstStart`. */
export interface KVMove {
  srcRow: number;
  srcStart: number;
  dstStart: number;
  count: number;
}

/**
 * A layer's keys and values [*, H, srcCapacity, Dh] laid out anew as [moves.length, H, capacity, Dh]: row b holds
 * the run moves[b] describes; other positions are left unwritten (shaders/kv_move.wgsl). One dispatch. No autograd.
 */
export function kvMove(
  srcKeys: Tensor,
  srcValues: Tensor,
  capacity: number,
  moves: readonly KVMove[],
): { keys: Tensor; values: Tensor } {
  const e = srcKeys.engine;
  expect(srcKeys, 'kvMove key cache', { rank: 4, dtype: 'f32' });
  const [rows, H, srcCapacity, Dh] = srcKeys.shape as [number, number, number, number];
  expect(srcValues, 'kvMove value cache', { shape: [rows, H, srcCapacity, Dh], dtype: 'f32' });
  for (const m of moves) {
    const inside =
      m.count === 0 ||
      (m.srcRow >= 0 &&
        m.srcRow < rows &&
        m.srcStart >= 0 &&
        m.srcStart + m.count <= srcCapacity &&
        m.dstStart >= 0 &&
        m.dstStart + m.count <= capacity);
    if (!inside || m.count < 0) {
      throw new Error(
        `piplay: kvMove: a move (${JSON.stringify(m)}) falls outside the caches ${rows}x${srcCapacity} -> ${capacity}`,
      );
    }
  }
  const B = moves.length;
  const keys = e.empty([B, H, capacity, Dh]);
  const values = e.empty([B, H, capacity, Dh]);
  if (keys.size === 0) return { keys, values };
  const table = e.tensor(
    Int32Array.from(moves.flatMap((m) => [m.srcRow, m.srcStart, m.dstStart, m.count])),
    [B, 4],
    'i32',
  );
  try {
    // A thread per element on a GPU (coalesced), per position on a CPU driver (shaders/kv_move.wgsl), copied as
    // vec4s where Dh allows (shaders/kv_move_vec4.wgsl).
    const perPosition = e.info.isCpu;
    e.dispatch({
      shader: perPosition && Dh % 4 === 0 ? 'kv_move_vec4' : 'kv_move',
      entry: perPosition ? 'positions' : 'elements',
      constants: { WG },
      params: { B, H, Dh, capacity, srcCapacity },
      bindings: { moves: table, srcKeys, srcValues, keys, values },
      workgroups: e.grid(B * H * capacity * (perPosition ? 1 : Dh), WG),
    });
  } catch (err) {
    keys.dispose();
    values.dispose();
    throw err;
  } finally {
    table.dispose();
  }
  return { keys, values };
}

/**
 * Rows `idx` of x [N, D] -> [M, D], e.g. the positions of a batch whose logits a loss needs, so that the
 * vocabulary projection runs only there. A row may be listed more than once (a prefix tree's node that predicts
 * the next token of several rollouts): the gradient sums over its copies (scatter_sum), else it scatters back.
 */
export function gatherRows(x: Tensor, idx: Int32Array): Tensor {
  const e = x.engine;
  expect(x, 'gatherRows', { rank: 2, dtype: ['f32', 'i32', 'u32'] });
  const [N, D] = x.shape as [number, number];
  const copies = new Int32Array(N);
  for (const r of idx) {
    if (r < 0 || r >= N) throw new Error(`piplay: gatherRows: row ${r} is outside ${x.describe()}`);
    copies[r]!++;
  }
  const M = idx.length;
  const repeats = copies.some((c) => c > 1);
  if (repeats && x.dtype !== 'f32' && x.requiresGrad)
    throw new Error('piplay: gatherRows: repeated rows of a non-f32 tensor have no summed gradient');
  const out = e.empty([M, D], x.dtype);
  const idxT = e.tensor(idx, [M], 'i32');
  // One thread per element of the M x D rows; nothing to run when there are none.
  const run = (entry: 'gather' | 'scatter', src: Tensor, dst: Tensor) => {
    if (M > 0 && D > 0) {
      e.dispatch({
        shader: 'gather_rows',
        entry,
        constants: { WG },
        params: { M, D, U: 0 },
        bindings: { src, idx: idxT, dst },
        workgroups: e.grid(M * D, WG),
      });
    }
  };
  run('gather', x, out);
  const sums = repeats ? rowSums(e, idx, copies) : null;
  e.record(
    [x],
    [out],
    ([g]) => {
      const dx = e.zeros([N, D]);
      if (!sums) run('scatter', g!, dx);
      else if (D > 0)
        e.dispatch({
          shader: 'gather_rows',
          entry: 'scatter_sum',
          constants: { WG },
          params: { M, D, U: sums.rows },
          bindings: { src: g!, idx: sums.table, dst: dx },
          workgroups: e.grid(sums.rows * D, WG),
        });
      return [dx];
    },
    sums ? [idxT, sums.table] : [idxT],
  );
  idxT.dispose();
  sums?.table.dispose();
  return out;
}

/** scatter_sum's table for idx (gather_rows.wgsl): the distinct rows, the offsets of their lists, the lists. */
function rowSums(e: Engine, idx: Int32Array, copies: Int32Array): { rows: number; table: Tensor } {
  const rows: number[] = [];
  const first = new Int32Array(copies.length);
  for (let r = 0; r < copies.length; r++) {
    if (copies[r] === 0) continue;
    first[r] = rows.length;
    rows.push(r);
  }
  const U = rows.length;
  const table = new Int32Array(2 * U + 1 + idx.length);
  table.set(rows, 0);
  // Offsets: row u's list starts after the lists of the rows before it.
  let at = 0;
  rows.forEach((r, u) => {
    table[U + u] = at;
    at += copies[r]!;
  });
  table[2 * U] = at;
  const fill = table.slice(U, 2 * U);
  idx.forEach((r, m) => {
    table[2 * U + 1 + fill[first[r]!]!++] = m;
  });
  return { rows: U, table: e.tensor(table, [table.length], 'i32') };
}
