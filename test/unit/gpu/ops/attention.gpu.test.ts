// Every case runs for each kernel variant forced for every shape ('rows', 'split': the rows backward with the
// keys-across-lanes forward, 'lanes': the rows backward with the subgroup-shared forward, and 'tiled'). The tiled variant uses its CPU-driver
// pipelines on lavapipe by default; ATTENTION_FIXED=1 runs it with the GPU pipelines instead
// (compile-time layouts; lavapipe takes many minutes to JIT them).
import { describe, it, beforeAll, beforeEach, afterEach, afterAll, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Engine } from '../../../../src/gpu/engine.ts';
import type { Tensor } from '../../../../src/gpu/tensor.ts';
import {
  attention,
  setAttentionFixedLayout,
  setAttentionVariant,
  type AttentionOptions,
  type AttentionVariant,
} from '../../../../src/gpu/ops/attention.ts';
import { mul, sum } from '../../../../src/gpu/ops/elementwise.ts';
import { loadFixture, runFixture } from '../../../../src/fixtures/runner.ts';
import { gradCheck, type GradInput } from '../../../helpers/gradcheck.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn } from '../../../helpers/random.ts';
import { packPrefixTree, randomRollouts, treeKeyEnds } from '../../../helpers/prefix-tree.ts';
import { expectClose } from '../../../helpers/compare.ts';

interface Case {
  B: number;
  Hq: number;
  Hkv: number;
  Tq: number;
  Dh: number;
  /** Allocated k/v time steps (default Tk). */
  cap?: number;
  /** Valid keys (default Tq). */
  Tk?: number;
  off?: number;
  keyStart?: number[];
  /** [B, Tk] subtree ends of rows packed as prefix trees (see test/helpers/prefix-tree.ts). */
  keyEnd?: Int32Array;
  scale?: number;
}

/**
 * float64 reference: o, and (given dO) dq, dk, dv, straight from the definition with explicit probabilities. Query i
 * sees key j iff keyStart[b] <= j <= off + i, j < Tk, and (with a tree mask) off + i < keyEnd[b, j].
 */
function reference(c: Case, q: Float32Array, k: Float32Array, v: Float32Array, dO?: Float32Array) {
  const { B, Hq, Hkv, Tq, Dh } = c;
  const Tk = c.Tk ?? Tq;
  const cap = c.cap ?? Tk;
  const off = c.off ?? Tk - Tq;
  const scale = c.scale ?? 1 / Math.sqrt(Dh);
  const G = Hq / Hkv;
  const o = new Float64Array(B * Hq * Tq * Dh);
  const dq = new Float64Array(o.length);
  const dk = new Float64Array(B * Hkv * cap * Dh);
  const dv = new Float64Array(dk.length);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < Hq; h++) {
      const kvh = Math.floor(h / G);
      const ks = Math.max(0, c.keyStart?.[b] ?? 0);
      for (let i = 0; i < Tq; i++) {
        const qb = ((b * Hq + h) * Tq + i) * Dh;
        const end = Math.min(off + i, Tk - 1);
        const keys: number[] = [];
        for (let j = ks; j <= end; j++) if (!c.keyEnd || off + i < c.keyEnd[b * Tk + j]!) keys.push(j);
        if (keys.length === 0) continue; // a row that sees nothing: o = 0, no gradient
        const kb = (j: number) => ((b * Hkv + kvh) * cap + j) * Dh;
        const s = keys.map((j) => {
          let t = 0;
          for (let d = 0; d < Dh; d++) t += q[qb + d]! * k[kb(j) + d]!;
          return scale * t;
        });
        const mx = Math.max(...s);
        const e = s.map((x) => Math.exp(x - mx));
        const z = e.reduce((a, x) => a + x, 0);
        const P = e.map((x) => x / z);
        keys.forEach((j, n) => {
          for (let d = 0; d < Dh; d++) o[qb + d] += P[n]! * v[kb(j) + d]!;
        });
        if (!dO) continue;
        const dP = keys.map((j) => {
          let t = 0;
          for (let d = 0; d < Dh; d++) t += dO[qb + d]! * v[kb(j) + d]!;
          return t;
        });
        const D = P.reduce((a, p, n) => a + p * dP[n]!, 0);
        keys.forEach((j, n) => {
          const dS = P[n]! * (dP[n]! - D);
          for (let d = 0; d < Dh; d++) {
            dq[qb + d] += scale * dS * k[kb(j) + d]!;
            dk[kb(j) + d] += scale * dS * q[qb + d]!;
            dv[kb(j) + d] += P[n]! * dO[qb + d]!;
          }
        });
      }
    }
  return { o, dq, dk, dv };
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
  if (process.env['ATTENTION_FIXED'] === '1') setAttentionFixedLayout(true);
});
afterAll(() => {
  setAttentionFixedLayout(null);
  setAttentionVariant(null);
});

