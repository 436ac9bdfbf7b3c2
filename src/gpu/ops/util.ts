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

/** Product of all but the last dimension, and the last dimension. */
export function rowsCols(t: Tensor): [number, number] {
  const c = t.shape[t.shape.length - 1] ?? 1;
  return [t.size / Math.max(c, 1), c];
}
