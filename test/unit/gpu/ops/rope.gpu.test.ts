import { describe, it, beforeAll, expect } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { rope } from '../../../../src/gpu/ops/rope.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { randint, randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { expectFixture, forwardBackward } from '../../../helpers/forward-backward.ts';

/** float64 RoPE (rotate_half); `inverse` rotates the other way (the vector-Jacobian product). */
function refRope(x: ArrayLike<number>, pos: Int32Array, [B, T, H, Dh]: number[], theta: number, inverse = false) {
  const half = Dh / 2;
  const y = new Float64Array(x.length);
  const perRow = pos.length === B * T;
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++) {
      const p = perRow ? pos[b * T + t]! : pos[t]!;
      for (let h = 0; h < H; h++) {
        const o = ((b * T + t) * H + h) * Dh;
        for (let i = 0; i < half; i++) {
          const a = p * Math.pow(theta, (-2 * i) / Dh);
          const c = Math.cos(a);
          const s = inverse ? -Math.sin(a) : Math.sin(a);
          const x0 = x[o + i]!;
          const x1 = x[o + i + half]!;
          y[o + i] = x0 * c - x1 * s;
          y[o + i + half] = x1 * c + x0 * s;
        }
      }
    }
  return y;
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('rope', () => {
  const cases: {
    shape: [number, number, number, number];
    theta: number;
    maxPos: number;
    perRow: boolean;
    atol: number;
  }[] = [
    { shape: [1, 1, 1, 2], theta: 10000, maxPos: 8, perRow: false, atol: 1e-6 },
    { shape: [2, 5, 3, 16], theta: 10000, maxPos: 5, perRow: false, atol: 1e-6 },
    { shape: [3, 7, 2, 10], theta: 500000, maxPos: 100, perRow: true, atol: 1e-6 },
    { shape: [1, 3, 5, 6], theta: 10000, maxPos: 3, perRow: true, atol: 1e-6 },
    // Long contexts: positions up to ~4000, head dims of Llama/Qwen, Qwen's theta 1e6.
    { shape: [2, 40, 2, 64], theta: 10000, maxPos: 4096, perRow: false, atol: 3e-6 },
    { shape: [2, 33, 3, 128], theta: 1000000, maxPos: 4096, perRow: true, atol: 3e-6 },
    // Far past any context used here: still accurate to ~1e-5.
    { shape: [1, 17, 1, 64], theta: 10000, maxPos: 1 << 20, perRow: false, atol: 5e-5 },
  ];
  for (const { shape, theta, maxPos, perRow, atol } of cases) {
    it(`x [${shape}] theta ${theta} positions < ${maxPos}${perRow ? ' per row' : ''}: forward and gradient match float64`, async () => {
      const [B, T] = shape;
      const n = shape.reduce((a, b) => a * b, 1);
      const pos = randint(perRow ? B * T : T, maxPos, n + maxPos);
      if (maxPos > 1000) pos[0] = maxPos - 1;
      const x = randn(n, n + 1);
      const g = randn(n, n + 2);
      const got = await forwardBackward(
        e,
        [
          { data: x, shape },
          { data: pos, shape: perRow ? [B, T] : [T], dtype: 'i32' },
        ],
        ([x, p]) => rope(x!, p!, theta),
        g,
      );
      expectClose(got.y, refRope(x, pos, shape, theta), 1e-5, atol, 'y');
      expectClose(got.grads[0]!, refRope(g, pos, shape, theta, true), 1e-5, atol, 'dx');
      expect(got.grads[1]).toBeNull();
    });
  }

  it('negative positions rotate backwards', async () => {
    const shape = [1, 4, 2, 12];
    const pos = Int32Array.from([-1, -4000, 0, -77]);
    const x = randn(96, 5);
    const got = await forwardBackward(
      e,
      [
        { data: x, shape },
        { data: pos, shape: [4], dtype: 'i32' },
      ],
      ([x, p]) => rope(x!, p!, 10000),
      randn(96, 6),
    );
    expectClose(got.y, refRope(x, pos, shape, 10000), 1e-5, 3e-6, 'y');
  });

  it('gradient matches finite differences (shared positions)', async () => {
    await gradCheck(
      e,
      [
        { name: 'x', data: randn(2 * 3 * 2 * 8, 51), shape: [2, 3, 2, 8] },
        { name: 'positions', data: Int32Array.from([3, 0, 900]), shape: [3], dtype: 'i32' },
      ],
      ([x, p]) => rope(x!, p!, 10000),
    );
  });

  it('gradient matches finite differences (per-row positions)', async () => {
    await gradCheck(
      e,
      [
        { name: 'x', data: randn(2 * 3 * 1 * 6, 52), shape: [2, 3, 1, 6] },
        { name: 'positions', data: Int32Array.from([1, 1, 2, 0, 5, 6]), shape: [2, 3], dtype: 'i32' },
      ],
      ([x, p]) => rope(x!, p!, 1e6),
    );
  });

  it('rejects odd head dims and mismatched positions', () => {
    e.tidy(() => {
      const pos = e.tensor(Int32Array.from([0, 1]), [2], 'i32');
      expect(() => rope(e.tensor(randn(2 * 3, 1), [1, 2, 1, 3]), pos)).toThrow(/even head dim/);
      expect(() => rope(e.tensor(randn(3 * 4, 1), [1, 3, 1, 4]), pos)).toThrow(/positions/);
    });
  });

  it('shared fixture rope.json', async () => {
    await expectFixture(e, 'rope.json');
  });
});
