import { expect } from 'vitest';

/** Worst violation of |got - want| <= atol + rtol * |want|, as the excess ratio (<= 1 passes). */
export function worstError(got: ArrayLike<number>, want: ArrayLike<number>, rtol: number, atol: number) {
  let worst = 0;
  let at = -1;
  let maxAbs = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    const ratio = Number.isNaN(got[i]!) ? Infinity : d / (atol + rtol * Math.abs(want[i]!));
    if (ratio > worst) {
      worst = ratio;
      at = i;
    }
    maxAbs = Math.max(maxAbs, d);
  }
  return { worst, at, maxAbs };
}

export function expectClose(
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  rtol = 1e-4,
  atol = 1e-5,
  what = 'values',
): void {
  expect(got.length, `${what}: length`).toBe(want.length);
  const { worst, at, maxAbs } = worstError(got, want, rtol, atol);
  if (worst > 1) {
    throw new Error(`${what}: element ${at} got ${got[at]} want ${want[at]} (max abs err ${maxAbs.toExponential(2)})`);
  }
}
