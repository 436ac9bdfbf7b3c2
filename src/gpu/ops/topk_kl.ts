// Top-K KL distillation (ALGORITHM.md section 5; shaders/topk_kl.wgsl forward, topk_kl_grad.wgsl backward).
import type { Tensor } from '../tensor.ts';
import { maskedMean } from './masked_mean.ts';
import { expect, rowsCols } from './util.ts';

/**
 * Workgroup size of shaders/topk_kl.wgsl and topk_kl_grad.wgsl (one workgroup per row); also topk_kl's radix
 * histogram bins, one per thread (8 bits a pass), so it stays 256.
 */
const WG = 256;

/** The selection kernel gives each of the K tokens one of its 256 threads. */
export const TOPK_KL_MAX_K = 256;

export interface TopkKlOptions {
  /** Support size: the K tokens with the highest student log-probability (default 50). */
  k?: number;
  /** true: one extra bucket per side holds the mass outside the support, log(1 - sum p);
   *  false: both distributions are renormalised over the K tokens (default true). */
  tail?: boolean;
  /** 'reverse' = KL(student || teacher) = sum p_S (log p_S - log p_T) (default); 'forward' = KL(teacher || student). */
  direction?: 'reverse' | 'forward';
}

export interface TopkKlResult {
  /** Scalar mean of perToken over mask == 1 rows (0 when the mask is empty). Differentiable in the student logits. */
  loss: Tensor;
  /** KL of every row (masked rows included, as the reference does), shaped like the logits without the last
   *  axis. Differentiable in the student logits. */
  perToken: Tensor;
  /** i32 [..., K]: the support ids, by descending student logit (ties: lower id first). */
  ids: Tensor;
  /** [..., K]: the student's full-vocabulary log-probs at `ids` (no gradient; for display). */
  studentLogp: Tensor;
  /** [..., K]: the teacher's full-vocabulary log-probs at `ids`. */
  teacherLogp: Tensor;
}

/**
 * Per row r of student and teacher logits [..., V]: support = the student's top-K tokens; the KL between the
 * two distributions over the K buckets (+ a tail bucket each), in the chosen direction; loss = mean over
 * mask == 1 rows. The teacher is stop-gradient and the chosen ids are constants, but the student log-probs
 * depend on every logit through the log-sum-exp, so the gradient into the student logits is dense.
 */
export function topkKl(student: Tensor, teacher: Tensor, mask: Tensor, opts: TopkKlOptions = {}): TopkKlResult {
  const { k: K = 50, tail = true, direction = 'reverse' } = opts;
  const e = student.engine;
  expect(student, 'topkKl student logits', { dtype: 'f32' });
  expect(teacher, 'topkKl teacher logits', { dtype: 'f32' });
  expect(mask, 'topkKl mask', { dtype: 'f32' });
  if (student.rank < 1 || teacher.rank !== student.rank || teacher.shape.some((d, i) => d !== student.shape[i])) {
    throw new Error(
      `piplay: topkKl: teacher logits ${teacher.describe()} must have the shape of the student's ${student.describe()}`,
    );
  }
  const [R, V] = rowsCols(student);
  if (mask.size !== R) {
    throw new Error(
      `piplay: topkKl: mask ${mask.describe()} must hold one value per row of ${student.describe()} (${R})`,
    );
  }
  if (!Number.isInteger(K) || K < 1) throw new Error(`piplay: topkKl: k must be a positive integer, got ${K}`);
  if (K > V)
    throw new Error(`piplay: topkKl: k = ${K} is larger than the vocabulary (V = ${V}) of ${student.describe()}`);
  if (K > TOPK_KL_MAX_K) throw new Error(`piplay: topkKl: k = ${K} exceeds the kernel's maximum of ${TOPK_KL_MAX_K}`);
  if (direction !== 'reverse' && direction !== 'forward') {
    throw new Error(`piplay: topkKl: direction must be 'reverse' or 'forward', got '${String(direction)}'`);
  }

  const lead = student.shape.slice(0, -1);
  const perToken = e.empty(lead);
  const ids = e.empty([...lead, K], 'i32');
  const studentLogp = e.empty([...lead, K]);
  const teacherLogp = e.empty([...lead, K]);
  // Saved for the backward: per row (lse, a_tail, c_tail, C) and dL_r/dz at each support id.
  const stats = e.empty([R, 4]);
  const coef = e.empty([R, K]);
  if (R > 0) {
    e.dispatch({
      shader: 'topk_kl',
      constants: { WG, TAIL: tail, REVERSE: direction === 'reverse' },
      params: { R, V, K },
      bindings: { student, teacher, ids, stats, coef, perToken, studentLogp, teacherLogp },
      workgroups: e.grid(R, 1),
    });
  }
  e.record(
    [student, teacher],
    [perToken],
    ([g]) => {
      const dz = e.empty(student.shape);
      if (R > 0) {
        e.dispatch({
          shader: 'topk_kl_grad',
          constants: { WG },
          params: { R, V, K },
          bindings: { student, stats, coef, ids, grad: g!, dz },
          workgroups: e.grid(R, 1),
        });
      }
      return [dz, null];
    },
    [ids, stats, coef],
  );
  stats.dispose(); // the tape node holds these when recording
  coef.dispose();
  const loss = maskedMean(perToken, mask);
  return { loss, perToken, ids, studentLogp, teacherLogp };
}
