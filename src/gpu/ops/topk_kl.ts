// Top-K KL distillation (ALGORITHM.md section 5). Two forward kernels with identical semantics and outputs:
//   workgroup - shaders/topk_kl.wgsl: a workgroup per row, a radix select and a sort in workgroup memory. GPUs.
//   rows      - shaders/topk_kl_rows.wgsl: an invocation per row, the support kept sorted by insertion, no barrier.
//               CPU drivers (lavapipe), where barriers and workgroup memory cost lane by lane.
// The backward (shaders/topk_kl_grad.wgsl) reads what either writes.
import type { Tensor } from '../tensor.ts';
import { maskedMean } from './masked_mean.ts';
import { expect, rowsCols } from './util.ts';

/**
 * Workgroup size of shaders/topk_kl.wgsl and topk_kl_grad.wgsl (one workgroup per row); also topk_kl's radix
 * histogram bins, one per thread (8 bits a pass), so it stays 256.
 */
const WG = 256;

/** The selection kernel gives each of the K tokens one of its 256 threads (the rows kernel's MAXK). */
export const TOPK_KL_MAX_K = 256;

/** Rows (invocations) per workgroup of the rows kernel. */
const ROWS_WG = 16;

export type TopkKlVariant = 'workgroup' | 'rows';
let forcedVariant: TopkKlVariant | null = null;

/** Forces one forward kernel for every shape (tests and benchmarks); `null` picks by device (CPU driver: rows). */
export function setTopkKlVariant(v: TopkKlVariant | null): void {
  forcedVariant = v;
}

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
  const e = student.engine;
  expect(student, 'topkKl student logits', { dtype: 'f32' });
  expect(teacher, 'topkKl teacher logits', { dtype: 'f32' });
  const { K, tail, reverse } = topkKlArgs(student.shape, teacher.shape, mask, opts);
  const V = student.shape[student.rank - 1]!;
  const lead = student.shape.slice(0, -1);
  const out = topkKlOutputs(e, lead, K);
  topkKlKernel(student, teacher, out, { V, K, tail, reverse });
  const { perToken, ids, stats, coef } = out;
  e.record(
    [student, teacher],
    [perToken],
    ([g]) => {
      const dz = e.empty(student.shape);
      topkKlGradKernel(student, out, g!, dz, K);
      return [dz, null];
    },
    [ids, stats, coef],
  );
  stats.dispose(); // the tape node holds these when recording
  coef.dispose();
  const loss = maskedMean(perToken, mask);
  return { loss, perToken, ids, studentLogp: out.studentLogp, teacherLogp: out.teacherLogp };
}

/** Checks topkKl's inputs (student and teacher logits [..., V] of one shape) and fills in the defaults. */
export function topkKlArgs(
  student: readonly number[],
  teacher: readonly number[],
  mask: Tensor,
  opts: TopkKlOptions,
): { K: number; tail: boolean; reverse: boolean } {
  const { k: K = 50, tail = true, direction = 'reverse' } = opts;
  expect(mask, 'topkKl mask', { dtype: 'f32' });
  const sDesc = `student logits [${student.join(', ')}]`;
  if (student.length < 1 || teacher.length !== student.length || teacher.some((d, i) => d !== student[i])) {
    throw new Error(`piplay: topkKl: teacher logits [${teacher.join(', ')}] must have the shape of the ${sDesc}`);
  }
  const V = student[student.length - 1]!;
  const R = student.reduce((a, b) => a * b, 1) / Math.max(V, 1);
  if (mask.size !== R) {
    throw new Error(`piplay: topkKl: mask ${mask.describe()} must hold one value per row of the ${sDesc} (${R})`);
  }
  if (!Number.isInteger(K) || K < 1) throw new Error(`piplay: topkKl: k must be a positive integer, got ${K}`);
  if (K > V) throw new Error(`piplay: topkKl: k = ${K} is larger than the vocabulary (V = ${V}) of the ${sDesc}`);
  if (K > TOPK_KL_MAX_K) throw new Error(`piplay: topkKl: k = ${K} exceeds the kernel's maximum of ${TOPK_KL_MAX_K}`);
  if (direction !== 'reverse' && direction !== 'forward') {
    throw new Error(`piplay: topkKl: direction must be 'reverse' or 'forward', got '${String(direction)}'`);
  }
  return { K, tail, reverse: direction === 'reverse' };
}

/** What topk_kl.wgsl writes for rows `lead` (the logits' shape without V): the result tensors and, for the
 *  backward, per row (lse, a_tail, c_tail, C) and dL_r/dz at each support id. */
export interface TopkKlOutputs {
  perToken: Tensor;
  ids: Tensor;
  studentLogp: Tensor;
  teacherLogp: Tensor;
  stats: Tensor;
  coef: Tensor;
}

export function topkKlOutputs(e: Tensor['engine'], lead: readonly number[], K: number): TopkKlOutputs {
  const R = lead.reduce((a, b) => a * b, 1);
  return {
    perToken: e.empty(lead),
    ids: e.empty([...lead, K], 'i32'),
    studentLogp: e.empty([...lead, K]),
    teacherLogp: e.empty([...lead, K]),
    stats: e.empty([R, 4]),
    coef: e.empty([R, K]),
  };
}

/** The forward kernel over the rows of student and teacher logits [R, V] (no autograd; also the chunked LM head's). */
export function topkKlKernel(
  student: Tensor,
  teacher: Tensor,
  out: TopkKlOutputs,
  s: { V: number; K: number; tail: boolean; reverse: boolean },
): void {
  const e = student.engine;
  const R = student.size / s.V;
  if (R === 0) return;
  const rows = (forcedVariant ?? (e.info.isCpu ? 'rows' : 'workgroup')) === 'rows';
  e.dispatch({
    shader: rows ? 'topk_kl_rows' : 'topk_kl',
    constants: { WG: rows ? ROWS_WG : WG, TAIL: s.tail, REVERSE: s.reverse },
    params: { R, V: s.V, K: s.K },
    bindings: {
      student,
      teacher,
      ids: out.ids,
      stats: out.stats,
      coef: out.coef,
      perToken: out.perToken,
      studentLogp: out.studentLogp,
      teacherLogp: out.teacherLogp,
    },
    workgroups: e.grid(R, rows ? ROWS_WG : 1),
  });
}

/** topk_kl_grad.wgsl: dz [R, V] into the student logits from the forward's ids, stats and coef and g [R]. */
export function topkKlGradKernel(
  student: Tensor,
  saved: Pick<TopkKlOutputs, 'ids' | 'stats' | 'coef'>,
  g: Tensor,
  dz: Tensor,
  K: number,
): void {
  const e = student.engine;
  const [R, V] = rowsCols(student);
  if (R === 0) return;
  e.dispatch({
    shader: 'topk_kl_grad',
    constants: { WG },
    params: { R, V, K },
    bindings: { student, stats: saved.stats, coef: saved.coef, ids: saved.ids, grad: g, dz },
    workgroups: e.grid(R, 1),
  });
}
