// Vocabulary-row ops over the last axis of logits [..., V]: log-softmax and entropy (shaders/log_softmax.wgsl),
// the log-prob of one target token per row and the cross-entropy built on it (shaders/token_logprobs.wgsl).
// Each row kernel gives a row one workgroup that streams it, so V may be any size (vocabularies of ~152k).
import type { Engine } from '../engine.ts';
import type { DispatchSpec } from '../stream.ts';
import type { Tensor } from '../tensor.ts';
import { maskedMean } from './masked_mean.ts';
import { expect, rowsCols } from './util.ts';

/** Workgroup size of shaders/log_softmax.wgsl and token_logprobs.wgsl (one workgroup per row). */
const WG = 256;

function vocabRows(op: string, x: Tensor): [number, number] {
  expect(x, op, { dtype: 'f32' });
  if (x.rank < 1 || x.shape[x.rank - 1] === 0) {
    throw new Error(`piplay: ${op} needs logits [..., V] with V >= 1, got ${x.describe()}`);
  }
  return rowsCols(x);
}

/** One entry point of a row kernel over R rows of V logits (default: one workgroup per row); none when R = 0. */
function rowKernel(
  e: Engine,
  shader: 'log_softmax' | 'token_logprobs',
  entry: string,
  [R, V]: [number, number],
  bindings: DispatchSpec['bindings'],
  workgroups?: DispatchSpec['workgroups'],
): void {
  if (R === 0) return;
  e.dispatch({ shader, entry, constants: { WG }, params: { R, V }, bindings, workgroups: workgroups ?? e.grid(R, 1) });
}

/** log_softmax(x) over the last axis. Backward: dx = g - softmax(x) * sum(g) per row. */
export function logSoftmax(x: Tensor): Tensor {
  const e = x.engine;
  const rows = vocabRows('logSoftmax', x);
  const y = e.empty(x.shape);
  rowKernel(e, 'log_softmax', 'forward', rows, { src: x, dst: y });
  e.record([x], [y], ([g]) => {
    const dx = e.empty(x.shape);
    rowKernel(e, 'log_softmax', 'backward', rows, { src: y, dst: dx, grad: g! });
    return [dx];
  });
  return y;
}

/**
 * Entropy -sum p log p of softmax(logits) per row, shaped like logits without the last axis. No gradient (a metric).
 */
export function entropy(logits: Tensor): Tensor {
  const e = logits.engine;
  const [R, V] = vocabRows('entropy', logits);
  const h = e.empty(logits.shape.slice(0, -1));
  entropyKernel(logits, h, R, V);
  return h;
}

/** log_softmax.wgsl's entropy of R rows of V logits into h [R] (no autograd; also the chunked LM head's). */
export function entropyKernel(logits: Tensor, h: Tensor, R: number, V: number): void {
  rowKernel(logits.engine, 'log_softmax', 'entropy', [R, V], { src: logits, dst: h });
}

/** token_logprobs.wgsl's forward over R rows: lp [R] and the log-sum-exp lse [R] its backward needs. */
export function tokenLogprobsKernel(logits: Tensor, targets: Tensor, lp: Tensor, lse: Tensor, R: number, V: number) {
  rowKernel(logits.engine, 'token_logprobs', 'forward', [R, V], { logits, targets, dst: lp, lse });
}

/** token_logprobs.wgsl's backward: d [R, V] = g_r (onehot - softmax) from the forward's lse. */
export function tokenLogprobsGradKernel(logits: Tensor, targets: Tensor, lse: Tensor, g: Tensor, d: Tensor) {
  const e = logits.engine;
  const [R, V] = rowsCols(logits);
  // One thread per logit here, not a workgroup per row.
  rowKernel(e, 'token_logprobs', 'backward', [R, V], { logits, targets, dst: d, lse, grad: g }, e.grid(R * V, WG));
}

export function checkTargets(op: string, logits: Tensor, targets: Tensor, R: number): void {
  expect(targets, `${op} targets`, { dtype: 'i32' });
  if (targets.size !== R) {
    throw new Error(
      `piplay: ${op}: targets ${targets.describe()} must hold one id per row of logits ${logits.describe()} (${R})`,
    );
  }
}

/**
 * log_softmax(logits)[r, targets[r]] per row, without materialising the log-softmax: logits [..., V] f32,
 * targets i32 with one id per row; the result is shaped like logits without the last axis. A target outside
 * [0, V) (an ignore index such as -100) gives 0 and no gradient. Backward: d logits = g_r (onehot - softmax).
 */
export function tokenLogprobs(logits: Tensor, targets: Tensor): Tensor {
  const e = logits.engine;
  const [R, V] = vocabRows('tokenLogprobs', logits);
  checkTargets('tokenLogprobs', logits, targets, R);
  const lp = e.empty(logits.shape.slice(0, -1));
  const lse = e.empty([R]); // saved for the backward
  tokenLogprobsKernel(logits, targets, lp, lse, R, V);
  e.record(
    [logits, targets],
    [lp],
    ([g]) => {
      const d = e.empty(logits.shape);
      tokenLogprobsGradKernel(logits, targets, lse, g!, d);
      return [d, null];
    },
    [lse],
  );
  lse.dispose(); // the tape node holds it when recording
  return lp;
}

/**
 * Token-mean negative log-likelihood over rows with mask == 1: logits [R, V] (or [..., V]), targets i32 and
 * mask f32 with one value per row. A scalar of shape []; 0 (not NaN) when the mask is empty.
 * Gradient into logits: (softmax - onehot) * mask_r / sum(mask).
 */
export function crossEntropy(logits: Tensor, targets: Tensor, mask: Tensor): Tensor {
  const [R] = vocabRows('crossEntropy', logits);
  checkTargets('crossEntropy', logits, targets, R);
  expect(mask, 'crossEntropy mask', { dtype: 'f32' });
  if (mask.size !== R) {
    throw new Error(
      `piplay: crossEntropy: mask ${mask.describe()} must hold one value per row of logits ${logits.describe()} (${R})`,
    );
  }
  const lp = tokenLogprobs(logits, targets);
  const loss = maskedMean(lp, mask, -1);
  lp.dispose(); // held by the tape when recording
  return loss;
}
