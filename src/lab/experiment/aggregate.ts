// Aggregation of an experiment's runs (pure): per arm, mean and standard deviation over seeds of the
// held-out exact match (overall and per hop count) after each iteration, searches per rollout and query
// redundancy, and the examiner's difficulty drift (a fixed student's EM on the questions each iteration's
// examiner wrote).
import type { EvalMetrics, StepMetrics } from '../../selfplay/events.ts';
import { BOOTSTRAP_SAMPLES, unpairedBootstrap, verdictOf } from './bootstrap.ts';
import { formatCodeVersion, type CodeVersion } from '../../node/code-version.ts';

/** "+4.2": a difference of EM in points. */
export const formatPoints = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)}`;

/** Mean and sample standard deviation (n - 1; 0 for a single value) of n values. */
export interface Stat {
  mean: number;
  std: number;
  n: number;
}

/** null for no values. */
export function stat(values: readonly number[]): Stat | null {
  const n = values.length;
  if (n === 0) return null;
  // Equal values give exactly that value and 0 (no rounding noise to mistake for a difference).
  if (values.every((v) => v === values[0])) return { mean: values[0]!, std: 0, n };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const std = n > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) * (v - mean), 0) / (n - 1)) : 0;
  return { mean, std, n };
}

/** The fixed student's exact match on the valid questions one iteration's examiner wrote. */
export interface DriftPoint {
  /** 0-based iteration whose examiner wrote the questions (after its examiner stage). */
  iteration: number;
  /** Questions evaluated (0: the examiner wrote no valid question). */
  n: number;
  em: number;
  emByHop: Record<string, number>;
  /** Each question's outcome, in order (absent in result.json files of older versions). */
  outcomes?: boolean[];
}

/** Where one iteration's student training set came from. */
export interface GenerationPoint {
  iteration: number;
  questions: number;
  /** Share of the examiner's rollouts with a valid format (f > 0). */
  validShare: number;
  /** Share of the training set the world generator filled (the project's fallback). */
  fallbackShare: number;
}

/** What one iteration's training had to learn from (means over its steps' metrics). */
export interface SignalPoint {
  iteration: number;
  /**
   * Share of the examiner's questions true of the world (auditQuestion 'right'); absent in older runs or without a
   * world.
   */
  rightShare?: number;
  /**
   * Share of the examiner's questions that some but not all of the n student rollouts answered (0 < k < n); absent
   * without examiner steps.
   */
  solvableShare?: number;
  /**
   * Share of the student's questions whose n rollouts did not all score the same (GRPO's advantages are not all 0);
   * absent in older runs.
   */
  learnableShare?: number;
  /** The student's reward: its rollouts' EM against the examiner's answers. */
  studentReward: number;
  /** The distillation term D (0 without a teacher). */
  distill: number;
}

/**
 * Per iteration, the means of the examiner steps' true and solvable shares and the student steps' learnable share,
 * reward and D.
 */
export function signalOf(metrics: readonly StepMetrics[], iterations: number): SignalPoint[] {
  /** The metric's mean over the iteration's steps of the stage; undefined when it was not logged. */
  const meanOf = (stage: string, it: number, key: string) => {
    const xs = metrics
      .filter((m) => m.stage === stage && m.iteration === it && typeof m[key] === 'number')
      .map((m) => m[key] as number);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined;
  };
  const avg = (stage: string, it: number, key: string) => meanOf(stage, it, key) ?? 0;
  /** { [name]: the mean } when the metric was logged, else nothing (not 0: it was not measured). */
  const optional = (name: keyof SignalPoint, stage: string, it: number, key: string) => {
    const m = meanOf(stage, it, key);
    return m === undefined ? {} : { [name]: m };
  };
  return Array.from({ length: iterations }, (_, it) => ({
    iteration: it,
    ...optional('rightShare', 'examiner', it, 'right_share'),
    ...optional('solvableShare', 'examiner', it, 'solvable_share'),
    ...optional('learnableShare', 'student', it, 'learnable_share'),
    studentReward: avg('student', it, 'reward'),
    distill: avg('student', it, 'distill'),
  }));
}

/** Everything the report uses of one run (one arm, one seed); stored as the run folder's result.json. */
export interface SeedResult {
  arm: string;
  seed: number;
  /** false: the base arm (one evaluation of the base model, iteration -1). */
  trained: boolean;
  iterations: number;
  /** Held-out evaluations: iteration -1 before training, i after iteration i (0-based). */
  evals: EvalMetrics[];
  drift: DriftPoint[];
  generation: GenerationPoint[];
  /** Trained runs: what each iteration had to learn from (absent in result.json files of older versions). */
  signal?: SignalPoint[];
  seconds: number;
  /** Set when the run stopped with an error (e.g. a non-finite loss); its evals are those made before. */
  error?: string;
  /** The code that finished the run (absent in result.json files of older versions). */
  code?: CodeVersion;
  /** The code that started it, where a resumed run was started by other code (its config.json's). */
  codeAtStart?: CodeVersion;
}

export interface EvalSummary {
  em: Stat | null;
  byHop: Record<string, Stat | null>;
  /** Per seed, the mean of the per-hop EMs of hops >= 2, then over seeds. */
  multiHop: Stat | null;
  searches: Stat | null;
  redundancy: Stat | null;
}

export interface ArmSummary {
  arm: string;
  trained: boolean;
  seeds: number[];
  /** Before training (the base arm's only evaluation; trained arms only with --eval-at-start). */
  start: EvalSummary;
  /** After the last iteration (for the base arm: its evaluation; the model is fixed). */
  final: EvalSummary;
  /** Index i: after iteration i + 1 (the base arm repeats its evaluation: a fixed model). */
  byIteration: EvalSummary[];
  /** Index i: the fixed student's EM on the questions of iteration i + 1; `questions` sums over seeds. */
  drift: { em: Stat | null; questions: number }[];
  /** Index i: share of iteration i + 1's training set filled by the world generator. */
  fallback: (Stat | null)[];
  validShare: (Stat | null)[];
  /** Index i: iteration i + 1's training signal over seeds (null for the base arm). */
  signal: {
    rightShare: Stat | null;
    solvableShare: Stat | null;
    learnableShare: Stat | null;
    studentReward: Stat | null;
    distill: Stat | null;
  }[];
  /** Seeds whose run stopped with an error, and the message. */
  errors: { seed: number; error: string }[];
  seconds: Stat | null;
}

function summarise(evals: readonly (EvalMetrics | undefined)[], hops: readonly string[]): EvalSummary {
  const got = evals.filter((e): e is EvalMetrics => e !== undefined);
  const byHop: Record<string, Stat | null> = {};
  for (const h of hops) byHop[h] = stat(got.flatMap((e) => (e.emByHop[h] !== undefined ? [e.emByHop[h]!] : [])));
  return {
    em: stat(got.map((e) => e.em)),
    byHop,
    multiHop: stat(
      got.flatMap((e) => {
        const m = multiHopEm(e);
        return m === null ? [] : [m];
      }),
    ),
    searches: stat(got.map((e) => e.searchesPerRollout)),
    redundancy: stat(got.map((e) => e.redundancy)),
  };
}

/** Hop counts that occur in any evaluation, in numeric order. */
export function hopsOf(results: readonly SeedResult[]): string[] {
  const s = new Set<string>();
  for (const r of results) for (const e of r.evals) for (const h of Object.keys(e.emByHop)) s.add(h);
  return [...s].sort((a, b) => Number(a) - Number(b));
}

/**
 * One summary per arm, in the order `arms` gives (arms without results are left out). `iterations` is
 * the number of iterations of the trained runs.
 */
export function aggregate(results: readonly SeedResult[], arms: readonly string[], iterations: number): ArmSummary[] {
  const hops = hopsOf(results);
  const out: ArmSummary[] = [];
  for (const arm of arms) {
    const rs = results.filter((r) => r.arm === arm).sort((a, b) => a.seed - b.seed);
    if (rs.length === 0) continue;
    const trained = rs[0]!.trained;
    const at = (r: SeedResult, it: number) => r.evals.find((e) => e.iteration === it);
    const start = summarise(
      rs.map((r) => at(r, -1)),
      hops,
    );
    const iters = Array.from({ length: iterations }, (_, i) => i);
    const byIteration = iters.map((i) =>
      trained
        ? summarise(
            rs.map((r) => at(r, i)),
            hops,
          )
        : start,
    );
    const drift = iters.map((i) => {
      const pts = rs.flatMap((r) => r.drift.filter((d) => d.iteration === i));
      return { em: stat(pts.filter((d) => d.n > 0).map((d) => d.em)), questions: pts.reduce((s, d) => s + d.n, 0) };
    });
    const gen = (f: (g: GenerationPoint) => number) =>
      iters.map((i) => stat(rs.flatMap((r) => r.generation.filter((g) => g.iteration === i).map(f))));
    out.push({
      arm,
      trained,
      seeds: rs.map((r) => r.seed),
      start,
      final: trained
        ? summarise(
            rs.map((r) => at(r, iterations - 1)),
            hops,
          )
        : start,
      byIteration,
      drift: trained ? drift : iters.map(() => ({ em: null, questions: 0 })),
      fallback: trained ? gen((g) => g.fallbackShare) : iters.map(() => null),
      validShare: trained ? gen((g) => g.validShare) : iters.map(() => null),
      signal: iters.map((i) => {
        const pts = trained ? rs.flatMap((r) => (r.signal ?? []).filter((p) => p.iteration === i)) : [];
        const present = (key: 'rightShare' | 'solvableShare' | 'learnableShare') =>
          stat(pts.flatMap((p) => (p[key] === undefined ? [] : [p[key]])));
        return {
          rightShare: present('rightShare'),
          solvableShare: present('solvableShare'),
          learnableShare: present('learnableShare'),
          studentReward: stat(pts.map((p) => p.studentReward)),
          distill: stat(pts.map((p) => p.distill)),
        };
      }),
      errors: rs.flatMap((r) => (r.error ? [{ seed: r.seed, error: r.error }] : [])),
      seconds: stat(rs.map((r) => r.seconds)),
    });
  }
  return out;
}

/** "Multi-hop" EM of one run's evaluation: the mean of its per-hop EMs for hops >= 2 (null without any). */
export function multiHopEm(e: EvalMetrics): number | null {
  const v = Object.entries(e.emByHop)
    .filter(([h]) => Number(h) >= 2)
    .map(([, x]) => x);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

/** The code versions that made the runs ("1a2b3c4d5e6f (dirty)"), each with its runs ("piplay-seed1"), in order. */
export function codeVersions(results: readonly SeedResult[]): { code: string; runs: string[] }[] {
  const by = new Map<string, string[]>();
  for (const r of results) {
    const versions = r.codeAtStart ? [r.codeAtStart, r.code] : [r.code];
    for (const v of versions) {
      const key = formatCodeVersion(v);
      by.set(key, [...(by.get(key) ?? []), `${r.arm}-seed${r.seed}`]);
    }
  }
  return [...by].map(([code, runs]) => ({ code, runs }));
}

/** A claim of the report: what is claimed, the numbers compared, and the verdict of its two-level interval. */
export interface Claim {
  claim: string;
  /** The numbers compared, as text. */
  numbers: string;
  verdict: string;
}

const ARM_NAMES: Record<string, string> = { piplay: 'π-Play', self: 'self control', drzero: 'Dr. Zero' };

/**
 * The papers' drift claim, per arm: the examiner's questions get harder, so the base model's EM on the questions
 * of iteration 1 is above its EM on those of the last iteration. Each iteration has its own questions, so the
 * two-level interval draws seeds, then each iteration's questions within each drawn seed (unpairedBootstrap);
 * runs whose result.json lacks the drift's per-question outcomes (older versions) give no claim.
 */
export function driftClaims(results: readonly SeedResult[], samples = BOOTSTRAP_SAMPLES): Claim[] {
  const out: Claim[] = [];
  for (const arm of Object.keys(ARM_NAMES)) {
    const rs = results.filter((r) => r.arm === arm && r.trained);
    const last = Math.max(0, ...rs.map((r) => r.iterations - 1));
    if (rs.length === 0 || last === 0) continue;
    const at = (r: SeedResult, it: number) => r.drift.find((d) => d.iteration === it)?.outcomes;
    const seeds = rs.flatMap((r) => {
      const a = at(r, 0);
      const b = at(r, last);
      return a && b ? [{ seed: r.seed, a: a.map(Number), b: b.map(Number) }] : [];
    });
    if (seeds.length === 0) continue;
    const i = unpairedBootstrap(seeds, `drift/${arm}`, samples);
    out.push({
      claim:
        `the ${ARM_NAMES[arm]} examiner's questions get harder (the base model's EM on them drops from ` +
        `iteration 1 to ${last + 1})`,
      numbers: i
        ? `iteration 1 − iteration ${last + 1}: ${formatPoints(i.diff)} [${formatPoints(i.lo)}, ${formatPoints(i.hi)}] ` +
          `points (${i.perSeed.length} seeds; questions only [${formatPoints(i.qLo)}, ${formatPoints(i.qHi)}])`
        : '—',
      verdict: verdictOf(i),
    });
  }
  return out;
}
