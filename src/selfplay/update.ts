// One optimizer step over a batch split into micro-batches: each micro-batch's loss is weighted by its share
// of the batch's policy tokens, so the summed gradients are those of the token-mean over the whole batch.
// The loss is read (and checked) before its backward pass and the gradient norm before the optimizer step,
// so a NaN or an overflow never reaches the weights; the weights' norm is checked after the step.
import type { Tensor } from '../gpu/tensor.ts';
import type { AdamW } from '../gpu/optim/adamw.ts';
import type { Engine } from '../gpu/engine.ts';
import { gradNorm } from '../gpu/ops/grad_norm.ts';
import type { SelfPlayConfig } from './config.ts';
import { checkFinite, NonFiniteLossError } from './context.ts';
import type { Stage } from './events.ts';

/** A policy's optimizer steps in a whole run: one per minibatch of each PPO epoch of each student step, one per
 *  examiner step. */
export function runOptimizerSteps(
  c: Pick<SelfPlayConfig, 'iterations' | 'studentSteps' | 'examinerSteps' | 'ppoEpochs' | 'miniBatches'>,
  policy: 'student' | 'examiner',
): number {
  return policy === 'student'
    ? c.iterations * c.studentSteps * c.ppoEpochs * c.miniBatches
    : c.iterations * c.examinerSteps;
}

/** Warm-up length in optimizer steps: the --lr-warmup share of the run's steps, rounded up. */
export function warmupSteps(
  c: Parameters<typeof runOptimizerSteps>[0] & Pick<SelfPlayConfig, 'lrWarmup'>,
  policy: 'student' | 'examiner',
): number {
  return Math.ceil(c.lrWarmup * runOptimizerSteps(c, policy));
}

/** The learning rate of optimizer step `k` (1-based: the first step applied is 1) under a linear warm-up of `warmup`
 *  steps: lr·k/warmup until step `warmup`, then lr. */
export function warmupLr(lr: number, k: number, warmup: number): number {
  return warmup > 0 && k < warmup ? (lr * k) / warmup : lr;
}

export interface MicroStep {
  /** Share of the batch's policy tokens (the micro-batch losses must already be scaled by it). */
  weight: number;
  /** Builds the (weighted) loss to back-propagate and unweighted scalar metrics, e.g. inside a tape. */
  run: () => { loss: Tensor; metrics: Record<string, Tensor | null> };
}

export interface StepResult {
  /** Token-weighted means of the micro-batches' metrics. */
  metrics: Record<string, number>;
  /** Global gradient norm before clipping. */
  gradNorm: number;
}

export interface Where {
  stage: Stage;
  iteration: number;
  step: number;
}

/** One optimizer step at learning rate `lr` (the caller's schedule). */
export async function gradientStep(
  e: Engine,
  opt: AdamW,
  micros: readonly MicroStep[],
  where: Where,
  lr: number,
): Promise<StepResult> {
  const sums: Record<string, number> = {};
  try {
    for (const m of micros) {
      const out = e.tidy(() => m.run());
      try {
        const values: Record<string, number> = {};
        for (const [k, t] of Object.entries(out.metrics)) if (t) values[k] = await e.item(t);
        const loss = await e.item(out.loss);
        checkFinite(loss, where.stage, where.iteration, where.step, 'loss');
        for (const [k, v] of Object.entries(values)) {
          checkFinite(v, where.stage, where.iteration, where.step, k);
          sums[k] = (sums[k] ?? 0) + m.weight * v;
        }
        e.backward(out.loss);
      } finally {
        out.loss.dispose();
        for (const t of Object.values(out.metrics)) t?.dispose();
      }
    }
  } catch (err) {
    e.clearTape();
    opt.zeroGrad();
    throw err;
  }
  // The norm is read before the step is applied: a gradient that overflowed never reaches the weights.
  const norm = opt.gradNorm();
  let normValue: number;
  try {
    normValue = await e.item(norm);
    checkFinite(normValue, where.stage, where.iteration, where.step, 'gradient norm');
    opt.step(lr, norm);
  } finally {
    norm.dispose();
    opt.zeroGrad();
  }
  // A finite step can still blow the weights up (a huge learning rate, through the update or the decay):
  // then the run stops here, before the step's checkpoint, so the last checkpoint predates it.
  const w = gradNorm(opt.params);
  const weightNorm = await e.item(w);
  w.dispose();
  if (!Number.isFinite(weightNorm)) {
    throw new NonFiniteLossError(where.stage, where.iteration, where.step, 'weight norm', weightNorm, true);
  }
  return { metrics: sums, gradNorm: normValue };
}
