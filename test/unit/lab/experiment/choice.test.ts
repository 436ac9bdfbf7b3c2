// The dev search's choice rule: per arm, the highest mean EM over seeds after the last iteration, among points
// every seed finished; a tie goes to the smaller learning rate; an unfinished point is never chosen.
import { describe, expect, it } from 'vitest';
import type { SeedResult } from '../../../../src/lab/experiment/aggregate.ts';
import { chooseSettings, unfinished, type SearchRun } from '../../../../src/lab/experiment/choice.ts';

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

  it('is finished only when every arm has every point on every seed (no choice from part of a grid)', () => {
    const grid = { arms: ['drzero', 'piplay'], points: 2, seeds: [11, 12] };
    const a = { lr: '5e-5', lambda: '0.1' };
    const b = { lr: '1e-4', lambda: '0.1' };
    const z = { lr: '5e-5', beta: '0' };
    const y = { lr: '1e-4', beta: '0' };
    const runs = [run('piplay', 11, a, [0.4, 0.5]), run('piplay', 12, a, [0.4, 0.3])];
    // One piplay point on both seeds: it is complete and would be chosen, but the search is not finished.
    expect(chooseSettings(runs, grid.arms)[0]!.chosen).toEqual(a);
    expect(unfinished(chooseSettings(runs, grid.arms), grid)).toBe(
      'the search is not finished (drzero 0 of 4 runs, piplay 2 of 4 runs)',
    );
    runs.push(run('piplay', 11, b, [0.4, 0.5]), run('piplay', 12, b, [0.4])); // b's seed 12 stopped early
    for (const p of [z, y]) runs.push(run('drzero', 11, p, [0.3, 0.2]), run('drzero', 12, p, [0.3, 0.2]));
    expect(unfinished(chooseSettings(runs, grid.arms), grid)).toBe('the search is not finished (piplay 3 of 4 runs)');
    const whole = runs.filter((r) => r.result.evals.length === 2).concat(run('piplay', 12, b, [0.4, 0.6]));
    expect(unfinished(chooseSettings(whole, grid.arms), grid)).toBeNull();
  });
});
