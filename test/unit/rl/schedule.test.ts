// λ per iteration, the settings table (presets, command-line values, errors that name the option), and the
// search measures of section 7.
import { describe, expect, it } from 'vitest';
import { lambdaAt, parseLambda, validateLambda } from '../../../src/rl/schedule.ts';
import {
  DEMO,
  SETTINGS,
  PAPER,
  PRESETS,
  SMOKE,
  keyOfFlag,
  makeConfig,
  parseOptionValue,
  validateConfig,
} from '../../../src/selfplay/config.ts';
import { queryRedundancy, searchStats } from '../../../src/selfplay/measures.ts';
import { firstCursor, nextCursor } from '../../../src/selfplay/cursor.ts';

describe('lambda schedule', () => {
  it('takes one value per iteration and keeps the last one after the list', () => {
    const s = [0.1, 0.03, 0.03];
    expect([0, 1, 2, 3, 9].map((i) => lambdaAt(s, i))).toEqual([0.1, 0.03, 0.03, 0.03, 0.03]);
    expect(lambdaAt(0.05, 7)).toBe(0.05);
  });
  it('parses lists and constants and names bad entries', () => {
    expect(parseLambda('0.1,0.03,0.03')).toEqual([0.1, 0.03, 0.03]);
    expect(parseLambda('0.05')).toBe(0.05);
    expect(() => parseLambda('0.1,,0.2')).toThrow(/'' is not a number/);
    expect(() => parseLambda('-1')).toThrow(/'-1'/);
    expect(() => validateLambda([0.1, NaN])).toThrow(/entry 2/);
  });
});

describe('settings', () => {
  it('has the paper defaults of ALGORITHM.md', () => {
    expect(PAPER).toMatchObject({
      iterations: 3,
      examinerSteps: 50,
      studentSteps: 50,
      hopWeights: [4, 3, 2, 1],
      rolloutsPerQuestion: 5,
      epsLow: 0.2,
      beta: 0,
      lambda: [0.1, 0.03, 0.03],
      topK: 50,
      tail: true,
      kl: 'reverse',
      tau: 0.05,
      privileged: 'full',
      lr: 1e-6,
      gradClip: 0.1,
      examinerBatch: 256,
      temperature: 1,
      maxTurns: 5,
      retrievalTopK: 3,
    });
  });
  it('validates every preset and keeps the option table complete', () => {
    for (const p of Object.values(PRESETS)) expect(() => validateConfig({ ...p })).not.toThrow();
    expect(Object.keys(SETTINGS).sort()).toEqual(Object.keys(PAPER).sort());
    const flags = Object.values(SETTINGS).map((o) => o.flag);
    expect(new Set(flags).size).toBe(flags.length);
    expect(SMOKE.model).toBe('random-tiny');
    expect(DEMO.studentSteps).toBeLessThan(PAPER.studentSteps);
  });
  it('parses command-line values and names the option and its allowed values on errors', () => {
    expect(keyOfFlag('topk')).toBe('topK');
    expect(parseOptionValue('topK', '25')).toBe(25);
    expect(parseOptionValue('tail', 'off')).toBe(false);
    expect(parseOptionValue('lambda', '0.1,0.03')).toEqual([0.1, 0.03]);
    expect(parseOptionValue('privileged', 'gt-hop')).toBe('gt-hop');
    expect(() => parseOptionValue('kl', 'sideways')).toThrow(
      "--kl: 'sideways' is not allowed; use one of reverse, forward",
    );
    expect(() => parseOptionValue('privileged', 'all')).toThrow(
      /--privileged: 'all' is not allowed; use one of full, partial, gt, gt-hop, none/,
    );
    expect(() => parseOptionValue('topK', '2.5')).toThrow(/--topk: '2.5' is not allowed; use an integer from 1 to 256/);
    expect(() => parseOptionValue('tail', 'maybe')).toThrow(/--tail: 'maybe' is not allowed; use on or off/);
    expect(() => parseOptionValue('tau', '2')).toThrow(/--tau/);
  });
  it('makes --privileged none mean Dr. Zero (λ = 0) and refuses λ > 0 without a teacher', () => {
    expect(makeConfig('smoke', { privileged: 'none' }).lambda).toBe(0);
    expect(() => makeConfig('smoke', { privileged: 'none', lambda: 0.1 })).toThrow(/--lambda/);
    expect(() => makeConfig('smoke', { miniBatches: 99 })).toThrow(/--mini-batches/);
    expect(() => makeConfig('nope' as 'smoke')).toThrow(/--preset/);
    expect(() => makeConfig('smoke', { studentQuestions: 'world', corpus: 'my.jsonl' })).toThrow(
      /--student-questions: 'world' needs the world corpus/,
    );
  });
  it('walks the units of an iteration in order', () => {
    const c = makeConfig('smoke', { examinerSteps: 2, studentSteps: 2, iterations: 2 });
    const seen: string[] = [];
    for (let cur = firstCursor(c); cur.stage !== 'done'; cur = nextCursor(cur, c))
      seen.push(`${cur.iteration}:${cur.stage}:${cur.step}`);
    expect(seen).toEqual([
      '0:eval-start:0',
      '0:examiner:0',
      '0:examiner:1',
      '0:generate:0',
      '0:student:0',
      '0:student:1',
      '0:eval:0',
      '1:examiner:0',
      '1:examiner:1',
      '1:generate:0',
      '1:student:0',
      '1:student:1',
      '1:eval:0',
    ]);
  });
});

describe('search measures', () => {
  it('counts repeats of earlier queries of the same rollout', () => {
    expect(queryRedundancy([])).toBe(0);
    expect(queryRedundancy(['a b', 'A  b', 'c', 'a b'])).toBe(0.5);
    const s = searchStats([
      { searches: [{ query: 'x' }, { query: 'x' }] },
      { searches: [] },
      { searches: [{ query: 'y' }] },
    ]);
    expect(s.searches).toBe(1);
    expect(s.redundancy).toBe(0.25);
  });
});
