// Top-K KL distillation: forward against a float64 CPU reference (sort-based top-K, ties by id), gradients
// against float64 finite differences of that reference and through the tape, edge cases, shared fixtures; the
// forward and the backward through each forward kernel (the workgroup one of GPUs, the rows one of CPU drivers).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import type { Tensor } from '../../../../src/gpu/tensor.ts';
import { add, mul, sum } from '../../../../src/gpu/ops/elementwise.ts';
import { setTopkKlVariant, topkKl, type TopkKlOptions, type TopkKlVariant } from '../../../../src/gpu/ops/topk_kl.ts';
import { loadFixture, runFixture } from '../../../../src/fixtures/runner.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn, rng } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';

const FIXTURES = new URL('../../../../../shared/fixtures/', import.meta.url);
const TINY = 1e-30; // the kernel's floor of a tail mass before its log

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});
afterAll(() => setTopkKlVariant(null));

const VARIANTS: TopkKlVariant[] = ['rows', 'workgroup'];

/** A describe block run once per forward kernel. */
function perVariant(name: string, body: () => void): void {
  for (const variant of VARIANTS)
    describe(`${name} (${variant} kernel)`, () => {
      beforeAll(() => setTopkKlVariant(variant));
      body();
    });
}

type Opts = Required<TopkKlOptions>;

function logSoftmaxRow(x: ArrayLike<number>): Float64Array {
  let m = -Infinity;
  for (let j = 0; j < x.length; j++) m = Math.max(m, x[j]!);
  let s = 0;
  for (let j = 0; j < x.length; j++) s += Math.exp(x[j]! - m);
  const lse = m + Math.log(s);
  return Float64Array.from(x, (v) => v - lse);
}

function logsumexp(v: number[]): number {
  const m = Math.max(...v);
  return m + Math.log(v.reduce((s, x) => s + Math.exp(x - m), 0));
}

/** float64 reference of one row: ids by descending logit (ties: lower id), log-probs at them, and the KL. */
function refRow(zs: ArrayLike<number>, zt: ArrayLike<number>, o: Opts, fixedIds?: number[]) {
  const V = zs.length;
  const ls = logSoftmaxRow(zs);
  const lt = logSoftmaxRow(zt);
  const ids = fixedIds ?? [...Array(V).keys()].sort((i, j) => zs[j]! - zs[i]! || i - j).slice(0, o.k);
  let a = ids.map((i) => ls[i]!);
  let b = ids.map((i) => lt[i]!);
  const sLogp = a;
  const tLogp = b;
  if (o.tail) {
    const inS = new Set(ids);
    let pS = 0;
    let pT = 0;
    for (let j = 0; j < V; j++) {
      if (inS.has(j)) continue;
      pS += Math.exp(ls[j]!);
      pT += Math.exp(lt[j]!);
    }
    a = [...a, Math.log(Math.max(pS, TINY))];
    b = [...b, Math.log(Math.max(pT, TINY))];
  } else {
    const la = logsumexp(a);
    const lb = logsumexp(b);
    a = a.map((v) => v - la);
    b = b.map((v) => v - lb);
  }
  let kl = 0;
  for (let k = 0; k < a.length; k++) {
    kl += o.direction === 'reverse' ? Math.exp(a[k]!) * (a[k]! - b[k]!) : Math.exp(b[k]!) * (b[k]! - a[k]!);
  }
  return { ids, sLogp, tLogp, kl };
}

function refTopk(
  zs: Float32Array | Float64Array,
  zt: Float32Array,
  mask: ArrayLike<number>,
  R: number,
  V: number,
  o: Opts,
) {
  const rows = Array.from({ length: R }, (_, r) =>
    refRow(zs.subarray(r * V, (r + 1) * V), zt.subarray(r * V, (r + 1) * V), o),
  );
  let s = 0;
  let n = 0;
  rows.forEach((row, r) => {
    if (mask[r]) {
      s += mask[r]! * row.kl;
      n += mask[r]!;
    }
  });
  return { rows, loss: n > 0 ? s / n : 0 };
}

async function gpuTopk(zs: Float32Array, zt: Float32Array, mask: Float32Array, R: number, V: number, o: Opts) {
  const out = e.tidy(() => {
    const r = topkKl(e.tensor(zs, [R, V]), e.tensor(zt, [R, V]), e.tensor(mask, [R]), o);
    return {
      loss: e.keep(r.loss),
      perToken: e.keep(r.perToken),
      ids: e.keep(r.ids),
      s: e.keep(r.studentLogp),
      t: e.keep(r.teacherLogp),
    };
  });
  const res = {
    loss: (await out.loss.read())[0]!,
    perToken: await out.perToken.read(),
    ids: (await out.ids.read()) as Int32Array,
    sLogp: await out.s.read(),
    tLogp: await out.t.read(),
  };
  for (const t of Object.values(out)) t.dispose();
  return res;
}

function randomMask(R: number, seed: number): Float32Array {
  const r = rng(seed);
  const m = Float32Array.from({ length: R }, () => (r() < 0.7 ? 1 : 0));
  m[0] = 1;
  return m;
}

