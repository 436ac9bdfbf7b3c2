// The dev-world search's choice (pure): per trained arm, the grid point whose runs reach the highest mean
// held-out EM over seeds after the last iteration, among the points every seed of the search finished; a tie goes
// to the point listed first (the grid's order: smaller learning rate first). The choice is written as
// --arm-settings JSON, so the test-world experiment runs each arm at its own best.
import type { SeedResult } from './aggregate.ts';

/** The settings a grid point varies, as flag -> command-line text (e.g. { lr: '1e-4', lambda: '0.1,0.03' }). */
export type PointSettings = Record<string, string>;

/** One finished run of the search: its arm, seed, the settings of its point, and its result. */
export interface SearchRun {
  arm: string;
  seed: number;
  point: PointSettings;
  result: SeedResult;
}

export interface PointSummary {
  point: PointSettings;
  /** Dev EM after the last iteration, per seed (in seed order). */
  final: { seed: number; em: number }[];
  mean: number;
  /** Mean dev EM after each iteration (index i: after iteration i + 1), over the seeds. */
  byIteration: number[];
  /** Whether every seed of the search finished this point. */
  complete: boolean;
}

export interface ArmChoice {
  arm: string;
  points: PointSummary[];
  /** The chosen point (null: no point has every seed yet). */
  chosen: PointSettings | null;
}

const key = (p: PointSettings) => JSON.stringify(Object.entries(p).sort(([a], [b]) => a.localeCompare(b)));

/** The grid's order: flag by flag (by name), the smaller first number of the value first. */
function gridOrder(a: PointSettings, b: PointSettings): number {
  for (const flag of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const x = Number((a[flag] ?? '').split(',')[0]);
    const y = Number((b[flag] ?? '').split(',')[0]);
    if (x !== y) return x - y;
  }
  return 0;
}

/** The last iteration's held-out EM of a run (null: it has none, e.g. it stopped with an error before). */
function finalEm(r: SeedResult): number | null {
  const last = r.evals.filter((e) => e.iteration >= 0).sort((a, b) => b.iteration - a.iteration)[0];
  return last && last.iteration === r.iterations - 1 ? last.em : null;
}

/** Per arm (in `arms` order), every point's dev EM over seeds and the chosen point. */
export function chooseSettings(runs: readonly SearchRun[], arms: readonly string[]): ArmChoice[] {
  const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
  return arms.flatMap((arm) => {
    const mine = runs.filter((r) => r.arm === arm);
    if (mine.length === 0) return [];
    const points = new Map<string, SearchRun[]>();
    for (const r of mine) points.set(key(r.point), [...(points.get(key(r.point)) ?? []), r]);
    const summaries: PointSummary[] = [...points.values()].map((rs) => {
      const sorted = [...rs].sort((a, b) => a.seed - b.seed);
      const final = sorted.flatMap((r) => {
        const em = finalEm(r.result);
        return em === null ? [] : [{ seed: r.seed, em }];
      });
      const iterations = Math.max(...sorted.map((r) => r.result.iterations));
      const byIteration = Array.from({ length: iterations }, (_, i) => {
        const ems = sorted.flatMap((r) => r.result.evals.filter((e) => e.iteration === i).map((e) => e.em));
        return ems.length ? ems.reduce((a, b) => a + b, 0) / ems.length : Number.NaN;
      });
      return {
        point: sorted[0]!.point,
        final,
        mean: final.length ? final.reduce((a, b) => a + b.em, 0) / final.length : Number.NaN,
        byIteration,
        complete: seeds.every((s) => final.some((f) => f.seed === s)),
      };
    });
    summaries.sort((a, b) => gridOrder(a.point, b.point));
    let best: PointSummary | null = null;
    for (const p of summaries) if (p.complete && (best === null || p.mean > best.mean)) best = p;
    return [{ arm, points: summaries, chosen: best?.point ?? null }];
  });
}

/** What a search runs: its trained arms, the number of grid points of each, and the seeds every point runs. */
export interface SearchGrid {
  arms: readonly string[];
  points: number;
  seeds: readonly number[];
}

/**
 * Why the search is not finished (an arm short of points or of seeds, listed), or null when every arm of `grid` has
 * every point on every seed: only then is a choice made, so that no arm is chosen from part of its grid.
 */
export function unfinished(choices: readonly ArmChoice[], grid: SearchGrid): string | null {
  const short = grid.arms.flatMap((arm) => {
    const points = choices.find((a) => a.arm === arm)?.points ?? [];
    const runs = points.reduce((n, p) => n + p.final.filter((f) => grid.seeds.includes(f.seed)).length, 0);
    const want = grid.points * grid.seeds.length;
    return runs < want ? [`${arm} ${runs} of ${want} runs`] : [];
  });
  return short.length ? `the search is not finished (${short.join(', ')})` : null;
}
