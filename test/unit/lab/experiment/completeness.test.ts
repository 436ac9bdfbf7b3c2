// What an experiment's logs must hold before its claims are read: every arm and seed, every trained arm after
// each iteration, enough questions and the same ones everywhere, every run stamped with its commit.
import { describe, expect, it } from 'vitest';
import { checkCompleteness, type Requirements, type RunStamp } from '../../../../src/lab/experiment/completeness.ts';
import type { QuestionRow } from '../../../../src/lab/experiment/paired.ts';

const REQ: Requirements = { arms: ['base', 'drzero', 'piplay'], minSeeds: 2, iterations: 2, minQuestions: 3 };
const IDS = ['q1', 'q2', 'q3'];

/** A complete experiment of REQ's shape: base once per seed, the trained arms after iterations 0 and 1. */
function complete(): { lines: QuestionRow[]; stamps: RunStamp[] } {
  const lines: QuestionRow[] = [];
  const stamps: RunStamp[] = [];
  for (const seed of [1, 2]) {
    for (const arm of REQ.arms) {
      stamps.push({ arm, seed, commit: 'f697f52df696fe4429e02de02da78729eee04ce2', dirty: false });
      for (const iteration of arm === 'base' ? [-1] : [0, 1])
        for (const id of IDS) lines.push({ arm, seed, iteration, id, hops: 1, correct: id === 'q1' });
    }
  }
  return { lines, stamps };
}

describe('checkCompleteness', () => {
  it('passes a complete experiment and summarises it', () => {
    const { lines, stamps } = complete();
    const c = checkCompleteness(lines, stamps, REQ);
    expect(c.problems).toEqual([]);
    expect(c.summary).toEqual([
      'arms: base, drzero, piplay',
      'seeds: 1, 2',
      'evaluations: 10, of 3 questions each',
      'runs: 6, from commit f697f52df696',
    ]);
  });

  it('names a missing arm, a missing seed and a missing iteration', () => {
    const { lines, stamps } = complete();
    const gone = (arm: string, seed: number) => arm === 'drzero' || (arm === 'piplay' && seed === 2);
    const kept = lines.filter((l) => !gone(l.arm, l.seed) && !(l.arm === 'piplay' && l.iteration === 1));
    const c = checkCompleteness(
      kept,
      stamps.filter((s) => !gone(s.arm, s.seed)),
      REQ,
    );
    expect(c.problems).toEqual([
      'arm drzero has no outcomes',
      'arm piplay has 1 seeds (1), not 2',
      'arm piplay lacks seeds 2 that other arms have',
      'piplay seed 1 iteration 1: not evaluated',
    ]);
  });

  it('names an evaluation with too few or other questions, and a repeated one', () => {
    const { lines, stamps } = complete();
    const fewer = lines.filter((l) => !(l.arm === 'piplay' && l.seed === 1 && l.iteration === 0 && l.id === 'q3'));
    expect(checkCompleteness(fewer, stamps, REQ).problems).toEqual([
      'piplay seed 1 iteration 0: 2 questions, not 3',
      '1 evaluations hold other questions than base seed 1 iteration -1 (e.g. piplay seed 1 iteration 0)',
    ]);
    const other = lines.map((l) =>
      l.arm === 'drzero' && l.seed === 2 && l.iteration === 1 && l.id === 'q2' ? { ...l, id: 'q9' } : l,
    );
    expect(checkCompleteness(other, stamps, REQ).problems).toEqual([
      '1 evaluations hold other questions than base seed 1 iteration -1 (e.g. drzero seed 2 iteration 1)',
    ]);
    const repeated = [...lines, lines[0]!];
    expect(checkCompleteness(repeated, stamps, REQ).problems).toEqual([
      '1 lines repeat a question of their evaluation',
    ]);
  });

  it('names runs without a commit, from a dirty tree, or without outcomes', () => {
    const { lines, stamps } = complete();
    const marked = stamps.map((s, k) => (k === 1 ? { ...s, commit: null } : k === 2 ? { ...s, dirty: true } : s));
    marked.push({ arm: 'gt', seed: 1, commit: 'abc', dirty: false });
    expect(checkCompleteness(lines, marked, REQ).problems).toEqual([
      '1 runs do not name their commit (e.g. drzero seed 1)',
      '1 runs were made from a tree with uncommitted changes (e.g. piplay seed 1)',
      '1 runs have no outcomes in per-question.jsonl (e.g. gt seed 1)',
    ]);
  });
});
