// The LM head of a real vocabulary (~152k tokens): its weight [V, D] may be kept as row shards (a weight larger
// than one storage binding, see src/model/vocab.ts), and the row ops that read its logits (token log-probs,
// entropy, the top-K KL) run chunk by chunk over rows, so that [rows x V] logits exist one chunk at a time,
// forward and backward: the backward recomputes a chunk's logits, takes the kernel's d logits and folds them
// straight into d hidden and d weight ("fused linear cross-entropy"). Where every row fits one chunk (small
// vocabularies) the head materialises its logits once and the plain ops run on them, as before.
import type { Engine } from '../engine.ts';
import type { Tensor } from '../tensor.ts';
import { add, scale as scaleOp } from './elementwise.ts';
import {
  checkTargets,
  entropy,
  entropyKernel,
  tokenLogprobs,
  tokenLogprobsGradKernel,
  tokenLogprobsKernel,
} from './log_softmax.ts';
import { gemm, matmul } from './matmul.ts';
import { maskedMean } from './masked_mean.ts';
import {
  type TopkKlOptions,
  type TopkKlResult,
  topkKl,
  topkKlArgs,
  topkKlGradKernel,
  topkKlKernel,
  topkKlOutputs,
} from './topk_kl.ts';
import { expect } from './util.ts';

/** copy2d's workgroup size: one thread per word. */
const COPY_WG = 256;

/**
 * dst[dOff + r * dStride + c] = src[sOff + r * sStride + c] for r < R, c < C, in elements of 32-bit tensors
 * (shaders/copy2d.wgsl; no autograd).
 */
export function copy2d(
  src: Tensor,
  dst: Tensor,
  s: { R: number; C: number; sOff?: number; sStride: number; dOff?: number; dStride: number },
): void {
  if (s.R === 0 || s.C === 0) return;
  const e = src.engine;
  e.dispatch({
    shader: 'copy2d',
    constants: { WG: COPY_WG },
    params: { R: s.R, C: s.C, sOff: s.sOff ?? 0, sStride: s.sStride, dOff: s.dOff ?? 0, dStride: s.dStride },
    bindings: { src, dst },
    workgroups: e.grid(s.R * s.C, COPY_WG),
  });
}

/** Rows [r0, r0 + m) of x [N, C] as a new tensor [m, C] (no autograd). */
function rowsOf(x: Tensor, r0: number, m: number): Tensor {
  const C = x.size / x.shape[0]!;
  const out = x.engine.empty([m, ...x.shape.slice(1)], x.dtype);
  copy2d(x, out, { R: 1, C: m * C, sOff: r0 * C, sStride: 0, dStride: 0 });
  return out;
}

/** Writes x [m, C] into rows [r0, r0 + m) of dst [N, C] (no autograd). */
function putRows(x: Tensor, dst: Tensor, r0: number): void {
  const C = dst.size / dst.shape[0]!;
  copy2d(x, dst, { R: 1, C: x.size, sStride: 0, dOff: r0 * C, dStride: 0 });
}

/** [R, C_k] parts side by side -> [R, sum C_k], with autograd (each part gets its block of columns). */
export function concatColumns(parts: readonly Tensor[]): Tensor {
  const e = parts[0]!.engine;
  const R = parts[0]!.shape[0]!;
  for (const p of parts) expect(p, 'concatColumns', { rank: 2, dtype: 'f32' });
  if (parts.some((p) => p.shape[0] !== R)) {
    throw new Error(`piplay: concatColumns: parts ${parts.map((p) => p.describe()).join(', ')} differ in rows`);
  }
  const C = parts.reduce((n, p) => n + p.shape[1]!, 0);
  const out = e.empty([R, C]);
  let c0 = 0;
  for (const p of parts) {
    copy2d(p, out, { R, C: p.shape[1]!, sStride: p.shape[1]!, dOff: c0, dStride: C });
    c0 += p.shape[1]!;
  }
  e.record([...parts], [out], ([g]) => {
    let off = 0;
    return parts.map((p) => {
      const Ck = p.shape[1]!;
      const d = e.empty([R, Ck]);
      copy2d(g!, d, { R, C: Ck, sOff: off, sStride: C, dStride: Ck });
      off += Ck;
      return d;
    });
  });
  return out;
}

