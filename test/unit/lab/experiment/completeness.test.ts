// What an experiment's logs must hold before its claims are read: every arm and seed, every trained arm after
// each iteration and no other, enough questions and the same ones everywhere, every run once, finished, on the
// required world, from one clean commit.
import { describe, expect, it } from 'vitest';
import { checkCompleteness, type Requirements, type RunStamp } from '../../../../src/lab/experiment/completeness.ts';
import type { QuestionRow } from '../../../../src/lab/experiment/paired.ts';

const REQ: Requirements = {
  arms: ['base', 'drzero', 'piplay'],
  minSeeds: 2,
  iterations: 2,
  minQuestions: 3,
  world: 'test',
};
const IDS = ['q1', 'q2', 'q3'];
const COMMIT = 'f697f52df696fe4429e02de02da78729eee04ce2';

function stamp(arm: string, seed: number): RunStamp {
  return {
    arm,
    seed,
    commit: COMMIT,
    dirty: false,
    startedAt: null,
    error: null,
    iterations: 2,
    evalWorld: 'test',
    settings: `{"arm":"${arm}"}`,
  };
}

/** One evaluation's lines: every question of IDS, q1 right. */
function evaluation(arm: string, seed: number, iteration: number): QuestionRow[] {
  return IDS.map((id) => ({ arm, seed, iteration, id, hops: 1, correct: id === 'q1' }));
}

/** A complete experiment of REQ's shape: base once per seed, the trained arms after iterations 0 and 1. */
function complete(): { lines: QuestionRow[]; stamps: RunStamp[] } {
  const lines: QuestionRow[] = [];
  const stamps: RunStamp[] = [];
  for (const seed of [1, 2]) {
    for (const arm of REQ.arms) {
      stamps.push(stamp(arm, seed));
      for (const iteration of arm === 'base' ? [-1] : [0, 1]) lines.push(...evaluation(arm, seed, iteration));
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

  it('names a missing arm, a missing seed, a missing iteration and an extra one', () => {
    const { lines, stamps } = complete();
    const gone = (arm: string, seed: number) => arm === 'drzero' || (arm === 'piplay' && seed === 2);
    const kept = lines.filter((l) => !gone(l.arm, l.seed) && !(l.arm === 'piplay' && l.iteration === 1));
    const c = checkCompleteness(
      [...kept, ...evaluation('base', 2, 0)],
      stamps.filter((s) => !gone(s.arm, s.seed)),
      REQ,
    );
    expect(c.problems).toEqual([
      'base seed 2: evaluated after iterations 0 as well',
      'arm drzero has no outcomes',
      'arm piplay has 1 seeds (1), fewer than 2',
      'arm piplay lacks seeds 2 that other arms have',
      'piplay seed 1 iteration 1: not evaluated',
    ]);
  });

  it('does not count the seeds of an arm it does not require', () => {
    const { lines, stamps } = complete();
    const c = checkCompleteness([...lines, ...evaluation('partial', 3, 0)], [...stamps, stamp('partial', 3)], REQ);
    expect(c.problems).toEqual([]);
    expect(c.summary[0]).toBe('arms: base, drzero, piplay, partial (not required: partial)');
  });

  it('names an evaluation with too few or other questions, and a repeated line', () => {
    const { lines, stamps } = complete();
    const fewer = lines.filter((l) => !(l.arm === 'piplay' && l.seed === 1 && l.iteration === 0 && l.id === 'q3'));
    expect(checkCompleteness(fewer, stamps, REQ).problems).toEqual([
      'piplay seed 1 iteration 0: 2 questions, fewer than 3',
      '1 evaluations hold other questions than the other 9 (piplay seed 1 iteration 0)',
    ]);
    // The odd one out is named even where it comes first.
    const other = lines.map((l) => (l.arm === 'base' && l.seed === 1 && l.id === 'q2' ? { ...l, id: 'q9' } : l));
    expect(checkCompleteness(other, stamps, REQ).problems).toEqual([
      '1 evaluations hold other questions than the other 9 (base seed 1 iteration -1)',
    ]);
    const repeated = [...lines, { ...lines[0]! }];
    expect(checkCompleteness(repeated, stamps, REQ).problems).toEqual([
      '1 lines repeat a question of their evaluation',
    ]);
  });

  it('names runs missing, twice, failed, on another world or length, of unknown, dirty or mixed code', () => {
    const { lines, stamps } = complete();
    const marked = stamps
      .filter((s) => !(s.arm === 'base' && s.seed === 2))
      .map(
        (s, k) =>
          [
            s,
            { ...s, commit: null },
            { ...s, dirty: true },
            { ...s, startedAt: 'abc', evalWorld: 'dev', iterations: 3, settings: '{"lr":2}' },
            { ...s, error: 'NaN loss' },
          ][k]!,
      );
    marked.push(stamp('drzero', 1), stamp('gt', 1));
    expect(checkCompleteness(lines, marked, REQ).problems).toEqual([
      '1 runs have more than one result.json (drzero seed 1)',
      '1 runs have outcomes but no result.json in runs/ (e.g. base seed 2)',
      '1 runs have no outcomes in per-question.jsonl (e.g. gt seed 1)',
      '1 runs stopped with an error (e.g. piplay seed 2): NaN loss',
      '1 runs were evaluated on another world than test (e.g. drzero seed 2)',
      '1 runs were set to other than 2 iterations (e.g. drzero seed 2)',
      'the runs of arm drzero differ in settings other than the seed (seeds 1, 2, 1)',
      '1 runs do not name their commit (e.g. drzero seed 1)',
      '1 runs were made from a tree with uncommitted changes (e.g. piplay seed 1)',
      '1 runs were started by other code than finished them (e.g. drzero seed 2)',
    ]);
  });
});
