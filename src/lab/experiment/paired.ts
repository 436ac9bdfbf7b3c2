// Paired comparisons of an experiment's arms on the same held-out questions (pure). Every evaluation keeps each
// question's outcome by id (per-question.jsonl: one row per arm, seed, evaluation and question), so two arms are
// compared question by question: per question, the share of seeds that answered it, A minus B; the mean of those
// differences is the EM difference, and a bootstrap over questions (resampled with replacement, the same draw for
// both arms) gives its 95% interval. The seeds are pooled in each question's share; their spread is reported
// beside, as each seed's own difference.
import { Rng } from '../../env/random.ts';
import type { Claim, SeedResult } from './aggregate.ts';

/** One line of per-question.jsonl. */
export interface QuestionRow {
  arm: string;
  seed: number;
  /** -1 before training; i after iteration i (0-based). */
  iteration: number;
  id: string;
  hops: number;
  correct: boolean;
}

/** Every question outcome the runs' evaluations kept, arm by arm, seed by seed. */
export function perQuestionRows(results: readonly SeedResult[]): QuestionRow[] {
  return results.flatMap((r) =>
    r.evals.flatMap((e) =>
      (e.outcomes ?? []).map((o) => ({
        arm: r.arm,
        seed: r.seed,
        iteration: e.iteration,
        id: o.id,
        hops: o.hops,
        correct: o.correct,
      })),
    ),
  );
}

/** One side of a comparison: an arm's evaluation (the base arm's is at iteration -1). */
export interface Side {
  arm: string;
  iteration: number;
}

export interface Interval {
  /** Mean over questions of (A's share of seeds right − B's). */
  diff: number;
  lo: number;
  hi: number;
  /** Questions both sides answered. */
  questions: number;
  /** Per seed present on both sides (a side with one seed, the base, pairs with every seed): A − B on that seed. */
  perSeed: { seed: number; diff: number }[];
}

/** 'holds' only where the interval excludes 0 on the claimed side. */
export type PairedVerdict = 'holds' | 'does not hold' | 'not shown (the interval holds 0)' | 'n/a';

export function verdictOf(i: Interval | null): PairedVerdict {
  if (!i) return 'n/a';
  if (i.lo > 0) return 'holds';
  if (i.hi < 0) return 'does not hold';
  return 'not shown (the interval holds 0)';
}

/** Bootstrap resamples of an interval (the percentile interval's ends move by < 0.1 point at 10,000). */
export const BOOTSTRAP_SAMPLES = 10_000;

/** Which questions a comparison counts: all, one hop count, or multi-hop (hops >= 2). */
export type HopFilter = 'all' | 'multi' | number;

const keeps = (f: HopFilter, hops: number) => f === 'all' || (f === 'multi' ? hops >= 2 : hops === f);

/** Per question id, per seed, whether the side answered it. */
function outcomesOf(rows: readonly QuestionRow[], side: Side, hops: HopFilter): Map<string, Map<number, boolean>> {
  const out = new Map<string, Map<number, boolean>>();
  for (const r of rows) {
    if (r.arm !== side.arm || r.iteration !== side.iteration || !keeps(hops, r.hops)) continue;
    let m = out.get(r.id);
    if (!m) out.set(r.id, (m = new Map()));
    m.set(r.seed, r.correct);
  }
  return out;
}

const share = (m: Map<number, boolean>) => [...m.values()].filter(Boolean).length / m.size;

/** A − B on the questions both sides answered, with a paired bootstrap 95% interval; null when they share none. */
export function pairedInterval(
  rows: readonly QuestionRow[],
  a: Side,
  b: Side,
  hops: HopFilter = 'all',
  samples = BOOTSTRAP_SAMPLES,
): Interval | null {
  const A = outcomesOf(rows, a, hops);
  const B = outcomesOf(rows, b, hops);
  const ids = [...A.keys()].filter((id) => B.has(id)).sort();
  if (ids.length === 0) return null;
  const d = ids.map((id) => share(A.get(id)!) - share(B.get(id)!));
  const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const rng = new Rng(`paired/${a.arm}/${a.iteration}/${b.arm}/${b.iteration}/${hops}`);
  const means = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    let sum = 0;
    for (let j = 0; j < d.length; j++) sum += d[Math.floor(rng.next() * d.length)]!;
    means[s] = sum / d.length;
  }
  means.sort();
  const at = (q: number) => means[Math.min(samples - 1, Math.max(0, Math.floor(q * samples)))]!;
  return { diff: mean(d), lo: at(0.025), hi: at(0.975), questions: ids.length, perSeed: perSeed(A, B, ids) };
}

