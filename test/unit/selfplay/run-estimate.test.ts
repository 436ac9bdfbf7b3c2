// The presets (every one valid and described; quick keeps the demo's model and turn lengths at a fraction of its
// units) and the whole-run estimate (src/selfplay/run-estimate.ts): the run's units in the loop's order, the time left
// from measured units (a stage's own mean, else its work at the measured pace), and the page's text before a run.
import { describe, expect, it } from 'vitest';
import {
  DEMO,
  PRESET_HELP,
  PRESETS,
  QUICK,
  SMOKE,
  validateConfig,
  type PresetName,
} from '../../../src/selfplay/config.ts';
import { runSecondsAt, runUnits, secondsLeft, unitWork } from '../../../src/selfplay/run-estimate.ts';
import { beforeRunText } from '../../../src/ui/panels/progress.ts';
import { applyEvent, emptyState, runEtaSeconds } from '../../../src/ui/state.ts';

describe('presets', () => {
  it('are all valid and all described', () => {
    for (const p of Object.keys(PRESETS) as PresetName[]) {
      expect(() => validateConfig({ ...PRESETS[p] }), p).not.toThrow();
      expect(PRESET_HELP[p]?.length, p).toBeGreaterThan(5);
    }
  });

  it("quick keeps the demo's model, turn lengths and searches, with a fraction of its work", () => {
    for (const k of ['model', 'turnTokens', 'toolTokens', 'maxTurns', 'temperature', 'privileged'] as const)
      expect(QUICK[k], k).toEqual(DEMO[k]);
    expect(QUICK.iterations).toBeGreaterThan(1);
    const work = (c: typeof DEMO) => runUnits(c).reduce((s, u) => s + unitWork(c, u), 0);
    expect(work(QUICK)).toBeLessThan(work(DEMO) / 3);
    expect(work(QUICK)).toBeGreaterThan(work(SMOKE));
  });
});

describe('the whole-run estimate', () => {
  it("lists the run's units in the loop's order", () => {
    expect(runUnits(SMOKE)).toEqual(['eval-start', 'examiner', 'generate', 'student', 'eval']);
    const it1 = ['examiner', 'examiner', 'generate', 'student', 'student', 'student', 'student', 'eval'];
    expect(runUnits(QUICK)).toEqual(['eval-start', ...it1, ...it1]);
    expect(runUnits({ ...QUICK, evalAtStart: false, examinerSteps: 0, iterations: 1 })).toEqual([
      'generate',
      'student',
      'student',
      'student',
      'student',
      'eval',
    ]);
  });

  it('predicts a measured stage by its mean and an unseen one by its work at the measured pace', () => {
    const c = QUICK;
    expect(secondsLeft(c, ['student'], new Map())).toBeUndefined();
    const measured = new Map([
      ['eval-start', [10]],
      ['examiner', [4, 6]],
    ] as const);
    const pace = 20 / (unitWork(c, 'eval-start') + 2 * unitWork(c, 'examiner'));
    // examiner: its mean (5); eval: the evaluation before training (10); student: its work at the pace.
    expect(secondsLeft(c, ['examiner', 'eval', 'student'], measured)).toBeCloseTo(
      5 + 10 + unitWork(c, 'student') * pace,
      9,
    );
    expect(runSecondsAt(c, pace)).toBeCloseTo(
      runUnits(c).reduce((s, u) => s + unitWork(c, u) * pace, 0),
      9,
    );
  });

  it('says before a run what it will take at the last pace, or that the time comes after the first unit', () => {
    expect(beforeRunText(QUICK, undefined)).toBe('whole run: 17 units; the time left shows once the first has run');
    const pace = 60 / runUnits(QUICK).reduce((s, u) => s + unitWork(QUICK, u), 0);
    expect(beforeRunText(QUICK, pace)).toMatch(/^whole run: about 1m 00s on this GPU \(17 units/);
  });

  it("keeps the run's estimate across stages on the page and counts it down", () => {
    const s = emptyState();
    applyEvent(s, { type: 'progress', stage: 'eval', iteration: 0, done: 1, total: 1, runEtaSeconds: 100 }, 1000);
    applyEvent(s, { type: 'progress', stage: 'examiner', iteration: 0, done: 0, total: 2, label: 'rollouts' }, 5000);
    expect(runEtaSeconds(s.progress!, 11_000)).toBeCloseTo(90, 9);
  });
});
