// Sampling: greedy is the argmax (lowest id on ties); with given uniforms the ids are the CPU inverse-CDF
// choices (allowed tokens in id order); top-p never leaves the nucleus; stratified uniforms reproduce the
// distribution's quantiles exactly; log-probs are those of the temperature-scaled full distribution.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { sample } from '../../../../src/gpu/ops/sample.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn, rng } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

async function gpuSample(x: Float32Array, B: number, V: number, temperature: number, topP: number, u: Float32Array) {
  const out = e.tidy(() => {
    const s = sample(e.tensor(x, [B, V]), { temperature, topP, uniforms: e.tensor(u, [B]) });
    return { ids: e.keep(s.ids), lp: e.keep(s.logprobs) };
  });
  const ids = (await out.ids.read()) as Int32Array;
  const lp = (await out.lp.read()) as Float32Array;
  out.ids.dispose();
  out.lp.dispose();
  return { ids, lp };
}

/** float64 reference of one row: probabilities of the tempered distribution, the nucleus, and its CDF in id order. */
function refRow(x: ArrayLike<number>, temperature: number, topP: number) {
  const V = x.length;
  const y = Float64Array.from({ length: V }, (_, j) => Math.fround(x[j]! * Math.fround(1 / temperature)));
  let m = -Infinity;
  for (const v of y) m = Math.max(m, v);
  let s = 0;
  for (const v of y) s += Math.exp(v - m);
  const lse = m + Math.log(s);
  const p = Float64Array.from(y, (v) => Math.exp(v - lse));
  // Nucleus: by descending probability (ties: lower id) until the mass reaches topP. `before[j]` is the
  // mass ranked above j, so j is in the nucleus iff before[j] < topP.
  const order = [...Array(V).keys()].sort((i, j) => y[j]! - y[i]! || i - j);
  const before = new Float64Array(V);
  let acc = 0;
  for (const j of order) {
    before[j] = acc;
    acc += p[j]!;
  }
  const allowed = Array.from({ length: V }, (_, j) => topP >= 1 || before[j]! < topP);
  // CDF over allowed ids in id order, normalised.
  let Z = 0;
  for (let j = 0; j < V; j++) if (allowed[j]) Z += p[j]!;
  const lo = new Float64Array(V);
  const hi = new Float64Array(V);
  let c = 0;
  for (let j = 0; j < V; j++) {
    lo[j] = c / Z;
    if (allowed[j]) c += p[j]!;
    hi[j] = c / Z;
  }
  const choose = (u: number) => {
    for (let j = 0; j < V; j++) if (allowed[j] && hi[j]! > u) return j;
    return allowed.lastIndexOf(true);
  };
  return { y, lse, p, before, allowed, lo, hi, choose };
}

/**
 * Checks each row's id against the CPU inverse-CDF choice: equal, or (rounding) u within `tol` of the
 * boundary between the two. Always inside the nucleus (up to `tol` of mass), and log-probs match.
 */
function checkRows(
  x: Float32Array,
  B: number,
  V: number,
  T: number,
  topP: number,
  u: Float32Array,
  got: { ids: Int32Array; lp: Float32Array },
) {
  const tol = 1e-5;
  const wantLp: number[] = [];
  for (let b = 0; b < B; b++) {
    const ref = refRow(x.subarray(b * V, (b + 1) * V), T, topP);
    const id = got.ids[b]!;
    expect(id >= 0 && id < V, `row ${b}: id ${id} out of range`).toBe(true);
    expect(ref.before[id]! < topP + tol || topP >= 1, `row ${b}: id ${id} outside the nucleus`).toBe(true);
    const want = ref.choose(u[b]!);
    if (id !== want) {
      const near = Math.abs(u[b]! - ref.lo[Math.max(id, want)]!) < tol;
      expect(near, `row ${b}: got ${id}, want ${want} at u = ${u[b]}`).toBe(true);
    }
    wantLp.push(ref.y[id]! - ref.lse);
  }
  expectClose(got.lp, wantLp, 1e-5, 2e-5, 'log-probs');
}

describe('sample: greedy', () => {
  for (const [B, V] of [
    [3, 1],
    [4, 37],
    [3, 1000],
    [2, 5003],
    [1, 151_936],
  ] as [number, number][]) {
    it(`temperature 0 is the argmax on [${B}, ${V}]`, async () => {
      const x = randn(B * V, B + V, 3);
      const got = await gpuSample(x, B, V, 0, 1, new Float32Array(B).fill(0.5));
      for (let b = 0; b < B; b++) {
        const row = x.subarray(b * V, (b + 1) * V);
        let best = 0;
        for (let j = 1; j < V; j++) if (row[j]! > row[best]!) best = j;
        expect(got.ids[b]).toBe(best);
        const ref = refRow(row, 1, 1);
        expectClose([got.lp[b]!], [ref.y[best]! - ref.lse], 1e-5, 2e-5);
      }
    });
  }

  it('breaks ties by the lowest id', async () => {
    const V = 700;
    const x = new Float32Array(2 * V).fill(-1);
    x[600] = 5;
    x[300] = 5;
    x[513] = 5; // row 0: ties at 300, 513, 600
    // row 1: all equal
    x.fill(0.25, V);
    const got = await gpuSample(x, 2, V, 0, 0.3, Float32Array.from([0.9, 0.9]));
    expect(Array.from(got.ids)).toEqual([300, 0]);
    expectClose(got.lp, [-Math.log(3 + (V - 3) * Math.exp(-6)), -Math.log(V)], 1e-5, 1e-5);
  });
});

