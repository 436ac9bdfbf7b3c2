// The experiment's plan: arms, seeds, and each run's settings (an arm sets its privileged context, λ = 0 for
// Dr. Zero, and its own settings from --arm-settings; a seed sets only the seed).
import { describe, expect, it } from 'vitest';
import {
  configDiff,
  DEFAULT_ARMS,
  parseArmSettings,
  parseArms,
  parseSeeds,
  planExperiment,
} from '../../../../src/lab/experiment/plan.ts';
import { makeConfig } from '../../../../src/selfplay/config.ts';

describe('experiment plan', () => {
  it('parses arms and seeds and names what is wrong', () => {
    expect(parseArms('base, drzero,piplay')).toEqual(['base', 'drzero', 'piplay']);
    expect(() => parseArms('base,nope')).toThrow(/--arms: 'nope' is not an arm/);
    expect(() => parseArms('gt,gt')).toThrow(/given twice/);
    expect(() => parseArms(',')).toThrow(/names no arm/);
    expect(parseSeeds('1,2,3')).toEqual([1, 2, 3]);
    expect(() => parseSeeds('1,x')).toThrow(/--seeds: '1,x' is not allowed/);
    expect(() => parseSeeds('1,-2')).toThrow(/--seeds/);
    expect(() => parseSeeds('2,2')).toThrow(/2 is given twice/);
    expect(DEFAULT_ARMS).toEqual(['base', 'drzero', 'self', 'piplay', 'gt']);
    expect(parseArms('self,piplay')).toEqual(['self', 'piplay']);
  });

  it('one run per seed and arm, seed by seed; each arm sets its privileged context, Dr. Zero λ = 0', () => {
    const jobs = planExperiment({
      preset: 'smoke',
      arms: ['base', 'drzero', 'self', 'piplay', 'partial', 'gt'],
      seeds: [1, 2],
      settings: { iterations: 2, lambda: 0.05 },
    });
    expect(jobs.map((j) => `${j.arm}/${j.seed}`)).toEqual([
      'base/1',
      'drzero/1',
      'self/1',
      'piplay/1',
      'partial/1',
      'gt/1',
      'base/2',
      'drzero/2',
      'self/2',
      'piplay/2',
      'partial/2',
      'gt/2',
    ]);
    expect(jobs.map((j) => j.dir)).toContain('runs/partial-seed2');
    const of = (arm: string, seed = 1) => jobs.find((j) => j.arm === arm && j.seed === seed)!;
    expect(of('base').train).toBe(false);
    expect(of('drzero').config.privileged).toBe('none');
    expect(of('drzero').config.lambda).toBe(0);
    expect(of('piplay').config.privileged).toBe('full');
    expect(of('piplay').config.lambda).toBe(0.05);
    expect(of('partial').config.privileged).toBe('partial');
    expect(of('self').config.privileged).toBe('self');
    expect(of('self').config.lambda).toBe(0.05);
    expect(of('gt').config.privileged).toBe('gt');
    for (const j of jobs) {
      expect(j.config.seed).toBe(j.seed);
      expect(j.config.iterations).toBe(2);
    }
    // Arms differ from each other only in what the arm sets, seeds only in the seed.
    expect(configDiff(of('piplay').config, of('partial').config)).toEqual(['--privileged']);
    expect(configDiff(of('piplay').config, of('drzero').config).sort()).toEqual(['--lambda', '--privileged']);
    expect(configDiff(of('piplay', 1).config, of('piplay', 2).config)).toEqual(['--seed']);
    // A config stored before --recompute took 'auto' holds a boolean: true is 'on', false 'off'.
    const on = { ...of('piplay').config, recompute: 'on' as const };
    const stored = { ...on, recompute: true } as unknown as typeof on;
    expect(configDiff(stored, on)).toEqual([]);
    expect(configDiff({ ...stored, recompute: false } as unknown as typeof on, on)).toEqual(['--recompute']);
    // The base arm is every arm's "before training" point: trained arms skip their own first evaluation.
    expect(of('piplay').config.evalAtStart).toBe(false);
    expect(of('base').config.evalAtStart).toBe(true);
  });

  it('keeps the preset λ and an explicit --eval-at-start; without the base arm trained arms evaluate first', () => {
    const a = planExperiment({ preset: 'demo', arms: ['drzero', 'piplay'], seeds: [3], settings: {} });
    expect(a.find((j) => j.arm === 'piplay')!.config.lambda).toEqual(makeConfig('demo').lambda);
    expect(a.every((j) => j.config.evalAtStart)).toBe(true);
    const b = planExperiment({
      preset: 'smoke',
      arms: ['base', 'piplay'],
      seeds: [1],
      settings: { evalAtStart: true },
    });
    expect(b[1]!.config.evalAtStart).toBe(true);
  });

  it('runs each arm at its own settings (--arm-settings), read as the command line reads flags', () => {
    const own = parseArmSettings(
      { drzero: { lr: '3e-4', beta: 0.01 }, piplay: { lr: 2e-4, lambda: '0.3,0.1,0.1' } },
      'choice.json',
    );
    expect(own).toEqual({ drzero: { lr: 3e-4, beta: 0.01 }, piplay: { lr: 2e-4, lambda: [0.3, 0.1, 0.1] } });
    const jobs = planExperiment({
      preset: 'demo',
      arms: ['base', 'drzero', 'self', 'piplay'],
      seeds: [1],
      settings: { iterations: 3 },
      armSettings: own,
    });
    const of = (arm: string) => jobs.find((j) => j.arm === arm)!.config;
    expect(of('drzero')).toMatchObject({ lr: 3e-4, beta: 0.01, lambda: 0, iterations: 3 });
    expect(of('piplay')).toMatchObject({ lr: 2e-4, lambda: [0.3, 0.1, 0.1], iterations: 3 });
    expect(of('self')).toMatchObject({ lr: makeConfig('demo').lr, lambda: makeConfig('demo').lambda });
    // Errors name the file, the arm and the flag.
    const bad = (json: unknown) => () => parseArmSettings(json, 'choice.json');
    expect(bad([1])).toThrow(/--arm-settings choice.json: expected a JSON object/);
    expect(bad({ nope: {} })).toThrow(/'nope' is not an arm/);
    expect(bad({ base: { lr: 1 } })).toThrow(/base arm is not trained/);
    expect(bad({ piplay: { learning: 1 } })).toThrow(/'piplay' sets 'learning', which is not a setting's flag/);
    expect(bad({ piplay: { seed: 2 } })).toThrow(/--seed, which the experiment sets/);
    expect(bad({ piplay: { lr: -1 } })).toThrow(/--lr/);
    expect(bad({ piplay: { lr: [1] } })).toThrow(/must be a string or a number/);
    // A setting given on the command line and for an arm; λ for the arm without a teacher.
    const plan =
      (armSettings: object, settings = {}) =>
      () =>
        planExperiment({ preset: 'smoke', arms: ['drzero', 'piplay'], seeds: [1], settings, armSettings });
    expect(plan({ piplay: { lr: 1e-4 } }, { lr: 1e-5 })).toThrow(/--lr is given on the command line and in --arm/);
    expect(plan({ drzero: { lambda: 0.1 } })).toThrow(/'drzero' has no teacher/);
  });

  it('refuses settings the plan owns and bad presets', () => {
    expect(() => planExperiment({ preset: 'smoke', arms: ['piplay'], seeds: [1], settings: { seed: 4 } })).toThrow(
      /--seed: .*--seeds/,
    );
    expect(() =>
      planExperiment({ preset: 'smoke', arms: ['piplay'], seeds: [1], settings: { privileged: 'gt' } }),
    ).toThrow(/--privileged/);
    expect(() => planExperiment({ preset: 'nope' as 'demo', arms: ['piplay'], seeds: [1], settings: {} })).toThrow(
      /--preset: 'nope'/,
    );
    // Settings are checked as npm run train checks them.
    expect(() => planExperiment({ preset: 'smoke', arms: ['piplay'], seeds: [1], settings: { topK: 999 } })).toThrow(
      /--topk/,
    );
  });
});
