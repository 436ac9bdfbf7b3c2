// Paired comparisons on the same questions: the difference is the mean of per-question differences of the share
// of seeds right; the bootstrap interval matches the normal approximation on a large set; the base model's one
// seed pairs with every seed of a trained arm; verdicts say "holds" only where the interval excludes 0.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/env/random.ts';
import {
  comparisons,
  pairedInterval,
  perQuestionRows,
  type QuestionRow,
} from '../../../../src/lab/experiment/paired.ts';
import { verdictOf } from '../../../../src/lab/experiment/bootstrap.ts';
import type { SeedResult } from '../../../../src/lab/experiment/aggregate.ts';

function rows(arm: string, seed: number, iteration: number, correct: (i: number) => boolean, n = 400): QuestionRow[] {
  return Array.from({ length: n }, (_, i) => ({
    arm,
    seed,
    iteration,
    id: `q${i}`,
    hops: (i % 2) + 1,
    correct: correct(i),
  }));
}

describe('paired comparisons', () => {
  it('is the mean of per-question differences, with an interval as wide as the normal approximation', () => {
    const rng = new Rng('paired-test');
    const base = rows('base', 1, -1, () => rng.next() < 0.4);
    const flips = Array.from({ length: 400 }, () => rng.next());
    // The trained arm answers what the base did, plus 10% of the questions, minus 4%.
    const trained = [1, 2, 3].flatMap((s) =>
      rows('piplay', s, 1, (i) => (base[i]!.correct ? flips[i]! > 0.04 : flips[i]! < 0.1 + 0.01 * s)),
    );
    const all = [...base, ...trained];
    const i = pairedInterval(all, { arm: 'piplay', iteration: 1 }, { arm: 'base', iteration: -1 })!;
    // Direct: per question, share of seeds right minus base.
    const d = base.map(
      (b, q) => [1, 2, 3].filter((s) => trained[(s - 1) * 400 + q]!.correct).length / 3 - Number(b.correct),
    );
    const mean = d.reduce((s, x) => s + x, 0) / d.length;
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / (d.length - 1));
    expect(i.diff).toBeCloseTo(mean, 12);
    expect(i.questions).toBe(400);
    const half = (1.96 * sd) / Math.sqrt(400);
    expect((i.hi - i.lo) / 2).toBeGreaterThan(0.9 * half);
    expect((i.hi - i.lo) / 2).toBeLessThan(1.1 * half);
    expect(i.lo).toBeLessThan(i.diff);
    expect(i.hi).toBeGreaterThan(i.diff);
    // The base's one seed pairs with each trained seed.
    expect(i.perSeed.map((p) => p.seed)).toEqual([1, 2, 3]);
    for (const p of i.perSeed) {
      const direct =
        base.reduce((s, b, q) => s + Number(trained[(p.seed - 1) * 400 + q]!.correct) - Number(b.correct), 0) / 400;
      expect(p.diff).toBeCloseTo(direct, 12);
    }
    expect(verdictOf(i)).toBe('holds');
    // Per hop: only the questions of that hop count.
    const one = pairedInterval(all, { arm: 'piplay', iteration: 1 }, { arm: 'base', iteration: -1 }, 1)!;
    expect(one.questions).toBe(200);
  });

  it('says "not shown" when the interval holds 0 and "does not hold" when it lies below', () => {
    const same = [...rows('a', 1, 0, (i) => i % 3 === 0), ...rows('b', 1, 0, (i) => i % 3 === 0)];
    const i = pairedInterval(same, { arm: 'a', iteration: 0 }, { arm: 'b', iteration: 0 })!;
    expect(i.diff).toBe(0);
    expect(verdictOf(i)).toBe('not shown (the interval holds 0)');
    const worse = [...rows('a', 1, 0, () => false), ...rows('b', 1, 0, (i) => i % 2 === 0)];
    expect(verdictOf(pairedInterval(worse, { arm: 'a', iteration: 0 }, { arm: 'b', iteration: 0 }))).toBe(
      'does not hold',
    );
    expect(verdictOf(pairedInterval(worse, { arm: 'a', iteration: 0 }, { arm: 'c', iteration: 0 }))).toBe('n/a');
  });

  it('pairs trained arms seed by seed: only the base model stands beside every seed', () => {
    // π-Play has finished seed 1 only; Dr. Zero seeds 1 and 2 (a report written while an experiment runs).
    const r = [
      ...rows('piplay', 1, 0, (i) => i % 2 === 0),
      ...rows('drzero', 1, 0, (i) => i % 4 === 0),
      ...rows('drzero', 2, 0, () => true),
    ];
    const i = pairedInterval(r, { arm: 'piplay', iteration: 0 }, { arm: 'drzero', iteration: 0 })!;
    expect(i.seeds).toBe(1);
    expect(i.perSeed).toEqual([{ seed: 1, diff: 0.25 }]);
    expect(i.diff).toBe(0.25);
    expect(pairedInterval(r, { arm: 'drzero', iteration: 0 }, { arm: 'piplay', iteration: 0 })!.perSeed).toEqual([
      { seed: 1, diff: -0.25 },
    ]);
  });

  it("reads the runs' per-question outcomes and compares every arm with the base and the arms with each other", () => {
    const evalOf = (iteration: number, ok: (i: number) => boolean) => ({
      iteration,
      em: 0,
      emByHop: {},
      searchesPerRollout: 0,
      redundancy: 0,
      n: 4,
      outcomes: [0, 1, 2, 3].map((i) => ({ id: `q${i}`, hops: i < 2 ? 1 : 2, correct: ok(i), answer: '' })),
    });
    const result = (arm: string, seed: number, evals: ReturnType<typeof evalOf>[]): SeedResult => ({
      arm,
      seed,
      trained: arm !== 'base',
      iterations: 2,
      evals,
      drift: [],
      generation: [],
      seconds: 0,
    });
    const results = [
      result('base', 1, [evalOf(-1, (i) => i === 0)]),
      result('drzero', 1, [evalOf(0, () => false), evalOf(1, (i) => i < 2)]),
      result('piplay', 1, [evalOf(0, () => false), evalOf(1, () => true)]),
    ];
    const r = perQuestionRows(results);
    expect(r).toHaveLength(4 * 5);
    expect(r[0]).toEqual({ arm: 'base', seed: 1, iteration: -1, id: 'q0', hops: 1, correct: true });
    const cs = comparisons(r, 1, 200);
    expect(cs.map((c) => c.name)).toEqual([
      'drzero − base',
      'piplay − base',
      'piplay − drzero',
      'piplay it 1 − drzero it 2',
    ]);
    // Data efficiency: π-Play after iteration 1 (all wrong) against Dr. Zero after iteration 2 (q0, q1 right).
    expect(cs[3]!.all!.diff).toBe(-0.5);
    expect(cs[1]!.all!.diff).toBe(0.75);
    expect(cs[2]!.byHop['1']!.diff).toBe(0);
    expect(cs[2]!.byHop['2']!.diff).toBe(1);
    expect(cs[2]!.multiHop!.diff).toBe(1);
  });
});
