import { describe, expect, it } from 'vitest';
import { countOption, runOrModel } from '../../../src/cli/args.ts';

describe("a command's own options", () => {
  it('reads a count, its fallback when not given, and names the flag of a bad one', () => {
    expect(countOption({ show: '3' }, 'show', 0)).toBe(3);
    expect(countOption({}, 'show', 40)).toBe(40);
    for (const bad of ['-1', '2.5', 'x'])
      expect(() => countOption({ show: bad }, 'show', 0)).toThrow(
        `--show: '${bad}' is not allowed; use an integer >= 0`,
      );
  });

  it('wants exactly one of --run and --model', () => {
    expect(runOrModel({ run: 'runs/a' })).toEqual({ runDir: 'runs/a', modelDir: undefined });
    expect(runOrModel({ model: 'm' })).toEqual({ runDir: undefined, modelDir: 'm' });
    const wrong: Record<string, string>[] = [{}, { run: 'runs/a', model: 'm' }];
    for (const own of wrong) expect(() => runOrModel(own)).toThrow('give exactly one of --run DIR and --model FOLDER');
  });
});
