import { describe, it, beforeAll, expect } from 'vitest';
import { Engine } from '../../../../src/gpu/engine.ts';
import { nodeHost } from '../../../../src/gpu/host/node.ts';
import { f16BitsToF32, f32ToF16Bits } from '../../../../src/gpu/half.ts';
import { cast } from '../../../../src/gpu/ops/cast.ts';
import { mul, sum } from '../../../../src/gpu/ops/elementwise.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn } from '../../../helpers/random.ts';

/** The host's round-to-nearest-even f16 value of each float, saturated at ±65504 like the kernel. */
function roundF16(x: ArrayLike<number>): number[] {
  return Array.from(x, (v) => f16BitsToF32(f32ToF16Bits(Math.max(-65504, Math.min(65504, v)))));
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('cast', () => {
  for (const n of [1, 2, 3, 257, 1001]) {
    it(`f32 -> f16 -> f32 of ${n} values rounds to nearest`, async (ctx) => {
      if (!e.info.f16) ctx.skip();
      const x = randn(n, n, 10);
      const [h, back] = e.tidy(() => {
        const h = cast(e.tensor(x, [n]), 'f16');
        return [e.keep(h), e.keep(cast(h, 'f32'))];
      });
      expect(h.dtype).toBe('f16');
      expect(back.dtype).toBe('f32');
      const want = roundF16(x);
      expect(Array.from(await h.read())).toEqual(want);
      expect(Array.from(await back.read())).toEqual(want);
      h.dispose();
      back.dispose();
    });
  }

  it('special values: saturation, subnormals, signed zero, exact halves', async (ctx) => {
    if (!e.info.f16) ctx.skip();
    const x = Float32Array.from([
      1e6,
      -1e6,
      65504,
      65519,
      1e-7,
      -3e-5,
      6.0e-8,
      0,
      -0,
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      2049,
    ]);
    const got = await e.tidy(() => e.keep(cast(cast(e.tensor(x, [x.length]), 'f16'), 'f32'))).read();
    expect(Array.from(got)).toEqual(roundF16(x));
    expect(Object.is(got[8], -0)).toBe(true);
  });

  it('f16 input widens exactly, whatever the shape', async (ctx) => {
    if (!e.info.f16) ctx.skip();
    const x = roundF16(randn(3 * 5 * 7, 4, 100));
    const y = e.tidy(() => e.keep(cast(e.tensor(x, [3, 5, 7], 'f16'), 'f32')));
    expect(y.shape).toEqual([3, 5, 7]);
    expect(Array.from(await y.read())).toEqual(x);
    y.dispose();
  });

  it('gradients pass through as a cast back to the input dtype', async (ctx) => {
    if (!e.info.f16) ctx.skip();
    const n = 9;
    const x = randn(n, 5);
    const u = randn(n, 6);
    // x (f32) -> f16 -> f32 -> L = sum(y * u): dx = u rounded through f16, in f32.
    const [g32, g16] = e.tidy(() => {
      const a = e.tensor(x, [n]);
      a.requiresGrad = true;
      e.backward(sum(mul(cast(cast(a, 'f16'), 'f32'), e.tensor(u, [n]))));
      // An f16 leaf gets an f16 gradient.
      const b = e.tensor(x, [n], 'f16');
      b.requiresGrad = true;
      e.backward(sum(mul(cast(b, 'f32'), e.tensor(u, [n]))));
      const grads = [e.keep(a.grad!), e.keep(b.grad!)];
      a.grad = b.grad = null; // detach, or disposing the leaves would free them
      return grads;
    });
    expect(g32.dtype).toBe('f32');
    expect(g16.dtype).toBe('f16');
    expect(Array.from(await g32.read())).toEqual(roundF16(u));
    expect(Array.from(await g16.read())).toEqual(roundF16(u));
    g32.dispose();
    g16.dispose();
  });

  it('casting to the same dtype is a view', async () => {
    const y = e.tidy(() => e.keep(cast(e.tensor([1, 2, 3], [3]), 'f32')));
    expect(Array.from(await y.read())).toEqual([1, 2, 3]);
    y.dispose();
  });

  it('a device without shader-f16 gets a clear error', async () => {
    const plain = await Engine.create(nodeHost(), { allowF16: false });
    try {
      expect(plain.info.f16).toBe(false);
      const x = plain.tensor([1, 2], [2]);
      expect(() => cast(x, 'f16')).toThrow(/needs f16 support/);
      expect(() => cast(plain.tensor([1], [1], 'i32'), 'f32')).toThrow(/cast needs f32 or f16/);
    } finally {
      plain.destroy();
    }
  });
});
