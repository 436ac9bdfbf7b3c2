import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { gatherRows, kvAppend, kvMove } from '../../../../src/gpu/ops/layout.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { forwardBackward } from '../../../helpers/forward-backward.ts';
import { randn } from '../../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

// Head dims of 4 (copied as vec4s: kv_move_vec4.wgsl, kv_append_vec4.wgsl) and 6 (one number at a time).
describe.each([4, 6])('kvMove, head dim %i', (Dh) => {
  // Positions outside the runs are left unwritten (nothing reads them: generate.gpu.test.ts fills new caches with NaN).
  it('moves each new row its run of positions from an old row; refuses a move outside', async () => {
    const [rows, H, srcCapacity, capacity] = [3, 2, 6, 9];
    const oldK = randn(rows * H * srcCapacity * Dh, 8);
    const oldV = randn(rows * H * srcCapacity * Dh, 9);
    const [sk, sv] = [e.tensor(oldK, [rows, H, srcCapacity, Dh]), e.tensor(oldV, [rows, H, srcCapacity, Dh])];
    // Rows out of order, a shift right, a shift left, a row with nothing kept, a whole row.
    const moves = [
      { srcRow: 2, srcStart: 1, dstStart: 4, count: 3 },
      { srcRow: 0, srcStart: 3, dstStart: 0, count: 3 },
      { srcRow: 0, srcStart: 0, dstStart: 0, count: 0 },
      { srcRow: 1, srcStart: 0, dstStart: 3, count: 6 },
    ];
    const { keys, values } = kvMove(sk, sv, capacity, moves);
    expect(keys.shape).toEqual([moves.length, H, capacity, Dh]);
    // The moved positions: new index -> old index.
    const moved = new Map<number, number>();
    moves.forEach((m, b) => {
      for (let h = 0; h < H; h++)
        for (let t = 0; t < m.count; t++)
          for (let d = 0; d < Dh; d++)
            moved.set(
              ((b * H + h) * capacity + m.dstStart + t) * Dh + d,
              ((m.srcRow * H + h) * srcCapacity + m.srcStart + t) * Dh + d,
            );
    });
    expect(moved.size).toBe(12 * H * Dh);
    for (const [got, src] of [
      [await keys.readF32(), oldK],
      [await values.readF32(), oldV],
    ]) {
      const pick = (a: Float32Array, idx: Iterable<number>) => Array.from(idx, (i) => a[i]);
      expect(pick(got!, moved.keys())).toEqual(pick(src!, moved.values()));
    }
    for (const bad of [
      { srcRow: 3, srcStart: 0, dstStart: 0, count: 1 },
      { srcRow: 0, srcStart: 4, dstStart: 0, count: 3 },
      { srcRow: 0, srcStart: 0, dstStart: 7, count: 3 },
    ]) {
      expect(() => kvMove(sk, sv, capacity, [bad])).toThrow(/kvMove: a move .* falls outside/);
    }
    for (const t of [keys, values, sk, sv]) t.dispose();
  });
});

describe.each([4, 6])('kvAppend, head dim %i', (Dh) => {
  it('writes keys and values [B, T, H, Dh] into both caches [B, H, capacity, Dh] at the offset, nothing else', async () => {
    const [B, T, H, capacity, start] = [2, 3, 2, 7, 2];
    const k = randn(B * T * H * Dh, 5);
    const v = randn(B * T * H * Dh, 6);
    const before = randn(B * H * capacity * Dh, 7);
    const keys = e.tensor(before, [B, H, capacity, Dh]);
    const values = e.tensor(before, [B, H, capacity, Dh]);
    const [kt, vt] = [e.tensor(k, [B, T, H, Dh]), e.tensor(v, [B, T, H, Dh])];
    kvAppend(kt, vt, keys, values, start);
    const want = (src: Float32Array) => {
      const out = Float32Array.from(before);
      for (let b = 0; b < B; b++)
        for (let t = 0; t < T; t++)
          for (let h = 0; h < H; h++)
            for (let d = 0; d < Dh; d++)
              out[((b * H + h) * capacity + start + t) * Dh + d] = src[((b * T + t) * H + h) * Dh + d]!;
      return out;
    };
    expect(Array.from(await keys.readF32())).toEqual(Array.from(want(k)));
    expect(Array.from(await values.readF32())).toEqual(Array.from(want(v)));
    expect(() => kvAppend(kt, vt, keys, values, capacity - T + 1)).toThrow(/KV cache full: 5 \+ 3 tokens/);
    for (const t of [keys, values, kt, vt]) t.dispose();
  });
});

describe('gatherRows', () => {
  it('takes the listed rows and scatters their gradient back, other rows getting 0', async () => {
    const [N, D] = [5, 3];
    const x = randn(N * D, 1);
    const idx = Int32Array.from([3, 0, 4]);
    const g = randn(idx.length * D, 2);
    const got = await forwardBackward(e, [{ data: x, shape: [N, D] }], ([t]) => gatherRows(t!, idx), g);
    const y = Array.from(idx).flatMap((r) => Array.from(x.subarray(r * D, (r + 1) * D)));
    const dx = new Float32Array(N * D);
    idx.forEach((r, i) => dx.set(g.subarray(i * D, (i + 1) * D), r * D));
    expect(Array.from(got.y)).toEqual(y);
    expect(Array.from(got.grads[0]!)).toEqual(Array.from(dx));
  });

  it('sums the gradient of a row listed several times (a prefix tree node predicting for several rollouts)', async () => {
    const [N, D] = [6, 5];
    const x = randn(N * D, 3);
    const idx = Int32Array.from([4, 1, 4, 0, 4, 1]);
    const g = randn(idx.length * D, 4);
    const got = await forwardBackward(e, [{ data: x, shape: [N, D] }], ([t]) => gatherRows(t!, idx), g);
    expect(Array.from(got.y)).toEqual(Array.from(idx).flatMap((r) => Array.from(x.subarray(r * D, (r + 1) * D))));
    // Float64 sums on the host, in the kernel's order (each row's copies in the order listed).
    const dx = new Float64Array(N * D);
    idx.forEach((r, m) => {
      for (let d = 0; d < D; d++) dx[r * D + d] += g[m * D + d]!;
    });
    got.grads[0]!.forEach((v, i) => expect(v).toBeCloseTo(dx[i]!, 6));
    expect(Array.from(got.grads[0]!.subarray(2 * D, 4 * D))).toEqual(new Array(2 * D).fill(0));
  });

  it('gives [0, D] for no rows and refuses a row outside', async () => {
    const x = e.tensor(new Float32Array(6), [2, 3]);
    const none = gatherRows(x, new Int32Array(0));
    expect(none.shape).toEqual([0, 3]);
    none.dispose();
    expect(() => gatherRows(x, Int32Array.from([2]))).toThrow(/row 2 is outside/);
    x.dispose();
  });
});
