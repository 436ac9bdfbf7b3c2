import { describe, expect, it } from 'vitest';
import { Rng, hash32 } from '../../../src/env/random.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Environment } from '../../../src/selfplay/environment.ts';

describe('Rng (mulberry32)', () => {
  it('is deterministic per seed, numeric or string', () => {
    const a = new Rng(42),
      b = new Rng(42),
      c = new Rng(43);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(xs);
    expect(new Rng('world').next()).toBe(new Rng('world').next());
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });

  it('int is half-open', () => {
    const r = new Rng(1);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(3, 7);
      expect(v >= 3 && v < 7 && Number.isInteger(v)).toBe(true);
      seen.add(v);
      const w = r.int(4);
      expect(w >= 0 && w < 4).toBe(true);
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
    expect(() => r.int(0)).toThrow(RangeError);
    expect(() => r.int(5, 5)).toThrow(RangeError);
  });

  it('shuffle returns a permutation without touching the input; pick and sample stay in range', () => {
    const r = new Rng(7);
    const items = [1, 2, 3, 4, 5, 6, 7, 8];
    const s = r.shuffle(items);
    expect(items).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...s].sort((x, y) => x - y)).toEqual(items);
    expect(items).toContain(r.pick(items));
    const k = r.sample(items, 3);
    expect(new Set(k).size).toBe(3);
    expect(r.sample(items, 20)).toHaveLength(8);
    expect(() => r.pick([])).toThrow(RangeError);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[r.weightedIndex([1, 0, 2])]!++;
    expect(counts[1]).toBe(0);
    expect(counts[2]! > counts[0]!).toBe(true);
  });

  it('fork depends on the seed and label only, not on draws made before', () => {
    const a = new Rng(9),
      b = new Rng(9);
    for (let i = 0; i < 10; i++) b.next();
    expect(a.fork('x').next()).toBe(b.fork('x').next());
    expect(a.fork('x').next()).not.toBe(a.fork('y').next());
    expect(hash32('abc')).toBe(hash32('abc'));
    expect(hash32('abc', 1)).not.toBe(hash32('abc', 2));
  });

  it("draws the examiner's hop counts in the proportions of the weights (the path the examiner stage calls)", () => {
    const env = Environment.fromWorld(makeConfig('smoke'));
    const r = new Rng('hops');
    const draws = 40_000;
    for (const weights of [
      [4, 3, 2, 1],
      [1, 0, 3],
      [3, 1],
    ]) {
      const counts = weights.map(() => 0);
      for (let i = 0; i < draws; i++) counts[env.sampleHops(r, weights) - 1]!++;
      const total = weights.reduce((a, b) => a + b, 0);
      weights.forEach((w, i) => {
        const p = w / total;
        // Five standard errors of a binomial share (0 exactly for a zero weight).
        expect(Math.abs(counts[i]! / draws - p), `weights ${weights}, hop ${i + 1}`).toBeLessThanOrEqual(
          5 * Math.sqrt((p * (1 - p)) / draws),
        );
      });
    }
  });
});
