// Paired comparisons of an experiment's arms on the same held-out questions (pure). Every evaluation keeps each
// question's outcome by id (per-question.jsonl: one row per arm, seed, evaluation and question), so two arms are
// compared question by question and seed by seed: seed k of A beside seed k of B (the base model, one model
// whatever the seed, beside every seed), on the questions both answered. The difference is the mean over seeds and
// questions of A minus B; its primary 95% interval is the two-level bootstrap (seeds, then questions), with the
// question-only interval and each seed's own difference beside it (src/lab/experiment/bootstrap.ts).
import { BOOTSTRAP_SAMPLES, pairedBootstrap, verdictOf, type Bootstrapped, type SeedCells } from './bootstrap.ts';
import { formatPoints, type Claim, type SeedResult } from './aggregate.ts';

export { formatPoints };

export { BOOTSTRAP_SAMPLES };

/** One line of per-question.jsonl. */
export interface QuestionRow {
  arm: string;
  seed: number;
  /** -1 before training; i after iteration i (0-based). */
  iteration: number;
  id: string;
  hops: number;
  correct: boolean;
  /** Searches of the greedy rollout, and how many of its queries repeat an earlier one (absent in older logs). */
  searches?: number;
  repeats?: number;
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
        ...(o.searches !== undefined ? { searches: o.searches, repeats: o.repeats ?? 0 } : {}),
      })),
    ),
  );
}

/** One side of a comparison: an arm's evaluation (the base arm's is at iteration -1). */
export interface Side {
  arm: string;
  iteration: number;
}

/**
 * What is compared per question: held-out EM, searches per rollout, or redundancy (the share of a rollout's queries
 * that repeat an earlier one, averaged over the rollouts that searched).
 */
export type Measure = 'em' | 'searches' | 'redundancy';

export interface Interval extends Bootstrapped {
  /** Questions both sides answered (on every paired seed). */
  questions: number;
  /** Seed pairs. */
  seeds: number;
}

/** The arm that is evaluated only: the untrained model, the same whatever the seed. */
const BASE = 'base';

/** Which questions a comparison counts: all, one hop count, or multi-hop (hops >= 2). */
export type HopFilter = 'all' | 'multi' | number;

const keeps = (f: HopFilter, hops: number) => f === 'all' || (f === 'multi' ? hops >= 2 : hops === f);

/** Per seed, per question id, the side's row. */
function outcomesOf(rows: readonly QuestionRow[], side: Side, hops: HopFilter): Map<number, Map<string, QuestionRow>> {
  const out = new Map<number, Map<string, QuestionRow>>();
  for (const r of rows) {
    if (r.arm !== side.arm || r.iteration !== side.iteration || !keeps(hops, r.hops)) continue;
    let m = out.get(r.seed);
    if (!m) out.set(r.seed, (m = new Map()));
    m.set(r.id, r);
  }
  return out;
}

/** A row's value of the measure as num/den; null where the row lacks it (an older log). */
function cellOf(r: QuestionRow, measure: Measure): [number, number] | null {
  if (measure === 'em') return [Number(r.correct), 1];
  if (r.searches === undefined) return null;
  if (measure === 'searches') return [r.searches, 1];
  return r.searches > 0 ? [(r.repeats ?? 0) / r.searches, 1] : [0, 0];
}

/**
 * A − B on the questions both sides answered, with the two-level and question-only 95% intervals; null when they
 * share no seed pair or no question (or the rows lack the measure).
 */
export function pairedInterval(
  rows: readonly QuestionRow[],
  a: Side,
  b: Side,
  hops: HopFilter = 'all',
  samples = BOOTSTRAP_SAMPLES,
  measure: Measure = 'em',
): Interval | null {
  const A = outcomesOf(rows, a, hops);
  const B = outcomesOf(rows, b, hops);
  const sa = [...A.keys()].sort((x, y) => x - y);
  const sb = [...B.keys()].sort((x, y) => x - y);
  // The base is one model whatever the seed: a base evaluated once pairs with each of the other side's seeds. A
  // trained arm's seed k pairs only with seed k of the other side (one that has finished fewer seeds is not repeated).
  const pairs: [number, number, number][] =
    a.arm === BASE && sa.length === 1 && sb.length > 1
      ? sb.map((s) => [s, sa[0]!, s])
      : b.arm === BASE && sb.length === 1 && sa.length > 1
        ? sa.map((s) => [s, s, sb[0]!])
        : sa.filter((s) => sb.includes(s)).map((s) => [s, s, s]);
  if (pairs.length === 0) return null;
  const ids = [...A.get(pairs[0]![1])!.keys()]
    .filter((id) => pairs.every(([, x, y]) => A.get(x)!.has(id) && B.get(y)!.has(id)))
    .sort();
  if (ids.length === 0) return null;
  const cells = (m: Map<string, QuestionRow>): SeedCells | null => {
    const num = new Float64Array(ids.length);
    const den = new Float64Array(ids.length);
    for (let q = 0; q < ids.length; q++) {
      const c = cellOf(m.get(ids[q]!)!, measure);
      if (!c) return null;
      [num[q], den[q]] = c;
    }
    return den.every((d) => d === 1) ? { num } : { num, den };
  };
  const seedPairs = [];
  for (const [seed, x, y] of pairs) {
    const ca = cells(A.get(x)!);
    const cb = cells(B.get(y)!);
    if (!ca || !cb) return null;
    seedPairs.push({ seed, a: ca, b: cb });
  }
  const label = `paired/${measure}/${a.arm}/${a.iteration}/${b.arm}/${b.iteration}/${hops}`;
  const r = pairedBootstrap(seedPairs, label, samples);
  return r && { ...r, questions: ids.length, seeds: seedPairs.length };
}