function inputs(c: Case, seed: number) {
  const Tk = c.Tk ?? c.Tq;
  const cap = c.cap ?? Tk;
  return {
    q: randn(c.B * c.Hq * c.Tq * c.Dh, seed),
    k: randn(c.B * c.Hkv * cap * c.Dh, seed + 1),
    v: randn(c.B * c.Hkv * cap * c.Dh, seed + 2),
    dO: randn(c.B * c.Hq * c.Tq * c.Dh, seed + 3),
    kShape: [c.B, c.Hkv, cap, c.Dh],
  };
}

function options(c: Case, keyStart: Tensor | null, keyEnd: Tensor | null = null): AttentionOptions {
  return {
    scale: c.scale,
    kvLength: c.Tk,
    kvCapacity: c.cap,
    queryOffset: c.off,
    keyStart,
    keyEnd,
  };
}

/** x of shape [a, b, c, d] with its axes 1 and 2 swapped: [a, c, b, d]. */
function swap12(x: Float32Array, [a, b, c, d]: readonly number[]): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < a!; i++)
    for (let j = 0; j < b!; j++)
      for (let t = 0; t < c!; t++) {
        const from = ((i * b! + j) * c! + t) * d!;
        out.set(x.subarray(from, from + d!), ((i * c! + t) * b! + j) * d!);
      }
  return out;
}

/**
 * Runs forward and (with grad) backward of L = sum(o * dO) on the GPU: o and (with grad) dq, dk, dv, head-major.
 * With layout 'tokens' the inputs go in token-major and the results are turned back to head-major.
 */
async function gpu(
  c: Case,
  x: ReturnType<typeof inputs>,
  grad: boolean,
  layout: 'heads' | 'tokens' = 'heads',
): Promise<Float32Array[]> {
  const qShape = [c.B, c.Hq, c.Tq, c.Dh];
  const tokens = layout === 'tokens';
  const swap = (data: Float32Array, shape: number[]) => (tokens ? swap12(data, shape) : data);
  const shaped = (shape: number[]) => (tokens ? [shape[0]!, shape[2]!, shape[1]!, shape[3]!] : shape);
  const got = e.tidy(() => {
    const q = e.tensor(swap(x.q, qShape), shaped(qShape));
    const k = e.tensor(swap(x.k, x.kShape), shaped(x.kShape));
    const v = e.tensor(swap(x.v, x.kShape), shaped(x.kShape));
    for (const t of [q, k, v]) t.requiresGrad = grad;
    const ks = c.keyStart ? e.tensor(Int32Array.from(c.keyStart), [c.B], 'i32') : null;
    const ke = c.keyEnd ? e.tensor(c.keyEnd, [c.B, c.Tk ?? c.Tq], 'i32') : null;
    const o = attention(q, k, v, { ...options(c, ks, ke), layout });
    if (!grad) return { o: e.keep(o), grads: [] as Tensor[] };
    e.backward(sum(mul(o, e.tensor(swap(x.dO, qShape), o.shape))));
    // Take the gradients off the leaves, which the scope disposes (and with them their .grad).
    const grads = [q, k, v].map((t) => {
      const g = e.keep(t.grad!);
      t.grad = null;
      return g;
    });
    return { o: e.keep(o), grads };
  });
  const out = [got.o, ...got.grads];
  const read = (await e.readAll(out)) as Float32Array[];
  for (const t of out) t.dispose();
  if (!tokens) return read;
  return read.map((r, n) => swap12(r, shaped(n === 0 || n === 1 ? qShape : x.kShape)));
}

