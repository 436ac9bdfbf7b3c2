// The token-mean of a per-row loss over mask == 1 rows (shaders/masked_mean.wgsl), with autograd.
import type { Tensor } from '../tensor.ts';
import { mul, scale as scaleOp } from './elementwise.ts';
import { expect } from './util.ts';

/** Workgroup size of shaders/masked_mean.wgsl (one workgroup does the whole sum). */
const WG = 256;

/**
 * scale * sum_r mask[r] x[r] / sum_r mask[r] as a scalar tensor of shape [], and 0 (not NaN) when the mask
 * is empty. Rows with mask 0 are skipped, so NaN or inf there does not reach the loss. `x` and `mask` are
 * f32 of the same size (any shapes). The gradient flows into x: scale * g * mask[r] / sum(mask).
 */
export function maskedMean(x: Tensor, mask: Tensor, scale = 1): Tensor {
  const e = x.engine;
  expect(x, 'maskedMean x', { dtype: 'f32' });
  expect(mask, 'maskedMean mask', { dtype: 'f32' });
  if (mask.size !== x.size) {
    throw new Error(`piplay: maskedMean: mask ${mask.describe()} must have one value per element of ${x.describe()}`);
  }
  const loss = e.empty([]);
  const inv = e.empty([]); // 1 / sum(mask), 0 when empty: saved for the backward
  e.dispatch({
    shader: 'masked_mean',
    constants: { WG },
    params: { n: x.size, scale },
    bindings: { x, mask, loss, inv },
    workgroups: [1],
  });
  e.record([x, mask], [loss], ([g]) => [mul(mask.reshape(x.shape), scaleOp(mul(g!, inv), scale)), null], [inv]);
  inv.dispose(); // the tape node holds it when recording
  return loss;
}
