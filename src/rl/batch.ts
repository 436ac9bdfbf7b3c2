// From rollouts to the host arrays a loss needs (plain CPU data, no GPU): a left-padded token batch and
// the flat positions whose logits predict the policy's own tokens. Prompt and tool tokens (mask 0) are
// never listed, so they get no loss, no gradient and no KL (ALGORITHM.md section 2). policyBatch gives
// each sequence a row; treeBatch packs sequences that share prefixes (a question's rollouts) as one prefix
// tree per row (src/rl/tree.ts), each shared prefix once, with the same policy tokens listed.
//
// The teacher scores the student's rollout with its privileged prompt: its sequence is the teacher
// prompt's ids followed by the very same response ids, with the same mask, so the policy tokens of
// the two batches line up one for one (ALGORITHM.md section 6).

import { packTree } from './tree.ts';

/** A token sequence with its policy mask (1 = sampled by the policy). */
export interface MaskedSequence {
  ids: readonly number[];
  mask: readonly number[];
}

export interface PolicyBatch {
  /**
   * Row-major [batch, time], left-padded: row b's tokens start at keyStart[b]. Attention hides the padding from
   * real tokens and skips the padding's own rows (a query that sees no key), so a batch of rollouts of different
   * lengths costs about what the rollouts would alone.
   */
  ids: Int32Array;
  batch: number;
  time: number;
  /** Per row, its first real column (time - its length). */
  keyStart: Int32Array;
  /** Row-major [batch, time]: each token's position in its own sequence (0 on the padding). */
  positions: Int32Array;
  /** Per policy token, the flat position b*time + keyStart[b] + t - 1 whose logits predict it. */
  rows: Int32Array;
  /** Per policy token, its id (the target of rows[i]). */
  targets: Int32Array;
  /** Per policy token, the sequence it belongs to. */
  owner: Int32Array;
  /** Per policy token, its index t in its sequence. */
  index: Int32Array;
  /**
   * Rows packed as prefix trees (treeBatch): row-major [batch, time], each token's subtree end (a column): the
   * token at column j is seen only by the tokens at columns j..keyEnd[j] - 1, its descendants. Absent: each
   * row is one sequence (every later token sees it). `rows` may then list a position more than once.
   */
  keyEnd?: Int32Array;
}

/** Packs sequences, a row each, and lists their policy tokens, sequence by sequence, in order. */
export function policyBatch(seqs: readonly MaskedSequence[], padId = 0): PolicyBatch {
  if (seqs.length === 0) throw new Error('piplay: policyBatch needs at least one sequence');
  // A tree of one sequence is that sequence: every later token sees each token, the plain causal pass.
  const { keyEnd: _, ...batch } = treeBatch(
    seqs.map((s) => [s]),
    padId,
  );
  return batch;
}

/**
 * Packs each group of sequences (sequences that share prefixes, e.g. a question's rollouts) as one prefix tree
 * per row, depth first, left-padded like policyBatch; lists the policy tokens sequence by sequence in order (the
 * groups' sequences one after the other: `owner` counts them so), exactly as policyBatch lists those of the
 * same sequences. A policy token's logits come from its predecessor's node, which the sequences through it share.
 */
export function treeBatch(groups: readonly (readonly MaskedSequence[])[], padId = 0): PolicyBatch {
  if (groups.length === 0 || groups.some((g) => g.length === 0))
    throw new Error('piplay: treeBatch needs at least one group, and at least one sequence in each');
  const trees = groups.map((g) => packTree(g.map((s) => s.ids)));
  const B = groups.length;
  const T = Math.max(...trees.map((t) => t.ids.length));
  const ids = new Int32Array(B * T).fill(padId);
  const positions = new Int32Array(B * T);
  const keyEnd = new Int32Array(B * T).fill(T);
  const keyStart = Int32Array.from(trees, (t) => T - t.ids.length);
  const rows: number[] = [];
  const targets: number[] = [];
  const owner: number[] = [];
  const index: number[] = [];
  let seq = 0;
  groups.forEach((group, b) => {
    const tree = trees[b]!;
    const at = b * T + keyStart[b]!;
    ids.set(tree.ids, at);
    positions.set(tree.depth, at);
    for (let n = 0; n < tree.ids.length; n++) keyEnd[at + n] = keyStart[b]! + tree.end[n]!;
    group.forEach((s, k) => {
      if (s.mask.length !== s.ids.length)
        throw new Error(`piplay: sequence ${seq} has ${s.ids.length} ids but a mask of ${s.mask.length}`);
      const nodes = tree.nodes[k]!;
      for (let t = 0; t < s.ids.length; t++) {
        if (!s.mask[t]) continue;
        if (t === 0) throw new Error(`piplay: sequence ${seq} marks its first token as sampled; nothing predicts it`);
        rows.push(at + nodes[t - 1]!);
        targets.push(s.ids[t]!);
        owner.push(seq);
        index.push(t);
      }
      seq++;
    });
  });
  return {
    ids,
    batch: B,
    time: T,
    keyStart,
    positions,
    rows: Int32Array.from(rows),
    targets: Int32Array.from(targets),
    owner: Int32Array.from(owner),
    index: Int32Array.from(index),
    keyEnd,
  };
}

/** Per policy token of `batch`, the value `of(owner, index)` (advantages, old log-probs, ...). */
export function perPolicyToken(batch: PolicyBatch, of: (owner: number, index: number) => number): Float32Array {
  const out = new Float32Array(batch.targets.length);
  for (let i = 0; i < out.length; i++) out[i] = of(batch.owner[i]!, batch.index[i]!);
  return out;
}

/** A rollout as the loss sees it: prompt + response ids, its mask, and where the response starts. */
export interface ResponseSequence extends MaskedSequence {
  promptLength: number;
}

/**
 * The teacher's sequence for a student rollout: the teacher prompt's ids, then the rollout's response ids
 * (sampled and tool ids) unchanged, with the rollout's mask over them.
 */
export function teacherSequence(rollout: ResponseSequence, teacherPrompt: readonly number[]): MaskedSequence {
  const response = rollout.ids.slice(rollout.promptLength);
  const mask = rollout.mask.slice(rollout.promptLength);
  if (rollout.mask.slice(0, rollout.promptLength).some(Boolean)) {
    throw new Error('piplay: a rollout marks prompt tokens as sampled');
  }
  return { ids: [...teacherPrompt, ...response], mask: [...new Array<number>(teacherPrompt.length).fill(0), ...mask] };
}

/** Throws unless the two batches list the same policy tokens in the same order (ids and count). */
export function assertAligned(student: PolicyBatch, teacher: PolicyBatch): void {
  const n = student.targets.length;
  if (teacher.targets.length !== n) {
    throw new Error(`piplay: the teacher batch has ${teacher.targets.length} policy tokens, the student's ${n}`);
  }
  for (let i = 0; i < n; i++) {
    if (teacher.targets[i] !== student.targets[i] || teacher.owner[i] !== student.owner[i]) {
      throw new Error(
        `piplay: teacher and student policy tokens differ at ${i} (ids ${teacher.targets[i]} vs ${student.targets[i]})`,
      );
    }
  }
}
