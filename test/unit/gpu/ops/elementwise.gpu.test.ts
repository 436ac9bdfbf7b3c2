import { describe, it, beforeAll, expect } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import type { Tensor } from '../../../../src/gpu/tensor.ts';
import {
  add,
  sub,
  mul,
  scale,
  axpby,
  exp,
  square,
  sum,
  mean,
  sumRows,
  sumCols,
  transpose2d,
} from '../../../../src/gpu/ops/elementwise.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

const numel = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** Runs `fn` on uploaded inputs and reads its output back (everything else is freed). */
async function run(inputs: [Float32Array, number[]][], fn: (ts: Tensor[]) => Tensor) {
  const out = e.tidy(() => e.keep(fn(inputs.map(([d, s]) => e.tensor(d, s)))));
  const data = await out.read();
  const shape = out.shape;
  out.dispose();
  return { data, shape };
}

/** Fills the pool with freed buffers of a non-zero pattern, so an output a kernel forgets to write shows up. */
async function dirtyPool(): Promise<void> {
  const ts = Array.from({ length: 16 }, () => e.tensor(new Float32Array(64).fill(7), [64]));
  for (const t of ts) t.dispose();
  await e.sync();
  await new Promise((r) => setTimeout(r, 20));
}

describe('binary ops with broadcast vs float64', () => {
  // [a shape, b shape]: same shape, a trailing vector, a trailing block, a scalar; lengths that are multiples of
  // 4 (b repeating in whole vec4s) take elementwise_vec4.wgsl, the others elementwise.wgsl.
  const cases: [number[], number[]][] = [
    [
      [8, 12],
      [8, 12],
    ],
    [[6, 8], [8]],
    [
      [3, 4, 16],
      [4, 16],
    ],
    [[1], [1]],
    [[7], [7]],
    [[3, 5], [5]],
    [[33, 17], [17]],
    [
      [2, 3, 129],
      [3, 129],
    ],
    [[5, 11], [1]],
    [
      [4, 6],
      [2, 3],
    ],
  ];
  const ops = {
    add: { fn: add, ref: (x: number, y: number) => x + y },
    sub: { fn: sub, ref: (x: number, y: number) => x - y },
    mul: { fn: mul, ref: (x: number, y: number) => x * y },
  };
  for (const [name, { fn, ref }] of Object.entries(ops)) {
    for (const [sa, sb] of cases) {
      it(`${name} [${sa}] by [${sb}]`, async () => {
        const a = randn(numel(sa), numel(sa));
        const b = randn(numel(sb), numel(sb) + 1);
        const got = await run(
          [
            [a, sa],
            [b, sb],
          ],
          ([x, y]) => fn(x!, y!),
        );
        expect(got.shape).toEqual(sa);
        expectClose(
          got.data,
          Float64Array.from(a, (x, i) => ref(x, b[i % b.length]!)),
          1e-6,
          1e-7,
        );
      });
    }
  }

  it('axpby', async () => {
    const a = randn(259, 1);
    const b = randn(259, 2);
    const got = await run(
      [
        [a, [7, 37]],
        [b, [7, 37]],
      ],
      ([x, y]) => axpby(0.3, x!, -1.7, y!),
    );
    expectClose(
      got.data,
      Float64Array.from(a, (x, i) => 0.3 * x - 1.7 * b[i]!),
      1e-6,
      1e-6,
    );
  });

  it('rejects an operand that is not a trailing block', () => {
    e.tidy(() => {
      const a = e.tensor(new Float32Array(24), [4, 6]);
      expect(() => add(a, e.tensor(new Float32Array(4), [4]))).toThrow(/does not broadcast/);
      expect(() => mul(a, e.tensor(new Float32Array(5), [5]))).toThrow(/does not broadcast/);
      expect(() => add(e.tensor(new Float32Array(6), [6]), a)).toThrow(/does not broadcast/);
    });
  });
});