/** A named comparison of the report: overall, per hop count and on multi-hop questions. */
export interface Comparison {
  name: string;
  a: Side;
  b: Side;
  all: Interval | null;
  byHop: Record<string, Interval | null>;
  multiHop: Interval | null;
  /** Searches per rollout and redundancy, A − B (for the comparisons whose search behaviour is claimed). */
  searches?: Interval | null;
  redundancy?: Interval | null;
}

/** The trained arms in the report's order, and the pairs of arms it compares after the last iteration. */
const TRAINED = ['drzero', 'self', 'piplay', 'partial', 'gt', 'gt-hop'];
const PAIRS = [
  ['piplay', 'self'],
  ['piplay', 'drzero'],
  ['piplay', 'gt'],
  ['piplay', 'partial'],
  ['partial', 'gt'],
  ['gt', 'drzero'],
  ['self', 'drzero'],
] as const;
/** The pairs whose search behaviour the papers claim something about. */
const SEARCH_PAIRS = new Set(['piplay − drzero', 'piplay − self']);

/** "piplay − drzero", or "piplay it 1 − drzero it 3" when the sides are of different iterations. */
function comparisonName(a: Side, b: Side): string {
  if (a.iteration === b.iteration || a.arm === BASE || b.arm === BASE) return `${a.arm} − ${b.arm}`;
  return `${a.arm} it ${a.iteration + 1} − ${b.arm} it ${b.iteration + 1}`;
}

/**
 * The report's comparisons after the last iteration (`last`, 0-based): each trained arm against the base model,
 * π-Play against the self control, Dr. Zero and the other contexts; and, with more than one iteration, the papers'
 * data efficiency: π-Play after iteration 1 against Dr. Zero after the last.
 */
export function comparisons(rows: readonly QuestionRow[], last: number, samples = BOOTSTRAP_SAMPLES): Comparison[] {
  const arms = new Set(rows.map((r) => r.arm));
  const final = (arm: string): Side => ({ arm, iteration: arm === BASE ? -1 : last });
  const sides: [Side, Side][] = [];
  for (const arm of TRAINED) if (arms.has(arm) && arms.has(BASE)) sides.push([final(arm), final(BASE)]);
  for (const [a, b] of PAIRS) if (arms.has(a) && arms.has(b)) sides.push([final(a), final(b)]);
  if (last > 0 && arms.has('piplay') && arms.has('drzero'))
    sides.push([{ arm: 'piplay', iteration: 0 }, final('drzero')]);
  const hops = [...new Set(rows.map((r) => r.hops))].sort((x, y) => x - y);
  return sides.map(([a, b]) => {
    const name = comparisonName(a, b);
    const search = SEARCH_PAIRS.has(name)
      ? {
          searches: pairedInterval(rows, a, b, 'all', samples, 'searches'),
          redundancy: pairedInterval(rows, a, b, 'all', samples, 'redundancy'),
        }
      : {};
    return {
      name,
      a,
      b,
      all: pairedInterval(rows, a, b, 'all', samples),
      byHop: Object.fromEntries(hops.map((h) => [String(h), pairedInterval(rows, a, b, h, samples)])),
      multiHop: hops.some((h) => h >= 2) ? pairedInterval(rows, a, b, 'multi', samples) : null,
      ...search,
    };
  });
}

/** "+4.2 [+1.0, +7.5]": a difference and its two-level 95% interval, in points of EM. */
export function formatInterval(i: Interval | null): string {
  return i ? `${formatPoints(i.diff)} [${formatPoints(i.lo)}, ${formatPoints(i.hi)}]` : '—';
}

