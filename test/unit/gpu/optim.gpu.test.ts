import { describe, it, beforeAll, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../../../src/gpu/engine.ts';
import type { Tensor } from '../../../src/gpu/tensor.ts';
import { adamwUpdate, type AdamWHyper } from '../../../src/gpu/ops/adamw.ts';
import { gradNorm } from '../../../src/gpu/ops/grad_norm.ts';
import { emaInto } from '../../../src/gpu/ops/ema.ts';
import { AdamW } from '../../../src/gpu/optim/adamw.ts';
import { loadFixture, runFixture } from '../../../src/fixtures/runner.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randn } from '../../helpers/random.ts';
import { expectClose } from '../../helpers/compare.ts';

const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/', import.meta.url));

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

interface Moments {
  p: Float64Array;
  m: Float64Array;
  v: Float64Array;
}

/** float64 torch.optim.AdamW step (in place on `s`), the gradient first scaled by `clip`. */
function refAdamW(s: Moments, g: ArrayLike<number>, h: AdamWHyper, clip = 1): void {
  const bc1 = 1 - h.beta1 ** h.step;
  const bc2 = 1 - h.beta2 ** h.step;
  for (let i = 0; i < s.p.length; i++) {
    const gi = g[i]! * clip;
    s.p[i] = s.p[i]! * (1 - h.lr * h.weightDecay);
    s.m[i] = h.beta1 * s.m[i]! + (1 - h.beta1) * gi;
    s.v[i] = h.beta2 * s.v[i]! + (1 - h.beta2) * gi * gi;
    s.p[i] = s.p[i]! - (h.lr / bc1) * (s.m[i]! / (Math.sqrt(s.v[i]!) / Math.sqrt(bc2) + h.eps));
  }
}

function refNorm(gs: ArrayLike<number>[]): number {
  let s = 0;
  for (const g of gs) for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!;
  return Math.sqrt(s);
}

/** torch.nn.utils.clip_grad_norm_'s factor. */
const clipFactor = (norm: number, maxNorm: number) => Math.min(1, maxNorm / (norm + 1e-6));

describe('adamwUpdate vs float64', () => {
  const cases: [number, AdamWHyper][] = [
    [1, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, step: 1 }],
    [5, { lr: 3e-2, beta1: 0.8, beta2: 0.95, eps: 1e-6, weightDecay: 0, step: 2 }],
    [257, { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1, step: 7 }],
    [70_001, { lr: 1e-4, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, step: 1000 }],
  ];
  for (const [n, h] of cases) {
    it(`n=${n} step=${h.step} wd=${h.weightDecay}`, async () => {
      const p0 = randn(n, n);
      const g = randn(n, n + 1);
      const m0 = randn(n, n + 2, 0.1);
      const v0 = Float32Array.from(randn(n, n + 3, 0.05), (x) => x * x);
      const t = e.tidy(() => {
        const ts = { p: e.tensor(p0, [n]), g: e.tensor(g, [n]), m: e.tensor(m0, [n]), v: e.tensor(v0, [n]) };
        adamwUpdate(ts.p, ts.g, ts.m, ts.v, h);
        return ts;
      });
      const want: Moments = { p: Float64Array.from(p0), m: Float64Array.from(m0), v: Float64Array.from(v0) };
      refAdamW(want, g, h);
      expectClose(await t.p.read(), want.p, 1e-5, 1e-6, 'param');
      expectClose(await t.m.read(), want.m, 1e-5, 1e-7, 'm');
      expectClose(await t.v.read(), want.v, 1e-5, 1e-9, 'v');
      for (const x of Object.values(t)) x.dispose();
    });
  }

  it('rejects bad inputs', () => {
    e.tidy(() => {
      const a = e.tensor(new Float32Array(4), [4]);
      const b = e.tensor(new Float32Array(3), [3]);
      const h = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, step: 1 };
      expect(() => adamwUpdate(a, b, a, a, h)).toThrow(/grad/);
      expect(() => adamwUpdate(a, a, a, a, { ...h, step: 0 })).toThrow(/step/);
      expect(() => adamwUpdate(a, a, a, a, { ...h, maxGradNorm: 1 })).toThrow(/norm/);
    });
  });
});

describe('gradNorm', () => {
  it('is the L2 norm over every tensor (odd sizes, many workgroups, strided)', async () => {
    const sizes = [1, 3, 300, 65_537, 70_000];
    const datas = sizes.map((n, k) => randn(n, 40 + k));
    const norm = e.tidy(() => gradNorm(datas.map((d, k) => e.tensor(d, [sizes[k]!]))));
    expect(norm.shape).toEqual([]);
    expectClose(await norm.read(), [refNorm(datas)], 1e-5, 0, 'norm');
    norm.dispose();
  });
});