describe('unary ops vs float64', () => {
  for (const shape of [[1], [257], [3, 7, 11], [4, 24]]) {
    const n = numel(shape);
    it(`scale, exp, square [${shape}]`, async () => {
      const a = randn(n, n + 5);
      const sc = await run([[a, shape]], ([x]) => scale(x!, -2.5, 0.75));
      expectClose(
        sc.data,
        Float64Array.from(a, (x) => -2.5 * x + 0.75),
        1e-6,
        1e-6,
        'scale',
      );
      const ex = await run([[a, shape]], ([x]) => exp(x!));
      expectClose(ex.data, Float64Array.from(a, Math.exp), 1e-5, 1e-7, 'exp');
      const sq = await run([[a, shape]], ([x]) => square(x!));
      expectClose(
        sq.data,
        Float64Array.from(a, (x) => x * x),
        1e-6,
        1e-7,
        'square',
      );
      expect(sq.shape).toEqual(shape);
    });
  }
});

describe('reductions vs float64', () => {
  for (const n of [1, 255, 256, 257, 70_001]) {
    it(`sum and mean of ${n}`, async () => {
      const a = randn(n, n);
      let s = 0;
      for (const x of a) s += x;
      const got = await run([[a, [n]]], ([x]) => sum(x!, 0.5));
      expect(got.shape).toEqual([]);
      expectClose(got.data, [0.5 * s], 1e-5, 1e-5, 'sum');
      expectClose((await run([[a, [n]]], ([x]) => mean(x!))).data, [s / n], 1e-5, 1e-6, 'mean');
    });
  }

  const rowCases: number[][] = [[1, 1], [5, 300], [3, 257], [2, 3, 5], [9], [70_000, 3]];
  for (const shape of rowCases) {
    it(`sumRows [${shape}]${shape[0]! > 65535 ? ' (more rows than workgroups per dimension)' : ''}`, async () => {
      const C = shape[shape.length - 1]!;
      const R = numel(shape) / C;
      const a = randn(R * C, R + C);
      const want = new Float64Array(R);
      for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) want[r] = want[r]! + 2 * a[r * C + c]!;
      const got = await run([[a, shape]], ([x]) => sumRows(x!, 2));
      expect(got.shape).toEqual(shape.slice(0, -1));
      expectClose(got.data, want, 1e-5, 1e-5);
    });
  }

  for (const [R, C] of [
    [1, 1],
    [300, 5],
    [3, 1000],
    [17, 33],
  ]) {
    it(`sumCols [${R}, ${C}]`, async () => {
      const a = randn(R * C, R * C);
      const want = new Float64Array(C);
      for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) want[c] = want[c]! - a[r * C + c]!;
      const got = await run([[a, [R, C]]], ([x]) => sumCols(x!, -1));
      expectClose(got.data, want, 1e-5, 1e-5);
    });
  }

  it('sums over nothing are 0', async () => {
    await dirtyPool();
    expect(Array.from((await run([[new Float32Array(0), [0]]], ([x]) => sum(x!))).data)).toEqual([0]);
    expect(Array.from((await run([[new Float32Array(0), [0]]], ([x]) => mean(x!))).data)).toEqual([0]);
    const rows = await run([[new Float32Array(0), [3, 0]]], ([x]) => sumRows(x!));
    expect(rows.shape).toEqual([3]);
    expect(Array.from(rows.data)).toEqual([0, 0, 0]);
    expect(Array.from((await run([[new Float32Array(0), [0, 4]]], ([x]) => sumCols(x!))).data)).toEqual([0, 0, 0, 0]);
  });
});

