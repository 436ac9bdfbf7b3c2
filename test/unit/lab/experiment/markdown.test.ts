// results.md on hand-built runs: one row per arm in the final table with mean ± std over seeds, the
// per-iteration, drift and training-set tables, the claims, and cells that keep the table intact.
import { comparisons } from '../../../../src/lab/experiment/paired.ts';
import { describe, expect, it } from 'vitest';
import { aggregate, type SeedResult } from '../../../../src/lab/experiment/aggregate.ts';
import {
  formatNum,
  formatPct,
  probeTable,
  renderResults,
  table,
  type ResultsMeta,
} from '../../../../src/lab/experiment/markdown.ts';
import type { EvalMetrics } from '../../../../src/selfplay/events.ts';
import type { ProbeResult, ProbeRow } from '../../../../src/lab/probe.ts';
import { markdownTable } from '../../../helpers/markdown-table.ts';

function ev(iteration: number, byHop: number[], searches = 1, redundancy = 0): EvalMetrics {
  const emByHop: Record<string, number> = {};
  byHop.forEach((v, i) => (emByHop[String(i + 1)] = v));
  return {
    iteration,
    em: byHop.reduce((a, b) => a + b, 0) / byHop.length,
    emByHop,
    searchesPerRollout: searches,
    redundancy,
    n: 40,
  };
}

function res(arm: string, seed: number, evals: EvalMetrics[], drift: [number, number][] = []): SeedResult {
  const trained = arm !== 'base';
  return {
    arm,
    seed,
    trained,
    iterations: 2,
    evals,
    drift: drift.map(([n, em], iteration) => ({ iteration, n, em, emByHop: {} })),
    generation: trained
      ? [
          { iteration: 0, questions: 8, validShare: 0.25, fallbackShare: 0.75 },
          { iteration: 1, questions: 8, validShare: 0.5, fallbackShare: 0.5 },
        ]
      : [],
    ...(trained
      ? {
          signal: [0, 1].map((iteration) => ({
            iteration,
            ...(arm === 'drzero' ? {} : { rightShare: 0.5, learnableShare: 0.25 }),
            solvableShare: 0.125 * seed,
            studentReward: 0.5 * iteration,
            distill: arm === 'drzero' ? 0 : 0.25,
          })),
        }
      : {}),
    seconds: 60,
  };
}

const results: SeedResult[] = [
  res('base', 1, [ev(-1, [0.1, 0, 0, 0])]),
  res('base', 2, [ev(-1, [0.1, 0, 0, 0])]),
  res(
    'drzero',
    1,
    [ev(0, [0.2, 0, 0, 0]), ev(1, [0.3, 0.1, 0, 0], 1.5, 0.2)],
    [
      [6, 0.5],
      [4, 0.25],
    ],
  ),
  res(
    'drzero',
    2,
    [ev(0, [0.2, 0.1, 0, 0]), ev(1, [0.5, 0.1, 0.1, 0], 2.5, 0.4)],
    [
      [6, 0.5],
      [0, 0],
    ],
  ),
  res(
    'piplay',
    1,
    [ev(0, [0.3, 0.1, 0, 0]), ev(1, [0.6, 0.3, 0.1, 0], 1, 0)],
    [
      [8, 0.625],
      [8, 0.375],
    ],
  ),
  res(
    'piplay',
    2,
    [ev(0, [0.4, 0.1, 0, 0]), ev(1, [0.8, 0.3, 0.3, 0.2], 1, 0.1)],
    [
      [8, 0.5],
      [8, 0.25],
    ],
  ),
];

const meta: ResultsMeta = {
  preset: 'demo',
  model: 'public/models/piplay-tiny',
  corpus: 'the fictional world (seed 1, 400 passages, BM25 top 3)',
  heldOut: '40 questions (10 × 1-hop, 10 × 2-hop, 10 × 3-hop, 10 × 4-hop)',
  iterations: 2,
  examinerSteps: 8,
  studentSteps: 8,
  seeds: [1, 2],
  arms: ['base', 'drzero', 'piplay'],
  settings: ['--iterations 2'],
  planned: 6,
  finished: 6,
  startFromBase: true,
};

