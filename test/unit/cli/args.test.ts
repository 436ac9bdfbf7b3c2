import { describe, expect, it } from 'vitest';
import { countOption, MAX_QUESTIONS, parseArgs, runOrModel, scanArgs } from '../../../src/cli/args.ts';
import { parsePretrainArgs } from '../../../src/cli/pretrain-args.ts';
import { parseSeeds } from '../../../src/lab/experiment/plan.ts';
import { makeConfig, parseOptionValue } from '../../../src/selfplay/config.ts';

describe("a command's own options", () => {
  it('reads a count, its fallback when not given, and names the flag of a bad one', () => {
    expect(countOption({ show: '3' }, 'show', 0, 100)).toBe(3);
    expect(countOption({}, 'show', 40, 100)).toBe(40);
    for (const bad of ['-1', '2.5', 'x', '0x10', '1e9', 'Infinity', ''])
      expect(() => countOption({ show: bad }, 'show', 0, 100)).toThrow(
        `--show: '${bad}' is not allowed; use an integer from 0 to 100`,
      );
  });

  it('bounds every count a command takes (probe --questions 1e9 was memory until killed)', () => {
    expect(() => parseArgs(['--questions', '1e9'], ['questions'])).not.toThrow();
    expect(() => countOption({ questions: '1e9' }, 'questions', 40, MAX_QUESTIONS)).toThrow(
      `--questions: '1e9' is not allowed; use an integer from 0 to ${MAX_QUESTIONS}`,
    );
    expect(() => countOption({ 'examiner-questions': '1e12' }, 'examiner-questions', 40, MAX_QUESTIONS)).toThrow(
      /--examiner-questions: '1e12' is not allowed/,
    );
  });

  it('wants exactly one of --run and --model', () => {
    expect(runOrModel({ run: 'runs/a' })).toEqual({ runDir: 'runs/a', modelDir: undefined });
    expect(runOrModel({ model: 'm' })).toEqual({ runDir: undefined, modelDir: 'm' });
    const wrong: Record<string, string>[] = [{}, { run: 'runs/a', model: 'm' }];
    for (const own of wrong) expect(() => runOrModel(own)).toThrow('give exactly one of --run DIR and --model FOLDER');
  });
});

describe('numbers are read strictly and each flag once', () => {
  it('refuses hexadecimal, binary and other non-decimal numbers (--iterations 0x10 was read as 16)', () => {
    for (const bad of ['0x10', '0b11', '0o7', 'Infinity', '1_000', '1 2'])
      expect(() => parseOptionValue('iterations', bad)).toThrow(`--iterations: '${bad}' is not allowed`);
    expect(parseOptionValue('iterations', '16')).toBe(16);
    expect(parseOptionValue('lr', '3e-4')).toBe(3e-4);
    expect(parseOptionValue('lr', '.5')).toBe(0.5);
    expect(() => parseOptionValue('hopWeights', '4,0x3')).toThrow(/--hop-weights: '4,0x3' is not allowed/);
  });

  it('refuses a flag given twice (the last one was kept silently)', () => {
    expect(() => parseArgs(['--iterations', '2', '--iterations', '3'], [])).toThrow(
      '--iterations is given twice; give it once',
    );
    expect(() => parseArgs(['--out', 'a', '--out=b'], ['out'])).toThrow('--out is given twice; give it once');
    expect(() => scanArgs(['--help', '--help'], [], ['help'], () => false)).toThrow('--help is given twice');
  });

  it("experiment's --seeds: decimal, bounded", () => {
    expect(parseSeeds('1,2,3')).toEqual([1, 2, 3]);
    for (const bad of ['0x10', '1,1e12', '-1', '1,,2'])
      expect(() => parseSeeds(bad)).toThrow(`--seeds: '${bad}' is not allowed`);
  });

  it('bounds lists: hop counts and their length', () => {
    expect(() => makeConfig('smoke', { evalHops: [1, 1_000_000] })).toThrow(/--eval-hops/);
    expect(() => parseOptionValue('hopWeights', Array(17).fill('1').join(','))).toThrow(/--hop-weights/);
    expect(parseOptionValue('evalHops', '1,2,3,4')).toEqual([1, 2, 3, 4]);
  });
});

describe("pretrain's numbers are bounded like train's", () => {
  it('refuses --batch 1e9, --steps 1e15, --check 0x10 and a repeated flag', () => {
    expect(() => parsePretrainArgs(['--batch', '1e9'])).toThrow(/--batch: batch must be an integer from 1 to 65536/);
    expect(() => parsePretrainArgs(['--steps', '1e15'])).toThrow(/--steps: steps must be an integer from 1 to/);
    expect(() => parsePretrainArgs(['--steps', '0x10'])).toThrow(/--steps: steps must be an integer/);
    expect(() => parsePretrainArgs(['--check', '0x10'])).toThrow(/--check: '0x10' is not allowed/);
    expect(() => parsePretrainArgs(['--steps', '2', '--steps', '3'])).toThrow('--steps is given twice');
    const ok = parsePretrainArgs(['--steps', '20', '--check', '0']);
    expect(ok !== 'help' && ok.options.steps === 20 && ok.check === 0).toBe(true);
  });
});
