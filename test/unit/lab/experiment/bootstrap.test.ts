// The two-level bootstrap against what it must be in cases worked out by hand: seeds that agree question by
// question give the question-only interval; seeds that differ by a constant give the exact distribution of a
// mean of seeds drawn with replacement; the question-only interval matches the normal approximation; a measure
// with denominators (redundancy over rollouts that searched) is a ratio of sums; the unpaired version (the drift)
// matches the normal approximation of two independent proportions.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/env/random.ts';
import { pairedBootstrap, unpairedBootstrap, type SeedPair } from '../../../../src/lab/experiment/bootstrap.ts';

const f64 = (xs: readonly number[]) => Float64Array.from(xs);

/** Seed pairs from per-seed 0/1 outcomes of A and B on the same questions. */
function pairs(a: number[][], b: number[][]): SeedPair[] {
  return a.map((x, k) => ({ seed: k + 1, a: { num: f64(x) }, b: { num: f64(b[k]!) } }));
}

describe('two-level bootstrap', () => {
  it('with seeds that differ only by a constant, is the exact distribution of a mean of seeds drawn with replacement', () => {
    // A − B is +0.1 on every question of seeds 1 and 2, and −0.3 on every question of seed 3 (a collapsed seed).
    const Q = 200;
    const one = (d: number) => ({
      a: { num: new Float64Array(Q).fill(0.5 + d) },
      b: { num: new Float64Array(Q).fill(0.5) },
    });
    const r = pairedBootstrap(
      [
        { seed: 1, ...one(0.1) },
        { seed: 2, ...one(0.1) },
        { seed: 3, ...one(-0.3) },
      ],
      'exact',
    )!;
    expect(r.diff).toBeCloseTo((0.1 + 0.1 - 0.3) / 3, 12);
    expect(r.perSeed.map((p) => p.diff)).toEqual([0.1, 0.1, -0.3].map((d) => expect.closeTo(d, 12)));
    // Questions carry no noise: the question-only interval is the point.
    expect(r.qLo).toBeCloseTo(r.diff, 12);
    expect(r.qHi).toBeCloseTo(r.diff, 12);
    // Three seeds drawn with replacement, j of them seed 3: mean 0.1 − 0.4·j/3. P(j = 3) = 1/27 > 2.5%, so the
    // 2.5% point is −0.3; P(j = 0) = 8/27 > 2.5%, so the 97.5% point is +0.1.
    expect(r.lo).toBeCloseTo(-0.3, 12);
    expect(r.hi).toBeCloseTo(0.1, 12);
  });

  it('with seeds that agree question by question, equals the question-only interval (normal approximation)', () => {
    const rng = new Rng('agree');
    const Q = 400;
    const b = Array.from({ length: Q }, () => Number(rng.next() < 0.4));
    const a = b.map((x) => (rng.next() < 0.15 ? 1 - x : x));
    const r = pairedBootstrap(pairs([a, a, a], [b, b, b]), 'agree')!;
    const d = a.map((x, q) => x - b[q]!);
    const mean = d.reduce((s, x) => s + x, 0) / Q;
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / (Q - 1));
    const half = (1.96 * sd) / Math.sqrt(Q);
    expect(r.diff).toBeCloseTo(mean, 12);
    for (const [lo, hi] of [
      [r.lo, r.hi],
      [r.qLo, r.qHi],
    ]) {
      expect((hi! - lo!) / 2).toBeGreaterThan(0.9 * half);
      expect((hi! - lo!) / 2).toBeLessThan(1.1 * half);
    }
  });

  it('widens with the seed spread where the question-only interval does not', () => {
    const rng = new Rng('spread');
    const Q = 400;
    const base = Array.from({ length: Q }, () => Number(rng.next() < 0.4));
    // Seeds 1-4 gain about 8 points; seed 5 collapses, losing about 14.
    const seed = (gain: number) =>
      base.map((x) => (x ? Number(rng.next() > Math.max(0, -gain)) : Number(rng.next() < Math.max(0, gain))));
    const a = [0.14, 0.14, 0.14, 0.14, -0.35].map(seed);
    const r = pairedBootstrap(
      pairs(
        a,
        a.map(() => base),
      ),
      'spread',
    )!;
    expect(r.qLo).toBeGreaterThan(0);
    expect(r.lo).toBeLessThan(0);
    expect(r.hi - r.lo).toBeGreaterThan(2 * (r.qHi - r.qLo));
  });

  it('a measure with denominators is a ratio of sums per seed (redundancy over the rollouts that searched)', () => {
    // A: redundancy 0.5 and 0 on two rollouts that searched, one that did not (0.25); B: 0.5 on its one (0.5).
    const r = pairedBootstrap(
      [
        {
          seed: 1,
          a: { num: f64([0.5, 0, 0]), den: f64([1, 1, 0]) },
          b: { num: f64([0.5, 0, 0]), den: f64([1, 0, 0]) },
        },
      ],
      'ratio',
      200,
    )!;
    expect(r.diff).toBeCloseTo(0.25 - 0.5, 12);
    expect(r.perSeed[0]!.diff).toBeCloseTo(-0.25, 12);
  });

  it('unpaired: two independent samples per seed, as wide as two independent proportions', () => {
    const rng = new Rng('unpaired');
    const sample = (n: number, p: number) => Array.from({ length: n }, () => Number(rng.next() < p));
    const a = sample(300, 0.5);
    const b = sample(200, 0.3);
    const r = unpairedBootstrap([{ seed: 1, a, b }], 'unpaired')!;
    const pa = a.reduce((s, x) => s + x, 0) / a.length;
    const pb = b.reduce((s, x) => s + x, 0) / b.length;
    const half = 1.96 * Math.sqrt((pa * (1 - pa)) / a.length + (pb * (1 - pb)) / b.length);
    expect(r.diff).toBeCloseTo(pa - pb, 12);
    for (const [lo, hi] of [
      [r.lo, r.hi],
      [r.qLo, r.qHi],
    ]) {
      expect((hi! - lo!) / 2).toBeGreaterThan(0.9 * half);
      expect((hi! - lo!) / 2).toBeLessThan(1.1 * half);
    }
    // A seed with an empty side is left out; none left: no interval.
    expect(unpairedBootstrap([{ seed: 1, a: [], b }], 'empty')).toBeNull();
  });
});