/** Logits x @ Wᵀ of rows x [R, D] through the row shards of W (in vocabulary order) -> [R, V], with autograd. */
export function shardedLinear(x: Tensor, shards: readonly Tensor[]): Tensor {
  if (shards.length === 1) return matmul(x, shards[0]!, { transB: true });
  const parts = shards.map((w) => matmul(x, w, { transB: true }));
  const out = concatColumns(parts);
  for (const p of parts) p.dispose(); // held by the tape when recording
  return out;
}

/**
 * Rows of logits z = scale * h @ Wᵀ that the row ops below read without ever holding all of them: h [M, D] the
 * hidden states, W [V, D] as row shards, `chunk` rows of [chunk, V] logits at a time. `logits` is set when
 * all M rows fit one chunk: then they are materialised (on the tape when h or W train) and the plain ops run.
 */
export interface VocabHead {
  h: Tensor;
  shards: readonly Tensor[];
  scale: number;
  chunk: number;
  logits: Tensor | null;
}

/**
 * The most bytes of logits one chunk holds, whatever the adapter's binding limit: on an adapter that binds
 * gigabytes the logits of a long batch would otherwise live whole (and their gradients beside them), and the
 * memory of a run would depend on the adapter rather than on its settings.
 */
export const LOGITS_CHUNK_BYTES = 128 * 2 ** 20;

/** Bytes of logits one chunk may hold on an adapter that binds `maxBinding` bytes. */
export const chunkBytes = (maxBinding: number) => Math.min(maxBinding, LOGITS_CHUNK_BYTES);

/** Rows of [rows, V] f32 logits in one chunk on this engine: one binding's worth, at most LOGITS_CHUNK_BYTES. */
export function chunkRows(e: Engine, V: number): number {
  const max = Math.min(e.info.limits.maxStorageBufferBindingSize, e.info.limits.maxBufferSize);
  return Math.max(1, Math.floor(chunkBytes(max) / (4 * V)));
}

/**
 * The head of hidden rows h [M, D] through W's row shards, logits times `scale`; `chunk` rows at a time
 * (default: what one binding holds). With M <= chunk the logits are computed here, once.
 */
export function vocabHead(h: Tensor, shards: readonly Tensor[], scale = 1, chunk?: number): VocabHead {
  expect(h, 'vocabHead hidden states', { rank: 2, dtype: 'f32' });
  const V = vocabOf(shards);
  const rows = chunk ?? chunkRows(h.engine, V);
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`piplay: vocabHead: chunk must be >= 1 rows, got ${rows}`);
  let logits: Tensor | null = null;
  if (h.shape[0]! <= rows) {
    const z = shardedLinear(h, shards);
    logits = scale === 1 ? z : scaleOp(z, scale);
  }
  return { h, shards, scale, chunk: rows, logits };
}

/** The head's logits [M, V] as one tensor (with autograd): only where they fit one binding. */
export function headLogits(head: VocabHead): Tensor {
  if (head.logits) return head.logits;
  const z = shardedLinear(head.h, head.shards);
  return head.scale === 1 ? z : scaleOp(z, head.scale);
}

function vocabOf(shards: readonly Tensor[]): number {
  if (shards.length === 0) throw new Error('piplay: vocabHead: no weight shards');
  return shards.reduce((n, w) => n + w.shape[0]!, 0);
}

/** Rows of logits: a plain [R, V] tensor or an LM head (see VocabHead). */
export type Logits = Tensor | VocabHead;

function isHead(x: Logits): x is VocabHead {
  return 'shards' in x;
}

/** [rows, V] of logits as the plain ops want them (null: the head is chunked). */
function plain(x: Logits): Tensor | null {
  return isHead(x) ? x.logits : x;
}

/** Rows of the logits, without computing them. */
export function logitRows(x: Logits): number {
  if (isHead(x)) return x.h.shape[0]!;
  return x.size / Math.max(x.shape[x.rank - 1]!, 1);
}

/** Vocabulary size of the logits. */
export function logitVocab(x: Logits): number {
  return isHead(x) ? vocabOf(x.shards) : x.shape[x.rank - 1]!;
}

