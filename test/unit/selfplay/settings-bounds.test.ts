// Sizes a run cannot reach are refused by the settings table, naming the setting, before anything is built:
// before, --world-size 1e9 hung, --iterations 1e308 ended in a V8 fatal error, --examiner-batch 1e9 died of
// out-of-memory after a warning, and --lora-alpha 1e308 failed as a token id outside the vocabulary.
import { describe, expect, it } from 'vitest';
import {
  checkContext,
  type ConfigError,
  keyOfFlag,
  makeConfig,
  parseOptionValue,
  SETTINGS,
  type Setting,
  validateConfig,
} from '../../../src/selfplay/config.ts';

describe('every setting is bounded', () => {
  it.each([
    ['world-size', '1e9', 'an integer from 20 to 100000'],
    ['iterations', '1e308', 'an integer from 1 to 10000'],
    ['examiner-batch', '1e9', 'an integer from 1 to 65536'],
    ['student-batch', '1e9', 'an integer from 1 to 65536'],
    ['eval-per-hop', '1e7', 'an integer from 0 to 100000'],
    ['turn-tokens', '1e12', 'an integer from 1 to 1048576'],
    ['seed', '1e20', 'an integer from 0 to 4294967295'],
    ['lora-alpha', '1e308', 'a number > 0 and <= 1000000'],
  ])('--%s %s is refused with the flag and its range', (flag, value, range) => {
    const key = keyOfFlag(flag)!;
    expect(() => parseOptionValue(key, value)).toThrow(`--${flag}: '${value}' is not allowed; use ${range}`);
    expect(() => makeConfig('demo', { [key]: Number(value) })).toThrow(
      `--${flag}: ${value === '1e308' ? '1e+308' : Number(value)} is not allowed`,
    );
  });

  it('no integer setting takes more than an Int32 holds; the presets are within bounds', () => {
    for (const [key, s] of Object.entries(SETTINGS))
      if (s.kind.t === 'int') expect(s.kind.max, key).toBeLessThanOrEqual(2 ** 32 - 1);
    for (const p of ['paper', 'demo', 'quick', 'smoke'] as const) expect(() => makeConfig(p)).not.toThrow();
  });
});

describe('settings errors carry their key', () => {
  it('names the setting that is wrong, for the page to show under its field', () => {
    const keyOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as ConfigError).key;
      }
      return 'no error';
    };
    const demo = makeConfig('demo');
    expect(keyOf(() => parseOptionValue('topK', '0'))).toBe('topK');
    expect(keyOf(() => validateConfig({ ...demo, miniBatches: 10_000 }))).toBe('miniBatches');
    expect(keyOf(() => validateConfig({ ...demo, privileged: 'none' }))).toBe('lambda');
    expect(keyOf(() => validateConfig({ ...demo, hopWeights: [0, 0] }))).toBe('hopWeights');
    expect(keyOf(() => checkContext({ turnTokens: 4096 }, 2048, 'x'))).toBe('turnTokens');
    expect(keyOf(() => makeConfig('nope' as never))).toBeUndefined(); // --preset is an option, not a setting
  });

  it('declares the page once: labels, groups, suggestions and notes in the table', () => {
    const s = SETTINGS as Record<string, Setting>;
    expect(s['lambda']!.suggestions?.map((x) => x.value)).toContain('0.1,0.03,0.03');
    expect(s['privileged']!.notes?.['none']).toMatch(/Dr\. Zero/);
    expect(Object.keys(s).filter((k) => s[k]!.group === 'source')).toEqual(['model', 'corpus', 'evalSet']);
    expect(s['rolloutsPerQuestion']!.label).toBe('n rollouts');
  });
});
