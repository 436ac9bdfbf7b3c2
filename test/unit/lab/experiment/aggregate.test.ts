// Aggregation over seeds on hand-built runs: mean and sample standard deviation per arm, per hop, per
// iteration, searches and redundancy, the drift (runs without questions left out), and the claims.
import { describe, expect, it } from 'vitest';
import {
  aggregate,
  claims,
  greater,
  hopsOf,
  multiHopEm,
  signalOf,
  similar,
  stat,
  type SeedResult,
} from '../../../../src/lab/experiment/aggregate.ts';
import type { EvalMetrics, StepMetrics } from '../../../../src/selfplay/events.ts';

function ev(iteration: number, h1: number, h2: number, searches = 1, redundancy = 0): EvalMetrics {
  return {
    iteration,
    em: (h1 + h2) / 2,
    emByHop: { '1': h1, '2': h2 },
    searchesPerRollout: searches,
    redundancy,
    n: 20,
  };
}

function run(
  arm: string,
  seed: number,
  evals: EvalMetrics[],
  drift: [number, number][] = [],
  trained = true,
): SeedResult {
  return {
    arm,
    seed,
    trained,
    iterations: 2,
    evals,
    drift: drift.map(([n, em], iteration) => ({ iteration, n, em, emByHop: {} })),
    generation: trained
      ? [0, 1].map((iteration) => ({
          iteration,
          questions: 8,
          validShare: 0.5 + 0.1 * seed,
          fallbackShare: 0.25 * iteration,
        }))
      : [],
    ...(trained
      ? {
          signal: [0, 1].map((iteration) => ({
            iteration,
            rightShare: 0.5,
            solvableShare: 0.1 * seed,
            studentReward: 0.2 * iteration,
            distill: arm === 'drzero' ? 0 : 0.3,
          })),
        }
      : {}),
    seconds: 10 * seed,
  };
}

const results: SeedResult[] = [
  run('base', 1, [ev(-1, 0.2, 0.0)], [], false),
  run('base', 2, [ev(-1, 0.2, 0.0)], [], false),
  run(
    'drzero',
    1,
    [ev(0, 0.2, 0.0, 2, 0.5), ev(1, 0.3, 0.1, 2, 0.5)],
    [
      [10, 0.4],
      [10, 0.3],
    ],
  ),
  run(
    'drzero',
    2,
    [ev(0, 0.3, 0.1, 3, 0.25), ev(1, 0.4, 0.1, 3, 0.25)],
    [
      [0, 0],
      [8, 0.25],
    ],
  ),
  run(
    'piplay',
    1,
    [ev(0, 0.4, 0.2, 1, 0), ev(1, 0.6, 0.4, 1, 0)],
    [
      [10, 0.5],
      [10, 0.2],
    ],
  ),
  run(
    'piplay',
    2,
    [ev(0, 0.4, 0.2, 1, 0), ev(1, 0.5, 0.3, 2, 0.1)],
    [
      [10, 0.3],
      [10, 0.2],
    ],
  ),
  run(
    'piplay',
    3,
    [ev(0, 0.5, 0.2, 1, 0), ev(1, 0.7, 0.5, 1, 0.2)],
    [
      [10, 0.4],
      [10, 0.2],
    ],
  ),
];

