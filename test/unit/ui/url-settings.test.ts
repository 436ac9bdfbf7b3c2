// The setup in the page's address: a link carries the preset and the settings that differ from it.
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../../src/selfplay/config.ts';
import { settingsFromQuery, settingsToQuery } from '../../../src/ui/url-settings.ts';

describe('settings in the URL', () => {
  it('writes the preset and only the settings that differ from it', () => {
    expect(settingsToQuery('smoke', PRESETS.smoke)).toBe('preset=smoke');
    const q = settingsToQuery('smoke', { ...PRESETS.smoke, iterations: 2, lambda: [0.1, 0.03], privileged: 'gt' });
    expect(q).toBe('preset=smoke&iterations=2&lambda=0.1,0.03&privileged=gt');
  });

  it('reads a link back to the same settings, and reports what it cannot use', () => {
    const q = settingsToQuery('demo', { ...PRESETS.demo, iterations: 5, tail: !PRESETS.demo.tail });
    const back = settingsFromQuery(`?${q}`);
    expect(back.preset).toBe('demo');
    expect(back.values).toEqual({ iterations: '5', tail: PRESETS.demo.tail ? 'off' : 'on' });
    expect(back.problems).toEqual([]);
    const bad = settingsFromQuery('?preset=huge&iterations=-1&colour=red&model=x');
    expect(bad.preset).toBeUndefined();
    expect(bad.values).toEqual({});
    expect(bad.problems).toHaveLength(4);
    expect(bad.problems[0]).toMatch(/^preset=huge: not a preset/);
    expect(bad.problems[1]).toMatch(/^iterations=-1: /);
    expect(bad.problems[2]).toMatch(/^colour: not a setting/);
    expect(bad.problems[3]).toMatch(/^model: not a setting/);
  });
});
