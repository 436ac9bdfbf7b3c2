// The losses of ALGORITHM.md section 5, assembled from the engine's ops. Every loss is a token-mean over
// the masked (policy) tokens of the batch it is given; a micro-batch passes `weight` = its share of the
// batch's policy tokens, so the gradients of the micro-batches add up to the token-mean of the batch.
//
//   examiner  L_E = -mean_t A_i · log π_E(y_t) + β_E·KL_ref                (on-policy, no clipping)
//   student   L_S = L_GRPO + β·KL_ref + λ·D                               (clipped ratio, k3, top-K KL)
//
// Inputs are logits at the policy positions only ([M, V], see batch.ts; a plain tensor or an LM head whose
// logits are read chunk by chunk, src/gpu/ops/vocab_head.ts) with one target id per row; the
// teacher's logits are taken at the same M positions of its own (privileged) sequence and are a constant:
// topkKl sends no gradient to them, and the caller computes them without a tape.
import type { Engine } from '../gpu/engine.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { add, scale, sub } from '../gpu/ops/elementwise.ts';
import { clippedRatio, policyGradient } from '../gpu/ops/clipped_ratio.ts';
import { maskedMean } from '../gpu/ops/masked_mean.ts';
import { type Logits, logitRows, rowLogprobs, rowTopkKl, studentRowTerms } from '../gpu/ops/vocab_head.ts';

function rowsOf(logits: Logits, what: string): number {
  if (!('shards' in logits) && logits.rank !== 2)
    throw new Error(`piplay: ${what} needs logits [M, V] at the policy positions, got ${logits.describe()}`);
  return logitRows(logits);
}

function engineOf(logits: Logits): Engine {
  return 'shards' in logits ? logits.h.engine : logits.engine;
}

function checkLength(name: string, a: ArrayLike<number>, M: number): void {
  if (a.length !== M) throw new Error(`piplay: ${name} has ${a.length} values for ${M} policy tokens`);
}

function hostTensors(e: Engine, M: number, targets: Int32Array, mask: Float32Array | undefined) {
  checkLength('targets', targets, M);
  if (mask) checkLength('mask', mask, M);
  return {
    targetsT: e.tensor(targets, [M], 'i32'),
    maskT: e.tensor(mask ?? new Float32Array(M).fill(1), [M]),
  };
}

export interface ExaminerLossInputs {
  /** Examiner logits [M, V] at the positions predicting its policy tokens (with gradient). */
  logits: Logits;
  /** The policy tokens, [M]. */
  targets: Int32Array;
  /** HRPO advantage of each token's rollout, [M]. */
  advantages: Float32Array;
  /** 1 for tokens that count (default all). */
  mask?: Float32Array;
  /** This micro-batch's share of the batch's policy tokens (default 1). */
  weight?: number;
  /** log-probs under the frozen base, [M]; needed when beta > 0. */
  refLogp?: Float32Array | null;
  /** Weight of the k3 KL to the reference (Dr. Zero's eq. 2; default 0). */
  beta?: number;
}

export interface ExaminerLossResult {
  /** weight · L_E, a scalar to back-propagate. */
  loss: Tensor;
  /** L_E of this micro-batch (unweighted), β·k3 included. */
  policyLoss: Tensor;
  /** Mean k3 to the reference (0 without one). */
  klRef: Tensor;
  /** log π_E of each token, [M]. */
  logp: Tensor;
}

/** L_E = -token-mean over mask of A · log π_E(y_t) + β·k3 (ALGORITHM.md section 5, examiner). */
export function examinerLoss(inp: ExaminerLossInputs): ExaminerLossResult {
  const e = engineOf(inp.logits);
  const M = rowsOf(inp.logits, 'examinerLoss');
  checkLength('advantages', inp.advantages, M);
  if (inp.refLogp) checkLength('refLogp', inp.refLogp, M);
  const beta = inp.beta ?? 0;
  if (beta > 0 && !inp.refLogp) throw new Error('piplay: examinerLoss: beta > 0 needs the reference log-probs');
  const { targetsT, maskT } = hostTensors(e, M, inp.targets, inp.mask);
  const logp = rowLogprobs(inp.logits, targetsT);
  const ref = inp.refLogp ? { logp: e.tensor(inp.refLogp, [M]), beta } : null;
  const pg = policyGradient(logp, e.tensor(inp.advantages, [M]), maskT, ref);
  const w = inp.weight ?? 1;
  return { loss: w === 1 ? pg.loss : scale(pg.loss, w), policyLoss: pg.loss, klRef: pg.klMean, logp };
}

export interface StudentLossSettings {
  /** Clip range below and above 1 (ε = 0.2; ε_high may differ). */
  epsLow: number;
  epsHigh: number;
  /** Weight of the k3 KL to the frozen base (0 by default). */
  beta: number;
  /** Weight of the top-K distillation term. */
  lambda: number;
  /** K of the top-K support (default 50). */
  topK: number;
  /** A tail bucket on each side (true) or renormalised over the K tokens (false). */
  tail: boolean;
  direction: 'reverse' | 'forward';
}