/** The token-major layout gives the head-major results exactly: the same sums in the same order, other addresses. */
async function checkLayouts(c: Case, seed: number, grad: boolean) {
  const x = inputs(c, seed);
  const heads = await gpu(c, x, grad, 'heads');
  const tokens = await gpu(c, x, grad, 'tokens');
  expect(tokens.length).toBe(heads.length);
  heads.forEach((h, n) => expect(Array.from(tokens[n]!), ['o', 'dq', 'dk', 'dv'][n]).toEqual(Array.from(h)));
}

/** Forward and (with grad) backward on the GPU against the float64 reference. */
async function check(c: Case, seed: number, grad: boolean) {
  const x = inputs(c, seed);
  const [o, dq, dk, dv] = await gpu(c, x, grad);
  const want = reference(c, x.q, x.k, x.v, grad ? x.dO : undefined);
  expectClose(o!, want.o, 1e-4, 1e-5, 'o');
  if (grad) {
    expectClose(dq!, want.dq, 1e-4, 1e-4, 'dq');
    expectClose(dk!, want.dk, 1e-4, 1e-4, 'dk');
    expectClose(dv!, want.dv, 1e-4, 1e-4, 'dv');
  }
}

/** Rows packed as random prefix trees (test/helpers/prefix-tree.ts) after pad[b] padding keys. */
interface TreeCase {
  B: number;
  Hq: number;
  Hkv: number;
  T: number;
  Dh: number;
  pad: number[];
  /** Prompts per row (several: a forest of trees, one after another). */
  questions?: number;
}

function treeCase(t: TreeCase, seed: number): Case {
  const { B, Hq, Hkv, T, Dh, pad } = t;
  return { B, Hq, Hkv, Tq: T, Dh, keyStart: pad, keyEnd: treeKeyEnds(seed, T, pad, t.questions) };
}

/** Prefix-tree rows against the float64 reference: several head dims, GQA, padding, forests, many key blocks. */
const TREE_CASES: TreeCase[] = [
  { B: 2, Hq: 4, Hkv: 2, T: 40, Dh: 24, pad: [0, 5] },
  { B: 1, Hq: 2, Hkv: 1, T: 150, Dh: 24, pad: [0] }, // many blocks: whole subtrees skipped
  { B: 2, Hq: 2, Hkv: 2, T: 70, Dh: 64, pad: [7, 0], questions: 2 }, // two trees in a row
  { B: 1, Hq: 3, Hkv: 1, T: 45, Dh: 128, pad: [2] },
  { B: 1, Hq: 2, Hkv: 1, T: 21, Dh: 136, pad: [0] }, // rows: several column passes
];