const MODES: Omit<Opts, 'k'>[] = [
  { tail: true, direction: 'reverse' },
  { tail: true, direction: 'forward' },
  { tail: false, direction: 'reverse' },
  { tail: false, direction: 'forward' },
];
const modeName = (m: Omit<Opts, 'k'>) => `${m.tail ? 'tail' : 'renorm'} ${m.direction}`;

async function checkForward(zs: Float32Array, zt: Float32Array, R: number, V: number, o: Opts, seed = 1) {
  const mask = randomMask(R, seed);
  const got = await gpuTopk(zs, zt, mask, R, V, o);
  const want = refTopk(zs, zt, mask, R, V, o);
  const K = o.k;
  expect(Array.from(got.ids)).toEqual(want.rows.flatMap((row) => row.ids));
  expectClose(
    got.sLogp,
    want.rows.flatMap((row) => row.sLogp),
    1e-5,
    2e-5,
    'student log-probs',
  );
  expectClose(
    got.tLogp,
    want.rows.flatMap((row) => row.tLogp),
    1e-5,
    2e-5,
    'teacher log-probs',
  );
  expectClose(
    got.perToken,
    want.rows.map((row) => row.kl),
    1e-4,
    2e-5,
    'per-token KL',
  );
  expectClose([got.loss], [want.loss], 1e-4, 2e-5, 'loss');
  expect(got.ids.length).toBe(R * K);
}

perVariant('topkKl forward', () => {
  const shapes: [number, number, number][] = [
    [5, 37, 1],
    [4, 37, 8],
    [3, 1000, 8],
    [3, 1000, 50],
    [2, 5003, 50],
    [2, 700, 256],
  ];
  for (const mode of MODES) {
    for (const [R, V, K] of shapes) {
      it(`${modeName(mode)} matches float64 on [${R}, ${V}], K=${K}`, async () => {
        const zs = randn(R * V, R * V + K, 2.5);
        const zt = randn(R * V, R * V + K + 1, 2.5);
        await checkForward(zs, zt, R, V, { ...mode, k: K });
      });
    }
  }

  it('streams a full-size vocabulary (V = 151936, K = 200)', async () => {
    const [R, V, K] = [2, 151_936, 200];
    const zs = randn(R * V, 3, 3);
    const zt = randn(R * V, 4, 3);
    await checkForward(zs, zt, R, V, { tail: true, direction: 'reverse', k: K });
  });

  it('breaks ties at the threshold by lower token id (logits with many exact repeats)', async () => {
    const [R, V, K] = [4, 1500, 50];
    const r = rng(9);
    // Only 12 distinct values: the K-th largest is shared by many ids, so the id passes must run.
    const zs = Float32Array.from({ length: R * V }, () => Math.floor(r() * 12) / 4);
    const zt = randn(R * V, 10);
    for (const mode of MODES) await checkForward(zs, zt, R, V, { ...mode, k: K });
  });

  it('handles a constant row, -0 vs +0, and K = V (an empty tail)', async () => {
    const V = 300;
    const zs = new Float32Array(3 * V);
    for (let j = 0; j < V; j++) zs[V + j] = j % 2 === 0 ? -0 : 0; // equal values: ties by id
    for (let j = 0; j < V; j++) zs[2 * V + j] = Math.sin(j);
    const zt = randn(3 * V, 12);
    await checkForward(zs, zt, 3, V, { tail: true, direction: 'reverse', k: 20 });
    const small = randn(2 * 40, 13);
    const got = await gpuTopk(small, randn(2 * 40, 14), Float32Array.from([1, 1]), 2, 40, {
      tail: true,
      direction: 'forward',
      k: 40,
    });
    expect([...got.perToken].every(Number.isFinite)).toBe(true);
    await checkForward(small, randn(2 * 40, 14), 2, 40, { tail: true, direction: 'reverse', k: 40 });
  });

  it('gives loss 0 (not NaN) for an empty mask and computes every row', async () => {
    const [R, V] = [3, 50];
    const zs = randn(R * V, 15);
    const zt = randn(R * V, 16);
    const got = await gpuTopk(zs, zt, new Float32Array(R), R, V, { tail: true, direction: 'reverse', k: 5 });
    expect(got.loss).toBe(0);
    const want = refTopk(zs, zt, [1, 1, 1], R, V, { tail: true, direction: 'reverse', k: 5 });
    expectClose(
      got.perToken,
      want.rows.map((row) => row.kl),
      1e-4,
      2e-5,
    );
  });

  it('rejects K > V, K > 256 and mismatched shapes clearly', () => {
    e.tidy(() => {
      const z = e.tensor(randn(2 * 30, 1), [2, 30]);
      const m = e.tensor([1, 1], [2]);
      expect(() => topkKl(z, z, m, { k: 31 })).toThrow(/k = 31 is larger than the vocabulary \(V = 30\)/);
      expect(() => topkKl(z, z, m, { k: 0 })).toThrow(/positive integer/);
      const big = e.tensor(randn(300, 2), [1, 300]);
      expect(() => topkKl(big, big, e.tensor([1], [1]), { k: 257 })).toThrow(/maximum of 256/);
      expect(() => topkKl(z, e.tensor(randn(60, 3), [3, 20]), m, { k: 2 })).toThrow(/teacher logits/);
      expect(() => topkKl(z, z, e.tensor([1, 1, 1], [3]), { k: 2 })).toThrow(/mask/);
    });
  });
});

