// The micro-batches of a minibatch: which rollouts share one forward/backward pass. A pass's memory grows with its
// padded size (rows × its longest row: activations, the teacher's forward) and with its policy tokens (logits), so
// --micro-batch N bounds each pass by N rollouts of the size the memory plan sizes a pass by (rolloutBudget in
// src/selfplay/memory-plan.ts), or of the largest actual rollout where that is larger. Within that bound short rollouts share a pass: sorted longest
// first, each pass takes the next rollouts while it stays within every bound and its padding stays under
// PAD_SLACK of its tokens (padding is computed like any token). Fewer, fuller passes mean fewer dispatches, and
// the gradient is the same: each micro-batch's loss is weighted by its share of the tokens (src/selfplay/update.ts).

import { policyTokens, type Rollout } from '../rl/rollout.ts';
import { Trie } from '../rl/tree.ts';

/** The padding a shared pass may add, as a share of its rollouts' own size. */
export const PAD_SLACK = 1 / 8;

/** One measure of a rollout and the bound on a pass: padded (rows × the largest) or summed over its rollouts. */
export interface PassMeasure {
  of: (i: number) => number;
  /** The largest a single rollout may measure; a pass may hold `microBatch` times this. */
  perRollout: number;
  kind: 'padded' | 'summed';
}

/**
 * `idx` split into passes of at most `microBatch` rollouts' worth of every measure (microBatch 0: one pass). Rollouts
 * go longest first by the first measure (ties in their order in `idx`); a rollout past a bound alone still gets its
 * own pass.
 */
export function packMicroBatches(
  idx: readonly number[],
  microBatch: number,
  measures: readonly PassMeasure[],
): number[][] {
  if (idx.length === 0) return [];
  if (microBatch <= 0) return [idx.slice()];
  const lead = measures[0]!.of;
  const sorted = idx
    .map((i, k) => ({ i, k, size: lead(i) }))
    .sort((a, b) => b.size - a.size || a.k - b.k)
    .map((r) => r.i);
  const passes: number[][] = [];
  let pass: number[] = [];
  const fits = (rows: number[]) =>
    measures.every((m) => {
      const values = rows.map(m.of);
      const sum = values.reduce((a, b) => a + b, 0);
      if (m.kind === 'summed') return sum <= microBatch * m.perRollout;
      const padded = rows.length * Math.max(...values);
      return padded <= microBatch * m.perRollout && padded <= (1 + PAD_SLACK) * sum;
    });
  for (const i of sorted) {
    if (pass.length > 0 && !fits([...pass, i])) {
      passes.push(pass);
      pass = [];
    }
    pass.push(i);
  }
  passes.push(pass);
  return passes;
}

/** The bound of a measure: the budget a rollout may use, or the largest actual rollout where one is larger. */
export function perRolloutBound(idx: readonly number[], of: (i: number) => number, budget: number): number {
  return Math.max(budget, ...idx.map(of));
}

/**
 * The measures of every pass of rollouts `idx`: each one's padded length, bounded by the longest prompt of `idx`
 * plus `response` tokens, and its policy tokens (the logits a loss reads), summed, bounded by `policy` (each bound
 * at least the largest actual rollout).
 */
export function rolloutMeasures(
  idx: readonly number[],
  rollout: (i: number) => Pick<Rollout, 'ids' | 'mask' | 'promptLength'>,
  response: number,
  policy: number,
): PassMeasure[] {
  const length = (i: number) => rollout(i).ids.length;
  const sampled = (i: number) => policyTokens(rollout(i));
  const longestPrompt = Math.max(...idx.map((i) => rollout(i).promptLength));
  return [
    { of: length, perRollout: perRolloutBound(idx, length, longestPrompt + response), kind: 'padded' },
    { of: sampled, perRollout: perRolloutBound(idx, sampled, policy), kind: 'summed' },
  ];
}

/** A prefix tree of one question's rollouts: the rollouts, and its packed length. */
export interface TreeUnit {
  rollouts: number[];
  nodes: number;
}

/**
 * The rollouts `idx` as prefix-tree units (src/rl/tree.ts): the rollouts of one question (`groupOf`) share a
 * tree while it fits one pass, `fits(rollouts, nodes)`, where `nodes` is the tree's packed length; a rollout
 * that does not fit starts the question's next tree (a rollout alone always makes a unit). Units keep the order
 * of `idx` within a question, questions in the order of their first rollout.
 */
export function treeUnits(
  idx: readonly number[],
  groupOf: (i: number) => number,
  ids: (i: number) => readonly number[],
  fits: (rollouts: readonly number[], nodes: number) => boolean,
): TreeUnit[] {
  const byGroup = new Map<number, number[]>();
  for (const i of idx) byGroup.set(groupOf(i), [...(byGroup.get(groupOf(i)) ?? []), i]);
  const units: TreeUnit[] = [];
  for (const members of byGroup.values()) {
    let unit: number[] = [];
    let trie = new Trie();
    for (const i of members) {
      if (unit.length > 0 && !fits([...unit, i], trie.size + trie.added(ids(i)))) {
        units.push({ rollouts: unit, nodes: trie.size });
        unit = [];
        trie = new Trie();
      }
      unit.push(i);
      trie.insert(ids(i));
    }
    units.push({ rollouts: unit, nodes: trie.size });
  }
  return units;
}
