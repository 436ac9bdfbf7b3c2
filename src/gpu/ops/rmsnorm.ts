// RMSNorm with autograd (shaders/rmsnorm.wgsl, shaders/rmsnorm_dw.wgsl).
import type { DispatchSpec } from '../stream.ts';
import type { Tensor } from '../tensor.ts';
import { sumCols } from './elementwise.ts';
import { CPU_REDUCE_THREADS, expect, rowsCols } from './util.ts';

/**
 * Threads per row: a power of two near D, so short rows (per-head norms) do not idle 256 threads; on a CPU driver
 * CPU_REDUCE_THREADS.
 */
function rowThreads(D: number, isCpu: boolean): number {
  if (isCpu) return CPU_REDUCE_THREADS;
  let wg = 32;
  while (wg < 256 && wg < D) wg *= 2;
  return wg;
}

/** Rows per workgroup of shaders/rmsnorm_rows.wgsl (no barrier: any size runs as blocks of SIMD lanes). */
const ROWS_WG = 64;

/**
 * HF LlamaRMSNorm over the last axis: y = x * rsqrt(mean(x^2) + eps) * w, for x [..., D] and w [D].
 * Any leading shape works (Qwen3's per-head q/k norms pass x [.., H, Dh] with w [Dh]).
 */
export function rmsnorm(x: Tensor, w: Tensor, eps = 1e-6): Tensor {
  const e = x.engine;
  expect(x, 'rmsnorm x', { dtype: 'f32' });
  expect(w, 'rmsnorm w', { dtype: 'f32' });
  const [R, D] = rowsCols(x);
  if (x.rank === 0 || w.rank !== 1 || w.shape[0] !== D) {
    throw new Error(`piplay: rmsnorm: weight ${w.describe()} must be [D] for the last axis of x ${x.describe()}`);
  }
  if (!(eps >= 0)) throw new Error(`piplay: rmsnorm: eps must be >= 0, got ${eps}`);
  // One workgroup per row, or on a CPU driver where D allows a thread per row reading it as vec4s
  // (shaders/rmsnorm_rows.wgsl); nothing to run for an empty x.
  const rows = e.info.isCpu && D % 4 === 0;
  const WG = rows ? ROWS_WG : rowThreads(D, e.info.isCpu);
  const run = (entry: string, bindings: DispatchSpec['bindings']) => {
    if (R > 0 && D > 0) {
      e.dispatch({
        shader: rows ? 'rmsnorm_rows' : 'rmsnorm',
        entry,
        constants: { WG },
        params: { R, D, eps },
        bindings,
        workgroups: rows ? e.grid(R, WG) : e.grid(R, 1),
      });
    }
  };
  const y = e.empty(x.shape);
  const rstd = e.empty([R]);
  run('forward', { x, w, out: y, rstd });
  e.record(
    [x, w],
    [y],
    ([g]) => {
      const gy = g!;
      let dx: Tensor | null = null;
      let dw: Tensor | null = null;
      if (x.requiresGrad) {
        dx = e.empty(x.shape);
        run('backward_x', { x, w, out: dx, rstd, g: gy });
      }
      if (w.requiresGrad) dw = weightGrad(x, gy, rstd, R, D);
      return [dx, dw];
    },
    [rstd],
  );
  // A tape node holds rstd until the tape is cleared; without one it is freed now (the pool reuses a
  // buffer only after the batch that reads it has run).
  rstd.dispose();
  return y;
}

/** Columns per workgroup of shaders/rmsnorm_dw.wgsl. */
const DW_WG = 64;

/** dw[c] = sum_r g[r,c] * x[r,c] * rstd[r]: per-chunk partial sums, then a sum over chunks (deterministic). */
function weightGrad(x: Tensor, g: Tensor, rstd: Tensor, R: number, D: number): Tensor {
  const e = x.engine;
  if (R === 0 || D === 0) {
    const z = e.empty([D]);
    if (D > 0) e.fill(z, 0);
    return z;
  }
  // Chunks of >= 32 rows, at most 1024 of them: enough threads in the first pass, a short second pass.
  const chunks = Math.min(1024, Math.ceil(R / 32));
  const CH = Math.ceil(R / chunks);
  const n = Math.ceil(R / CH);
  const part = e.empty([n, D]);
  e.dispatch({
    shader: 'rmsnorm_dw',
    constants: { WG: DW_WG },
    params: { R, D, CH },
    bindings: { x, g, rstd, part },
    workgroups: [Math.ceil(D / DW_WG), n],
  });
  if (n === 1) return part.reshape([D]);
  return sumCols(part);
}
