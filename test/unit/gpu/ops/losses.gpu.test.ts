import { describe, it, beforeAll, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../../../../src/gpu/engine.ts';
import type { Tensor } from '../../../../src/gpu/tensor.ts';
import { clippedRatio, policyGradient } from '../../../../src/gpu/ops/clipped_ratio.ts';
import { loadFixture, runFixture } from '../../../../src/fixtures/runner.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn, rng } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';

const FIXTURES = fileURLToPath(new URL('../../../../../shared/fixtures/', import.meta.url));

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

interface Batch {
  logp: Float32Array;
  old: Float32Array;
  ref: Float32Array;
  adv: Float32Array;
  mask: Float32Array;
}

/** Log-probs, old log-probs at log-ratio `spread` around them, advantages, and a random 0/1 mask. */
function batch(R: number, seed: number, spread = 0.4, maskP = 0.7): Batch {
  const r = rng(seed);
  const logp = Float32Array.from(randn(R, seed), (x) => -Math.abs(x) - 0.1);
  const old = Float32Array.from(randn(R, seed + 1, spread), (x, i) => logp[i]! - x);
  const ref = Float32Array.from(randn(R, seed + 2, 0.5), (x, i) => logp[i]! + x);
  const adv = randn(R, seed + 3);
  const mask = Float32Array.from({ length: R }, () => (r() < maskP ? 1 : 0));
  return { logp, old, ref, adv, mask };
}

interface RefOut {
  loss: number;
  clipFraction: number;
  klMean: number;
  perToken: Float64Array;
  /** d loss / d logp */
  grad: Float64Array;
}

/** float64 reference of the clipped-ratio loss (ALGORITHM.md section 5). */
function refClipped(b: Batch, epsLow: number, epsHigh: number, beta: number, withRef = true): RefOut {
  const R = b.logp.length;
  const perToken = new Float64Array(R);
  const dterm = new Float64Array(R);
  let W = 0;
  let clipped = 0;
  let kl = 0;
  let sum = 0;
  for (let t = 0; t < R; t++) {
    if (b.mask[t] !== 1) continue;
    const d = b.logp[t]! - b.old[t]!;
    const ratio = Math.exp(Math.min(20, Math.max(-20, d)));
    const A = b.adv[t]!;
    const u = ratio * A;
    const c = Math.min(1 + epsHigh, Math.max(1 - epsLow, ratio)) * A;
    const q = withRef ? b.ref[t]! - b.logp[t]! : 0;
    const k3 = withRef ? Math.expm1(q) - q : 0;
    perToken[t] = -Math.min(u, c) + beta * k3;
    dterm[t] = (c < u || Math.abs(d) > 20 ? 0 : -u) + (withRef ? beta * -Math.expm1(q) : 0);
    W += 1;
    clipped += c < u ? 1 : 0;
    kl += k3;
    sum += perToken[t]!;
  }
  const inv = W > 0 ? 1 / W : 0;
  return { loss: sum * inv, clipFraction: clipped * inv, klMean: kl * inv, perToken, grad: dterm.map((g) => g * inv) };
}

function upload(b: Batch, shape: number[]) {
  return {
    logp: e.tensor(b.logp, shape),
    old: e.tensor(b.old, shape),
    ref: e.tensor(b.ref, shape),
    adv: e.tensor(b.adv, shape),
    mask: e.tensor(b.mask, shape),
  };
}

/** Runs the op with logp requiring grad, back-propagates the loss, and reads everything back. */
async function runClipped(b: Batch, shape: number[], epsLow: number, epsHigh: number, beta: number, withRef = true) {
  const kept = e.tidy(() => {
    const t = upload(b, shape);
    t.logp.requiresGrad = true;
    const r = clippedRatio(t.logp, t.old, withRef ? t.ref : null, t.adv, t.mask, { epsLow, epsHigh, beta });
    e.backward(r.loss);
    const grad = t.logp.grad!;
    t.logp.grad = null;
    return { ...r, grad: e.keep(grad) };
  });
  const out = {
    loss: (await kept.loss.read())[0]!,
    clipFraction: (await kept.clipFraction.read())[0]!,
    klMean: (await kept.klMean.read())[0]!,
    perToken: await kept.perToken.read(),
    grad: await kept.grad.read(),
  };
  for (const t of Object.values(kept)) (t as Tensor).dispose();
  return out;
}

function expectScalar(got: number, want: number, what: string, rtol = 1e-4, atol = 1e-6) {
  expectClose([got], [want], rtol, atol, what);
}

describe('clippedRatio vs float64', () => {
  const cases: { shape: number[]; epsLow: number; epsHigh: number; beta: number }[] = [
    { shape: [1], epsLow: 0.2, epsHigh: 0.2, beta: 0 },
    { shape: [7], epsLow: 0.2, epsHigh: 0.28, beta: 0.01 },
    { shape: [255], epsLow: 0.2, epsHigh: 0.2, beta: 0.1 },
    { shape: [257], epsLow: 0.1, epsHigh: 0.3, beta: 0 },
    { shape: [3, 37], epsLow: 0.2, epsHigh: 0.28, beta: 0.05 },
    // More tokens than the first pass has threads (256 workgroups x 256): every thread strides.
    { shape: [100_003], epsLow: 0.2, epsHigh: 0.2, beta: 0.02 },
  ];
  for (const { shape, epsLow, epsHigh, beta } of cases) {
    it(`shape [${shape}] eps ${epsLow}/${epsHigh} beta ${beta}`, async () => {
      const R = shape.reduce((a, b) => a * b, 1);
      const b = batch(R, R + 11);
      const got = await runClipped(b, shape, epsLow, epsHigh, beta);
      const want = refClipped(b, epsLow, epsHigh, beta);
      expectScalar(got.loss, want.loss, 'loss');
      expectScalar(got.clipFraction, want.clipFraction, 'clipFraction');
      expectScalar(got.klMean, want.klMean, 'klMean');
      expectClose(got.perToken, want.perToken, 1e-4, 1e-6, 'perToken');
      expectClose(got.grad, want.grad, 1e-4, 1e-9, 'grad');
      if (R > 1000) expect(want.clipFraction).toBeGreaterThan(0.1); // both branches are exercised
    });
  }

  it('without a reference policy: klMean is 0 and beta must be 0', async () => {
    const b = batch(50, 3);
    const got = await runClipped(b, [50], 0.2, 0.2, 0, false);
    const want = refClipped(b, 0.2, 0.2, 0, false);
    expectScalar(got.loss, want.loss, 'loss');
    expect(got.klMean).toBe(0);
    expectClose(got.grad, want.grad, 1e-4, 1e-9, 'grad');
    e.tidy(() => {
      const t = upload(b, [50]);
      expect(() => clippedRatio(t.logp, t.old, null, t.adv, t.mask, { beta: 0.1 })).toThrow(/needs refLogp/);
    });
  });

  it('clamps log-ratios at +-20 (finite loss, no gradient through the clamp)', async () => {
    const b = batch(64, 5);
    for (let t = 0; t < 64; t += 4) b.old[t] = b.logp[t]! + (t % 8 === 0 ? 40 : -40);
    const got = await runClipped(b, [64], 0.2, 0.2, 0);
    const want = refClipped(b, 0.2, 0.2, 0);
    expect(Number.isFinite(got.loss)).toBe(true);
    expectScalar(got.loss, want.loss, 'loss', 1e-4, 1e-5);
    expectClose(got.grad, want.grad, 1e-4, 1e-9, 'grad');
  });

  it('an empty mask gives 0 (not NaN) and zero gradient; masked-out garbage is ignored', async () => {
    const b = batch(300, 9, 0.4, 0);
    b.logp[3] = -Infinity;
    b.old[4] = NaN;
    const got = await runClipped(b, [300], 0.2, 0.2, 0.1);
    expect([got.loss, got.clipFraction, got.klMean]).toEqual([0, 0, 0]);
    expect(got.grad.every((g) => g === 0)).toBe(true);
    expect(got.perToken.every((g) => g === 0)).toBe(true);

    const b2 = batch(300, 10);
    b2.mask[3] = 0;
    b2.logp[3] = -Infinity;
    const got2 = await runClipped(b2, [300], 0.2, 0.2, 0.1);
    b2.logp[3] = 0;
    const want2 = refClipped(b2, 0.2, 0.2, 0.1);
    expectScalar(got2.loss, want2.loss, 'loss');
    expectClose(got2.grad, want2.grad, 1e-4, 1e-9, 'grad');
  });

  it('rejects mismatched shapes and dtypes', () => {
    e.tidy(() => {
      const a = e.tensor(new Float32Array(4), [4]);
      const short = e.tensor(new Float32Array(3), [3]);
      const ints = e.tensor(new Int32Array(4), [4], 'i32');
      expect(() => clippedRatio(a, short, null, a, a)).toThrow(/oldLogp/);
      expect(() => clippedRatio(a, a, null, a, ints)).toThrow(/mask must be f32/);
      expect(() => policyGradient(a, a, short)).toThrow(/mask/);
    });
  });
});

/**
 * Data for finite differences: log-ratios kept away from the clip edges (log 0.8, log 1.2) and the min's
 * kink, so a step of h in logp never switches branch.
 */
function smoothBatch(R: number, seed: number): Batch {
  const b = batch(R, seed);
  const r = rng(seed + 7);
  const levels = [-0.6, -0.05, 0.04, 0.5];
  for (let t = 0; t < R; t++) b.old[t] = b.logp[t]! - (levels[t % 4]! + 0.02 * (r() - 0.5));
  return b;
}

describe('gradients through the tape', () => {
  const grads = (b: Batch, shape: number[]) => [
    { name: 'logp', data: b.logp, shape },
    { name: 'old', data: b.old, shape, grad: false },
    { name: 'ref', data: b.ref, shape, grad: false },
    { name: 'adv', data: b.adv, shape, grad: false },
    { name: 'mask', data: b.mask, shape, grad: false },
  ];

  it('clippedRatio loss and perToken match finite differences', async () => {
    const b = smoothBatch(24, 21);
    await gradCheck(
      e,
      grads(b, [4, 6]),
      ([logp, old, ref, adv, mask]) => {
        const r = clippedRatio(logp!, old!, ref!, adv!, mask!, { epsLow: 0.2, epsHigh: 0.28, beta: 0.3 });
        return [r.loss, r.perToken];
      },
      { samples: 24, h: 1e-3, rtol: 1e-2, atol: 1e-3 },
    );
  });

  it('clippedRatio loss alone matches finite differences', async () => {
    const b = smoothBatch(33, 22);
    await gradCheck(
      e,
      grads(b, [33]),
      ([logp, old, ref, adv, mask]) => clippedRatio(logp!, old!, ref!, adv!, mask!).loss,
      {
        samples: 33,
        h: 1e-3,
        rtol: 1e-2,
        atol: 1e-3,
      },
    );
  });

  it('policyGradient matches finite differences', async () => {
    const b = batch(29, 23);
    await gradCheck(
      e,
      [
        { name: 'logp', data: b.logp, shape: [29] },
        { name: 'adv', data: b.adv, shape: [29], grad: false },
        { name: 'mask', data: b.mask, shape: [29], grad: false },
      ],
      ([logp, adv, mask]) => policyGradient(logp!, adv!, mask!).loss,
      { samples: 29 },
    );
  });

  it('policyGradient with the examiner KL (beta > 0) matches finite differences', async () => {
    const b = batch(29, 24);
    await gradCheck(
      e,
      [
        { name: 'logp', data: b.logp, shape: [29] },
        { name: 'adv', data: b.adv, shape: [29], grad: false },
        { name: 'mask', data: b.mask, shape: [29], grad: false },
        { name: 'ref', data: b.ref, shape: [29], grad: false },
      ],
      ([logp, adv, mask, ref]) => policyGradient(logp!, adv!, mask!, { logp: ref!, beta: 0.4 }).loss,
      { samples: 29, h: 1e-3, rtol: 1e-2, atol: 1e-3 },
    );
  });
});

describe('policyGradient vs float64', () => {
  // beta = 0: -A·logp; beta > 0 adds Dr. Zero's k3 KL to the reference, k3 = e^q - q - 1 with q = ref - logp.
  for (const [R, beta] of [
    [1, 0],
    [300, 0],
    [70_001, 0],
    [300, 0.25],
    [70_001, 0.25],
  ] as const) {
    it(`R=${R}, beta=${beta}`, async () => {
      const b = batch(R, R);
      const kept = e.tidy(() => {
        const t = upload(b, [R]);
        t.logp.requiresGrad = true;
        const r = policyGradient(t.logp, t.adv, t.mask, beta > 0 ? { logp: t.ref, beta } : null);
        e.backward(r.loss);
        const g = t.logp.grad!;
        t.logp.grad = null;
        return { loss: r.loss, kl: r.klMean, g: e.keep(g) };
      });
      let W = 0;
      let s = 0;
      let k = 0;
      for (let t = 0; t < R; t++) {
        if (b.mask[t] !== 1) continue;
        W++;
        const q = b.ref[t]! - b.logp[t]!;
        s += -b.adv[t]! * b.logp[t]! + beta * (Math.exp(q) - q - 1);
        k += Math.exp(q) - q - 1;
      }
      const inv = W ? 1 / W : 0;
      expectScalar((await kept.loss.read())[0]!, s * inv, 'loss');
      if (beta > 0) expectScalar((await kept.kl.read())[0]!, k * inv, 'k3 mean');
      const grad = Float64Array.from(b.adv, (a, t) =>
        b.mask[t] ? (-a + beta * (1 - Math.exp(b.ref[t]! - b.logp[t]!))) * inv : 0,
      );
      expectClose(await kept.g.read(), grad, 1e-4, 1e-9, 'grad');
      for (const x of Object.values(kept)) x.dispose();
    });
  }
});

describe.skipIf(!existsSync(FIXTURES))('shared fixtures (clipped_ratio)', () => {
  const files = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith('.json')) : [];
  for (const file of files) {
    const text = readFileSync(FIXTURES + file, 'utf8');
    if (!text.includes('"clipped_ratio"')) continue;
    it(file, async () => {
      const fx = await loadFixture(text, file);
      if (fx.op !== 'clipped_ratio') return;
      const r = await runFixture(e, fx, file, FIXTURES);
      expect(r.ok, `${r.detail} (worst ${r.worst})`).toBe(true);
    });
  }
});
