// The findings the page's guide shows beside its recorded example: the report's comparisons picked in order, written
// as results.md writes them, and the sentence on the privileged context for every way the verdicts can fall.
import { describe, expect, it } from 'vitest';
import {
  experimentFindings,
  type Finding,
  findingsOf,
  privilegeSummary,
} from '../../../../src/lab/experiment/findings.ts';
import type { Comparison, Interval } from '../../../../src/lab/experiment/paired.ts';

const interval = (diff: number, lo: number, hi: number): Interval => ({
  diff,
  lo,
  hi,
  qLo: lo + 0.01,
  qHi: hi - 0.01,
  perSeed: [
    { seed: 1, diff: diff - 0.01 },
    { seed: 2, diff: diff + 0.01 },
  ],
  questions: 400,
  seeds: 2,
});
const comparison = (name: string, all: Interval | null): Comparison => ({
  name,
  a: { arm: name.split(' ')[0]!, iteration: 2 },
  b: { arm: 'base', iteration: -1 },
  all,
  byHop: {},
  multiHop: null,
});

describe('experiment findings', () => {
  it('picks the comparisons in the guide’s order, as results.md writes them', () => {
    const cs = [
      comparison('drzero − base', interval(0.01, -0.02, 0.04)),
      comparison('self − base', interval(0.03, 0.01, 0.05)),
      comparison('piplay − base', interval(0.058, 0.017, 0.103)),
      comparison('piplay − self', interval(-0.005, -0.03, 0.02)),
      comparison('piplay − drzero', null),
      comparison('piplay it 1 − drzero it 3', interval(0.02, -0.01, 0.05)),
    ];
    const f = findingsOf(cs);
    expect(f.map((x) => x.name)).toEqual([
      'piplay − base',
      'piplay − self',
      'self − base',
      'piplay it 1 − drzero it 3',
    ]);
    expect(f[0]).toEqual({
      name: 'piplay − base',
      label: 'π-Play against its base model',
      interval: '+5.8 [+1.7, +10.3]',
      questionOnly: '[+2.7, +9.3]',
      perSeed: '1: +4.8, 2: +6.8',
      verdict: 'holds',
    });
    expect(f[1]!.interval).toBe('−0.5 [−3.0, +2.0]');
    expect(f[3]!.label).toBe(
      "π-Play after iteration 1 against Dr. Zero after iteration 3 (the papers' data efficiency: a match or better)",
    );
    const e = experimentFindings('results/x', { seeds: [1, 2], iterations: 3 }, cs);
    expect(e.scope).toBe('2 seeds (1, 2) × 400 held-out questions, 3 iterations');
    expect(e.summary).toMatch(
      /^π-Play did not beat the self control \(the interval holds 0\), and both beat their base/,
    );
  });

  it('says what the verdicts support about the privileged context, whichever way they fall', () => {
    const f = (verdicts: Record<string, Finding['verdict']>): Finding[] =>
      Object.entries(verdicts).map(([name, verdict]) => ({
        name,
        label: name,
        interval: '',
        questionOnly: '',
        perSeed: '',
        verdict,
      }));
    const NS = 'not shown (the interval holds 0)';
    expect(privilegeSummary(f({ 'piplay − base': 'holds' }))).toBeNull();
    expect(privilegeSummary(f({ 'piplay − self': 'holds' }))).toMatch(/^π-Play beat the self control: the privileged/);
    expect(privilegeSummary(f({ 'piplay − self': 'does not hold' }))).toMatch(/^The self control beat π-Play/);
    expect(privilegeSummary(f({ 'piplay − base': 'holds', 'piplay − self': NS, 'self − base': 'holds' }))).toMatch(
      /supports distillation towards a slow EMA teacher, not that the privileged context adds to it/,
    );
    expect(privilegeSummary(f({ 'piplay − base': 'holds', 'piplay − self': NS, 'self − base': NS }))).toMatch(
      /supports π-Play's recipe as a whole, not yet the privileged context's share of it/,
    );
    expect(privilegeSummary(f({ 'piplay − base': NS, 'piplay − self': NS }))).toBe(
      "π-Play did not beat the self control (the interval holds 0): the privileged context's part is not shown.",
    );
  });
});
