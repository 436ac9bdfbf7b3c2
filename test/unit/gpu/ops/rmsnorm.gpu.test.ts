import { describe, it, beforeAll, expect } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { rmsnorm } from '../../../../src/gpu/ops/rmsnorm.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { expectFixture, forwardBackward } from '../../../helpers/forward-backward.ts';

/** float64 RMSNorm forward and its vector-Jacobian product with upstream g. */
function refRmsnorm(x: Float32Array, w: Float32Array, g: Float32Array, D: number, eps: number) {
  const R = x.length / D;
  const y = new Float64Array(x.length);
  const dx = new Float64Array(x.length);
  const dw = new Float64Array(D);
  for (let r = 0; r < R; r++) {
    const o = r * D;
    let ss = 0;
    for (let c = 0; c < D; c++) ss += x[o + c]! ** 2;
    const s = 1 / Math.sqrt(ss / D + eps);
    let dot = 0;
    for (let c = 0; c < D; c++) {
      y[o + c] = x[o + c]! * s * w[c]!;
      dot += g[o + c]! * w[c]! * x[o + c]!;
      dw[c] += g[o + c]! * x[o + c]! * s;
    }
    for (let c = 0; c < D; c++) dx[o + c] = s * g[o + c]! * w[c]! - (x[o + c]! * s ** 3 * dot) / D;
  }
  return { y, dx, dw };
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('rmsnorm', () => {
  // Leading shapes of any rank, D from 1 to 8192, R large enough for many weight-gradient chunks.
  const shapes: number[][] = [
    [1, 1],
    [3, 7],
    [7, 64],
    [2, 3, 129],
    [5, 1000],
    [2, 8192],
    [2, 3, 5, 24],
    [1500, 33],
    [3, 1],
  ];
  for (const shape of shapes) {
    it(`x [${shape}] forward and gradients match float64`, async () => {
      const D = shape[shape.length - 1]!;
      const n = shape.reduce((a, b) => a * b, 1);
      const x = randn(n, n + D, 2);
      const w = randn(D, D + 1);
      const g = randn(n, n + 7);
      const eps = 1e-5;
      const got = await forwardBackward(
        e,
        [
          { data: x, shape },
          { data: w, shape: [D] },
        ],
        ([x, w]) => rmsnorm(x!, w!, eps),
        g,
      );
      const want = refRmsnorm(x, w, g, D, eps);
      expectClose(got.y, want.y, 1e-4, 1e-5, 'y');
      expectClose(got.grads[0]!, want.dx, 1e-4, 1e-4, 'dx');
      expectClose(got.grads[1]!, want.dw, 1e-4, 1e-4, 'dw');
    });
  }

  it('more rows than one dispatch dimension holds (70000 x 3)', async () => {
    const [R, D] = [70000, 3];
    const x = randn(R * D, 11);
    const w = randn(D, 12);
    const g = randn(R * D, 13);
    const got = await forwardBackward(
      e,
      [
        { data: x, shape: [R, D] },
        { data: w, shape: [D] },
      ],
      ([x, w]) => rmsnorm(x!, w!, 1e-6),
      g,
    );
    const want = refRmsnorm(x, w, g, D, 1e-6);
    expectClose(got.y, want.y, 1e-4, 1e-5, 'y');
    expectClose(got.grads[0]!, want.dx, 1e-4, 1e-4, 'dx');
    expectClose(got.grads[1]!, want.dw, 1e-4, 1e-3, 'dw');
  });

  it('gradient of w alone, and a zero row (rsqrt(eps) stays finite)', async () => {
    const [R, D] = [4, 10];
    const x = randn(R * D, 21);
    x.fill(0, 0, D);
    const w = randn(D, 22);
    const g = randn(R * D, 23);
    const got = await forwardBackward(
      e,
      [
        { data: x, shape: [R, D], grad: false },
        { data: w, shape: [D] },
      ],
      ([x, w]) => rmsnorm(x!, w!, 1e-6),
      g,
    );
    const want = refRmsnorm(x, w, g, D, 1e-6);
    expect(got.grads[0]).toBeNull();
    expectClose(got.y, want.y, 1e-4, 1e-5, 'y');
    expectClose(got.grads[1]!, want.dw, 1e-4, 1e-4, 'dw');
  });

  it('x and w gradients match finite differences', async () => {
    const [R, D] = [3, 11];
    await gradCheck(
      e,
      [
        { name: 'x', data: randn(R * D, 31), shape: [R, D] },
        { name: 'w', data: randn(D, 32), shape: [D] },
      ],
      ([x, w]) => rmsnorm(x!, w!, 1e-6),
    );
  });

  it('per-head form [B, T, H, Dh] matches finite differences', async () => {
    await gradCheck(
      e,
      [
        { name: 'x', data: randn(2 * 3 * 2 * 8, 41), shape: [2, 3, 2, 8] },
        { name: 'w', data: randn(8, 42), shape: [8] },
      ],
      ([x, w]) => rmsnorm(x!, w!, 1e-6),
    );
  });

  it('rejects a weight of the wrong length', () => {
    e.tidy(() => {
      expect(() => rmsnorm(e.tensor(randn(6, 1), [2, 3]), e.tensor(randn(4, 2), [4]))).toThrow(/rmsnorm: weight/);
    });
  });

  it('shared fixture rmsnorm.json', async () => {
    await expectFixture(e, 'rmsnorm.json');
  });
});