const name = (c: Case | TreeCase) => JSON.stringify(c).replace(/"/g, '');

describe.each<AttentionVariant>(['rows', 'split', 'lanes', 'tiled'])('attention (%s)', (variant) => {
  beforeEach(() => setAttentionVariant(variant));
  afterEach(() => setAttentionVariant(null));

  describe('training shapes (forward and backward vs float64)', () => {
    const cases: Case[] = [
      { B: 1, Hq: 1, Hkv: 1, Tq: 1, Dh: 8 },
      { B: 2, Hq: 2, Hkv: 2, Tq: 7, Dh: 17 },
      { B: 1, Hq: 4, Hkv: 2, Tq: 19, Dh: 32 },
      { B: 2, Hq: 3, Hkv: 1, Tq: 33, Dh: 8 },
      { B: 1, Hq: 2, Hkv: 1, Tq: 33, Dh: 64 }, // tiled: 2 threads per row
      { B: 1, Hq: 2, Hkv: 2, Tq: 70, Dh: 40 }, // tiled: 2 threads per row, odd chunk
      { B: 1, Hq: 4, Hkv: 1, Tq: 21, Dh: 128 }, // tiled: 4 threads per row, several key blocks
      { B: 1, Hq: 1, Hkv: 1, Tq: 9, Dh: 256 }, // tiled: 8 threads per row, blocks of 6-7; rows: 2 column passes
      { B: 1, Hq: 2, Hkv: 1, Tq: 5, Dh: 3, scale: 0.3 },
      { B: 1, Hq: 3, Hkv: 3, Tq: 10, Dh: 1 }, // the smallest head dim
      { B: 1, Hq: 2, Hkv: 1, Tq: 11, Dh: 512 }, // the largest: tiled 16 threads per row, rows 4 column passes
      { B: 1, Hq: 2, Hkv: 1, Tq: 300, Dh: 48 }, // a longer sequence: many key and query blocks
    ];
    for (const c of cases) it(name(c), () => check(c, c.Tq * 31 + c.Dh, true));
  });

  describe('token-major q, k and v (the head-major results exactly)', () => {
    const cases: Case[] = [
      { B: 2, Hq: 4, Hkv: 2, Tq: 19, Dh: 24 }, // the embedded model's heads
      { B: 1, Hq: 3, Hkv: 1, Tq: 33, Dh: 17 },
      { B: 1, Hq: 2, Hkv: 1, Tq: 21, Dh: 136 }, // rows: several column passes; tiled: 8 threads per row
      { B: 2, Hq: 2, Hkv: 2, Tq: 12, Dh: 8, keyStart: [0, 5] },
      { B: 1, Hq: 4, Hkv: 2, Tq: 5, Tk: 19, cap: 24, Dh: 32 }, // queries at an offset, a larger capacity
    ];
    for (const c of cases) it(name(c), () => checkLayouts(c, c.Tq * 7 + c.Dh, c.Tk === undefined));
    it('a prefix-tree row', () => checkLayouts(treeCase(TREE_CASES[0]!, 3), 3, true));

    it('token-major queries read a head-major cache (cacheRows)', async () => {
      const [B, Hq, Hkv, Tq, Tk, cap, Dh] = [2, 4, 2, 3, 9, 12, 16];
      const q = randn(B * Hq * Tq * Dh, 21);
      const k = randn(3 * Hkv * cap * Dh, 22); // a cache with a spare row
      const v = randn(k.length, 23);
      const run = (layout: 'heads' | 'tokens') =>
        e.noGrad(() =>
          e.keep(
            attention(
              e.tensor(
                layout === 'tokens' ? swap12(q, [B, Hq, Tq, Dh]) : q,
                layout === 'tokens' ? [B, Tq, Hq, Dh] : [B, Hq, Tq, Dh],
              ),
              e.tensor(k, [3, Hkv, cap, Dh]),
              e.tensor(v, [3, Hkv, cap, Dh]),
              { kvLength: Tk, kvCapacity: cap, cacheRows: true, layout },
            ),
          ),
        );
      const [heads, tokens] = [run('heads'), run('tokens')];
      const [h, t] = [await heads.read(), await tokens.read()];
      heads.dispose();
      tokens.dispose();
      expect(Array.from(swap12(t as Float32Array, [B, Tq, Hq, Dh]))).toEqual(Array.from(h));
    });
  });

  describe('KV-cache decoding (forward vs float64)', () => {
    const cases: Case[] = [
      { B: 1, Hq: 2, Hkv: 2, Tq: 1, Tk: 13, cap: 32, Dh: 16 }, // one new token, cache larger than Tk
      { B: 2, Hq: 8, Hkv: 2, Tq: 1, Tk: 40, cap: 48, Dh: 64 }, // GQA decode: a workgroup holds the group's heads
      { B: 1, Hq: 4, Hkv: 2, Tq: 5, Tk: 19, cap: 24, Dh: 32 }, // a chunk of 5 at offset 14
      { B: 1, Hq: 2, Hkv: 1, Tq: 6, Tk: 30, cap: 30, Dh: 17, off: 10 }, // explicit offset: keys past a query are masked
      { B: 1, Hq: 1, Hkv: 1, Tq: 1, Tk: 70, cap: 80, Dh: 128 },
      { B: 1, Hq: 4, Hkv: 2, Tq: 1, Tk: 2000, cap: 2048, Dh: 128 }, // a long cache
    ];
    for (const c of cases) it(name(c), () => check(c, c.Tk! + c.Dh, false));

    it('a chunk at an offset matches the same queries of the full causal sequence', async () => {
      const [B, H, T, Dh, n] = [1, 2, 12, 8, 4];
      const q = randn(B * H * T * Dh, 5);
      const k = randn(B * H * T * Dh, 6);
      const v = randn(B * H * T * Dh, 7);
      const got = e.tidy(() => {
        const full = attention(e.tensor(q, [B, H, T, Dh]), e.tensor(k, [B, H, T, Dh]), e.tensor(v, [B, H, T, Dh]));
        // The last n queries against a cache of capacity 16 holding the T keys.
        const cap = 16;
        const kc = new Float32Array(B * H * cap * Dh);
        const vc = new Float32Array(kc.length);
        const qc = new Float32Array(B * H * n * Dh);
        for (let h = 0; h < H; h++) {
          kc.set(k.subarray(h * T * Dh, (h + 1) * T * Dh), h * cap * Dh);
          vc.set(v.subarray(h * T * Dh, (h + 1) * T * Dh), h * cap * Dh);
          qc.set(q.subarray((h * T + T - n) * Dh, (h + 1) * T * Dh), h * n * Dh);
        }
        const part = attention(
          e.tensor(qc, [B, H, n, Dh]),
          e.tensor(kc, [B, H, cap, Dh]),
          e.tensor(vc, [B, H, cap, Dh]),
          {
            kvLength: T,
            kvCapacity: cap,
          },
        );
        return [e.keep(full), e.keep(part)];
      });
      const [full, part] = [await got[0]!.read(), await got[1]!.read()];
      for (let h = 0; h < H; h++) {
        expectClose(
          part.subarray(h * n * Dh, (h + 1) * n * Dh),
          full.subarray((h * T + T - n) * Dh, (h + 1) * T * Dh),
          1e-5,
          1e-6,
        );
      }
      got.forEach((t) => t.dispose());
    });
  });

  describe('keyStart (left padding)', () => {
    const cases: Case[] = [
      // Batch 0 unpadded, batch 1 padded by 3 (its first 3 queries see nothing: zeros), batch 2 fully masked.
      { B: 3, Hq: 2, Hkv: 1, Tq: 9, Dh: 16, keyStart: [0, 3, 20] },
      { B: 2, Hq: 4, Hkv: 2, Tq: 37, Dh: 64, keyStart: [5, 33] }, // padding across key blocks
      { B: 2, Hq: 2, Hkv: 2, Tq: 11, Dh: 130, keyStart: [-2, 4] }, // a negative start means no padding
      { B: 2, Hq: 6, Hkv: 2, Tq: 13, Dh: 136, keyStart: [1, 6] }, // GQA, padding and a head dim in two passes (rows)
    ];
    for (const c of cases) it(`${name(c)} (forward and backward)`, () => check(c, c.Tq + c.Dh, true));

    it('decode with padding: a fully masked row gives zeros, not NaN', async () => {
      await check({ B: 2, Hq: 4, Hkv: 1, Tq: 2, Tk: 10, cap: 16, Dh: 12, keyStart: [3, 10] }, 11, false);
      const o = e.tidy(() => {
        const ks = e.tensor(Int32Array.from([0, 99]), [2], 'i32');
        return e.keep(
          attention(
            e.tensor(randn(2 * 4, 1), [2, 1, 1, 4]),
            e.tensor(randn(2 * 12, 2), [2, 1, 3, 4]),
            e.tensor(randn(2 * 12, 3), [2, 1, 3, 4]),
            { keyStart: ks },
          ),
        );
      });
      const got = await o.read();
      expect(Array.from(got.subarray(4))).toEqual([0, 0, 0, 0]);
      expect(got.every((x) => Number.isFinite(x))).toBe(true);
      o.dispose();
    });
  });

  describe('backward with a cache (general masking)', () => {
    // Not needed for training, but the kernels implement the same masking: zero gradient past Tk.
    const cases: Case[] = [
      { B: 1, Hq: 4, Hkv: 2, Tq: 3, Tk: 9, cap: 12, Dh: 20, keyStart: [2] },
      // An explicit offset, a ragged capacity (key rows past Tk get zero gradients) and GQA with 3 heads.
      { B: 2, Hq: 3, Hkv: 1, Tq: 5, Tk: 11, cap: 14, Dh: 9, off: 3, keyStart: [0, 4] },
    ];
    for (const c of cases) it(name(c), () => check(c, c.cap! + c.Dh, true));
  });

  describe('gradients through the tape (finite differences)', () => {
    it('MHA', async () => {
      const [B, H, T, Dh] = [1, 2, 5, 4];
      await gradCheck(
        e,
        ['q', 'k', 'v'].map((n, s) => ({ name: n, data: randn(B * H * T * Dh, 40 + s), shape: [B, H, T, Dh] })),
        ([q, k, v]) => attention(q!, k!, v!),
      );
    });
    // Two rows of T steps, the second padded by 2; 4 query heads on 2 kv heads of dim 3.
    const gqa = (T: number, seed: number): GradInput[] => {
      const [B, Hq, Hkv, Dh] = [2, 4, 2, 3];
      return [
        { name: 'q', data: randn(B * Hq * T * Dh, seed), shape: [B, Hq, T, Dh] },
        { name: 'k', data: randn(B * Hkv * T * Dh, seed + 1), shape: [B, Hkv, T, Dh] },
        { name: 'v', data: randn(B * Hkv * T * Dh, seed + 2), shape: [B, Hkv, T, Dh] },
        { name: 'keyStart', data: Int32Array.from([0, 2]), shape: [B], dtype: 'i32' },
      ];
    };
    it('GQA with keyStart', async () => {
      await gradCheck(e, gqa(6, 50), ([q, k, v, ks]) => attention(q!, k!, v!, { keyStart: ks! }));
    });
    it('GQA with keyStart and a prefix-tree mask (keyEnd)', async () => {
      const keyEnd: GradInput = { name: 'keyEnd', data: treeKeyEnds(63, 9, [0, 2]), shape: [2, 9], dtype: 'i32' };
      await gradCheck(e, [...gqa(9, 60), keyEnd], ([q, k, v, ks, ke]) =>
        attention(q!, k!, v!, { keyStart: ks!, keyEnd: ke! }),
      );
    });
  });

  describe('prefix-tree mask (keyEnd)', () => {
    for (const t of TREE_CASES) {
      it(`${name(t)} (forward and backward vs float64)`, () => check(treeCase(t, t.T + t.Dh), t.T * 7 + t.Dh, true));
    }

    it('keyEnd = Tk (or more) everywhere gives bit for bit the causal results', async () => {
      const c: Case = { B: 2, Hq: 4, Hkv: 2, Tq: 70, Dh: 64, keyStart: [0, 9] };
      const x = inputs(c, 3);
      // 'split' has no tree mask (its forward is then 'rows'): compare with the rows forward.
      if (variant === 'split') setAttentionVariant('rows');
      const plain = await gpu(c, x, true);
      setAttentionVariant(variant);
      const ends = Int32Array.from({ length: c.B * c.Tq }, (_, j) => (j % 3 === 0 ? 2 ** 30 : c.Tq));
      const tree = await gpu({ ...c, keyEnd: ends }, x, true);
      ['o', 'dq', 'dk', 'dv'].forEach((what, n) => expectClose(tree[n]!, plain[n]!, 0, 0, what));
    });

    it('a packed tree gives each sequence what it gets alone (o, dq, dk, dv)', async () => {
      // Rollouts of two prompts as one packed row (B = 1, N nodes), and as separate left-padded rows (B = n).
      const seqs = randomRollouts(21, { nodes: 45, prompt: 5, answer: 12, questions: 2 });
      const tree = packPrefixTree(seqs);
      const [Hq, Hkv, Dh, N, n] = [4, 2, 24, tree.tokens.length, seqs.length];
      const L = Math.max(...seqs.map((s) => s.length));
      const q = randn(Hq * N * Dh, 22);
      const k = randn(Hkv * N * Dh, 23);
      const v = randn(Hkv * N * Dh, 24);
      // dO of a node on one of its occurrences (its first sequence's) only: the losses then agree, each packed
      // key's gradient is the sum over its occurrences, and each query's is its owning occurrence's.
      const dO = randn(Hq * N * Dh, 25);
      const owner = new Map<number, number>();
      tree.paths.forEach((path, b) => path.forEach((node) => owner.has(node) || owner.set(node, b)));
      // Row b holds sequence b at positions L - len .. L - 1. at(b, H, h, t): the start of its row in [n, H, L, Dh].
      const at = (b: number, H: number, h: number, t: number) => ((b * H + h) * L + L - seqs[b]!.length + t) * Dh;
      const unpack = (src: Float32Array, H: number, keep: (b: number, node: number) => boolean = () => true) => {
        const out = new Float32Array(n * H * L * Dh);
        tree.paths.forEach((path, b) =>
          path.forEach((node, t) => {
            for (let h = 0; h < H; h++) {
              if (keep(b, node)) out.set(src.subarray((h * N + node) * Dh, (h * N + node + 1) * Dh), at(b, H, h, t));
            }
          }),
        );
        return out;
      };
      const run = (
        qs: Float32Array,
        ks: Float32Array,
        vs: Float32Array,
        g: Float32Array,
        B: number,
        T: number,
        opts: AttentionOptions,
      ) =>
        e.tidy(() => {
          const [qt, kt, vt] = [
            e.tensor(qs, [B, Hq, T, Dh]),
            e.tensor(ks, [B, Hkv, T, Dh]),
            e.tensor(vs, [B, Hkv, T, Dh]),
          ];
          for (const t of [qt, kt, vt]) t.requiresGrad = true;
          const o = attention(qt, kt, vt, opts);
          e.backward(sum(mul(o, e.tensor(g, o.shape))));
          // Take the gradients off the leaves, which the scope disposes (and with them their .grad).
          const grads = [qt, kt, vt].map((t) => {
            const g = e.keep(t.grad!);
            t.grad = null;
            return g;
          });
          return [e.keep(o), ...grads];
        });
      const packed = run(q, k, v, dO, 1, N, { keyEnd: e.tensor(Int32Array.from(tree.end), [1, N], 'i32') });
      const starts = Int32Array.from(seqs, (s) => L - s.length);
      const alone = run(
        unpack(q, Hq),
        unpack(k, Hkv),
        unpack(v, Hkv),
        unpack(dO, Hq, (b, node) => owner.get(node) === b),
        n,
        L,
        {
          keyStart: e.tensor(starts, [n], 'i32'),
        },
      );
      const [P, A] = [await e.readAll(packed), await e.readAll(alone)] as Float32Array[][];
      [...packed, ...alone].forEach((t) => t.dispose());
      // o and dq at every occurrence, dk and dv summed over the occurrences.
      const summed = (x: Float32Array, H: number) => {
        const out = new Float32Array(H * N * Dh);
        tree.paths.forEach((path, b) =>
          path.forEach((node, t) => {
            for (let h = 0; h < H; h++)
              for (let d = 0; d < Dh; d++) out[(h * N + node) * Dh + d]! += x[at(b, H, h, t) + d]!;
          }),
        );
        return out;
      };
      expectClose(A[0]!, unpack(P[0]!, Hq), 1e-5, 1e-6, 'o');
      expectClose(
        A[1]!,
        unpack(P[1]!, Hq, (b, node) => owner.get(node) === b),
        1e-5,
        1e-6,
        'dq',
      );
      expectClose(summed(A[2]!, Hkv), P[2]!, 1e-4, 1e-5, 'dk');
      expectClose(summed(A[3]!, Hkv), P[3]!, 1e-4, 1e-5, 'dv');
    });
  });

  describe('a KV cache with more rows than the batch', () => {
    // A prefill chunk runs the first rows of a cache (src/model/generate.ts): the rows past the batch are not read.
    it('reads the first B rows of k and v, asked to and without a tape only', async () => {
      const [B, Hq, Hkv, Tq, cap, Dh] = [2, 4, 2, 3, 7, 8];
      const q = e.tensor(randn(B * Hq * Tq * Dh, 41), [B, Hq, Tq, Dh]);
      const kv = (seed: number) => randn((B + 2) * Hkv * cap * Dh, seed);
      const [kAll, vAll] = [kv(42), kv(43)];
      const first = (a: Float32Array) => e.tensor(a.slice(0, B * Hkv * cap * Dh), [B, Hkv, cap, Dh]);
      const opts = { kvLength: 5, keyStart: e.tensor(Int32Array.from([0, 2]), [B], 'i32'), cacheRows: true };
      const k = e.tensor(kAll, [B + 2, Hkv, cap, Dh]);
      const v = e.tensor(vAll, [B + 2, Hkv, cap, Dh]);
      const got = e.noGrad(() => attention(q, k, v, opts));
      const want = e.noGrad(() => attention(q, first(kAll), first(vAll), opts));
      expectClose(await got.readF32(), await want.readF32(), 0, 0, 'o');
      expect(() => e.noGrad(() => attention(q, k, v, { ...opts, cacheRows: false }))).toThrow(/does not match/);
      q.requiresGrad = true;
      expect(() => attention(q, k, v, opts)).toThrow(/does not match/);
      const one = e.tensor(kAll.slice(0, Hkv * cap * Dh), [1, Hkv, cap, Dh]);
      expect(() => e.noGrad(() => attention(q, one, one, opts))).toThrow(/does not match/);
    });
  });

  describe('argument checks', () => {
    it('rejects mismatched heads and out-of-range offsets', () => {
      e.tidy(() => {
        const q = e.zeros([1, 3, 2, 4]);
        const k = e.zeros([1, 2, 2, 4]);
        expect(() => attention(q, k, k)).toThrow(/multiple/);
        const q2 = e.zeros([1, 2, 3, 4]);
        expect(() => attention(q2, k, k)).toThrow(/within/);
        expect(() => attention(e.zeros([1, 2, 1, 4]), k, k, { kvCapacity: 5 })).toThrow(/kvCapacity/);
      });
    });
    it('refuses keyEnd outside training passes, and a misshapen one', () => {
      e.tidy(() => {
        const k = e.zeros([1, 1, 4, 4]);
        const keyEnd = e.tensor(Int32Array.from([4, 4, 4, 4]), [1, 4], 'i32');
        expect(() => attention(e.zeros([1, 2, 2, 4]), k, k, { keyEnd })).toThrow(/keyEnd .*queryOffset 2/);
        expect(() => e.noGrad(() => attention(e.zeros([1, 2, 4, 4]), k, k, { keyEnd, cacheRows: true }))).toThrow(
          /keyEnd .*cacheRows/,
        );
        const short = e.tensor(Int32Array.from([4, 4, 4]), [1, 3], 'i32');
        expect(() => attention(e.zeros([1, 2, 4, 4]), k, k, { keyEnd: short })).toThrow(/keyEnd needs shape/);
      });
    });
  });

  describe('shared fixtures', () => {
    const dir = new URL('../../../../../shared/fixtures/', import.meta.url);
    for (const file of ['attention_mha.json', 'attention_gqa.json']) {
      it(file, async () => {
        const fx = await loadFixture(readFileSync(new URL(file, dir), 'utf8'), file);
        const r = await runFixture(e, fx, file, dir.pathname);
        expect(r.ok, r.detail).toBe(true);
      });
    }
  });
});

// The GPU pipelines (compile-time layouts, what PIPLAY_FORCE_GPU_PATHS and real GPUs run) on lavapipe, for the
// prefix-tree mask: two head dims, each pipelines of its own that take lavapipe 10-20 s to compile (the GPU-path
// run, scripts/test-gpu-paths.sh, takes every case above through them).
// The 'lanes' forward adds in the rows forward's order: a row's numbers do not depend on which of the two its call's
// shape picks (generation's "batched turns equal each row on its own" relies on it).
describe('the lanes forward agrees with the rows forward bit for bit', () => {
  afterEach(() => setAttentionVariant(null));
  const cases: Case[] = [
    { B: 2, Hq: 4, Hkv: 2, Tq: 37, Dh: 24, keyStart: [0, 5] },
    { B: 1, Hq: 4, Hkv: 1, Tq: 3, Tk: 21, cap: 24, Dh: 64 },
    { B: 1, Hq: 2, Hkv: 2, Tq: 70, Dh: 8 },
  ];
  for (const c of cases) {
    it(name(c), async () => {
      const x = inputs(c, c.Tq + c.Dh);
      const out: Float32Array[] = [];
      for (const v of ['rows', 'lanes'] as const) {
        setAttentionVariant(v);
        out.push((await gpu(c, x, false))[0]!);
      }
      expectClose(out[1]!, out[0]!, 0, 0, 'lanes o');
    });
  }
});

describe('prefix-tree mask on the tiled GPU pipelines (fixed layouts)', () => {
  beforeEach(() => {
    setAttentionVariant('tiled');
    setAttentionFixedLayout(true);
  });
  afterEach(() => {
    setAttentionVariant(null);
    setAttentionFixedLayout(process.env['ATTENTION_FIXED'] === '1' ? true : null);
  });
  const cases: TreeCase[] = [
    { B: 2, Hq: 4, Hkv: 2, T: 40, Dh: 24, pad: [0, 5] },
    { B: 1, Hq: 2, Hkv: 1, T: 90, Dh: 64, pad: [3], questions: 2 },
  ];
  for (const t of cases) {
    it(`${name(t)} (forward and backward vs float64)`, () => check(treeCase(t, t.T + t.Dh), t.T * 7 + t.Dh, true));
  }
});