describe('results.md', () => {
  it('formats mean ± std in percent, one seed as the mean, none as a dash', () => {
    expect(formatPct({ mean: 0.125, std: 0.0312, n: 3 })).toBe('12.5 ± 3.1');
    expect(formatPct({ mean: 0.4, std: 0, n: 1 })).toBe('40.0');
    expect(formatPct(null)).toBe('—');
    expect(formatNum({ mean: 1.234, std: 0.5, n: 2 })).toBe('1.23 ± 0.50');
    expect(formatNum({ mean: 61.2, std: 3, n: 2 }, 0)).toBe('61 ± 3');
  });

  it('tables escape | in cells', () => {
    expect(table(['a', 'b'], [['x|y', 'z']])).toBe('| a | b |\n|---|---|\n| x\\|y | z |');
  });

  it('the final table: one row per arm, mean ± std over seeds per hop, multi-hop, searches, redundancy', () => {
    const md = renderResults(meta, aggregate(results, meta.arms, 2));
    const t = markdownTable(md, 'Held-out exact match after iteration 2');
    expect(t.head).toEqual([
      'arm',
      'seeds',
      'EM',
      '1-hop',
      '2-hop',
      '3-hop',
      '4-hop',
      'multi-hop (≥2)',
      'searches / rollout',
      'redundancy',
    ]);
    expect(t.rows.map((r) => r[0])).toEqual(['base model (no training)', 'Dr. Zero (no teacher)', 'π-Play (full QCP)']);
    const [base, dz, pi] = t.rows;
    expect(base).toEqual([
      'base model (no training)',
      '2',
      '2.5 ± 0.0',
      '10.0 ± 0.0',
      '0.0 ± 0.0',
      '0.0 ± 0.0',
      '0.0 ± 0.0',
      '0.0 ± 0.0',
      '1.00 ± 0.00',
      '0.00 ± 0.00',
    ]);
    // Dr. Zero: EM (0.4/4, 0.7/4) = 0.1, 0.175 -> 13.75 ± 5.30; hop 1 0.3, 0.5 -> 40.0 ± 14.1.
    expect(dz).toEqual([
      'Dr. Zero (no teacher)',
      '2',
      '13.8 ± 5.3',
      '40.0 ± 14.1',
      '10.0 ± 0.0',
      '5.0 ± 7.1',
      '0.0 ± 0.0',
      '5.0 ± 2.4',
      '2.00 ± 0.71',
      '0.30 ± 0.14',
    ]);
    // π-Play: EM 0.25, 0.4 -> 32.5 ± 10.6; multi-hop (0.4/3, 0.8/3) -> 20.0 ± 9.4.
    expect(pi).toEqual([
      'π-Play (full QCP)',
      '2',
      '32.5 ± 10.6',
      '70.0 ± 14.1',
      '30.0 ± 0.0',
      '20.0 ± 14.1',
      '10.0 ± 14.1',
      '20.0 ± 9.4',
      '1.00 ± 0.00',
      '0.05 ± 0.07',
    ]);
  });

  it('per iteration (base repeated), drift with question counts, training-set origin, claims, runs', () => {
    const md = renderResults(meta, aggregate(results, meta.arms, 2));
    const it = markdownTable(md, 'Held-out EM after each iteration');
    expect(it.head).toEqual(['arm', 'hops', 'it 1', 'it 2']);
    expect(it.rows).toHaveLength(3 * 5);
    expect(it.rows[0]).toEqual(['base model (no training)', 'all', '2.5 ± 0.0', '2.5 ± 0.0']);
    expect(it.rows.find((r) => r[0] === 'π-Play (full QCP)' && r[1] === '1')).toEqual([
      'π-Play (full QCP)',
      '1',
      '35.0 ± 7.1',
      '70.0 ± 14.1',
    ]);
    const drift = markdownTable(md, "The examiner's difficulty drift");
    expect(drift.rows).toEqual([
      ['Dr. Zero (no teacher)', '50.0 ± 0.0 (12 q)', '25.0 (4 q)'],
      ['π-Play (full QCP)', '56.3 ± 8.8 (16 q)', '31.3 ± 8.8 (16 q)'],
    ]);
    const origin = markdownTable(md, 'Where the training questions came from');
    expect(origin.rows[0]).toEqual([
      'Dr. Zero (no teacher)',
      'valid 25.0 ± 0.0 · fallback 75.0 ± 0.0',
      'valid 50.0 ± 0.0 · fallback 50.0 ± 0.0',
    ]);
    const signal = markdownTable(md, 'What the training had to learn from');
    expect(signal.rows).toEqual([
      [
        'Dr. Zero (no teacher)',
        'solvable 18.8 ± 8.8 · reward 0.0 ± 0.0 · D 0.000 ± 0.000',
        'solvable 18.8 ± 8.8 · reward 50.0 ± 0.0 · D 0.000 ± 0.000',
      ],
      [
        'π-Play (full QCP)',
        'true 50.0 ± 0.0 · solvable 18.8 ± 8.8 · learnable 25.0 ± 0.0 · reward 0.0 ± 0.0 · D 0.250 ± 0.000',
        'true 50.0 ± 0.0 · solvable 18.8 ± 8.8 · learnable 25.0 ± 0.0 · reward 50.0 ± 0.0 · D 0.250 ± 0.000',
      ],
    ]);
    // Without per-question outcomes there is no interval, so no claim is decided (no rule on the means).
    expect(md).not.toContain("The papers' claims");
    const runs = markdownTable(md, 'Runs');
    expect(runs.rows[2]).toEqual(['π-Play (full QCP)', '1, 2', 'runs/piplay-seed1, runs/piplay-seed2', '60 ± 0']);
    expect(md).toContain('`--iterations 2`');
    expect(md).not.toContain("Every arm's held-out EM is 0");
    const zero = results.map((r) => ({ ...r, evals: r.evals.map((e) => ({ ...e, em: 0 })) }));
    expect(renderResults(meta, aggregate(zero, meta.arms, 2))).toContain("Every arm's held-out EM is 0");
    expect(md).not.toContain('Partial results');
    expect(renderResults({ ...meta, finished: 4 }, aggregate(results.slice(0, 4), meta.arms, 2))).toContain(
      'Partial results: 4 of 6 runs finished',
    );
  });

  it('says that every teacher reads the answer with answer-first notes', () => {
    expect(renderResults(meta, aggregate(results, meta.arms, 2))).not.toContain('all three read the answer');
    expect(renderResults({ ...meta, notes: 'answer-first' }, aggregate(results, meta.arms, 2))).toContain(
      "With `--notes answer-first` the full and partial teachers' notes open with the answer, as the GT teacher's do: " +
        'all three read the answer',
    );
  });

  it('with per-question outcomes: the paired table, and EM claims decided by the intervals', () => {
    const rows = [0, 1].flatMap((iteration) =>
      ['drzero', 'piplay'].flatMap((arm) =>
        [1, 2].flatMap((seed) =>
          Array.from({ length: 100 }, (_, i) => ({
            arm,
            seed,
            iteration,
            id: `q${i}`,
            hops: (i % 2) + 1,
            correct: arm === 'piplay' ? i % 10 < 6 : i % 10 < 3,
          })),
        ),
      ),
    );
    const base = Array.from({ length: 100 }, (_, i) => ({
      arm: 'base',
      seed: 1,
      iteration: -1,
      id: `q${i}`,
      hops: (i % 2) + 1,
      correct: i % 10 < 4,
    }));
    const md = renderResults(meta, aggregate(results, meta.arms, 2), comparisons([...base, ...rows], 1, 500));
    const t = markdownTable(md, 'Paired comparisons on the same questions');
    expect(t.head).toEqual([
      'A − B',
      'all (seeds and questions)',
      'all, questions only',
      '1-hop',
      '2-hop',
      'multi-hop (≥2)',
      'per seed',
      'verdict (all)',
    ]);
    expect(t.rows.map((r) => r[0])).toEqual([
      'drzero − base',
      'piplay − base',
      'piplay − drzero',
      'piplay it 1 − drzero it 2',
    ]);
    expect(t.rows[1]![1]).toMatch(/^\+20\.0 \[\+\d+\.\d, \+\d+\.\d\]$/);
    expect(t.rows[1]![2]).toMatch(/^\[\+\d+\.\d, \+\d+\.\d\]$/);
    expect(t.rows[1]![6]).toBe('1: +20.0, 2: +20.0');
    expect(t.rows[0]![7]).toBe('does not hold');
    const claims = markdownTable(md, "The papers' claims at this scale");
    expect(claims.rows[0]![0]).toBe('π-Play (full QCP) > the base model');
    expect(claims.rows[0]![1]).toMatch(/^\+20\.0 \[.*\] points \(2 seeds, 100 questions; questions only \[.*\]\)$/);
    expect(claims.rows[0]![2]).toBe('holds');
    expect(claims.rows.find((r) => r[0] === 'π-Play > Dr. Zero at equal steps (held-out EM)')![2]).toBe('holds');
    const efficiency = claims.rows.find((r) => r[0].includes('data efficiency'))!;
    expect(efficiency[0]).toBe('π-Play after iteration 1 ≈ Dr. Zero after iteration 2 (data efficiency)');
    // A claim of no difference says which side is higher where the interval excludes 0.
    expect(efficiency[2]).toBe('does not hold: the first is higher');
    // The rows carry no search counts (an older log): the search claims have no interval.
    expect(claims.rows.find((r) => r[0].startsWith('π-Play searches less'))!.slice(1)).toEqual(['—', 'n/a']);
  });

  it('a "before" column when trained arms evaluated before training', () => {
    const withStart = results.map((r) =>
      r.arm === 'piplay' ? { ...r, evals: [ev(-1, [0.1, 0, 0, 0]), ...r.evals] } : r,
    );
    const md = renderResults({ ...meta, startFromBase: false }, aggregate(withStart, meta.arms, 2));
    const it = markdownTable(md, 'Held-out EM after each iteration');
    expect(it.head).toEqual(['arm', 'hops', 'before', 'it 1', 'it 2']);
    expect(it.rows.find((r) => r[0] === 'π-Play (full QCP)' && r[1] === 'all')![2]).toBe('2.5 ± 0.0');
    expect(it.rows.find((r) => r[0] === 'Dr. Zero (no teacher)' && r[1] === 'all')![2]).toBe('—');
  });
});

