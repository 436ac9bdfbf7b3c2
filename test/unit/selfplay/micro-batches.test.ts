// Micro-batches packed by size: every rollout in one pass, longest first, no pass past a bound that one
// rollout alone does not already pass, padding within PAD_SLACK, and passes as full as the bounds allow.
import { describe, expect, it } from 'vitest';
import {
  packMicroBatches,
  perRolloutBound,
  rolloutMeasures,
  treeUnits,
  type PassMeasure,
} from '../../../src/selfplay/micro-batches.ts';

const lengths = [300, 120, 900, 250, 80, 610, 400, 95];
const policy = [40, 30, 120, 60, 20, 90, 100, 10];
const idx = lengths.map((_, i) => i);
const measures = (lengthBound: number, policyBound: number): PassMeasure[] => [
  { of: (i) => lengths[i]!, perRollout: lengthBound, kind: 'padded' },
  { of: (i) => policy[i]!, perRollout: policyBound, kind: 'summed' },
];

describe('packMicroBatches', () => {
  it('keeps every pass within micro-batch x each bound, longest first, each rollout once', () => {
    for (const micro of [1, 2, 3]) {
      const passes = packMicroBatches(idx, micro, measures(1000, 150));
      expect(passes.flat().sort((a, b) => a - b)).toEqual(idx);
      expect(passes.flat()).toEqual([...idx].sort((a, b) => lengths[b]! - lengths[a]!));
      for (const p of passes) {
        expect(p.length * Math.max(...p.map((i) => lengths[i]!))).toBeLessThanOrEqual(micro * 1000);
        expect(p.reduce((s, i) => s + policy[i]!, 0)).toBeLessThanOrEqual(micro * 150);
      }
    }
    // Micro-batch 1 under bounds of 1000 tokens and 150 policy tokens: 900 alone; 610 + 400 pass 1000 padded
    // (2 x 610); 400 + 300 pads 100 of 700 (over PAD_SLACK, 1/8); 300 + 250 pads 50 of 550, and + 120 would pad
    // 230; 120 + 95 pads 25 of 215, and + 80 would pad 65; 80 alone.
    expect(packMicroBatches(idx, 1, measures(1000, 150))).toEqual([[2], [5], [6], [0, 3], [1, 7], [4]]);
    // Rollouts of one length share passes up to the bounds: 4 x 250 and 150 policy tokens (3 x 40 + 40 > 150).
    const same = Array.from({ length: 6 }, (_, i) => i);
    const even: PassMeasure[] = [
      { of: () => 250, perRollout: 1000, kind: 'padded' },
      { of: () => 40, perRollout: 150, kind: 'summed' },
    ];
    expect(packMicroBatches(same, 1, even)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
  });

  it('gives a rollout past a bound its own pass, and the whole minibatch one pass at micro-batch 0', () => {
    expect(packMicroBatches(idx, 1, measures(50, 5))).toEqual([[2], [5], [6], [0], [3], [1], [7], [4]]);
    expect(packMicroBatches(idx, 0, measures(50, 5))).toEqual([idx]);
    expect(packMicroBatches([], 1, measures(50, 5))).toEqual([]);
  });

  it('bounds a rollout by its budget, or by the largest actual rollout where that is larger', () => {
    expect(perRolloutBound(idx, (i) => lengths[i]!, 2400)).toBe(2400);
    expect(perRolloutBound(idx, (i) => lengths[i]!, 500)).toBe(900);
  });

  it('measures rollouts by padded length within the longest prompt plus the response, policy tokens summed', () => {
    const rollouts = [
      { ids: [1, 2, 3, 4, 5, 6], mask: [0, 0, 0, 1, 1, 0], promptLength: 3 },
      { ids: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], mask: [0, 0, 1, 1, 1, 1, 0, 0, 1, 1], promptLength: 2 },
    ];
    const [length, policy] = rolloutMeasures([0, 1], (i) => rollouts[i]!, 4, 3);
    expect([length!.kind, length!.of(0), length!.of(1), length!.perRollout]).toEqual(['padded', 6, 10, 10]);
    expect([policy!.kind, policy!.of(0), policy!.of(1), policy!.perRollout]).toEqual(['summed', 2, 6, 6]);
    const [wide, enough] = rolloutMeasures([0], (i) => rollouts[i]!, 20, 8);
    expect([wide!.perRollout, enough!.perRollout]).toEqual([23, 8]);
  });

  it("makes a prefix tree of each question's rollouts while it fits a pass, and a new one where it would not", () => {
    // Questions of 3 rollouts (i / 3), each of 6 tokens: a 4-token prompt the question's rollouts share, then two
    // more, of which the second and third rollout of a question share the first.
    const ids = (i: number) => [100 + Math.floor(i / 3), 1, 2, 3, ...(i % 3 === 0 ? [7, 7] : [8, 9 + i])];
    const idx = [0, 4, 1, 2, 5, 3];
    const sizes: [number[], number][] = [];
    const units = treeUnits(
      idx,
      (i) => Math.floor(i / 3),
      ids,
      (rs, nodes) => {
        sizes.push([[...rs], nodes]);
        return nodes <= 8;
      },
    );
    // Question 0: 0 (6 nodes), + 1 (8: the prompt shared), + 2 (9: one more shared with 1): 2 starts a tree.
    // Question 1, in the order of idx: 4 (6), + 5 (7), + 3 (9): 3 starts a tree.
    expect(units).toEqual([
      { rollouts: [0, 1], nodes: 8 },
      { rollouts: [2], nodes: 6 },
      { rollouts: [4, 5], nodes: 7 },
      { rollouts: [3], nodes: 6 },
    ]);
    expect(sizes.slice(0, 2)).toEqual([
      [[0, 1], 8],
      [[0, 1, 2], 9],
    ]);
    expect(sizes.slice(2)).toEqual([
      [[4, 5], 7],
      [[4, 5, 3], 9],
    ]);
  });
});
