// Bootstrap intervals of a difference between two sides of an experiment measured on seeds and questions (pure).
// The primary interval is two-level (ALGORITHM.md section 7): each replicate draws the seeds with replacement
// (seed k of A paired with seed k of B), then the questions with replacement, and takes the mean over the drawn
// seeds of A's measure minus B's. The question-only interval keeps every seed once and resamples the questions
// alone. With one seed, or seeds that all agree, the two coincide; where seeds disagree, only the two-level
// interval widens with their spread.
import { Rng } from '../../env/random.ts';

/** Bootstrap resamples of an interval (the percentile interval's ends move by < 0.1 point at 10,000). */
export const BOOTSTRAP_SAMPLES = 10_000;

/**
 * One side's measure on one seed, question by question: `num[q] / den[q]` summed over the questions drawn (EM:
 * num 0 or 1, den 1; redundancy: the rollout's share of repeated queries, den 1 where it searched, else 0).
 * A missing `den` is 1 for every question.
 */
export interface SeedCells {
  num: Float64Array;
  den?: Float64Array;
}

/** Seed k of A beside seed k of B (the base's one seed stands beside each seed of a trained arm). */
export interface SeedPair {
  seed: number;
  a: SeedCells;
  b: SeedCells;
}

export interface Bootstrapped {
  /** Mean over the seed pairs of A − B over all questions. */
  diff: number;
  /** Two-level 95% interval: seeds, then questions. */
  lo: number;
  hi: number;
  /** Question-only 95% interval: every seed once, questions resampled. */
  qLo: number;
  qHi: number;
  /** Each seed pair's own A − B over all questions. */
  perSeed: { seed: number; diff: number }[];
}

/** Multiplicities of n draws with replacement from n items. */
function draw(rng: Rng, n: number, into: Float64Array): Float64Array {
  into.fill(0);
  for (let i = 0; i < n; i++) into[Math.floor(rng.next() * n)]!++;
  return into;
}

/** Σ c·num / Σ c·den (0 when nothing was drawn with a denominator). */
function ratio(cells: SeedCells, c: Float64Array | null): number {
  let n = 0;
  let d = 0;
  for (let q = 0; q < cells.num.length; q++) {
    const w = c ? c[q]! : 1;
    if (w === 0) continue;
    n += w * cells.num[q]!;
    d += w * (cells.den ? cells.den[q]! : 1);
  }
  return d > 0 ? n / d : 0;
}

/** The 2.5% and 97.5% points of the replicates (sorted in place). */
function percentiles(xs: Float64Array): [number, number] {
  xs.sort();
  const at = (p: number) => xs[Math.min(xs.length - 1, Math.max(0, Math.floor(p * xs.length)))]!;
  return [at(0.025), at(0.975)];
}

/**
 * The difference of two sides measured on the same questions for every seed pair, with its two-level and
 * question-only intervals. The question draw is shared by both sides and every seed of a replicate.
 */
export function pairedBootstrap(
  pairs: readonly SeedPair[],
  label: string,
  samples = BOOTSTRAP_SAMPLES,
): Bootstrapped | null {
  const K = pairs.length;
  const Q = K ? pairs[0]!.a.num.length : 0;
  if (K === 0 || Q === 0) return null;
  // Without denominators the measure is a plain mean: A − B per question, precomputed once.
  const plain = pairs.every((p) => !p.a.den && !p.b.den);
  const deltas = plain ? pairs.map((p) => p.a.num.map((x, q) => x - p.b.num[q]!)) : [];
  const pairDiff = (k: number, c: Float64Array | null): number => {
    if (!plain) return ratio(pairs[k]!.a, c) - ratio(pairs[k]!.b, c);
    const d = deltas[k]!;
    let s = 0;
    for (let q = 0; q < Q; q++) s += (c ? c[q]! : 1) * d[q]!;
    return s / Q;
  };
  const perSeed = pairs.map((p, k) => ({ seed: p.seed, diff: pairDiff(k, null) }));
  const diff = perSeed.reduce((s, p) => s + p.diff, 0) / K;
  const rng = new Rng(label);
  const c = new Float64Array(Q);
  const w = new Float64Array(K);
  const twoLevel = new Float64Array(samples);
  const questionOnly = new Float64Array(samples);
  const byPair = new Float64Array(K);
  for (let s = 0; s < samples; s++) {
    draw(rng, Q, c);
    for (let k = 0; k < K; k++) byPair[k] = pairDiff(k, c);
    questionOnly[s] = byPair.reduce((a, x) => a + x, 0) / K;
    // A separate draw of the seeds for the two-level replicate, over the same question draw.
    draw(rng, K, w);
    let sum = 0;
    for (let k = 0; k < K; k++) sum += w[k]! * byPair[k]!;
    twoLevel[s] = sum / K;
  }
  const [lo, hi] = percentiles(twoLevel);
  const [qLo, qHi] = percentiles(questionOnly);
  return { diff, lo, hi, qLo, qHi, perSeed };
}

/** Seed k's two samples of 0/1 outcomes on different questions (the drift: each iteration's own questions). */
export interface UnpairedSeed {
  seed: number;
  a: readonly number[];
  b: readonly number[];
}

/**
 * The difference of two sides measured on different questions per seed (means of A's and B's samples), with its
 * two-level interval (seeds drawn, then each side's questions drawn within each drawn seed) and its question-only
 * interval (every seed once). Seeds with an empty side are left out.
 */
export function unpairedBootstrap(
  seeds: readonly UnpairedSeed[],
  label: string,
  samples = BOOTSTRAP_SAMPLES,
): Bootstrapped | null {
  const kept = seeds.filter((s) => s.a.length > 0 && s.b.length > 0);
  const K = kept.length;
  if (K === 0) return null;
  const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const perSeed = kept.map((s) => ({ seed: s.seed, diff: mean(s.a) - mean(s.b) }));
  const diff = perSeed.reduce((a, p) => a + p.diff, 0) / K;
  const rng = new Rng(label);
  const resampled = (xs: readonly number[]) => {
    let sum = 0;
    for (let i = 0; i < xs.length; i++) sum += xs[Math.floor(rng.next() * xs.length)]!;
    return sum / xs.length;
  };
  const w = new Float64Array(K);
  const twoLevel = new Float64Array(samples);
  const questionOnly = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    let all = 0;
    for (const x of kept) all += resampled(x.a) - resampled(x.b);
    questionOnly[s] = all / K;
    draw(rng, K, w);
    let sum = 0;
    for (let k = 0; k < K; k++) if (w[k]) sum += w[k]! * (resampled(kept[k]!.a) - resampled(kept[k]!.b));
    twoLevel[s] = sum / K;
  }
  const [lo, hi] = percentiles(twoLevel);
  const [qLo, qHi] = percentiles(questionOnly);
  return { diff, lo, hi, qLo, qHi, perSeed };
}

/** The verdict on a claim that A − B > 0: "holds" only where its 95% interval excludes 0 above (null: no interval). */
export type Verdict = 'holds' | 'does not hold' | 'not shown (the interval holds 0)' | 'n/a';

export function verdictOf(i: { lo: number; hi: number } | null): Verdict {
  if (!i) return 'n/a';
  if (i.lo > 0) return 'holds';
  if (i.hi < 0) return 'does not hold';
  return 'not shown (the interval holds 0)';
}