export interface StudentLossInputs {
  /** Student logits [M, V] at the positions predicting its policy tokens (with gradient). */
  logits: Logits;
  /** Teacher logits [M, V] at the same tokens of its privileged sequence; null: no teacher (Dr. Zero). */
  teacherLogits: Logits | null;
  targets: Int32Array;
  /** log-probs under the policy that sampled the rollout, [M]. */
  oldLogp: Float32Array;
  /** log-probs under the frozen base, [M]; needed when beta > 0. */
  refLogp?: Float32Array | null;
  /** GRPO advantage of each token's rollout, [M]. */
  advantages: Float32Array;
  mask?: Float32Array;
  weight?: number;
}

export interface StudentLossResult {
  /** weight · L_S, a scalar to back-propagate. */
  loss: Tensor;
  /** The clipped-ratio term with β·k3 included (what clippedRatio returns), unweighted. */
  policyLoss: Tensor;
  /** D, the top-K distillation term (a metric when λ = 0), or null without a teacher. Unweighted. */
  distill: Tensor | null;
  /** D per token, [M] (masked tokens included; use with the mask), or null. */
  distillPerToken: Tensor | null;
  clipFraction: Tensor;
  /** Mean k3 to the reference (0 without one). */
  klRef: Tensor;
  /** Mean entropy of the student's next-token distributions over the mask (a metric). */
  entropy: Tensor;
  /** Mean of old_logp - logp over the mask (PPO's approximate KL; ~0 on the first pass over fresh
   *  rollouts, which checks that the rollout's log-probs line up with the training forward). */
  ppoKl: Tensor;
  /** log π_S of each token, [M]. */
  logp: Tensor;
}

/** What the heatmap shows of each policy token (see tokenScores); the teacher's parts are absent without one. */
export interface TokenScores {
  /** log π_S of the sampled token, [M]. */
  slp: Tensor;
  /** log π_T of the sampled token, [M]. */
  tlp?: Tensor;
  /** D per token, [M]. */
  kl?: Tensor;
  /** The top-K ids [M, K] and both sides' log-probs at them. */
  ids?: Tensor;
  sTop?: Tensor;
  tTop?: Tensor;
}

/** Per policy token (a record, not a loss: call it under noGrad): log-probs of the sampled token and the top-K term. */
export function tokenScores(
  logits: Logits,
  teacherLogits: Logits | null,
  targets: Int32Array,
  s: Pick<StudentLossSettings, 'topK' | 'tail' | 'direction'>,
): TokenScores {
  const e = engineOf(logits);
  const M = rowsOf(logits, 'tokenScores');
  const { targetsT, maskT } = hostTensors(e, M, targets, undefined);
  const slp = rowLogprobs(logits, targetsT);
  if (!teacherLogits) return { slp };
  const d = rowTopkKl(logits, teacherLogits, maskT, { k: s.topK, tail: s.tail, direction: s.direction });
  return {
    slp,
    tlp: rowLogprobs(teacherLogits, targetsT),
    kl: d.perToken,
    ids: d.ids,
    sTop: d.studentLogp,
    tTop: d.teacherLogp,
  };
}

/** L_S = L_GRPO + β·KL_ref + λ·D (ALGORITHM.md section 5, student). */
export function studentLoss(inp: StudentLossInputs, s: StudentLossSettings): StudentLossResult {
  const e = engineOf(inp.logits);
  const M = rowsOf(inp.logits, 'studentLoss');
  checkLength('oldLogp', inp.oldLogp, M);
  checkLength('advantages', inp.advantages, M);
  if (inp.refLogp) checkLength('refLogp', inp.refLogp, M);
  if (s.beta > 0 && !inp.refLogp) throw new Error('piplay: studentLoss: beta > 0 needs the reference log-probs');
  if (s.lambda > 0 && !inp.teacherLogits) throw new Error('piplay: studentLoss: lambda > 0 needs teacher logits');
  const { targetsT, maskT } = hostTensors(e, M, inp.targets, inp.mask);
  // With λ = 0 the top-K term is only a metric: no tape, no gradient.
  const terms = studentRowTerms(
    inp.logits,
    inp.teacherLogits,
    targetsT,
    maskT,
    { k: s.topK, tail: s.tail, direction: s.direction },
    s.lambda > 0,
  );
  const logp = terms.logp;
  const oldT = e.tensor(inp.oldLogp, [M]);
  const cr = clippedRatio(
    logp,
    oldT,
    inp.refLogp ? e.tensor(inp.refLogp, [M]) : null,
    e.tensor(inp.advantages, [M]),
    maskT,
    { epsLow: s.epsLow, epsHigh: s.epsHigh, beta: s.beta },
  );
  let total = cr.loss;
  const distill = terms.topk?.loss ?? null;
  if (distill && s.lambda > 0) total = add(total, scale(distill, s.lambda));
  const w = inp.weight ?? 1;
  const ent = e.noGrad(() => maskedMean(terms.entropy, maskT));
  const ppoKl = e.noGrad(() => maskedMean(sub(oldT, logp), maskT));
  return {
    loss: w === 1 ? total : scale(total, w),
    policyLoss: cr.loss,
    distill,
    distillPerToken: terms.topk?.perToken ?? null,
    clipFraction: cr.clipFraction,
    klRef: cr.klMean,
    entropy: ent,
    ppoKl,
    logp,
  };
}
