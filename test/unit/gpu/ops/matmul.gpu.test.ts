import { describe, it, beforeAll } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { matmul, linear, setMatmulVariant, type MatmulVariant } from '../../../../src/gpu/ops/matmul.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { randn } from '../../../helpers/random.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { setWindowBytes } from '../../../../src/gpu/uniform-windows.ts';

/** float64 reference of alpha * op(A) @ op(B). */
function refMatmul(
  a: Float32Array,
  b: Float32Array,
  M: number,
  N: number,
  K: number,
  tA: boolean,
  tB: boolean,
  alpha = 1,
) {
  const c = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += (tA ? a[k * M + i]! : a[i * K + k]!) * (tB ? b[j * K + k]! : b[k * N + j]!);
      c[i * N + j] = alpha * s;
    }
  return c;
}

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe.each<MatmulVariant>(['regs', 'tiled', 'subgroup'])('matmul (%s)', (variant) => {
  const shapes: [number, number, number][] = [
    [1, 1, 1],
    [3, 5, 7],
    [33, 17, 70],
    [64, 64, 64],
    [65, 31, 129],
    [130, 67, 5],
    [333, 257, 129], // no dimension a multiple of any block
    [37, 45, 68], // K a multiple of 4 (the vec4 kernel for transposed B), M and N not of a block
    [37, 44, 68], // K and N multiples of 4 (the vec4 kernel for plain A @ B too), M, N not of a block
    [5, 12, 16], // the same with at most 8 rows and fewer than 32 columns
    [36, 44, 13], // M and N multiples of 4 (the vec4 kernel for transposed A), M and N not of a block
  ];
  for (const [M, N, K] of shapes) {
    for (const [tA, tB] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      it(`M=${M} N=${N} K=${K} transA=${tA} transB=${tB}`, async () => {
        setMatmulVariant(variant);
        const a = randn(M * K, M * 7 + K);
        const b = randn(K * N, N * 13 + K);
        const out = e.tidy(() =>
          e.keep(
            matmul(e.tensor(a, tA ? [K, M] : [M, K]), e.tensor(b, tB ? [N, K] : [K, N]), {
              transA: tA,
              transB: tB,
              alpha: 0.5,
            }),
          ),
        );
        expectClose(await out.read(), refMatmul(a, b, M, N, K, tA, tB, 0.5), 1e-4, 1e-4);
        out.dispose();
        setMatmulVariant(null);
      });
    }
  }

  // Batched A @ B, and the vec4 kernels' cases on CPU drivers: A @ Bᵀ with K a multiple of 4, A @ B with K and N,
  // Aᵀ @ B with M and N.
  for (const { name, M, K, N, transA, transB, seeds } of [
    { name: 'batched', M: 9, K: 13, N: 11, transA: false, transB: false, seeds: [1, 2] },
    {
      name: 'batched, transposed B, K a multiple of 4',
      M: 9,
      K: 12,
      N: 11,
      transA: false,
      transB: true,
      seeds: [3, 4],
    },
    { name: 'batched, K and N multiples of 4', M: 9, K: 12, N: 36, transA: false, transB: false, seeds: [5, 6] },
    {
      name: 'batched, transposed A, M and N multiples of 4',
      M: 36,
      K: 7,
      N: 12,
      transA: true,
      transB: false,
      seeds: [7, 8],
    },
  ]) {
    it(name, async () => {
      setMatmulVariant(variant);
      const B = 3;
      const a = randn(B * M * K, seeds[0]!);
      const b = randn(B * K * N, seeds[1]!);
      const [aShape, bShape] = [transA ? [B, K, M] : [B, M, K], transB ? [B, N, K] : [B, K, N]];
      const got = await e
        .tidy(() => e.keep(matmul(e.tensor(a, aShape), e.tensor(b, bShape), { transA, transB })))
        .read();
      for (let z = 0; z < B; z++) {
        const want = refMatmul(a.subarray(z * M * K), b.subarray(z * K * N), M, N, K, transA, transB);
        expectClose(got.subarray(z * M * N, (z + 1) * M * N), want, 1e-4, 1e-4, `batch ${z}`);
      }
      setMatmulVariant(null);
    });
  }
});

// A small weight as B: on CPU drivers matmul_subgroup_k4_uniform (x @ wᵀ) and matmul_subgroup_n4_uniform (dy @ w)
// read it through uniform windows, of whole blocks of C's columns and of 32 rows here (a test cap on a window
// splits these in 7); matmul_subgroup_k4 and _n4 from storage where 8 windows cannot hold it (10 here).
describe.each([
  { name: 'B through 7 uniform windows', rows: 200 },
  { name: 'B from storage (past 8 windows)', rows: 300 },
])('matmul (subgroup), a small weight: $name', ({ rows }) => {
  it.each([true, false])('transB %s matches the float64 product', async (transB) => {
    setMatmulVariant('subgroup');
    setWindowBytes(2048);
    // x @ wᵀ: w [N = rows, K 16]; dy @ w: w [K = rows, N 16].
    const [M, N, K] = transB ? [37, rows, 16] : [37, 16, rows];
    const a = randn(M * K, 31);
    const b = randn(N * K, 32);
    const out = e.tidy(() =>
      e.keep(matmul(e.tensor(a, [M, K]), e.tensor(b, transB ? [N, K] : [K, N]), { transB, alpha: 0.5 })),
    );
    expectClose(await out.read(), refMatmul(a, b, M, N, K, false, transB, 0.5), 1e-4, 1e-4);
    out.dispose();
    setWindowBytes(null);
    setMatmulVariant(null);
  });
});

describe('gradients through the tape', () => {
  it('linear with bias matches finite differences', async () => {
    const [M, N, K] = [5, 4, 6];
    await gradCheck(
      e,
      [
        { name: 'x', data: randn(M * K, 3), shape: [M, K] },
        { name: 'w', data: randn(N * K, 4), shape: [N, K] },
        { name: 'b', data: randn(N, 5), shape: [N] },
      ],
      ([x, w, b]) => linear(x!, w!, b!),
    );
  });

  for (const [tA, tB] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`matmul transA=${tA} transB=${tB} matches finite differences`, async () => {
      const [M, N, K] = [3, 5, 4];
      await gradCheck(
        e,
        [
          { name: 'a', data: randn(M * K, 7), shape: tA ? [K, M] : [M, K] },
          { name: 'b', data: randn(K * N, 8), shape: tB ? [N, K] : [K, N] },
        ],
        ([a, b]) => matmul(a!, b!, { transA: tA, transB: tB, alpha: 0.7 }),
      );
    });
  }
});
