// Frozen weights stored as f16 or bf16 (src/gpu/ops/packed.ts, shaders/lib/packed16.wgsl): matmul with a 16-bit
// B in every kernel variant, the embedding gather from a 16-bit table, and widen, against float64 references.
// Two references each: the 16-bit-rounded weights in float64, which a kernel must match to f32 accuracy (it
// widens exactly and sums in f32), and the unrounded weights, which it must match within the bound the
// weights' rounding alone allows (|Σ a·(b - round(b))| <= u · Σ |a|·|b|, u the format's unit roundoff).
import { describe, it, beforeAll, afterAll, expect } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { bf16ArrayToF32, f16ArrayToF32, f32ArrayToBf16, f32ArrayToF16 } from '../../../../src/gpu/half.ts';
import { embedding } from '../../../../src/gpu/ops/embedding.ts';
import { matmul, linear, setMatmulVariant, type MatmulVariant } from '../../../../src/gpu/ops/matmul.ts';
import { widen } from '../../../../src/gpu/ops/packed.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randint, randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';

type Half = 'f16' | 'bf16';
/** The format's unit roundoff: half the gap between 1 and the next value (10 and 7 mantissa bits). */
const UNIT = { f16: 2 ** -11, bf16: 2 ** -8 };
const round16 = (x: Float32Array, dtype: Half) =>
  dtype === 'f16' ? f16ArrayToF32(f32ArrayToF16(x)) : bf16ArrayToF32(f32ArrayToBf16(x));

/** float64 op(A) @ op(B) and Σ |a|·|b| per output (for the rounding bound). */
function ref(a: Float32Array, b: Float32Array, M: number, N: number, K: number, tB: boolean) {
  const c = new Float64Array(M * N);
  const mag = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      let m = 0;
      for (let k = 0; k < K; k++) {
        const p = a[i * K + k]! * (tB ? b[j * K + k]! : b[k * N + j]!);
        s += p;
        m += Math.abs(p);
      }
      c[i * N + j] = s;
      mag[i * N + j] = m;
    }
  return { c, mag };
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});
afterAll(() => setMatmulVariant(null));

describe.each<MatmulVariant>(['regs', 'tiled', 'subgroup'])('matmul with a 16-bit B (%s)', (variant) => {
  // Odd sizes: element counts with a half-filled last word, odd row strides (elements in both halves).
  const shapes: [number, number, number][] = [
    [1, 1, 1],
    [3, 5, 7],
    [33, 17, 70],
    [9, 65, 31],
  ];
  for (const dtype of ['f16', 'bf16'] as const) {
    for (const [M, N, K] of shapes) {
      for (const tB of [true, false]) {
        // The tiled kernel compiles slowly on lavapipe (~30 s a pipeline): one layout per format there.
        if (variant === 'tiled' && tB !== (dtype === 'f16')) continue;
        it(`${dtype} M=${M} N=${N} K=${K} transB=${tB}`, async () => {
          setMatmulVariant(variant);
          const a = randn(M * K, M * 3 + K);
          const b = randn(K * N, N * 5 + K);
          const w = e.tensor(b, tB ? [N, K] : [K, N], dtype);
          const out = e.tidy(() => e.keep(matmul(e.tensor(a, [M, K]), w, { transB: tB })));
          const got = await out.readF32();
          out.dispose();
          w.dispose();
          const exact = ref(a, round16(b, dtype), M, N, K, tB);
          expectClose(got, exact.c, 1e-5, 1e-5, 'against the rounded weights');
          const { c, mag } = ref(a, b, M, N, K, tB);
          for (let i = 0; i < c.length; i++) {
            const bound = UNIT[dtype] * mag[i]! + 1e-5 * (1 + mag[i]!);
            expect(Math.abs(got[i]! - c[i]!), `element ${i} against the unrounded weights`).toBeLessThanOrEqual(bound);
          }
        });
      }
    }
  }
});

describe('16-bit frozen weights elsewhere', () => {
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`embedding gathers f32 rows from an ${dtype} table`, async () => {
      const [V, D, N] = [37, 9, 23]; // odd D: rows start in either half of a word
      const table = randn(V * D, 7);
      const ids = randint(N, V, 3);
      const t = e.tensor(table, [V, D], dtype);
      const out = e.tidy(() => e.keep(embedding(t, e.tensor(ids, [N], 'i32'), ids)));
      expect(out.dtype).toBe('f32');
      const got = await out.readF32();
      const rounded = round16(table, dtype);
      const want = Float64Array.from({ length: N * D }, (_, k) => rounded[ids[Math.floor(k / D)]! * D + (k % D)]!);
      expectClose(got, want, 0, 0, 'gathered rows (exact)');
      for (let k = 0; k < want.length; k++) {
        const orig = table[ids[Math.floor(k / D)]! * D + (k % D)]!;
        expect(Math.abs(got[k]! - orig)).toBeLessThanOrEqual(UNIT[dtype] * Math.abs(orig) + 6e-8);
      }
      out.dispose();
      t.dispose();
    });

    it(`widen reads an ${dtype} tensor back exactly as f32`, async () => {
      const x = randn(101, 11);
      const t = e.tensor(x, [101], dtype);
      const w = e.tidy(() => e.keep(widen(t)));
      expect(w.dtype).toBe('f32');
      expectClose(await w.readF32(), round16(x, dtype), 0, 0, 'widened');
      expectClose(await t.readF32(), round16(x, dtype), 0, 0, 'read back');
      w.dispose();
      t.dispose();
    });

    it(`gradients flow to the input of a linear layer with an ${dtype} weight, not into the weight`, async () => {
      const [R, K, N] = [5, 12, 7];
      const xs = randn(R * K, 1);
      const ws = randn(N * K, 2);
      const w = e.tensor(ws, [N, K], dtype);
      const x = e.tensor(xs, [R, K]);
      x.requiresGrad = true;
      const g = randn(R * N, 3);
      e.tidy(() => {
        const y = linear(x, w);
        e.backward(y, e.tensor(g, [R, N]));
      });
      // dx = g @ round(W): [R, N] @ [N, K].
      const rw = round16(ws, dtype);
      const want = ref(g, rw, R, K, N, false).c;
      expectClose(await x.grad!.readF32(), want, 1e-5, 1e-5, 'dx');
      expect(w.grad).toBeNull();
      x.dispose();
      w.dispose();
    });
  }

  it('refuses a 16-bit weight that needs a gradient', () => {
    const w = e.tensor(randn(6, 1), [2, 3], 'bf16');
    w.requiresGrad = true;
    const x = e.tensor(randn(3, 2), [1, 3]);
    expect(() => e.tidy(() => linear(x, w))).toThrow(/stored as bf16 and needs a gradient.*frozen weights only/);
    w.dispose();
    x.dispose();
  });
});
