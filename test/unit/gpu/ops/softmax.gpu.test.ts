// Vocabulary-row ops: logSoftmax, entropy, tokenLogprobs, crossEntropy against float64 CPU references, their
// gradients (finite differences through the tape), and the shared fixtures.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { crossEntropy, entropy, logSoftmax, tokenLogprobs } from '../../../../src/gpu/ops/log_softmax.ts';
import { loadFixture, runFixture } from '../../../../src/fixtures/runner.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randint, randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';

const FIXTURES = new URL('../../../../../shared/fixtures/', import.meta.url);

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/** float64 log-softmax of each row of [R, V]. */
function refLogSoftmax(x: ArrayLike<number>, R: number, V: number): Float64Array {
  const y = new Float64Array(R * V);
  for (let r = 0; r < R; r++) {
    let m = -Infinity;
    for (let j = 0; j < V; j++) m = Math.max(m, x[r * V + j]!);
    let s = 0;
    for (let j = 0; j < V; j++) s += Math.exp(x[r * V + j]! - m);
    const lse = m + Math.log(s);
    for (let j = 0; j < V; j++) y[r * V + j] = x[r * V + j]! - lse;
  }
  return y;
}

/** Logits with a per-row offset and spread, so rows differ in scale (some far from 0). */
function logits(R: number, V: number, seed: number): Float32Array {
  const x = randn(R * V, seed, 3);
  for (let r = 0; r < R; r++) {
    const offset = [0, 40, -25, 300][r % 4]!;
    for (let j = 0; j < V; j++) x[r * V + j] = x[r * V + j]! + offset;
  }
  return x;
}

async function run(fn: () => ReturnType<typeof logSoftmax>) {
  const t = e.tidy(() => e.keep(fn()));
  const out = await t.read();
  t.dispose();
  return out;
}

const SHAPES: [number, number][] = [
  [1, 1],
  [3, 37],
  [5, 256],
  [2, 1000],
  [4, 5003],
  [1, 151_936],
];

describe('logSoftmax', () => {
  for (const [R, V] of SHAPES) {
    it(`matches float64 on [${R}, ${V}]`, async () => {
      const x = logits(R, V, R * 31 + V);
      const got = await run(() => logSoftmax(e.tensor(x, [R, V])));
      expectClose(got, refLogSoftmax(x, R, V), 1e-5, 2e-5);
    });
  }

  it('keeps leading axes and handles -inf entries', async () => {
    const x = randn(2 * 3 * 9, 5);
    x[4] = -Infinity;
    const got = await run(() => logSoftmax(e.tensor(x, [2, 3, 9])));
    expect(got[4]).toBe(-Infinity);
    const want = refLogSoftmax(x, 6, 9);
    want[4] = 0;
    const g = Float32Array.from(got);
    g[4] = 0;
    expectClose(g, want, 1e-5, 2e-5);
  });

  it('backward matches finite differences', async () => {
    await gradCheck(e, [{ name: 'x', data: randn(3 * 7, 11), shape: [3, 7] }], ([x]) => logSoftmax(x!));
  });

  it('backward on a long row matches g - softmax * sum(g)', async () => {
    const [R, V] = [2, 3001];
    const x = logits(R, V, 3);
    const g = randn(R * V, 4);
    const xt = e.tensor(x, [R, V]);
    xt.requiresGrad = true;
    const dx = e.tidy(() => {
      e.backward(logSoftmax(xt), e.tensor(g, [R, V]));
      return e.keep(xt.grad!);
    });
    const got = await dx.read();
    dx.dispose();
    xt.dispose();
    const y = refLogSoftmax(x, R, V);
    const want = new Float64Array(R * V);
    for (let r = 0; r < R; r++) {
      let gs = 0;
      for (let j = 0; j < V; j++) gs += g[r * V + j]!;
      for (let j = 0; j < V; j++) want[r * V + j] = g[r * V + j]! - Math.exp(y[r * V + j]!) * gs;
    }
    expectClose(got, want, 1e-4, 1e-5);
  });

  it('passes the shared fixture', async () => {
    const file = new URL('log_softmax.json', FIXTURES);
    const fx = await loadFixture(readFileSync(file, 'utf8'), file.pathname);
    const rep = await runFixture(e, fx, 'log_softmax', FIXTURES.pathname);
    expect(rep.ok, rep.detail).toBe(true);
  });
});

describe('entropy', () => {
  for (const [R, V] of SHAPES) {
    it(`matches float64 on [${R}, ${V}]`, async () => {
      const x = logits(R, V, R * 7 + V);
      const got = await run(() => entropy(e.tensor(x, [R, V])));
      const y = refLogSoftmax(x, R, V);
      const want = new Float64Array(R);
      for (let r = 0; r < R; r++) for (let j = 0; j < V; j++) want[r] -= Math.exp(y[r * V + j]!) * y[r * V + j]!;
      expectClose(got, want, 1e-4, 2e-5);
    });
  }

  it('is 0 for a one-hot row, log V for a flat one', async () => {
    const V = 1000;
    const x = new Float32Array(2 * V);
    x[17] = 200; // softmax is exactly one-hot in f32
    const got = await run(() => entropy(e.tensor(x, [2, V])));
    expectClose(got, [0, Math.log(V)], 1e-5, 1e-6);
  });
});