describe('AdamW optimizer', () => {
  const shapes = [[3, 5], [257], [2]];
  const opts = { lr: 1e-2, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.05 };

  /** Sets a leaf's gradient as engine.backward would (kept out of tidy scopes). */
  function setGrad(p: Tensor, data: Float32Array) {
    p.grad?.dispose();
    p.grad = e.keep(e.tensor(data, p.shape));
  }

  it('matches clip_grad_norm_ + torch AdamW over steps, skipping parameters without a gradient', async () => {
    const maxGradNorm = 5;
    const init = shapes.map((s, k) =>
      randn(
        s.reduce((a, b) => a * b, 1),
        60 + k,
      ),
    );
    const params = init.map((d, k) => e.keep(e.tensor(d, shapes[k]!)));
    const opt = new AdamW(params, { ...opts, maxGradNorm });
    const ref = init.map((d) => ({
      p: Float64Array.from(d),
      m: new Float64Array(d.length),
      v: new Float64Array(d.length),
    }));
    const refSteps = [0, 0, 0];
    // Step 2 has small gradients (no clipping); the last parameter has none in step 1.
    for (let step = 1; step <= 3; step++) {
      const gs = init.map((d, k) => randn(d.length, 100 * step + k, step === 2 ? 0.1 : 3));
      const live = [0, 1, 2].filter((k) => !(k === 2 && step === 1));
      opt.zeroGrad();
      for (const k of live) setGrad(params[k]!, gs[k]!);

      const reads = e.counters.reads;
      const norm = opt.step();
      expect(e.counters.reads, 'step() reads nothing back').toBe(reads);

      const wantNorm = refNorm(live.map((k) => gs[k]!));
      expectClose(await norm.read(), [wantNorm], 1e-5, 0, `step ${step} norm`);
      norm.dispose();
      const clip = clipFactor(wantNorm, maxGradNorm);
      if (step !== 2) expect(clip).toBeLessThan(1);
      for (const k of live) refAdamW(ref[k]!, gs[k]!, { ...opts, step: ++refSteps[k]! }, clip);
      for (let k = 0; k < params.length; k++) {
        expectClose(await params[k]!.read(), ref[k]!.p, 1e-5, 1e-6, `step ${step} param ${k}`);
      }
    }
    const s = await opt.state();
    expect(s.step).toBe(3);
    expect(s.params.map((p) => p.step)).toEqual([3, 3, 2]);
    expectClose(s.params[1]!.m, ref[1]!.m, 1e-5, 1e-7, 'state m');
    expectClose(s.params[1]!.v, ref[1]!.v, 1e-5, 1e-9, 'state v');
    opt.zeroGrad();
    expect(params.every((p) => p.grad === null)).toBe(true);
    opt.dispose();
    for (const p of params) p.dispose();
  });

  it('state() / loadState() resume exactly', async () => {
    const init = shapes.map((s, k) =>
      randn(
        s.reduce((a, b) => a * b, 1),
        80 + k,
      ),
    );
    const a = init.map((d, k) => e.keep(e.tensor(d, shapes[k]!)));
    const optA = new AdamW(a, { ...opts, maxGradNorm: 1 });
    for (let step = 1; step <= 2; step++) {
      a.forEach((p, k) => setGrad(p, randn(p.size, 200 * step + k)));
      optA.step().dispose();
    }
    const saved = await optA.state();
    const b = await Promise.all(a.map(async (p) => e.keep(e.tensor(await p.read(), p.shape))));
    const optB = new AdamW(b, { ...opts, maxGradNorm: 1 });
    optB.loadState(saved);
    expect(optB.stepCount).toBe(2);
    a.forEach((p, k) => setGrad(p, randn(p.size, 900 + k)));
    b.forEach((p, k) => setGrad(p, randn(p.size, 900 + k)));
    optA.step(3e-3).dispose();
    optB.step(3e-3).dispose();
    for (let k = 0; k < a.length; k++) expect(await b[k]!.read()).toEqual(await a[k]!.read());

    const wrong = new AdamW([e.keep(e.tensor(new Float32Array(4), [4]))]);
    expect(() => wrong.loadState(saved)).toThrow(/parameters/);
    for (const o of [optA, optB, wrong]) {
      o.zeroGrad();
      o.dispose();
    }
    for (const p of [...a, ...b, ...wrong.params]) p.dispose();
  });
});

describe('emaInto', () => {
  for (const [shape, tau] of [
    [[1], 0.05],
    [[1000], 0.05],
    [[3, 7], 0.3],
    [[70_001], 0.05],
  ] as [number[], number][]) {
    it(`shape [${shape}] tau ${tau}`, async () => {
      const n = shape.reduce((a, b) => a * b, 1);
      const t0 = randn(n, n);
      const s0 = randn(n, n + 1);
      const t = e.tidy(() => {
        const teacher = e.tensor(t0, shape);
        emaInto(teacher, e.tensor(s0, shape), tau);
        return teacher;
      });
      expectClose(
        await t.read(),
        Float64Array.from(t0, (x, i) => (1 - tau) * x + tau * s0[i]!),
        1e-6,
        1e-7,
        'teacher',
      );
      t.dispose();
    });
  }

  it('tau = 0 keeps the teacher and tau = 1 copies the student exactly', async () => {
    const t0 = randn(33, 1, 100);
    const s0 = randn(33, 2, 1e-3);
    for (const [tau, want] of [
      [0, t0],
      [1, s0],
    ] as const) {
      const t = e.tidy(() => {
        const teacher = e.tensor(t0, [33]);
        emaInto(teacher, e.tensor(s0, [33]), tau);
        return teacher;
      });
      expect(await t.read()).toEqual(want);
      t.dispose();
    }
  });

  it('rejects mismatched shapes and a bad tau', () => {
    e.tidy(() => {
      const a = e.tensor(new Float32Array(4), [4]);
      const b = e.tensor(new Float32Array(4), [2, 2]);
      expect(() => emaInto(a, b, 0.1)).toThrow(/shape/);
      expect(() => emaInto(a, e.tensor(new Float32Array(4), [4]), 1.5)).toThrow(/tau/);
    });
  });
});

describe.skipIf(!existsSync(FIXTURES))('shared fixtures (adamw, ema)', () => {
  const files = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith('.json')) : [];
  for (const file of files) {
    const text = readFileSync(FIXTURES + file, 'utf8');
    if (!/"(adamw|ema)"/.test(text)) continue;
    it(file, async () => {
      const fx = await loadFixture(text, file);
      if (fx.op !== 'adamw' && fx.op !== 'ema') return;
      const r = await runFixture(e, fx, file, FIXTURES);
      expect(r.ok, `${r.detail} (worst ${r.worst})`).toBe(true);
    });
  }
});
