// Aggregation over seeds on hand-built runs: mean and sample standard deviation per arm, per hop, per
// iteration, searches and redundancy, the drift (runs without questions left out), and the claims.
import { describe, expect, it } from 'vitest';
import {
  aggregate,
  codeVersions,
  driftClaims,
  hopsOf,
  multiHopEm,
  signalOf,
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

  it('drift claims: the two-level interval of iteration 1 − the last, per arm, from per-question outcomes', () => {
    const drift = (it: number, ok: number, n = 40) => ({
      iteration: it,
      n,
      em: ok / n,
      emByHop: {},
      outcomes: Array.from({ length: n }, (_, i) => i < ok),
    });
    const harder = (seed: number) => ({
      ...run('piplay', seed, [ev(0, 0, 0), ev(1, 0, 0)]),
      drift: [drift(0, 30), drift(1, 10)],
    });
    const cs = driftClaims([harder(1), harder(2), harder(3)], 500);
    expect(cs).toHaveLength(1);
    expect(cs[0]!.claim).toMatch(/π-Play examiner's questions get harder .* iteration 1 to 2/);
    expect(cs[0]!.numbers).toMatch(/^iteration 1 − iteration 2: \+50\.0 \[\+\d+\.\d, \+\d+\.\d\] points \(3 seeds;/);
    expect(cs[0]!.verdict).toBe('holds');
    // Older result.json files have no drift outcomes: no claim rather than one on the means.
    expect(driftClaims(results)).toEqual([]);
  });

  it('lists the code versions that made the runs, a resumed run under both', () => {
    const v = (commit: string, dirty = false) => ({ commit, dirty });
    const rs = [
      { ...run('piplay', 1, []), code: v('a'.repeat(40)) },
      { ...run('piplay', 2, []), code: v('b'.repeat(40)), codeAtStart: v('a'.repeat(40)) },
      { ...run('base', 1, []), code: v('b'.repeat(40), true) },
      run('drzero', 1, []),
    ];
    expect(codeVersions(rs)).toEqual([
      { code: 'aaaaaaaaaaaa', runs: ['piplay-seed1', 'piplay-seed2'] },
      { code: 'bbbbbbbbbbbb', runs: ['piplay-seed2'] },
      { code: 'bbbbbbbbbbbb (dirty)', runs: ['base-seed1'] },
      { code: 'unknown', runs: ['drzero-seed1'] },
    ]);
  });
});