describe('experiment aggregation', () => {
  it('stat: mean and sample standard deviation (n - 1), 0 for one value, null for none', () => {
    const s = stat([0.1, 0.2, 0.6])!;
    expect(s.mean).toBeCloseTo(0.3, 12);
    expect(s.std).toBeCloseTo(Math.sqrt((0.04 + 0.01 + 0.09) / 2), 12);
    expect(s.n).toBe(3);
    expect(stat([0.7])).toEqual({ mean: 0.7, std: 0, n: 1 });
    expect(stat([])).toBeNull();
  });

  it('per arm: the final evaluation per hop, multi-hop, searches and redundancy over seeds', () => {
    const [base, dz, pi] = aggregate(results, ['base', 'drzero', 'piplay', 'gt'], 2);
    expect(aggregate(results, ['base', 'drzero', 'piplay', 'gt'], 2)).toHaveLength(3);
    expect(hopsOf(results)).toEqual(['1', '2']);
    expect(pi!.seeds).toEqual([1, 2, 3]);
    // π-Play after iteration 2: hop 1 = 0.6, 0.5, 0.7; hop 2 = 0.4, 0.3, 0.5; EM = 0.5, 0.4, 0.6.
    expect(pi!.final.em!.mean).toBeCloseTo(0.5, 12);
    expect(pi!.final.em!.std).toBeCloseTo(0.1, 12);
    expect(pi!.final.byHop['1']!.mean).toBeCloseTo(0.6, 12);
    expect(pi!.final.byHop['2']!.mean).toBeCloseTo(0.4, 12);
    expect(pi!.final.multiHop!.mean).toBeCloseTo(0.4, 12);
    expect(pi!.final.searches!.mean).toBeCloseTo(4 / 3, 12);
    expect(pi!.final.searches!.std).toBeCloseTo(Math.sqrt(((1 / 3) ** 2 * 2 + (2 / 3) ** 2) / 2), 12);
    expect(pi!.final.redundancy!.mean).toBeCloseTo(0.1, 12);
    // After iteration 1.
    expect(pi!.byIteration[0]!.em!.mean).toBeCloseTo((0.3 + 0.3 + 0.35) / 3, 12);
    expect(pi!.start.em).toBeNull();
    // Dr. Zero: EM 0.2, 0.25.
    expect(dz!.final.em!.mean).toBeCloseTo(0.225, 12);
    expect(dz!.final.em!.std).toBeCloseTo(Math.sqrt(2 * 0.025 ** 2), 12);
    // The base arm: one evaluation, repeated at every iteration (a fixed model), no drift.
    expect(base!.trained).toBe(false);
    expect(base!.final.em).toEqual({ mean: 0.1, std: 0, n: 2 });
    expect(base!.byIteration.map((e) => e.em!.mean)).toEqual([0.1, 0.1]);
    expect(base!.drift.every((d) => d.em === null)).toBe(true);
    expect(base!.fallback).toEqual([null, null]);
  });

  it('drift: mean over seeds that had questions; question counts summed; generation shares', () => {
    const [, dz, pi] = aggregate(results, ['base', 'drzero', 'piplay'], 2);
    expect(pi!.drift[0]!.em!.mean).toBeCloseTo(0.4, 12);
    expect(pi!.drift[0]!.em!.std).toBeCloseTo(0.1, 12);
    expect(pi!.drift[0]!.questions).toBe(30);
    expect(pi!.drift[1]!.em).toEqual({ mean: 0.2, std: 0, n: 3 });
    // Seed 2 of Dr. Zero wrote no valid question in iteration 1: left out, not counted as EM 0.
    expect(dz!.drift[0]!.em).toEqual({ mean: 0.4, std: 0, n: 1 });
    expect(dz!.drift[0]!.questions).toBe(10);
    expect(dz!.drift[1]!.em!.mean).toBeCloseTo(0.275, 12);
    expect(dz!.fallback.map((s) => s!.mean)).toEqual([0, 0.25]);
    expect(dz!.validShare[0]!.mean).toBeCloseTo(0.65, 12);
    expect(dz!.seconds!.mean).toBe(15);
  });

  it('training signal: per iteration over seeds; none for the base arm', () => {
    const [base, dz, pi] = aggregate(results, ['base', 'drzero', 'piplay'], 2);
    expect(base!.signal.map((g) => g.studentReward)).toEqual([null, null]);
    expect(dz!.signal[0]!.solvableShare!.mean).toBeCloseTo(0.15, 12);
    expect(dz!.signal[0]!.rightShare).toEqual({ mean: 0.5, std: 0, n: 2 });
    expect(base!.signal[0]!.rightShare).toBeNull();
    expect(dz!.signal[1]!.studentReward).toEqual({ mean: 0.2, std: 0, n: 2 });
    expect(dz!.signal[0]!.distill).toEqual({ mean: 0, std: 0, n: 2 });
    expect(pi!.signal[0]!.distill).toEqual({ mean: 0.3, std: 0, n: 3 });
    // A run without a stored signal (an older result.json) is left out, not counted as 0.
    const older = results.map((r) => (r.arm === 'piplay' && r.seed === 3 ? { ...r, signal: undefined } : r));
    expect(aggregate(older, ['piplay'], 2)[0]!.signal[0]!.solvableShare!.n).toBe(2);
  });

  it("signalOf: the examiner steps' solvable share and the student steps' reward and D, per iteration", () => {
    const m = (stage: string, iteration: number, x: Record<string, number>): StepMetrics =>
      ({ stage, iteration, step: 0, ...x }) as StepMetrics;
    const metrics = [
      m('examiner', 0, { solvable_share: 0.5, right_share: 0.1 }),
      m('examiner', 0, { solvable_share: 0.25, right_share: 0.3 }),
      m('generate', 0, { valid_share: 0.9 }),
      m('student', 0, { reward: 0.2, distill: 0.4, learnable_share: 0.5 }),
      m('student', 0, { reward: 0.4, distill: 0.2, learnable_share: 1 }),
      m('eval', 0, { reward: 1 }),
      m('student', 1, { reward: 0, distill: 0.1 }),
    ];
    const got = signalOf(metrics, 2);
    expect(got[0]!.iteration).toBe(0);
    expect(got[0]!.solvableShare).toBeCloseTo(0.375, 12);
    expect(got[0]!.rightShare).toBeCloseTo(0.2, 12);
    expect(got[0]!.learnableShare).toBeCloseTo(0.75, 12);
    expect(got[0]!.studentReward).toBeCloseTo(0.3, 12);
    expect(got[0]!.distill).toBeCloseTo(0.3, 12);
    // Not logged (no examiner steps, a corpus without a world, an older run): none, rather than 0.
    expect(got[1]).toEqual({ iteration: 1, studentReward: 0, distill: 0.1 });
  });

  it('missing final evaluations and errors: the seed drops out of the final numbers and is listed', () => {
    const broken: SeedResult = { ...run('gt', 4, [ev(0, 1, 1)]), error: 'the loss is NaN' };
    const [gt] = aggregate([...results, broken, run('gt', 5, [ev(0, 0, 0), ev(1, 0.5, 0.5)])], ['gt'], 2);
    expect(gt!.final.em).toEqual({ mean: 0.5, std: 0, n: 1 });
    expect(gt!.byIteration[0]!.em!.n).toBe(2);
    expect(gt!.errors).toEqual([{ seed: 4, error: 'the loss is NaN' }]);
  });

  it('multi-hop EM: the mean of the hops >= 2', () => {
    expect(multiHopEm({ ...ev(0, 1, 0), emByHop: { '1': 1, '2': 0.5, '3': 0.25, '4': 0 } })).toBeCloseTo(0.25, 12);
    expect(multiHopEm({ ...ev(0, 1, 0), emByHop: { '1': 1 } })).toBeNull();
  });

  it('verdicts: beyond the larger std, within it, opposite, equal, one seed', () => {
    const s = (mean: number, std: number, n = 3) => ({ mean, std, n });
    expect(greater(s(0.5, 0.1), s(0.3, 0.1))).toBe('holds');
    expect(greater(s(0.35, 0.1), s(0.3, 0.02))).toBe('holds on the means, within seed noise');
    expect(greater(s(0.1, 0.01), s(0.3, 0.05))).toBe('does not hold');
    expect(greater(s(0.28, 0.05), s(0.3, 0.05))).toBe('does not hold, within seed noise');
    expect(greater(s(0.3, 0), s(0.3, 0))).toBe('no difference');
    expect(greater(s(0.5, 0, 1), s(0.3, 0, 1))).toBe('holds (one seed: no noise estimate)');
    expect(greater(null, s(0.3, 0))).toBe('n/a');
    expect(similar(s(0.3, 0.05), s(0.32, 0.01))).toBe('holds');
    expect(similar(s(0.3, 0.01), s(0.5, 0.01))).toBe('does not hold');
  });

  it('claims: from the arms present', () => {
    const cs = claims(aggregate(results, ['base', 'drzero', 'piplay'], 2));
    const c = (start: string) => cs.find((x) => x.claim.startsWith(start))!;
    expect(c('π-Play > Dr. Zero at equal steps')).toMatchObject({
      numbers: 'π-Play 50.0% vs Dr. Zero 22.5%',
      verdict: 'holds',
    });
    expect(c('π-Play > Dr. Zero on multi-hop').verdict).toBe('holds');
    expect(c("the π-Play examiner's questions get harder")).toMatchObject({
      numbers: 'iteration 1 40.0% vs iteration 2 20.0%',
      verdict: 'holds',
    });
    // Searches: Dr. Zero 2, 3 (mean 2.5, std 0.71) vs π-Play 1, 2, 1 (mean 1.33): a difference of 1.17.
    expect(c('π-Play searches less')).toMatchObject({ numbers: 'π-Play 1.33 vs Dr. Zero 2.50', verdict: 'holds' });
    // Redundancy: Dr. Zero 0.5, 0.25 (std 0.18) vs π-Play 0, 0.1, 0.2: a difference of 0.275.
    expect(c('π-Play repeats fewer')).toMatchObject({ numbers: 'π-Play 0.10 vs Dr. Zero 0.38', verdict: 'holds' });
    expect(cs.some((x) => x.claim.startsWith('full QCP'))).toBe(false);
  });
});