describe('sample: temperature and top-p', () => {
  const shapes: [number, number][] = [
    [16, 37],
    [8, 1000],
    [4, 5003],
    [1, 151_936],
  ];
  for (const [T, topP] of [
    [1, 1],
    [0.7, 1],
    [1, 0.9],
    [1.3, 0.5],
    [0.5, 0.05],
  ]) {
    for (const [B, V] of shapes) {
      it(`T=${T} topP=${topP} matches the CPU inverse CDF on [${B}, ${V}]`, async () => {
        const x = randn(B * V, B * V + Math.round(T * 100 + topP * 10), 2);
        const r = rng(B + V);
        const u = Float32Array.from({ length: B }, () => r());
        const got = await gpuSample(x, B, V, T, topP, u);
        checkRows(x, B, V, T, topP, u, got);
      });
    }
  }

  it('top-p never returns a token outside the nucleus (many draws over one peaked row)', async () => {
    const [B, V] = [512, 200];
    const base = randn(V, 77, 2.5);
    const x = new Float32Array(B * V);
    for (let b = 0; b < B; b++) x.set(base, b * V);
    const u = Float32Array.from({ length: B }, (_, b) => b / B); // includes u = 0
    u[B - 1] = 0.99999994; // the largest f32 below 1
    const topP = 0.6;
    const got = await gpuSample(x, B, V, 1, topP, u);
    const ref = refRow(base, 1, topP);
    const seen = new Set(got.ids);
    for (const id of seen) expect(ref.allowed[id], `id ${id} outside the nucleus`).toBe(true);
    // Every nucleus token with a real share of the draws shows up.
    ref.allowed.forEach((ok, j) => {
      if (ok && ref.hi[j]! - ref.lo[j]! > 2 / B) expect(seen.has(j), `nucleus id ${j} never drawn`).toBe(true);
    });
    checkRows(x, B, V, 1, topP, u, got);
  });

  it('takes tied probabilities into the nucleus in id order', async () => {
    const V = 10;
    const x = new Float32Array(V).fill(1); // uniform: the nucleus of mass 0.45 is ids 0..4
    const u = Float32Array.from({ length: 8 }, (_, b) => (b + 0.5) / 8);
    const got = await gpuSample(
      new Float32Array(8 * V).map((_, i) => x[i % V]!),
      8,
      V,
      1,
      0.45,
      u,
    );
    expect(Array.from(got.ids)).toEqual([0, 0, 1, 2, 2, 3, 4, 4]);
  });

  it('stratified uniforms reproduce the quantiles of the distribution', async () => {
    const [B, V] = [4000, 12];
    const base = randn(V, 5, 1.5);
    const x = new Float32Array(B * V);
    for (let b = 0; b < B; b++) x.set(base, b * V);
    const u = Float32Array.from({ length: B }, (_, b) => (b + 0.5) / B);
    for (const [T, topP] of [
      [1, 1],
      [0.8, 0.7],
    ]) {
      const got = await gpuSample(x, B, V, T, topP, u);
      const ref = refRow(base, T, topP);
      const counts = new Array<number>(V).fill(0);
      for (const id of got.ids) counts[id]!++;
      for (let j = 0; j < V; j++) {
        const want = (ref.hi[j]! - ref.lo[j]!) * B;
        expect(
          Math.abs(counts[j]! - want),
          `T=${T} topP=${topP} id ${j}: ${counts[j]} draws, want ${want.toFixed(1)}`,
        ).toBeLessThanOrEqual(1);
      }
    }
  });

  it('never picks a token whose logit is -inf (a padded vocabulary)', async () => {
    const [B, V] = [64, 500];
    const x = randn(B * V, 21, 2);
    for (let b = 0; b < B; b++) x.fill(-Infinity, b * V + 300, (b + 1) * V);
    const u = Float32Array.from({ length: B }, (_, b) => b / (B - 1)); // 0 .. 1 inclusive
    for (const [T, topP] of [
      [0, 1],
      [1, 1],
      [2, 0.95],
    ]) {
      const got = await gpuSample(x, B, V, T, topP, u);
      expect(
        Array.from(got.ids).every((id) => id >= 0 && id < 300),
        `T=${T} topP=${topP}`,
      ).toBe(true);
      expect(Array.from(got.lp).every(Number.isFinite)).toBe(true);
    }
  });

  it('is deterministic given the uniforms', async () => {
    const [B, V] = [6, 3001];
    const x = randn(B * V, 8, 2);
    const u = Float32Array.from({ length: B }, (_, b) => (b * 0.37) % 1);
    const a = await gpuSample(x, B, V, 0.9, 0.8, u);
    const b = await gpuSample(x, B, V, 0.9, 0.8, u);
    expect(Array.from(a.ids)).toEqual(Array.from(b.ids));
    expect(Array.from(a.lp)).toEqual(Array.from(b.lp));
  });

  it('rejects bad options clearly', () => {
    e.tidy(() => {
      const x = e.tensor(randn(2 * 5, 1), [2, 5]);
      const u = e.tensor([0.1, 0.2], [2]);
      expect(() => sample(x, { temperature: -1, uniforms: u })).toThrow(/temperature/);
      expect(() => sample(x, { temperature: 1, topP: 0, uniforms: u })).toThrow(/topP/);
      expect(() => sample(x, { temperature: 1, topP: 1.5, uniforms: u })).toThrow(/topP/);
      expect(() => sample(x, { temperature: 1, uniforms: e.tensor([0.1], [1]) })).toThrow(/uniforms/);
    });
  });
});