/** The gradient of loss + sum(perToken * u) into the student logits, from the tape. */
async function gpuGrad(
  zs: Float32Array,
  zt: Float32Array,
  mask: Float32Array,
  u: Float32Array,
  R: number,
  V: number,
  o: Opts,
) {
  const s = e.tensor(zs, [R, V]);
  s.requiresGrad = true;
  const g = e.tidy(() => {
    const r = topkKl(s, e.tensor(zt, [R, V]), e.tensor(mask, [R]), o);
    const L: Tensor = add(r.loss, sum(mul(r.perToken, e.tensor(u, [R]))));
    e.backward(L);
    return e.keep(s.grad!);
  });
  const out = await g.read();
  g.dispose();
  s.dispose();
  return out;
}

perVariant('topkKl backward', () => {
  const shapes: [number, number, number][] = [
    [3, 37, 1],
    [3, 37, 8],
    [2, 300, 50],
  ];
  for (const mode of MODES) {
    for (const [R, V, K] of shapes) {
      it(`${modeName(mode)} equals float64 finite differences of the reference on [${R}, ${V}], K=${K}`, async () => {
        const o = { ...mode, k: K };
        const zs = randn(R * V, 100 + V + K, 2);
        const zt = randn(R * V, 200 + V + K, 2);
        const mask = Float32Array.from({ length: R }, (_, r) => (r === 1 ? 0 : 1));
        const u = randn(R, 7);
        const got = await gpuGrad(zs, zt, mask, u, R, V, o);
        // Central differences in float64 of the same objective, support ids held fixed (they are constants).
        const base = Float64Array.from(zs);
        const ids = refTopk(base, zt, mask, R, V, o).rows.map((row) => row.ids);
        const want = new Float64Array(R * V);
        const h = 1e-6;
        for (let r = 0; r < R; r++) {
          const row = base.slice(r * V, (r + 1) * V);
          const tr = zt.subarray(r * V, (r + 1) * V);
          const w = mask[r]! / mask.reduce((a, b) => a + b, 0) + u[r]!;
          for (let j = 0; j < V; j++) {
            const x0 = row[j]!;
            row[j] = x0 + h;
            const up = refRow(row, tr, o, ids[r]).kl;
            row[j] = x0 - h;
            const down = refRow(row, tr, o, ids[r]).kl;
            row[j] = x0;
            want[r * V + j] = (w * (up - down)) / (2 * h);
          }
        }
        expectClose(got, want, 1e-3, 2e-6, 'd/d student logits');
      });
    }
  }

  it('is exactly 0 on masked rows and off the support when renormalised', async () => {
    const [R, V, K] = [3, 64, 6];
    const zs = randn(R * V, 5, 2);
    const zt = randn(R * V, 6, 2);
    const mask = Float32Array.from([1, 0, 1]);
    const got = await gpuGrad(zs, zt, mask, new Float32Array(R), R, V, { tail: false, direction: 'reverse', k: K });
    expect(got.subarray(V, 2 * V).every((v) => v === 0)).toBe(true);
    const nonzero = got.subarray(0, V).filter((v) => v !== 0).length;
    expect(nonzero).toBe(K);
  });

  for (const mode of MODES) {
    it(`${modeName(mode)} passes gradCheck through the tape`, async () => {
      const [R, V, K] = [3, 20, 5];
      // A permutation of well-spaced values, so a +-h step never changes the support.
      const r = rng(V + K);
      const zs = new Float32Array(R * V);
      for (let i = 0; i < R; i++) {
        const perm = [...Array(V).keys()].sort(() => r() - 0.5);
        for (let j = 0; j < V; j++) zs[i * V + j] = (perm[j]! - V / 2) * 0.15;
      }
      await gradCheck(
        e,
        [
          { name: 'student', data: zs, shape: [R, V] },
          { name: 'teacher', data: randn(R * V, 41), shape: [R, V], grad: false },
          { name: 'mask', data: Float32Array.from([1, 0, 1]), shape: [R], grad: false },
        ],
        ([s, t, m]) => {
          const out = topkKl(s!, t!, m!, { ...mode, k: K });
          return [out.loss, out.perToken];
        },
        { samples: 16 },
      );
    });
  }
});

describe('topkKl fixtures', () => {
  for (const name of ['topk_kl_forward_tail', 'topk_kl_reverse_renorm', 'topk_kl_reverse_tail']) {
    it(name, async () => {
      const file = new URL(`${name}.json`, FIXTURES);
      const fx = await loadFixture(readFileSync(file, 'utf8'), file.pathname);
      const rep = await runFixture(e, fx, name, FIXTURES.pathname);
      expect(rep.ok, rep.detail).toBe(true);
    });
  }
});