describe('the teacher probe table', () => {
  const row = (prompt: ProbeRow['prompt'], d: number[], full: number): ProbeRow => ({
    prompt,
    em: 0.25,
    searchesPerRollout: 1,
    answeredShare: 1,
    decision: { search: 0.75, answer: 0.25 },
    distill: d[1] ?? 0,
    distillDecision: 0,
    answerGainRight: null,
    answerGainWrong: -0.5,
    distillAnswer: prompt === 'student' ? 0 : 0.5,
    distillAnswerShare: prompt === 'student' ? null : 0.25,
    distillAtK: d,
    klFull: full,
  });
  const r: ProbeResult = {
    questions: 4,
    studentEm: 0.25,
    studentSearches: 1,
    rightAnswers: 1,
    coverageKs: [5, 50, 256],
    rows: [row('student', [0, 0, 0], 0), row('full', [0.1, 0.125, 0.1875], 0.25)],
  };

  it('gives D at each K beside the full-vocabulary KL, and on the answer tokens, for the teacher prompts only', () => {
    const coverage = markdownTable(`# coverage\n${probeTable(r).split('\n\n').at(-1)!}`, 'coverage');
    expect(coverage.head).toEqual([
      'prompt',
      'D at K = 5',
      'D at K = 50',
      'D at K = 256',
      'full-vocabulary KL',
      'D per answer token',
      "answer tokens' share of D",
    ]);
    expect(coverage.rows).toEqual([['full', '0.100', '0.125', '0.188', '0.250', '0.500', '25.0%']]);
  });
});
