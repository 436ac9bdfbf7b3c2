import { describe, it, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../../../src/gpu/engine.ts';
import { groupAdvantages, learnableShare } from '../../../src/rl/advantages.ts';
import { loadFixture, runFixture } from '../../../src/fixtures/runner.ts';
import { expectClose } from '../../helpers/compare.ts';

const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/', import.meta.url));

describe('groupAdvantages', () => {
  it('standardises within each group with the unbiased std', () => {
    // Group a: 1, 0, 0 -> mean 1/3, std sqrt(1/3); group b: 2, 4 -> mean 3, std sqrt(2).
    const got = groupAdvantages([1, 2, 0, 4, 0], ['a', 'b', 'a', 'b', 'a'], 0);
    const s = Math.sqrt(1 / 3);
    expectClose(got, [2 / 3 / s, -1 / Math.SQRT2, -(1 / 3) / s, 1 / Math.SQRT2, -(1 / 3) / s], 1e-12, 0);
  });

  it('adds eps to the std', () => {
    const got = groupAdvantages([0, 1], [7, 7], 0.5);
    const std = Math.SQRT1_2;
    expectClose(got, [-0.5 / (std + 0.5), 0.5 / (std + 0.5)], 1e-12, 0);
  });

  it('gives 0 to a group of one and to a group of equal rewards', () => {
    expect(groupAdvantages([5, 1, 1, 1, 3], [0, 1, 1, 1, 2])).toEqual([0, 0, 0, 0, 0]);
  });

  it('tells number and string ids apart, and handles an empty batch', () => {
    expect(groupAdvantages([1, 0], [1, '1'])).toEqual([0, 0]);
    expect(groupAdvantages([], [])).toEqual([]);
  });

  it('rejects mismatched lengths and non-finite rewards', () => {
    expect(() => groupAdvantages([1, 2], [0])).toThrow(/2 rewards but 1 group/);
    expect(() => groupAdvantages([1, NaN], [0, 0])).toThrow(/reward 1/);
  });
});

describe.skipIf(!existsSync(FIXTURES))('shared fixtures (group_advantage)', () => {
  const files = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith('.json')) : [];
  for (const file of files) {
    const text = readFileSync(FIXTURES + file, 'utf8');
    if (!text.includes('"group_advantage"')) continue;
    it(file, async () => {
      const fx = await loadFixture(text, file);
      if (fx.op !== 'group_advantage') return;
      // The handler is CPU code and never touches the engine: no GPU needed for this file.
      const r = await runFixture(undefined as unknown as Engine, fx, file, FIXTURES);
      expect(r.ok, `${r.detail} (worst ${r.worst})`).toBe(true);
    });
  }
});

describe('learnableShare', () => {
  it('counts the groups whose rewards differ, where the advantages are not all 0', () => {
    const rewards = [1, 0, 0, 0, 0, 0, 1, 1, 1];
    const groups = [0, 0, 0, 1, 1, 1, 2, 2, 2];
    expect(learnableShare(rewards, groups)).toBeCloseTo(1 / 3, 12);
    const adv = groupAdvantages(rewards, groups);
    for (const g of [1, 2]) expect(adv.filter((_, i) => groups[i] === g).every((a) => a === 0)).toBe(true);
    expect(learnableShare([], [])).toBe(0);
    expect(learnableShare([0.5, 0.25], ['a', 'a'])).toBe(1);
  });
});
