// The CLI's progress text: counts with the right plural ("1 iteration") and durations.
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../../src/cli/progress.ts';
import { plural } from '../../../src/env/prompts.ts';

describe('CLI progress text', () => {
  it('counts in the singular only for one', () => {
    expect(plural(1, 'iteration')).toBe('1 iteration');
    expect(plural(0, 'iteration')).toBe('0 iterations');
    expect(plural(2, 'run')).toBe('2 runs');
  });

  it('writes durations as seconds, minutes or hours', () => {
    expect(formatTime(42)).toBe('42s');
    expect(formatTime(125)).toBe('2m05s');
    expect(formatTime(3 * 3600 + 7 * 60)).toBe('3h07m');
    expect(formatTime(Number.NaN)).toBe('?');
  });
});