/** float64 log-probs at the targets (0 for targets outside [0, V)). */
function refTokenLogprobs(x: Float32Array, t: Int32Array, R: number, V: number): Float64Array {
  const y = refLogSoftmax(x, R, V);
  return Float64Array.from({ length: R }, (_, r) => (t[r]! >= 0 && t[r]! < V ? y[r * V + t[r]!]! : 0));
}

describe('tokenLogprobs', () => {
  for (const [R, V] of SHAPES) {
    it(`matches float64 on [${R}, ${V}]`, async () => {
      const x = logits(R, V, R + V);
      const t = randint(R, V, R * V);
      const got = await run(() => tokenLogprobs(e.tensor(x, [R, V]), e.tensor(t, [R], 'i32')));
      expectClose(got, refTokenLogprobs(x, t, R, V), 1e-5, 2e-5);
    });
  }

  it('gives 0 and no gradient for targets outside the vocabulary', async () => {
    const [R, V] = [3, 11];
    const x = randn(R * V, 2);
    const t = Int32Array.from([-100, 4, 11]);
    const xt = e.tensor(x, [R, V]);
    xt.requiresGrad = true;
    const out = e.tidy(() => {
      const lp = tokenLogprobs(xt, e.tensor(t, [R], 'i32'));
      e.backward(lp, e.tensor([1, 1, 1], [R]));
      return { lp: e.keep(lp), g: e.keep(xt.grad!) };
    });
    const lp = await out.lp.read();
    const g = await out.g.read();
    expectClose(lp, refTokenLogprobs(x, t, R, V), 1e-5, 1e-5);
    expect(lp[0]).toBe(0);
    expect(lp[2]).toBe(0);
    expect([...g.subarray(0, V), ...g.subarray(2 * V)].every((v) => v === 0)).toBe(true);
    out.lp.dispose();
    out.g.dispose();
    xt.dispose();
  });

  it('backward matches finite differences', async () => {
    const [R, V] = [4, 9];
    await gradCheck(
      e,
      [
        { name: 'logits', data: randn(R * V, 21), shape: [R, V] },
        { name: 'targets', data: randint(R, V, 22), shape: [R], dtype: 'i32' },
      ],
      ([x, t]) => tokenLogprobs(x!, t!),
    );
  });
});

describe('crossEntropy', () => {
  const cases: [number, number][] = [
    [6, 37],
    [3, 1000],
    [5, 5003],
  ];
  for (const [R, V] of cases) {
    it(`matches float64 on [${R}, ${V}]`, async () => {
      const x = logits(R, V, V);
      const t = randint(R, V, R);
      const mask = Float32Array.from({ length: R }, (_, r) => (r % 3 === 1 ? 0 : 1));
      const got = await run(() => crossEntropy(e.tensor(x, [R, V]), e.tensor(t, [R], 'i32'), e.tensor(mask, [R])));
      const lp = refTokenLogprobs(x, t, R, V);
      let s = 0;
      let n = 0;
      for (let r = 0; r < R; r++) {
        if (!mask[r]) continue;
        s -= lp[r]!;
        n++;
      }
      expectClose(got, [s / n], 1e-5, 1e-5);
    });
  }

  it('is 0, not NaN, for an empty mask, and ignores NaN in masked rows', async () => {
    const [R, V] = [3, 8];
    const x = randn(R * V, 9);
    x[2 * V + 3] = NaN;
    const t = Int32Array.from([1, 2, -100]);
    const empty = await run(() => crossEntropy(e.tensor(x, [R, V]), e.tensor(t, [R], 'i32'), e.tensor([0, 0, 0], [R])));
    expect(empty[0]).toBe(0);
    const some = await run(() => crossEntropy(e.tensor(x, [R, V]), e.tensor(t, [R], 'i32'), e.tensor([1, 0, 0], [R])));
    expectClose(some, [-refTokenLogprobs(x, t, R, V)[0]!], 1e-5, 1e-5);
  });

  it('backward matches finite differences', async () => {
    const [R, V] = [5, 7];
    await gradCheck(
      e,
      [
        { name: 'logits', data: randn(R * V, 31), shape: [R, V] },
        { name: 'targets', data: randint(R, V, 32), shape: [R], dtype: 'i32' },
        { name: 'mask', data: Float32Array.from([1, 0, 1, 1, 0]), shape: [R], grad: false },
      ],
      ([x, t, m]) => crossEntropy(x!, t!, m!),
    );
  });

  it('passes the shared fixture', async () => {
    const file = new URL('cross_entropy.json', FIXTURES);
    const fx = await loadFixture(readFileSync(file, 'utf8'), file.pathname);
    const rep = await runFixture(e, fx, 'cross_entropy', FIXTURES.pathname);
    expect(rep.ok, rep.detail).toBe(true);
  });
});