describe('transpose2d', () => {
  for (const [R, C] of [
    [1, 1],
    [17, 33],
    [40, 3],
    [1, 300],
    [2, 1_100_000], // wider than 65535 workgroups of 16 columns: the launch must fold
  ]) {
    it(`[${R}, ${C}]`, async () => {
      const a = randn(R * C, R + 3 * C);
      const got = await run([[a, [R, C]]], ([x]) => transpose2d(x!));
      expect(got.shape).toEqual([C, R]);
      const want = new Float64Array(R * C);
      for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) want[c * R + r] = a[r * C + c]!;
      expect(Array.from(got.data)).toEqual(Array.from(want));
    });
  }

  it('moves i32 words unchanged and refuses f16', async () => {
    const ids = Int32Array.from({ length: 12 }, (_, i) => i * 1000 - 5);
    const t = e.tidy(() => e.keep(transpose2d(e.tensor(ids, [3, 4], 'i32'))));
    const got = await t.read();
    t.dispose();
    expect(Array.from(got)).toEqual([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11].map((i) => ids[i]));
    if (e.info.f16)
      e.tidy(() => expect(() => transpose2d(e.tensor(new Float32Array(4), [2, 2], 'f16'))).toThrow(/f32/));
  });
});

describe('grid folding past 65535 workgroups', () => {
  // 65535 * 256 threads is the most one dimension reaches; this add needs a second. About 7 s on lavapipe
  // (mostly moving 64 MiB each way), so it runs on a real GPU or with PIPLAY_SLOW_TESTS=1.
  it('add over 16.8M elements with a broadcast operand', async (ctx) => {
    if (e.info.isCpu && !process.env.PIPLAY_SLOW_TESTS) ctx.skip();
    const n = 65535 * 256 + 1000;
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = (i % 1013) * 0.5;
    const got = await run(
      [
        [a, [n / 8, 8]],
        [Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]), [8]],
      ],
      ([x, y]) => add(x!, y!),
    );
    let bad = -1;
    for (let i = 0; i < n && bad < 0; i++) if (got.data[i] !== a[i]! + (i % 8) + 1) bad = i;
    expect(bad, `first wrong element`).toBe(-1);
  });
});

describe('gradients through the tape', () => {
  const x = (name: string, shape: number[], seed: number) => ({ name, data: randn(numel(shape), seed), shape });

  it('add, sub, mul with a broadcast operand', async () => {
    for (const op of [add, sub, mul]) {
      await gradCheck(e, [x('a', [3, 5], 1), x('b', [5], 2)], ([a, b]) => op(a!, b!));
      await gradCheck(e, [x('a', [2, 3, 4], 3), x('b', [2, 3, 4], 4)], ([a, b]) => op(a!, b!));
    }
  });

  it('a tensor used twice (gradients accumulate)', async () => {
    await gradCheck(e, [x('a', [7], 5)], ([a]) => mul(a!, add(a!, a!)));
  });

  it('scale and axpby', async () => {
    await gradCheck(e, [x('a', [4, 3], 6)], ([a]) => scale(a!, -1.5, 2));
    await gradCheck(e, [x('a', [9], 7), x('b', [9], 8)], ([a, b]) => axpby(0.5, a!, -2, b!));
  });

  it('exp and square', async () => {
    await gradCheck(e, [x('a', [11], 9)], ([a]) => exp(a!));
    await gradCheck(e, [x('a', [3, 4], 10)], ([a]) => square(a!));
  });

  it('sum, mean, sumRows, sumCols', async () => {
    await gradCheck(e, [x('a', [5, 3], 11)], ([a]) => sum(a!, 0.5));
    await gradCheck(e, [x('a', [13], 12)], ([a]) => mean(a!));
    await gradCheck(e, [x('a', [2, 3, 7], 13)], ([a]) => sumRows(a!, 1.5));
    await gradCheck(e, [x('a', [6, 5], 14)], ([a]) => sumCols(a!, -0.5));
    // Rows of 8: the gradients broadcast back four elements a thread.
    await gradCheck(e, [x('a', [3, 8], 16)], ([a]) => sumRows(a!, 1.5));
    await gradCheck(e, [x('a', [5, 8], 17)], ([a]) => sumCols(a!, -0.5));
  });

  it('transpose2d', async () => {
    await gradCheck(e, [x('a', [3, 7], 15)], ([a]) => transpose2d(a!));
  });
});