/** Logits of rows [r0, r0 + m) of a chunked head, [m, V] (no autograd). */
function chunkLogits(head: VocabHead, r0: number, m: number): Tensor {
  const e = head.h.engine;
  const D = head.h.shape[1]!;
  const V = vocabOf(head.shards);
  const hc = rowsOf(head.h, r0, m);
  const z = e.empty([m, V]);
  let c0 = 0;
  for (const w of head.shards) {
    const Vk = w.shape[0]!;
    const zk = head.shards.length === 1 ? z : e.empty([m, Vk]);
    gemm(hc, w, zk, { M: m, N: Vk, K: D, batch: 1, transA: false, transB: true, alpha: head.scale });
    if (zk !== z) {
      copy2d(zk, z, { R: m, C: Vk, sStride: Vk, dOff: c0, dStride: V });
      zk.dispose();
    }
    c0 += Vk;
  }
  hc.dispose();
  return z;
}

/** Rows [r0, r0 + m) of logits as a new [m, V] tensor: a copy of plain ones, or a chunked head's (no autograd). */
export function logitRowsAt(x: Logits, r0: number, m: number): Tensor {
  return isHead(x) && !x.logits ? chunkLogits(x, r0, m) : rowsOf(plain(x)!, r0, m);
}

/** The chunks of a head's rows: [r0, m] pairs. */
function chunks(head: VocabHead): [number, number][] {
  const M = head.h.shape[0]!;
  const out: [number, number][] = [];
  for (let r0 = 0; r0 < M; r0 += head.chunk) out.push([r0, Math.min(head.chunk, M - r0)]);
  return out;
}

/**
 * The backward of a chunked row op: per chunk, `dz(z, r0, m)` gives d loss / d logits [m, V] from the chunk's
 * recomputed logits z; folded into d h [M, D] and d W_k (each where it trains). Returns [dh, ...dW].
 */
function backward(head: VocabHead, dz: (z: Tensor, r0: number, m: number) => Tensor): (Tensor | null)[] {
  const e = head.h.engine;
  const { h, shards, scale } = head;
  const D = h.shape[1]!;
  const V = vocabOf(shards);
  const dh = h.requiresGrad ? e.empty(h.shape) : null;
  const dW = shards.map((w) => (w.requiresGrad ? e.zeros(w.shape) : null));
  for (const [r0, m] of chunks(head)) {
    e.tidy(() => {
      const d = dz(chunkLogits(head, r0, m), r0, m);
      const hc = dW.some(Boolean) ? rowsOf(h, r0, m) : null;
      const dhc = dh ? e.zeros([m, D]) : null;
      let c0 = 0;
      shards.forEach((w, k) => {
        const Vk = w.shape[0]!;
        let dk = d;
        if (shards.length > 1) {
          dk = e.empty([m, Vk]);
          copy2d(d, dk, { R: m, C: Vk, sOff: c0, sStride: V, dStride: Vk });
        }
        // z = scale * h Wᵀ: dh += scale * dz W, dW += scale * dzᵀ h.
        if (dhc)
          gemm(dk, w, dhc, {
            M: m,
            N: D,
            K: Vk,
            batch: 1,
            transA: false,
            transB: false,
            alpha: scale,
            accumulate: true,
          });
        const dw = dW[k];
        if (dw)
          gemm(dk, hc!, dw, {
            M: Vk,
            N: D,
            K: m,
            batch: 1,
            transA: true,
            transB: false,
            alpha: scale,
            accumulate: true,
          });
        c0 += Vk;
      });
      if (dhc) putRows(dhc, dh!, r0);
    });
  }
  return [dh, ...dW];
}

/**
 * log_softmax(logits)[r, targets[r]] per row (as tokenLogprobs), of plain logits or of a head, chunk by chunk
 * where the head is chunked. The result is [rows] and differentiable in the hidden states and the weights.
 */
export function rowLogprobs(x: Logits, targets: Tensor): Tensor {
  const z = plain(x);
  if (z) return tokenLogprobs(z, targets);
  const head = x as VocabHead;
  const e = head.h.engine;
  const M = head.h.shape[0]!;
  const V = vocabOf(head.shards);
  checkTargets('tokenLogprobs', head.h, targets, M);
  const lp = e.empty([M]);
  const lse = e.empty([M]);
  e.noGrad(() => {
    for (const [r0, m] of chunks(head)) {
      e.tidy(() => {
        const lpc = e.empty([m]);
        const lsec = e.empty([m]);
        tokenLogprobsKernel(chunkLogits(head, r0, m), rowsOf(targets, r0, m), lpc, lsec, m, V);
        putRows(lpc, lp, r0);
        putRows(lsec, lse, r0);
      });
    }
  });
  e.record(
    [head.h, ...head.shards, targets],
    [lp],
    ([g]) => [
      ...backward(head, (zc, r0, m) => {
        const d = e.empty([m, V]);
        tokenLogprobsGradKernel(zc, rowsOf(targets, r0, m), rowsOf(lse, r0, m), rowsOf(g!, r0, m), d);
        return d;
      }),
      null,
    ],
    [lse],
  );
  lse.dispose(); // the tape node holds it when recording
  return lp;
}