/** "[+1.5, +7.0]": the question-only 95% interval, in points of EM. */
export function formatQuestionOnly(i: Interval | null): string {
  return i ? `[${formatPoints(i.qLo)}, ${formatPoints(i.qHi)}]` : '—';
}

/** "−0.03 [−0.10, +0.04]": a difference of a plain measure (searches, redundancy) and its two-level interval. */
export function formatPlain(i: Interval | null): string {
  return i ? `${signed2(i.diff)} [${signed2(i.lo)}, ${signed2(i.hi)}]` : '—';
}

const signed2 = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;

/** "seed 1 +4.0, seed 2 +5.5": each seed's own difference. */
export function formatPerSeed(i: Interval | null): string {
  return (i?.perSeed ?? []).map((p) => `${p.seed}: ${formatPoints(p.diff)}`).join(', ') || '—';
}

/** The verdict on "A ≈ B": no difference found where the interval holds 0, else which side is higher. */
function similarVerdict(i: Interval | null): string {
  const v = verdictOf(i);
  if (v === 'n/a') return v;
  if (v === 'not shown (the interval holds 0)') return 'no difference found';
  return `does not hold: the first is ${v === 'holds' ? 'higher' : 'lower'}`;
}

const ARM_WORDS: Record<string, string> = {
  drzero: 'Dr. Zero',
  self: 'the self control',
  piplay: 'π-Play (full QCP)',
  partial: 'partial QCP',
  gt: 'GT',
  'gt-hop': 'GT + hops',
};

/**
 * The held-out claims (ALGORITHM.md section 7 and the project's own), each decided by the two-level interval of
 * its comparison: "holds" only where it excludes 0 on the claimed side.
 */
export function pairedClaims(cs: readonly Comparison[]): Claim[] {
  const by = (name: string) => cs.find((c) => c.name === name);
  const out: Claim[] = [];
  /** `similar`: a claim of no difference; `less`: A is claimed below B; `plain`: not in points of EM. */
  type Kind = { similar?: boolean; less?: boolean; plain?: boolean };
  const add = (claim: string, i: Interval | null | undefined, kind: Kind = {}) => {
    if (i === undefined) return;
    const flipped = i && kind.less ? { ...i, lo: -i.hi, hi: -i.lo } : i;
    const questionOnly = (x: Interval) =>
      kind.plain ? `[${signed2(x.qLo)}, ${signed2(x.qHi)}]` : formatQuestionOnly(x);
    out.push({
      claim,
      numbers: i
        ? `${kind.plain ? formatPlain(i) : `${formatInterval(i)} points`} (${i.seeds} seed${i.seeds === 1 ? '' : 's'}, ` +
          `${i.questions} question${i.questions === 1 ? '' : 's'}; questions only ${questionOnly(i)})`
        : '—',
      verdict: kind.similar ? similarVerdict(i) : verdictOf(flipped),
    });
  };
  add('π-Play (full QCP) > the base model', by('piplay − base')?.all);
  add("π-Play > the self control (the privilege, beyond the teacher's pull)", by('piplay − self')?.all);
  add("the self control > the base model (the teacher's pull alone)", by('self − base')?.all);
  add('Dr. Zero > the base model', by('drzero − base')?.all);
  add('π-Play > Dr. Zero at equal steps (held-out EM)', by('piplay − drzero')?.all);
  add('π-Play > Dr. Zero on multi-hop questions (hops ≥ 2)', by('piplay − drzero')?.multiHop);
  add('full QCP > GT (answer only)', by('piplay − gt')?.all);
  add('full QCP > partial QCP', by('piplay − partial')?.all);
  add('partial QCP > GT', by('partial − gt')?.all);
  add('GT ≈ none (Dr. Zero)', by('gt − drzero')?.all, { similar: true });
  const eff = cs.find((c) => c.a.arm === 'piplay' && c.b.arm === 'drzero' && c.a.iteration !== c.b.iteration);
  if (eff)
    add(
      `π-Play after iteration ${eff.a.iteration + 1} ≈ Dr. Zero after iteration ${eff.b.iteration + 1} (data efficiency)`,
      eff.all,
      { similar: true },
    );
  for (const arm of TRAINED) {
    const c = by(`${arm} − base`);
    if (c?.byHop['1'] !== undefined) add(`${ARM_WORDS[arm]} > the base model on 1-hop questions`, c.byHop['1']);
  }
  for (const other of ['drzero', 'self']) {
    const c = by(`piplay − ${other}`);
    if (!c) continue;
    add(`π-Play searches less than ${ARM_WORDS[other]} (searches per rollout)`, c.searches, {
      less: true,
      plain: true,
    });
    add(`π-Play repeats fewer queries than ${ARM_WORDS[other]} (redundancy)`, c.redundancy, {
      less: true,
      plain: true,
    });
  }
  return out;
}
