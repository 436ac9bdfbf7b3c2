// Policy losses over sampled tokens (ALGORITHM.md section 5; shaders/clipped_ratio.wgsl):
//   clippedRatio   the PPO/GRPO clipped-ratio objective (+ beta * k3 KL to a reference), for the student;
//   policyGradient the plain on-policy -A * logp (+ beta * k3 to a reference), for the examiner (HRPO).
// Both are token-means over mask == 1 across the whole batch and send gradients into logp only.
import type { Tensor } from '../tensor.ts';
import { mul } from './elementwise.ts';
import { expect } from './util.ts';

export interface ClippedRatioOptions {
  /** Lower clip range: r is clipped below at 1 - epsLow (default 0.2). */
  epsLow?: number;
  /** Upper clip range: r is clipped above at 1 + epsHigh (default epsLow). */
  epsHigh?: number;
  /** Weight of the k3 KL to the reference policy (default 0; needs refLogp when > 0). */
  beta?: number;
}

export interface ClippedRatioResult {
  /** Scalar token-mean of the per-token loss over mask == 1 (0 for an empty mask). Differentiable in logp. */
  loss: Tensor;
  /** Scalar share of mask == 1 tokens where the clipped branch is active (a metric, no gradient). */
  clipFraction: Tensor;
  /** Scalar mean k3 over mask == 1, whatever beta is; 0 without refLogp (a metric, no gradient). */
  klMean: Tensor;
  /** The per-token loss, 0 where mask == 0, shaped like logp. Differentiable in logp. */
  perToken: Tensor;
}

/** Workgroup size of shaders/clipped_ratio.wgsl and clipped_ratio_finish.wgsl. */
const WG = 256;
/** Workgroups of the first pass: enough to fill a GPU, few enough for one workgroup to finish. */
const MAX_PARTS = 256;

type Mode = 0 | 1;

interface Forward {
  loss: Tensor;
  clipFraction: Tensor;
  klMean: Tensor;
  perToken: Tensor;
  invWeight: Tensor;
}

/**
 * Per token t: -min(r*A, clip(r, 1-epsLow, 1+epsHigh)*A) + beta*k3, with r = exp(logp - oldLogp) (the
 * log-ratio clamped to +-20 before exp) and k3 = exp(ref - logp) - (ref - logp) - 1. All inputs are f32 of
 * one shape (e.g. [R] or [B, T]); `advantages` holds each token's advantage; `mask` is 1 for tokens the
 * policy sampled and 0 elsewhere. The gradient flows into `logp` only, through r*A where the unclipped
 * branch is active and not at all where the clipped one is.
 */
export function clippedRatio(
  logp: Tensor,
  oldLogp: Tensor,
  refLogp: Tensor | null,
  advantages: Tensor,
  mask: Tensor,
  opts: ClippedRatioOptions = {},
): ClippedRatioResult {
  const epsLow = opts.epsLow ?? 0.2;
  const epsHigh = opts.epsHigh ?? epsLow;
  const beta = opts.beta ?? 0;
  const op = 'clippedRatio';
  check(op, logp, { oldLogp, advantages, mask, ...(refLogp ? { refLogp } : {}) });
  if (!(epsLow >= 0 && epsLow < 1 && epsHigh >= 0)) {
    throw new Error(
      `piplay: ${op}: clip range needs 0 <= epsLow < 1 and epsHigh >= 0, got epsLow=${epsLow} epsHigh=${epsHigh}`,
    );
  }
  if (beta !== 0 && !refLogp)
    throw new Error(`piplay: ${op}: beta = ${beta} needs refLogp (the reference policy's log-probs)`);

  const inp: Inputs = { mode: 0, logp, oldLogp, refLogp, advantages, mask, epsLow, epsHigh, beta };
  const fw = forward(inp);
  recordBackward(inp, fw);
  return { loss: fw.loss, clipFraction: fw.clipFraction, klMean: fw.klMean, perToken: fw.perToken };
}

export interface PolicyGradientResult {
  /** Scalar token-mean over mask == 1 of -A * logp + beta * k3. Differentiable in logp. */
  loss: Tensor;
  /** Scalar mean k3 over mask == 1, whatever beta is; 0 without refLogp (a metric, no gradient). */
  klMean: Tensor;
}

/**
 * L = token-mean over mask == 1 of -A * logp + beta * k3 (strictly on-policy, no ratio): the examiner's loss,
 * with Dr. Zero's KL to the reference (eq. 2) when `ref` is given.
 */
