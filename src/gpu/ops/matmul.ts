// Matrix products (shaders/matmul.wgsl) with autograd: matmul, batched matmul, and linear layers.
import { f } from '../engine.ts';
import type { Tensor } from '../tensor.ts';
import { shapeString } from '../tensor.ts';
import { add } from './elementwise.ts';
import { expect } from './util.ts';

export interface MatmulOptions {
  /** Read `a` as stored [K, M] (its transpose). */
  transA?: boolean;
  /** Read `b` as stored [N, K] (its transpose). */
  transB?: boolean;
  /** Scale of the product. */
  alpha?: number;
}

export type MatmulVariant = 'regs' | 'tiled';
let forcedVariant: MatmulVariant | null = null;

/** Forces one kernel variant (tests and benchmarks); `null` picks by device (CPU driver: regs, GPU: tiled). */
export function setMatmulVariant(v: MatmulVariant | null): void {
  forcedVariant = v;
}

/**
 * C = alpha * op(A) @ op(B) for 2-D [M, K] x [K, N] operands, or a batch of them (3-D, same batch size).
 * Transposes are read in place.
 */
export function matmul(a: Tensor, b: Tensor, opts: MatmulOptions = {}): Tensor {
  const { transA = false, transB = false, alpha = 1 } = opts;
  const e = a.engine;
  expect(a, 'matmul', { dtype: 'f32' });
  expect(b, 'matmul', { dtype: 'f32' });
  const batched = a.rank === 3;
  if (!(a.rank === 2 || a.rank === 3) || b.rank !== a.rank || (batched && a.shape[0] !== b.shape[0])) {
    throw new Error(`piplay: matmul needs two 2-D or two 3-D tensors with one batch size, got ${a.describe()} and ${b.describe()}`);
  }
  const batch = batched ? a.shape[0]! : 1;
  const [ar, ac] = a.shape.slice(-2) as [number, number];
  const [br, bc] = b.shape.slice(-2) as [number, number];
  const [M, K] = transA ? [ac, ar] : [ar, ac];
  const [K2, N] = transB ? [bc, br] : [br, bc];
  if (K !== K2) {
    throw new Error(
      `piplay: matmul inner sizes differ: ${shapeString(a.shape)}${transA ? 'ᵀ' : ''} @ ${shapeString(b.shape)}${transB ? 'ᵀ' : ''}`,
    );
  }
  const out = e.empty(batched ? [batch, M, N] : [M, N]);
  if (out.size > 0) {
    if (K === 0) e.fill(out, 0);
    else gemm(a, b, out, { M, N, K, batch, transA, transB, alpha });
  }
  e.record([a, b], [out], ([g]) => {
    const dC = g!;
    let dA: Tensor | null = null;
    let dB: Tensor | null = null;
    if (a.requiresGrad) {
      dA = transA
        ? matmul(b, dC, { transA: transB, transB: true, alpha })
        : matmul(dC, b, { transB: !transB, alpha });
    }
    if (b.requiresGrad) {
      dB = transB
        ? matmul(dC, a, { transA: true, transB: transA, alpha })
        : matmul(a, dC, { transA: !transA, alpha });
    }
    return [dA, dB];
  });
  return out;
}

interface GemmShape {
  M: number;
  N: number;
  K: number;
  batch: number;
  transA: boolean;
  transB: boolean;
  alpha: number;
  accumulate?: boolean;
}

/** Launches the kernel into an existing output (no autograd). */
export function gemm(a: Tensor, b: Tensor, out: Tensor, s: GemmShape): void {
  const e = a.engine;
  const variant = forcedVariant ?? (e.info.isCpu ? 'regs' : 'tiled');
  const strideA = s.batch > 1 ? s.M * s.K : 0;
  const strideB = s.batch > 1 ? s.K * s.N : 0;
  const workgroups: [number, number, number] =
    variant === 'regs'
      ? [Math.ceil(s.N / 32), Math.ceil(s.M / 32), s.batch]
      : [Math.ceil(s.N / 64), Math.ceil(s.M / 64), s.batch];
  e.dispatch({
    shader: 'matmul',
    entry: variant,
    constants: { TRANS_A: s.transA, TRANS_B: s.transB, ACCUMULATE: s.accumulate ?? false },
    params: [s.M, s.N, s.K, strideA, strideB, s.M * s.N, f(s.alpha)],
    bindings: [a, b, out],
    workgroups,
  });
}

/**
 * y = x @ wᵀ (+ bias): x [..., K], w [N, K] laid out like torch's nn.Linear.weight, bias [N].
 * Leading axes of x are flattened into rows.
 */
export function linear(x: Tensor, w: Tensor, bias?: Tensor | null): Tensor {
  expect(w, 'linear', { rank: 2 });
  const K = x.shape[x.rank - 1]!;
  const N = w.shape[0]!;
  if (w.shape[1] !== K) {
    throw new Error(`piplay: linear: input ${x.describe()} does not match weight ${w.describe()} ([out, in])`);
  }
  const rows = x.size / K;
  let y = matmul(x.reshape([rows, K]), w, { transB: true });
  if (bias) {
    expect(bias, 'linear bias', { shape: [N] });
    y = add(y, bias);
  }
  return y.reshape([...x.shape.slice(0, -1), N]);
}

