// Matrix products (shaders/matmul.wgsl) with autograd: matmul, batched matmul, and linear layers.
import type { Tensor } from '../tensor.ts';
import { shapeString } from '../tensor.ts';
import { add } from './elementwise.ts';
import { storageFormat } from './packed.ts';
import { expect, subgroupsOf8 } from './util.ts';
import { type RowWindows, windows8, windowsBindings, windowsSource } from '../uniform-windows.ts';

export interface MatmulOptions {
  /** Read `a` as stored [K, M] (its transpose). */
  transA?: boolean;
  /** Read `b` as stored [N, K] (its transpose). */
  transB?: boolean;
  /** Scale of the product. */
  alpha?: number;
}

export type MatmulVariant = 'regs' | 'tiled' | 'subgroup';
let forcedVariant: MatmulVariant | null = null;

/** Forces one kernel variant (tests and benchmarks); `null` picks by device (see pickVariant). */
export function setMatmulVariant(v: MatmulVariant | null): void {
  forcedVariant = v;
}

/**
 * C = alpha * op(A) @ op(B) for 2-D [M, K] x [K, N] operands, or a batch of them (3-D, same batch size).
 * Transposes are read in place. B may be a frozen weight stored as f16 or bf16 (widened as read, f32 sums).
 */
export function matmul(a: Tensor, b: Tensor, opts: MatmulOptions = {}): Tensor {
  const { transA = false, transB = false, alpha = 1 } = opts;
  const e = a.engine;
  expect(a, 'matmul', { dtype: 'f32' });
  storageFormat(b, 'matmul', 'second operand');
  const batched = a.rank === 3;
  if (!(a.rank === 2 || a.rank === 3) || b.rank !== a.rank || (batched && a.shape[0] !== b.shape[0])) {
    throw new Error(
      `piplay: matmul needs two 2-D or two 3-D tensors with one batch size, got ${a.describe()} and ${b.describe()}`,
    );
  }
  const batch = batched ? a.shape[0]! : 1;
  const [ar, ac] = a.shape.slice(-2) as [number, number];
  const [br, bc] = b.shape.slice(-2) as [number, number];
  const [M, K] = transA ? [ac, ar] : [ar, ac];
  const [K2, N] = transB ? [bc, br] : [br, bc];
  if (K !== K2) {
    throw new Error(
      `piplay: matmul inner sizes differ: ${shapeString(a.shape)}${transA ? 'ᵀ' : ''} @ ` +
        `${shapeString(b.shape)}${transB ? 'ᵀ' : ''}`,
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
      dA = transA ? matmul(b, dC, { transA: transB, transB: true, alpha }) : matmul(dC, b, { transB: !transB, alpha });
    }
    if (b.requiresGrad) {
      dB = transB ? matmul(dC, a, { transA: true, transB: transA, alpha }) : matmul(a, dC, { transA: !transA, alpha });
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

/**
 * The kernel for this device: on a CPU driver `subgroup` where subgroups are 8 lanes wide (llvmpipe on AVX2),
 * else `regs`; `tiled` on a GPU. A forced `subgroup` falls back to `regs` where subgroups do not fit.
 */
function pickVariant(e: Tensor['engine']): MatmulVariant {
  const v = forcedVariant ?? (e.info.isCpu ? 'subgroup' : 'tiled');
  return v === 'subgroup' && !subgroupsOf8(e) ? 'regs' : v;
}

/** B_FORMAT of lib/matmul_io.wgsl, set only for 16-bit B (so f32 products keep their pipelines). */
function bFormat(b: Tensor): { B_FORMAT?: number } {
  const format = storageFormat(b, 'matmul', 'second operand');
  return format === 0 ? {} : { B_FORMAT: format };
}

/**
 * Block shape of shaders/matmul_subgroup.wgsl in groups of 8 rows and 8 columns: 16 x 32 (64 multiply-adds per
 * 6 loads), fewer groups where the product has at most 8 rows (decoding) or few columns, so no block is mostly
 * outside C.
 */
function subgroupGroups(M: number, N: number): { ROW_GROUPS: number; COL_GROUPS: number } {
  // Column groups (1 to 4) by the time a useful column costs: the columns run (N rounded up to a block) times the
  // loads per multiply-add of a block of g groups ((2 + g) / g: A's two row groups and B's g, for 8g multiply-adds
  // a lane). N 48 takes 3 (two blocks of 24), not 4 (two of 32, a quarter of the work past N).
  const cost = (g: number) => (Math.ceil(N / (8 * g)) * 8 * g * (2 + g)) / g;
  let COL_GROUPS = 1;
  for (let g = 2; g <= 4; g++) if (cost(g) <= cost(COL_GROUPS)) COL_GROUPS = g;
  return { ROW_GROUPS: M <= 8 ? 1 : 2, COL_GROUPS };
}

interface Vec4Kernel {
  shader: string;
  groups: { ROW_GROUPS?: number; COL_GROUPS: number };
  /** Block of C per workgroup. */
  rows: number;
  cols: number;
}

/**
 * The vec4 forms of shaders/matmul_subgroup.wgsl, for f32 operands contiguous along what a lane reads: x @ wᵀ (a
 * linear layer's forward; both along k, K % 4 == 0) is matmul_subgroup_k4; A @ B (its input gradient dy @ w, and
 * the benchmark's products; A along k, B along n, K % 4 == 0 and N % 4 == 0) matmul_subgroup_n4; Aᵀ @ B (its
 * weight gradient dyᵀ @ x; A along m, B along n, M % 4 == 0 and N % 4 == 0) matmul_subgroup_tn4. The last two
 * own 4 adjacent columns per lane. Null where none fits (Aᵀ @ Bᵀ, 16-bit B, other sizes).
 */
function vec4Kernel(b: Tensor, s: GemmShape, groups: { ROW_GROUPS: number; COL_GROUPS: number }): Vec4Kernel | null {
  if (storageFormat(b, 'matmul', 'second operand') !== 0 || (s.transA && s.transB)) return null;
  const rows = 8 * groups.ROW_GROUPS;
  if (s.transB)
    return s.K % 4 === 0 ? { shader: 'matmul_subgroup_k4', groups, rows, cols: 8 * groups.COL_GROUPS } : null;
  if (s.N % 4 !== 0) return null;
  // 4 columns per lane: N_COL_GROUPS groups of 32 columns, fewer where N is small.
  const COL_GROUPS = Math.min(N_COL_GROUPS, Math.ceil(s.N / 32));
  if (s.transA) {
    return s.M % 4 === 0 ? { shader: 'matmul_subgroup_tn4', groups: { COL_GROUPS: 1 }, rows: 32, cols: 32 } : null;
  }
  if (s.K % 4 !== 0) return null;
  return { shader: 'matmul_subgroup_n4', groups: { ...groups, COL_GROUPS }, rows, cols: 32 * COL_GROUPS };
}

/**
 * The uniform windows a `_uniform` kernel reads B through (lib/windows8.wgsl), or null: B a small weight (the
 * embedded model's projections and head), [N, K] for matmul_subgroup_k4 (windows of whole blocks of C's columns) or
 * [K, N] for matmul_subgroup_n4 (of whole steps of 4 rows, in 16).
 */
function weightWindows(b: Tensor, s: GemmShape, kernel: Vec4Kernel): RowWindows | null {
  if (b.rank !== 2) return null;
  if (kernel.shader === 'matmul_subgroup_k4' && b.shape[0] === s.N && b.shape[1] === s.K)
    return windows8(b, kernel.cols);
  if (kernel.shader === 'matmul_subgroup_n4' && b.shape[0] === s.K && b.shape[1] === s.N) return windows8(b, 16);
  return null;
}

/** Column groups of 32 of shaders/matmul_subgroup_n4.wgsl (16 x 64: 128 multiply-adds per 2.5 vec4 loads). */
const N_COL_GROUPS = 2;

/** Launches the kernel into an existing output (no autograd). */
export function gemm(a: Tensor, b: Tensor, out: Tensor, s: GemmShape): void {
  const e = a.engine;
  const variant = pickVariant(e);
  const strideA = s.batch > 1 ? s.M * s.K : 0;
  const strideB = s.batch > 1 ? s.K * s.N : 0;
  // Output block per workgroup: subgroup (8 x ROW_GROUPS) x (8 x COL_GROUPS), regs 32 x 32 (8 x 8 threads of
  // 4 x 4), tiled 64 x 64.
  const groups = variant === 'subgroup' ? subgroupGroups(s.M, s.N) : null;
  const vec4 = groups ? vec4Kernel(b, s, groups) : null;
  if (vec4) {
    const params = { M: s.M, N: s.N, K: s.K, strideA, strideB, strideC: s.M * s.N, alpha: s.alpha };
    const workgroups = [Math.ceil(s.N / vec4.cols), Math.ceil(s.M / vec4.rows), s.batch] as const;
    const constants = { ACCUMULATE: s.accumulate ?? false, ...vec4.groups };
    const win = s.batch === 1 ? weightWindows(b, s, vec4) : null;
    if (win) {
      e.dispatch({
        shader: `${vec4.shader}_uniform`,
        constants: { ...constants, PER_WINDOW: win.perWindow },
        source: windowsSource(win),
        params,
        bindings: { A: a, C: out, ...windowsBindings(win) },
        workgroups,
      });
      return;
    }
    e.dispatch({ shader: vec4.shader, constants, params, bindings: { A: a, B: b, C: out }, workgroups });
    return;
  }
  const [rows, cols] = groups
    ? [8 * groups.ROW_GROUPS, 8 * groups.COL_GROUPS]
    : variant === 'regs'
      ? [32, 32]
      : [64, 64];
  e.dispatch({
    shader: variant === 'subgroup' ? 'matmul_subgroup' : 'matmul',
    entry: variant === 'subgroup' ? 'main' : variant,
    constants: {
      TRANS_A: s.transA,
      TRANS_B: s.transB,
      ACCUMULATE: s.accumulate ?? false,
      ...bFormat(b),
      ...(groups ?? {}),
    },
    params: { M: s.M, N: s.N, K: s.K, strideA, strideB, strideC: s.M * s.N, alpha: s.alpha },
    bindings: { A: a, B: b, C: out },
    workgroups: [Math.ceil(s.N / cols), Math.ceil(s.M / rows), s.batch],
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
