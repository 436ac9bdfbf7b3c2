// The exact KL between the student's and the teacher's next-token distributions over the whole
// vocabulary, in float64 on the host. The top-K term D (ALGORITHM.md section 5) approximates it: the K
// buckets plus a tail are a coarser partition of the vocabulary, so D <= this KL, and the teacher probe
// reports how much of it D keeps at each K.

/** log-softmax of row `row` of `logits` [rows, V], in float64. */
export function logSoftmaxRow(logits: ArrayLike<number>, row: number, V: number): Float64Array {
  const out = new Float64Array(V);
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row * V + v]!);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits[row * V + v]! - max);
  const lse = max + Math.log(sum);
  for (let v = 0; v < V; v++) out[v] = logits[row * V + v]! - lse;
  return out;
}

/**
 * KL over the whole vocabulary at row `row` of student and teacher logits [rows, V]: 'reverse' is
 * KL(student || teacher) = sum p_S (log p_S - log p_T), 'forward' is KL(teacher || student).
 */
export function fullKl(
  student: ArrayLike<number>,
  teacher: ArrayLike<number>,
  row: number,
  V: number,
  direction: 'reverse' | 'forward',
): number {
  const ls = logSoftmaxRow(student, row, V);
  const lt = logSoftmaxRow(teacher, row, V);
  const [lp, lq] = direction === 'reverse' ? [ls, lt] : [lt, ls];
  let kl = 0;
  for (let v = 0; v < V; v++) {
    const p = Math.exp(lp[v]!);
    if (p > 0) kl += p * (lp[v]! - lq[v]!);
  }
  return kl;
}