function perSeed(
  A: Map<string, Map<number, boolean>>,
  B: Map<string, Map<number, boolean>>,
  ids: readonly string[],
): { seed: number; diff: number }[] {
  const seedsOf = (M: typeof A) => [...new Set([...M.values()].flatMap((m) => [...m.keys()]))].sort((x, y) => x - y);
  const sa = seedsOf(A);
  const sb = seedsOf(B);
  // The base is one model whatever the seed: one seed of it pairs with each of the other side's.
  const seeds = sa.length === 1 ? sb : sb.length === 1 ? sa : sa.filter((s) => sb.includes(s));
  const pick = (m: Map<number, boolean>, s: number) => (m.size === 1 ? [...m.values()][0]! : m.get(s));
  return seeds.flatMap((s) => {
    let n = 0;
    let sum = 0;
    for (const id of ids) {
      const x = pick(A.get(id)!, s);
      const y = pick(B.get(id)!, s);
      if (x === undefined || y === undefined) continue;
      n++;
      sum += Number(x) - Number(y);
    }
    return n ? [{ seed: s, diff: sum / n }] : [];
  });
}

/** A named comparison of the report: overall, per hop count and on multi-hop questions. */
export interface Comparison {
  name: string;
  a: Side;
  b: Side;
  all: Interval | null;
  byHop: Record<string, Interval | null>;
  multiHop: Interval | null;
}

/**
 * The report's comparisons after the last iteration (`last`, 0-based): each trained arm against the base model,
 * π-Play against Dr. Zero, and full against partial against GT.
 */
export function comparisons(rows: readonly QuestionRow[], last: number, samples = BOOTSTRAP_SAMPLES): Comparison[] {
  const arms = new Set(rows.map((r) => r.arm));
  const final = (arm: string): Side => ({ arm, iteration: arm === 'base' ? -1 : last });
  const pairs: [string, string, string][] = [];
  for (const arm of ['drzero', 'piplay', 'partial', 'gt', 'gt-hop'])
    if (arms.has(arm) && arms.has('base')) pairs.push([`${arm} − base`, arm, 'base']);
  for (const [a, b] of [
    ['piplay', 'drzero'],
    ['piplay', 'partial'],
    ['partial', 'gt'],
    ['piplay', 'gt'],
    ['gt', 'drzero'],
  ] as const)
    if (arms.has(a) && arms.has(b)) pairs.push([`${a} − ${b}`, a, b]);
  const hops = [...new Set(rows.map((r) => r.hops))].sort((x, y) => x - y);
  return pairs.map(([name, x, y]) => {
    const a = final(x);
    const b = final(y);
    return {
      name,
      a,
      b,
      all: pairedInterval(rows, a, b, 'all', samples),
      byHop: Object.fromEntries(hops.map((h) => [String(h), pairedInterval(rows, a, b, h, samples)])),
      multiHop: hops.some((h) => h >= 2) ? pairedInterval(rows, a, b, 'multi', samples) : null,
    };
  });
}

/** "+4.2": a difference of EM in points. */
export const formatPoints = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)}`;

/** "+4.2 points [+1.0, +7.5]": a difference and its 95% interval, in points of EM. */
export function formatInterval(i: Interval | null): string {
  return i ? `${formatPoints(i.diff)} [${formatPoints(i.lo)}, ${formatPoints(i.hi)}]` : '—';
}

/** The papers' held-out EM claims (ALGORITHM.md section 7) and the issue's "better than the base", as intervals. */
export function pairedClaims(cs: readonly Comparison[]): Claim[] {
  const by = (name: string) => cs.find((c) => c.name === name);
  const out: Claim[] = [];
  const add = (claim: string, i: Interval | null | undefined, similar = false) => {
    if (i === undefined) return;
    const v = verdictOf(i);
    const verdict = similar
      ? v === 'not shown (the interval holds 0)'
        ? 'no difference found'
        : v === 'n/a'
          ? v
          : 'does not hold'
      : v;
    out.push({ claim, numbers: `${formatInterval(i)} points (${i?.questions ?? 0} questions)`, verdict });
  };
  add('the trained π-Play (full QCP) student > the base model', by('piplay − base')?.all);
  add('the trained Dr. Zero student > the base model', by('drzero − base')?.all);
  add('π-Play > Dr. Zero at equal steps (held-out EM)', by('piplay − drzero')?.all);
  add('π-Play > Dr. Zero on multi-hop questions (hops ≥ 2)', by('piplay − drzero')?.multiHop);
  add('full QCP > partial QCP', by('piplay − partial')?.all);
  add('partial QCP > GT', by('partial − gt')?.all);
  add('GT ≈ none (Dr. Zero)', by('gt − drzero')?.all, true);
  return out;
}
