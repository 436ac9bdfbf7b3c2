import { describe, it, beforeAll, expect } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { swiglu } from '../../../../src/gpu/ops/swiglu.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { expectFixture, forwardBackward } from '../../../helpers/forward-backward.ts';

/** float64 silu(a) * u and its vector-Jacobian product with upstream g. */
function refSwiglu(a: Float32Array, u: Float32Array, g: Float32Array) {
  const y = new Float64Array(a.length);
  const da = new Float64Array(a.length);
  const du = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const s = 1 / (1 + Math.exp(-a[i]!));
    y[i] = a[i]! * s * u[i]!;
    du[i] = g[i]! * a[i]! * s;
    da[i] = g[i]! * u[i]! * s * (1 + a[i]! * (1 - s));
  }
  return { y, da, du };
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('swiglu', () => {
  for (const shape of [[1], [5, 24], [3, 7, 13], [2, 1000]]) {
    it(`[${shape}] forward and gradients match float64`, async () => {
      const n = shape.reduce((a, b) => a * b, 1);
      const a = randn(n, n, 3);
      const u = randn(n, n + 1);
      const g = randn(n, n + 2);
      const got = await forwardBackward(
        e,
        [
          { data: a, shape },
          { data: u, shape },
        ],
        ([a, u]) => swiglu(a!, u!),
        g,
      );
      const want = refSwiglu(a, u, g);
      expectClose(got.y, want.y, 1e-5, 1e-6, 'y');
      expectClose(got.grads[0]!, want.da, 1e-5, 1e-6, 'dgate');
      expectClose(got.grads[1]!, want.du, 1e-5, 1e-6, 'dup');
    });
  }

  // 9 gates take swiglu.wgsl, 12 swiglu_vec4.wgsl.
  for (const gates of [
    [-1000, -100, -88.8, -20, 0, 20, 88.8, 100, 1000],
    [-1000, -100, -88.8, -50, -20, 0, 3, 20, 50, 88.8, 100, 1000],
  ]) {
    it(`extreme gates stay finite (exp overflow), ${gates.length} of them`, async () => {
      const a = Float32Array.from(gates);
      const u = Float32Array.from(a, (_, i) => (i % 2 ? 1.5 : -0.5));
      const g = Float32Array.from(a, () => 1);
      const got = await forwardBackward(
        e,
        [
          { data: a, shape: [a.length] },
          { data: u, shape: [a.length] },
        ],
        ([a, u]) => swiglu(a!, u!),
        g,
      );
      const want = refSwiglu(a, u, g);
      for (const arr of [got.y, ...got.grads]) expect(arr!.every(Number.isFinite)).toBe(true);
      expectClose(got.y, want.y, 1e-5, 1e-6, 'y');
      expectClose(got.grads[0]!, want.da, 1e-5, 1e-6, 'dgate');
      expectClose(got.grads[1]!, want.du, 1e-5, 1e-6, 'dup');
    });
  }

  it('gradients of gate and up match finite differences', async () => {
    await gradCheck(
      e,
      [
        { name: 'gate', data: randn(21, 61, 2), shape: [3, 7] },
        { name: 'up', data: randn(21, 62), shape: [3, 7] },
      ],
      ([a, u]) => swiglu(a!, u!),
    );
  });

  it('only the wanted gradient when up is frozen', async () => {
    const a = randn(10, 71);
    const u = randn(10, 72);
    const g = randn(10, 73);
    const got = await forwardBackward(
      e,
      [
        { data: a, shape: [10] },
        { data: u, shape: [10], grad: false },
      ],
      ([a, u]) => swiglu(a!, u!),
      g,
    );
    expect(got.grads[1]).toBeNull();
    expectClose(got.grads[0]!, refSwiglu(a, u, g).da, 1e-5, 1e-6, 'dgate');
  });

  it('rejects mismatched shapes', () => {
    e.tidy(() => {
      expect(() => swiglu(e.tensor(randn(6, 1), [2, 3]), e.tensor(randn(6, 2), [3, 2]))).toThrow(/swiglu up/);
    });
  });

  it('shared fixture swiglu.json', async () => {
    await expectFixture(e, 'swiglu.json');
  });
});
