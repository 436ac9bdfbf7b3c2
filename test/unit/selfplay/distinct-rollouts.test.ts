// distinctRollouts (src/selfplay/student.ts): the student's update passes each distinct rollout once and weights
// its tokens by its copies (test/unit/rl/losses.gpu.test.ts holds that weighting equal to passing every copy).
import { describe, expect, it } from 'vitest';
import type { Rollout } from '../../../src/rl/rollout.ts';
import { distinctRollouts } from '../../../src/selfplay/student.ts';

const rollout = (ids: number[], logprobs = ids.map((i) => -i / 10), mask = ids.map(() => 1)) =>
  ({ ids, mask, logprobs }) as unknown as Rollout;

describe('distinctRollouts', () => {
  it('merges rollouts of one question with the same ids, mask and log-probs, keeping the first of each', () => {
    const col = {
      rollouts: [
        rollout([1, 2, 3]),
        rollout([1, 2, 4]),
        rollout([1, 2, 3]),
        rollout([1, 2, 3]), // another question's
        rollout([1, 2, 3], [-0.1, -0.2, -0.31]), // other log-probs
        rollout([1, 2, 3], undefined, [1, 0, 1]), // another mask
        rollout([1, 2, 3]),
      ],
      groups: [0, 0, 0, 1, 0, 0, 0],
      advantages: [0.5, -0.5, 0.5, 0.2, 0.5, 0.5, 0.5],
    };
    const { distinct, copies } = distinctRollouts(col, [6, 0, 1, 2, 3, 4, 5]);
    expect(distinct).toEqual([6, 1, 3, 4, 5]);
    expect(distinct.map((i) => copies.get(i))).toEqual([3, 1, 1, 1, 1]);
    // Only the rollouts asked for count.
    expect(distinctRollouts(col, [0, 1]).distinct).toEqual([0, 1]);
  });
});