export function policyGradient(
  logp: Tensor,
  advantages: Tensor,
  mask: Tensor,
  ref: { logp: Tensor; beta: number } | null = null,
): PolicyGradientResult {
  const op = 'policyGradient';
  check(op, logp, { advantages, mask, ...(ref ? { refLogp: ref.logp } : {}) });
  const beta = ref?.beta ?? 0;
  const refLogp = ref?.logp ?? null;
  // No ratio in this mode: oldLogp is unused (bound to logp) and the clip range is irrelevant.
  const inp: Inputs = { mode: 1, logp, oldLogp: logp, refLogp, advantages, mask, epsLow: 0, epsHigh: 0, beta };
  const fw = forward(inp);
  for (const t of [fw.clipFraction, fw.perToken]) t.dispose();
  recordBackward(inp, fw);
  return { loss: fw.loss, klMean: fw.klMean };
}

function check(op: string, logp: Tensor, others: Record<string, Tensor>): void {
  expect(logp, op, { dtype: 'f32' });
  for (const [name, t] of Object.entries(others)) {
    if (t.dtype !== 'f32') throw new Error(`piplay: ${op}: ${name} must be f32, got ${t.describe()}`);
    expect(t, `${op} (${name} must match logp ${logp.describe()})`, { shape: logp.shape });
  }
}

/** One launch's inputs: the mode, the per-token tensors and the clip range and KL weight. */
interface Inputs {
  mode: Mode;
  logp: Tensor;
  oldLogp: Tensor;
  refLogp: Tensor | null;
  advantages: Tensor;
  mask: Tensor;
  epsLow: number;
  epsHigh: number;
  beta: number;
}

/** The uniform of both clipped_ratio entries. */
function kernelParams(inp: Inputs) {
  return { R: inp.logp.size, clip_lo: 1 - inp.epsLow, clip_hi: 1 + inp.epsHigh, beta: inp.beta };
}

/** The inputs both clipped_ratio entries bind; unused ones (no reference, or the policy-gradient mode) are
 * bound to logp, read-only. */
function kernelInputs(inp: Inputs) {
  const { logp, oldLogp, refLogp, advantages, mask } = inp;
  return { logp, old_logp: oldLogp, ref_logp: refLogp ?? logp, adv: advantages, mask };
}

function forward(inp: Inputs): Forward {
  const { mode, logp, refLogp } = inp;
  const e = logp.engine;
  const R = logp.size;
  const parts = Math.min(Math.max(1, Math.ceil(R / WG)), MAX_PARTS);
  const partials = e.empty([parts, 4]);
  const perToken = e.empty(logp.shape);
  e.dispatch({
    shader: 'clipped_ratio',
    entry: 'tokens',
    constants: { WG, MODE: mode, HAS_REF: refLogp !== null },
    params: kernelParams(inp),
    bindings: { ...kernelInputs(inp), out: perToken, acc: partials },
    workgroups: [parts],
  });
  const out: Forward = {
    loss: e.empty([]),
    clipFraction: e.empty([]),
    klMean: e.empty([]),
    perToken,
    invWeight: e.empty([]),
  };
  e.dispatch({
    shader: 'clipped_ratio_finish',
    constants: { WG },
    params: { parts },
    bindings: {
      acc: partials,
      loss: out.loss,
      clip_fraction: out.clipFraction,
      kl_mean: out.klMean,
      inv_weight: out.invWeight,
    },
    workgroups: [1],
  });
  partials.dispose(); // the pool keeps it until the GPU is done with it
  return out;
}

function recordBackward(inp: Inputs, fw: Forward): void {
  const { mode, logp, oldLogp, refLogp, advantages, mask } = inp;
  const e = logp.engine;
  const outputs = mode === 0 ? [fw.loss, fw.perToken] : [fw.loss];
  const save = [oldLogp, advantages, mask, fw.invWeight, ...(refLogp ? [refLogp] : [])];
  e.record(
    [logp],
    outputs,
    ([gLoss, gPer]) => {
      // d loss / d perToken[t] = 1 / sum(w): fold the scalar upstream into one coefficient on the GPU.
      const coef = gLoss ? mul(gLoss, fw.invWeight) : e.zeros([]);
      const grad = e.empty(logp.shape);
      if (logp.size > 0) {
        e.dispatch({
          shader: 'clipped_ratio',
          entry: 'backward',
          constants: { WG, MODE: mode, HAS_REF: refLogp !== null, HAS_UP: Boolean(gPer) },
          params: kernelParams(inp),
          bindings: { ...kernelInputs(inp), out: grad, acc: coef, up: gPer ?? logp },
          workgroups: e.grid(logp.size, WG),
        });
      }
      return [grad];
    },
    save,
  );
  // invWeight is only for the backward pass; the tape (if recording) holds it until then.
  fw.invWeight.dispose();
}
