// One in-place AdamW step on a parameter tensor and its moments (shaders/adamw.wgsl), with torch.optim.AdamW
// semantics. The optimizer class with state and gradient clipping is src/gpu/optim/adamw.ts.
import type { Tensor } from '../tensor.ts';
import { expect } from './util.ts';

/** Workgroup size of shaders/adamw.wgsl. */
const WG = 256;

export interface AdamWHyper {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** This parameter's step number, counting from 1 (for the bias corrections). */
  step: number;
  /** Clip the gradient to this global norm (see `gradNorm`); 0, null or Infinity: no clipping. */
  maxGradNorm?: number | null;
}

/**
 * param, m, v <- one AdamW step with gradient `grad`, in place. When `hyper.maxGradNorm` is set, `gradNorm`
 * (a scalar GPU tensor, the pre-clip global norm) scales the gradient by min(1, maxGradNorm / (norm + 1e-6))
 * inside the kernel, as torch.nn.utils.clip_grad_norm_ does, with no read-back. Not recorded on the tape.
 */
export function adamwUpdate(
  param: Tensor,
  grad: Tensor,
  m: Tensor,
  v: Tensor,
  hyper: AdamWHyper,
  gradNorm?: Tensor | null,
): void {
  const e = param.engine;
  const op = 'adamw';
  expect(param, op, { dtype: 'f32' });
  for (const [name, t] of [
    ['grad', grad],
    ['m', m],
    ['v', v],
  ] as const) {
    if (t.dtype !== 'f32' || t.size !== param.size) {
      throw new Error(
        `piplay: ${op}: ${name} ${t.describe()} must be f32 with as many elements as param ${param.describe()}`,
      );
    }
  }
  const { lr, beta1, beta2, eps, weightDecay, step } = hyper;
  if (!(Number.isInteger(step) && step >= 1))
    throw new Error(`piplay: ${op}: step must be an integer >= 1 (got ${step})`);
  const maxNorm = hyper.maxGradNorm && Number.isFinite(hyper.maxGradNorm) ? hyper.maxGradNorm : 0;
  if (maxNorm > 0 && !gradNorm)
    throw new Error(`piplay: ${op}: gradient clipping needs the global gradient norm tensor`);
  if (maxNorm < 0) throw new Error(`piplay: ${op}: maxGradNorm must be positive (got ${maxNorm})`);
  if (param.size === 0) return;
  // Scalars in float64 on the host, as torch computes them in Python floats.
  const stepSize = lr / (1 - beta1 ** step);
  const bc2Sqrt = Math.sqrt(1 - beta2 ** step);
  e.dispatch({
    shader: 'adamw',
    constants: { WG },
    params: {
      n: param.size,
      decay: 1 - lr * weightDecay,
      one_minus_beta1: 1 - beta1,
      beta2,
      one_minus_beta2: 1 - beta2,
      step_size: stepSize,
      bc2_sqrt: bc2Sqrt,
      eps,
      max_norm: maxNorm,
    },
    // Without clipping the norm slot is not read; grad stands in for it.
    bindings: { param, grad, m, v, norm: maxNorm > 0 ? gradNorm! : grad },
    workgroups: e.grid(param.size, WG),
  });
}
