import type { Tensor, DType } from '../tensor.ts';
import { shapeString } from '../tensor.ts';

/** Throws a clear error when a tensor's dtype or rank is not what an op needs. */
export function expect(
  t: Tensor,
  op: string,
  what: { dtype?: DType | DType[]; rank?: number; shape?: readonly number[] },
): void {
  if (what.dtype) {
    const ok = Array.isArray(what.dtype) ? what.dtype.includes(t.dtype) : t.dtype === what.dtype;
    if (!ok) throw new Error(`piplay: ${op} needs ${[what.dtype].flat().join(' or ')} input, got ${t.describe()}`);
  }
  if (what.rank !== undefined && t.rank !== what.rank) {
    throw new Error(`piplay: ${op} needs a rank-${what.rank} tensor, got ${t.describe()}`);
  }
  if (what.shape && (t.shape.length !== what.shape.length || t.shape.some((d, k) => d !== what.shape![k]))) {
    throw new Error(`piplay: ${op} needs shape ${shapeString(what.shape)}, got ${t.describe()}`);
  }
}

/**
 * Whether the device runs subgroups of exactly 8 lanes: the kernels that are one subgroup of 8 lanes
 * (matmul_subgroup*.wgsl, attention_split_fwd.wgsl) are written for that (llvmpipe on AVX2).
 */
export function subgroupsOf8(e: Tensor['engine']): boolean {
  return e.info.subgroups && e.info.subgroupMinSize === 8 && e.info.subgroupMaxSize === 8;
}

/**
 * Threads of a workgroup that reduces through workgroup memory with barriers (rmsnorm's rows, grad_norm's
 * partial sums), on a CPU driver: one SIMD block of 8. There a workgroup runs as 8-lane blocks on one thread, and
 * each barrier of the reduction switches through all of them, so 256 threads paid 32 blocks at each of 8 barriers.
 */
export const CPU_REDUCE_THREADS = 8;

/** Product of all but the last dimension, and the last dimension. */
export function rowsCols(t: Tensor): [number, number] {
  const c = t.shape[t.shape.length - 1] ?? 1;
  return [t.size / Math.max(c, 1), c];
}