/** Entropy of softmax(logits) per row (a metric: no gradient), chunk by chunk where the head is chunked. */
export function rowEntropy(x: Logits): Tensor {
  const z = plain(x);
  if (z) return entropy(z);
  const head = x as VocabHead;
  const e = head.h.engine;
  const V = vocabOf(head.shards);
  const out = e.empty([head.h.shape[0]!]);
  e.noGrad(() => {
    for (const [r0, m] of chunks(head)) {
      e.tidy(() => {
        const hc = e.empty([m]);
        entropyKernel(chunkLogits(head, r0, m), hc, m, V);
        putRows(hc, out, r0);
      });
    }
  });
  return out;
}

/**
 * The top-K KL of topkKl between student and teacher rows (either plain logits [R, V] or heads over the same
 * R rows), chunk by chunk where either is a chunked head. The teacher is a constant; the student's rows get
 * the gradient (into its hidden states and weights when a head).
 */
export function rowTopkKl(student: Logits, teacher: Logits, mask: Tensor, opts: TopkKlOptions = {}): TopkKlResult {
  const s = plain(student);
  const t = plain(teacher);
  if (s && t) return topkKl(s, t, mask, opts);
  const R = logitRows(student);
  const V = logitVocab(student);
  const { K, tail, reverse } = topkKlArgs([R, V], [logitRows(teacher), logitVocab(teacher)], mask, opts);
  const e = mask.engine;
  const out = topkKlOutputs(e, [R], K);
  const step = Math.min(isHead(student) ? student.chunk : R, isHead(teacher) ? teacher.chunk : R) || 1;
  e.noGrad(() => {
    for (let r0 = 0; r0 < R; r0 += step) {
      const m = Math.min(step, R - r0);
      e.tidy(() => {
        const part = topkKlOutputs(e, [m], K);
        topkKlKernel(logitRowsAt(student, r0, m), logitRowsAt(teacher, r0, m), part, { V, K, tail, reverse });
        for (const key of ['perToken', 'ids', 'studentLogp', 'teacherLogp', 'stats', 'coef'] as const) {
          putRows(part[key], out[key], r0);
        }
      });
    }
  });
  const { perToken, ids, stats, coef } = out;
  const grad = (zc: Tensor, r0: number, m: number, g: Tensor): Tensor => {
    const d = e.empty([m, V]);
    const saved = { ids: rowsOf(ids, r0, m), stats: rowsOf(stats, r0, m), coef: rowsOf(coef, r0, m) };
    topkKlGradKernel(zc, saved, rowsOf(g, r0, m), d, K);
    return d;
  };
  if (isHead(student)) {
    const head: VocabHead = { ...student, chunk: step, logits: null };
    e.record([student.h, ...student.shards], [perToken], ([g]) => backward(head, (zc, r0, m) => grad(zc, r0, m, g!)), [
      ids,
      stats,
      coef,
    ]);
  } else {
    e.record([student], [perToken], ([g]) => [grad(student, 0, R, g!)], [ids, stats, coef]);
  }
  stats.dispose(); // the tape node holds these when recording
  coef.dispose();
  const loss = maskedMean(perToken, mask);
  return { loss, perToken, ids, studentLogp: out.studentLogp, teacherLogp: out.teacherLogp };
}

/** What the student's loss reads of its logits: log π(target) per row, the entropy, and the top-K KL with a teacher. */
export interface StudentRowTerms {
  /** log_softmax(logits)[r, targets[r]], [R], differentiable. */
  logp: Tensor;
  /** Entropy per row, [R] (a metric: no gradient). */
  entropy: Tensor;
  /** The top-K KL against the teacher (null without one); differentiable when `klGrad`. */
  topk: TopkKlResult | null;
}

