import { describe, it, beforeAll, expect } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { embedding, idLists } from '../../../../src/gpu/ops/embedding.ts';
import { linear } from '../../../../src/gpu/ops/matmul.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { randint, randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { forwardBackward } from '../../../helpers/forward-backward.ts';

/** float64 gather and scatter-add of upstream g [N, D] into [V, D]. */
function refEmbedding(table: Float32Array, ids: Int32Array, g: Float32Array, V: number, D: number) {
  const y = new Float64Array(ids.length * D);
  const dt = new Float64Array(V * D);
  ids.forEach((id, n) => {
    for (let c = 0; c < D; c++) {
      y[n * D + c] = table[id * D + c]!;
      dt[id * D + c] += g[n * D + c]!;
    }
  });
  return { y, dt };
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('embedding', () => {
  const cases: { V: number; D: number; idsShape: number[]; label: string }[] = [
    { V: 1, D: 1, idsShape: [1], label: 'one id' },
    { V: 50, D: 7, idsShape: [3, 11], label: 'ids [3, 11]' },
    { V: 1000, D: 65, idsShape: [2, 5, 9], label: 'rank-3 ids' },
    { V: 5, D: 130, idsShape: [300], label: 'heavy repeats' },
    { V: 3000, D: 16, idsShape: [4, 64], label: 'large vocabulary' },
  ];
  for (const { V, D, idsShape, label } of cases) {
    for (const withHost of [true, false]) {
      it(`${label} (V ${V}, D ${D}), position lists built on the ${withHost ? 'host' : 'GPU'}`, async () => {
        const N = idsShape.reduce((a, b) => a * b, 1);
        const table = randn(V * D, V + D);
        const ids = randint(N, V, N + V);
        const g = randn(N * D, N + 1);
        const got = await forwardBackward(
          e,
          [
            { data: table, shape: [V, D] },
            { data: ids, shape: idsShape, dtype: 'i32' },
          ],
          ([t, i]) => embedding(t!, i!, withHost ? ids : undefined),
          g,
        );
        const want = refEmbedding(table, ids, g, V, D);
        expect(Array.from(got.y)).toEqual(Array.from(want.y)); // a gather copies exactly
        expectClose(got.grads[0]!, want.dt, 1e-5, 1e-5, 'dtable');
        expect(got.grads[1]).toBeNull();
      });
    }
  }

  it('ids with many repeats on the GPU path (N = 3000, V = 40)', async () => {
    const [V, D, N] = [40, 70, 3000];
    const table = randn(V * D, 1);
    const ids = randint(N, V, 2);
    const g = randn(N * D, 3);
    const got = await forwardBackward(
      e,
      [
        { data: table, shape: [V, D] },
        { data: ids, shape: [N], dtype: 'i32' },
      ],
      ([t, i]) => embedding(t!, i!),
      g,
    );
    expectClose(got.grads[0]!, refEmbedding(table, ids, g, V, D).dt, 1e-5, 1e-4, 'dtable');
  });

  it('the scatter is deterministic (bitwise equal across runs and paths)', async () => {
    const [V, D, N] = [9, 33, 500];
    const table = randn(V * D, 4);
    const ids = randint(N, V, 5);
    const g = randn(N * D, 6);
    const run = (host: boolean) =>
      forwardBackward(
        e,
        [
          { data: table, shape: [V, D] },
          { data: ids, shape: [N], dtype: 'i32' },
        ],
        ([t, i]) => embedding(t!, i!, host ? ids : undefined),
        g,
      );
    const a = (await run(true)).grads[0]!;
    const b = (await run(true)).grads[0]!;
    const c = (await run(false)).grads[0]!;
    expect(Array.from(b)).toEqual(Array.from(a));
    expect(Array.from(c)).toEqual(Array.from(a));
  });

  it('idLists chains the positions of each id in order', () => {
    const { next, starts } = idLists(Int32Array.from([4, 2, 4, 4, 0, 2]));
    expect(Array.from(starts)).toEqual([0, 1, 4]);
    expect(Array.from(next)).toEqual([2, 5, 3, -1, -1, -1]);
  });

  it('table gradient matches finite differences', async () => {
    const ids = Int32Array.from([2, 0, 2, 5, 2, 1]);
    await gradCheck(
      e,
      [
        { name: 'table', data: randn(6 * 5, 81), shape: [6, 5] },
        { name: 'ids', data: ids, shape: [2, 3], dtype: 'i32' },
      ],
      ([t, i]) => embedding(t!, i!, ids),
      { samples: 30 },
    );
  });

  it('tied embeddings: gradients of the lookup and the LM head add up', async () => {
    const [V, D, N] = [11, 6, 7];
    const table = randn(V * D, 91);
    const ids = randint(N, V, 92);
    const g = randn(N * V, 93);
    // logits = embedding(table, ids) @ tableᵀ; dtable = scatter(g @ table) + gᵀ @ x
    const got = await forwardBackward(
      e,
      [
        { data: table, shape: [V, D] },
        { data: ids, shape: [N], dtype: 'i32' },
      ],
      ([t, i]) => linear(embedding(t!, i!, ids), t!),
      g,
    );
    const x = refEmbedding(table, ids, new Float32Array(N * D), V, D).y;
    const dx = new Float32Array(N * D);
    const want = new Float64Array(V * D);
    for (let n = 0; n < N; n++)
      for (let v = 0; v < V; v++)
        for (let c = 0; c < D; c++) {
          dx[n * D + c] += g[n * V + v]! * table[v * D + c]!;
          want[v * D + c] += g[n * V + v]! * x[n * D + c]!;
        }
    const scattered = refEmbedding(table, ids, dx, V, D).dt;
    for (let k = 0; k < want.length; k++) want[k] += scattered[k]!;
    expectClose(got.grads[0]!, want, 1e-4, 1e-4, 'dtable');
  });

  it('out-of-range ids: an error with host ids, zero rows without', async () => {
    const table = randn(4 * 3, 1);
    e.tidy(() => {
      const t = e.tensor(table, [4, 3]);
      expect(() => embedding(t, e.tensor(Int32Array.from([1, 4]), [2], 'i32'), Int32Array.from([1, 4]))).toThrow(
        /id 4 at position 1/,
      );
      expect(() => embedding(t, e.tensor(Int32Array.from([1, 2]), [2], 'i32'), Int32Array.from([1]))).toThrow(
        /hostIds/,
      );
    });
    const y = e.tidy(() =>
      e.keep(embedding(e.tensor(table, [4, 3]), e.tensor(Int32Array.from([-1, 2, 9]), [3], 'i32'))),
    );
    expect(Array.from(await y.read())).toEqual([0, 0, 0, ...table.slice(6, 9), 0, 0, 0]);
    y.dispose();
  });
});
