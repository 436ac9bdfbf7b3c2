// Elementwise arithmetic with autograd (shaders/elementwise.wgsl) and sums (shaders/reduce.wgsl).
import { numel, type Tensor } from '../tensor.ts';
import { expect, rowsCols } from './util.ts';

const OP = {
  add: 0,
  sub: 1,
  mul: 2,
  axpby: 3,
  scale: 4,
  exp: 5,
  neg: 6,
  div: 7,
  silu: 8,
  square: 9,
  relu: 10,
  sqrt: 11,
  bcast: 12,
} as const;

/** Workgroup size of the elementwise, reduce and transpose kernels. */
const WG = 256;

function launch(op: keyof typeof OP, a: Tensor, b: Tensor, alpha = 1, beta = 0, rowBcast = false): Tensor {
  const e = a.engine;
  expect(a, op, { dtype: 'f32' });
  expect(b, op, { dtype: 'f32' });
  if (a.size > 0 && (rowBcast ? b.size === 0 || a.size % b.size !== 0 : !repeatsOver(b, a))) {
    throw new Error(`piplay: ${op}: ${b.describe()} does not broadcast over ${a.describe()}`);
  }
  const out = e.empty(a.shape);
  const nb = rowBcast ? a.size / b.size : b.size;
  // Four elements a thread where every vec4 of a meets one vec4 of b (or one element of it, by rows).
  const vec4 = a.size % 4 === 0 && nb % 4 === 0;
  if (a.size > 0) {
    e.dispatch({
      shader: vec4 ? 'elementwise_vec4' : 'elementwise',
      constants: { WG, OP: OP[op], ROW_BCAST: rowBcast },
      params: { n: a.size, nb, alpha, beta },
      bindings: { a, b, out },
      workgroups: e.grid(vec4 ? a.size / 4 : a.size, WG),
    });
  }
  return out;
}

/** Whether b's length is that of a block of a's trailing axes (so b repeats along a's leading ones). */
function repeatsOver(b: Tensor, a: Tensor): boolean {
  if (b.size === a.size) return true;
  let n = 1;
  for (let k = a.rank - 1; k >= 0 && n < b.size; k--) n *= a.shape[k]!;
  return n === b.size;
}

/** Sum of `g` [.., C] over all leading rows, shaped like `like` (the gradient of a broadcast operand). */
function unbroadcast(g: Tensor, like: Tensor): Tensor {
  if (g.size === like.size) return g.reshape(like.shape);
  return sumCols(g.reshape([g.size / like.size, like.size])).reshape(like.shape);
}

/** a + b; b may be shorter than a and repeat along a's leading axes (e.g. a bias). */
export function add(a: Tensor, b: Tensor): Tensor {
  const out = launch('add', a, b);
  a.engine.record([a, b], [out], ([g]) => [g, unbroadcast(g!, b)]);
  return out;
}

export function sub(a: Tensor, b: Tensor): Tensor {
  const out = launch('sub', a, b);
  a.engine.record([a, b], [out], ([g]) => [g, unbroadcast(scale(g!, -1), b)]);
  return out;
}

export function mul(a: Tensor, b: Tensor): Tensor {
  const out = launch('mul', a, b);
  a.engine.record([a, b], [out], ([g]) => [
    a.requiresGrad ? launch('mul', g!, b) : null,
    b.requiresGrad ? unbroadcast(mul(g!, a), b) : null,
  ]);
  return out;
}

/** alpha * a + beta (beta a scalar). */
export function scale(a: Tensor, alpha: number, beta = 0): Tensor {
  const out = launch('scale', a, a, alpha, beta);
  a.engine.record([a], [out], ([g]) => [launch('scale', g!, g!, alpha, 0)]);
  return out;
}

/** alpha * a + beta * b, same shapes. */
export function axpby(alpha: number, a: Tensor, beta: number, b: Tensor): Tensor {
  const out = launch('axpby', a, b, alpha, beta);
  a.engine.record([a, b], [out], ([g]) => [scale(g!, alpha), unbroadcast(scale(g!, beta), b)]);
  return out;
}

export function exp(a: Tensor): Tensor {
  const out = launch('exp', a, a);
  a.engine.record([a], [out], ([g]) => [launch('mul', g!, out)]);
  return out;
}

export function square(a: Tensor): Tensor {
  const out = launch('square', a, a);
  a.engine.record([a], [out], ([g]) => [launch('mul', g!, scale(a, 2))]);
  return out;
}

/** Sum of every element, as a scalar tensor of shape []. */
export function sum(a: Tensor, alpha = 1): Tensor {
  const out = sumRows(a.reshape([1, a.size]), alpha).reshape([]);
  return out;
}

export function mean(a: Tensor): Tensor {
  return sum(a, 1 / Math.max(a.size, 1));
}

/**
 * reduce.wgsl's sums of a [R, C] tensor, scaled by alpha, into out: 'rows' sums each row (one workgroup per
 * row), 'cols' each column (one thread per column).
 */
function reduce(a: Tensor, out: Tensor, entry: 'rows' | 'cols', R: number, C: number, alpha: number): void {
  const e = a.engine;
  const workgroups = entry === 'rows' ? e.grid(R, 1) : e.grid(C, WG);
  e.dispatch({
    shader: 'reduce',
    entry,
    constants: { WG },
    params: { R, C, scale: alpha },
    bindings: { x: a, out },
    workgroups,
  });
}

/** out[r] = alpha * sum_c a[r, c] over the last axis. */
export function sumRows(a: Tensor, alpha = 1): Tensor {
  const e = a.engine;
  expect(a, 'sumRows', { dtype: 'f32' });
  // Rows from the leading axes, not size / C: an empty last axis still has rows (whose sums are 0).
  const C = a.shape[a.rank - 1] ?? 1;
  const R = numel(a.shape.slice(0, -1));
  const out = e.empty(a.shape.slice(0, -1));
  reduce(a, out, 'rows', R, C, alpha);
  e.record([a], [out], ([g]) => [launch('bcast', a, g!, alpha, 0, true)]);
  return out;
}

/** out[c] = alpha * sum_r a[r, c] for a [R, C] tensor. */
export function sumCols(a: Tensor, alpha = 1): Tensor {
  const e = a.engine;
  expect(a, 'sumCols', { dtype: 'f32' });
  const [R, C] = rowsCols(a);
  const out = e.empty([C]);
  reduce(a, out, 'cols', R, C, alpha);
  e.record([a], [out], ([g]) => [launch('bcast', a, g!, alpha)]);
  return out;
}

/** [R, C] -> [C, R] copy. */
export function transpose2d(a: Tensor): Tensor {
  const e = a.engine;
  // The kernel moves 32-bit words: f16 would need its own.
  expect(a, 'transpose2d', { rank: 2, dtype: ['f32', 'i32', 'u32'] });
  const [R, C] = a.shape as [number, number];
  const out = e.empty([C, R], a.dtype);
  e.dispatch({
    shader: 'transpose',
    constants: { WG },
    params: { R, C },
    bindings: { a, out },
    workgroups: e.grid(R * C, WG),
  });
  e.record([a], [out], ([g]) => [transpose2d(g!)]);
  return out;
}