/**
 * The student's row terms (rowLogprobs, rowEntropy, rowTopkKl) in one pass. Plain logits: the separate ops. A chunked
 * head computes each chunk's logits once for all three, and its backward recomputes each chunk once, folding the
 * sum of both terms' d logits into d h and d W with one pair of products: 3 logits computations and 2 of the
 * backward's recompute-and-fold become one each (the head is most of a real vocabulary's training pass).
 */
export function studentRowTerms(
  student: Logits,
  teacher: Logits | null,
  targets: Tensor,
  mask: Tensor,
  opts: TopkKlOptions,
  klGrad: boolean,
): StudentRowTerms {
  const e = targets.engine;
  const kl = () => rowTopkKl(student, teacher!, mask, opts);
  if (plain(student) && (!teacher || plain(teacher)))
    return {
      logp: rowLogprobs(student, targets),
      entropy: e.noGrad(() => rowEntropy(student)),
      topk: teacher ? (klGrad ? kl() : e.noGrad(kl)) : null,
    };
  const head = student as VocabHead;
  const R = head.h.shape[0]!;
  const V = vocabOf(head.shards);
  checkTargets('tokenLogprobs', head.h, targets, R);
  const args = teacher ? topkKlArgs([R, V], [logitRows(teacher), logitVocab(teacher)], mask, opts) : null;
  const step = Math.min(head.chunk, teacher && isHead(teacher) ? teacher.chunk : R) || 1;
  const logp = e.empty([R]);
  const lse = e.empty([R]);
  const ent = e.empty([R]);
  const out = args ? topkKlOutputs(e, [R], args.K) : null;
  e.noGrad(() => {
    for (let r0 = 0; r0 < R; r0 += step) {
      const m = Math.min(step, R - r0);
      e.tidy(() => {
        const z = chunkLogits(head, r0, m);
        const [lpc, lsec, hc] = [e.empty([m]), e.empty([m]), e.empty([m])];
        tokenLogprobsKernel(z, rowsOf(targets, r0, m), lpc, lsec, m, V);
        entropyKernel(z, hc, m, V);
        putRows(lpc, logp, r0);
        putRows(lsec, lse, r0);
        putRows(hc, ent, r0);
        if (!out || !args) return;
        const part = topkKlOutputs(e, [m], args.K);
        topkKlKernel(z, logitRowsAt(teacher!, r0, m), part, { V, ...args });
        for (const key of ['perToken', 'ids', 'studentLogp', 'teacherLogp', 'stats', 'coef'] as const)
          putRows(part[key], out[key], r0);
      });
    }
  });
  const outputs = out && klGrad ? [logp, out.perToken] : [logp];
  e.record(
    [head.h, ...head.shards, targets],
    outputs,
    ([gLp, gKl]) => [
      ...backward({ ...head, chunk: step, logits: null }, (z, r0, m) => {
        // d logits of both terms of the chunk, summed before the one fold into d h and d W.
        const parts: Tensor[] = [];
        if (gLp) {
          const d = e.empty([m, V]);
          tokenLogprobsGradKernel(z, rowsOf(targets, r0, m), rowsOf(lse, r0, m), rowsOf(gLp, r0, m), d);
          parts.push(d);
        }
        if (gKl && out) {
          const d = e.empty([m, V]);
          const saved = { ids: rowsOf(out.ids, r0, m), stats: rowsOf(out.stats, r0, m), coef: rowsOf(out.coef, r0, m) };
          topkKlGradKernel(z, saved, rowsOf(gKl, r0, m), d, args!.K);
          parts.push(d);
        }
        if (parts.length < 2) return parts[0] ?? e.zeros([m, V]);
        // The chunk's logits are read: freed before the sum, so at most three chunks live (the memory plan's).
        z.dispose();
        return add(parts[0]!, parts[1]!);
      }),
      null,
    ],
    out ? [lse, out.ids, out.stats, out.coef] : [lse],
  );
  lse.dispose(); // the tape node holds these when recording
  out?.stats.dispose();
  out?.coef.dispose();
  return {
    logp,
    entropy: ent,
    topk: out
      ? {
          loss: maskedMean(out.perToken, mask),
          perToken: out.perToken,
          ids: out.ids,
          studentLogp: out.studentLogp,
          teacherLogp: out.teacherLogp,
        }
      : null,
  };
}
