// The dev search's choice rule: per arm, the highest mean EM over seeds after the last iteration, among points
// every seed finished; a tie goes to the smaller learning rate; an unfinished point is never chosen.
import { describe, expect, it } from 'vitest';
import type { SeedResult } from '../../../../src/lab/experiment/aggregate.ts';
import { chooseSettings, type SearchRun } from '../../../../src/lab/experiment/choice.ts';

function run(arm: string, seed: number, point: Record<string, string>, ems: number[]): SearchRun {
  const result: SeedResult = {
    arm,
    seed,
    trained: true,
    iterations: 2,
    evals: ems.map((em, iteration) => ({ iteration, em, emByHop: {}, searchesPerRollout: 0, redundancy: 0, n: 10 })),
    drift: [],
    generation: [],
    seconds: 0,
  };
  return { arm, seed, point, result };
}

describe('dev search choice', () => {
  it('picks the highest mean after the last iteration among complete points; ties to the smaller lr', () => {
    const a = { lr: '1e-4', lambda: '0.1' };
    const b = { lr: '5e-5', lambda: '0.1' };
    const c = { lr: '2e-4', lambda: '0.3' };
    const runs = [
      run('piplay', 11, a, [0.4, 0.5]),
      run('piplay', 12, a, [0.4, 0.3]),
      // b: the same mean as a (0.4), a smaller lr.
      run('piplay', 11, b, [0.9, 0.45]),
      run('piplay', 12, b, [0.1, 0.35]),
      // c: the best seed, but its second seed never finished its last iteration.
      run('piplay', 11, c, [0.5, 0.9]),
      run('piplay', 12, c, [0.5]),
      run('drzero', 11, { lr: '1e-4', beta: '0' }, [0.3, 0.2]),
    ];
    const [dz, pi] = chooseSettings(runs, ['drzero', 'piplay', 'gt']);
    expect(pi!.chosen).toEqual(b);
    expect(pi!.points.map((p) => p.point.lr)).toEqual(['5e-5', '1e-4', '2e-4']);
    expect(pi!.points[1]!.mean).toBeCloseTo(0.4, 12);
    expect(pi!.points[1]!.byIteration).toEqual([0.4, 0.4]);
    expect(pi!.points[2]!.complete).toBe(false);
    expect(pi!.points[2]!.final).toEqual([{ seed: 11, em: 0.9 }]);
    // Dr. Zero ran one seed of the two: no complete point, no choice.
    expect(dz!.chosen).toBeNull();
  });
});
