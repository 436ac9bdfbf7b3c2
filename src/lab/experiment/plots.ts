// The experiment's two plots (pure): held-out EM after each iteration per arm, and the examiner's
// difficulty drift (the base model's EM on each iteration's examiner questions) per trained arm.
import type { ArmSummary, Stat } from './aggregate.ts';
import { ARM_NAMES, armLabel, isArm } from './plan.ts';
import { linePlot, PALETTE, type Series } from './svg.ts';

/** One colour per arm, the same in both plots. */
function armColor(arm: string, fallback: number): string {
  const i = isArm(arm) ? ARM_NAMES.indexOf(arm) : fallback;
  return PALETTE[i % PALETTE.length]!;
}

const pctOf = (s: Stat | null) => (s ? 100 * s.mean : null);
const errOf = (s: Stat | null) => (s && s.n > 1 ? 100 * s.std : null);

function iterationsAxis(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** One polyline per arm with one point per iteration (the base arm flat and dashed: a fixed model). */
export function emByIterationSvg(summaries: readonly ArmSummary[], iterations: number): string {
  const series: Series[] = summaries.map((s, i) => ({
    id: s.arm,
    color: armColor(s.arm, i),
    name: armLabel(s.arm),
    ys: s.byIteration.map((e) => pctOf(e.em)),
    err: s.byIteration.map((e) => errOf(e.em)),
    dashed: !s.trained,
  }));
  return linePlot({
    title: 'Held-out exact match after each iteration',
    xLabel: 'iteration',
    yLabel: 'held-out EM (%)',
    xs: iterationsAxis(iterations),
    series,
    yMinSpan: 5,
    note: 'mean over seeds; bars: ± std over seeds',
  });
}

/** One polyline per trained arm: the fixed base student's EM on the questions of iteration i's examiner. */
export function driftSvg(summaries: readonly ArmSummary[], iterations: number): string {
  const series: Series[] = summaries
    .filter((s) => s.trained)
    .map((s, i) => ({
      id: s.arm,
      color: armColor(s.arm, i),
      name: armLabel(s.arm),
      ys: s.drift.map((d) => pctOf(d.em)),
      err: s.drift.map((d) => errOf(d.em)),
    }));
  return linePlot({
    title: 'Examiner difficulty drift (a fixed student: the base model)',
    xLabel: 'iteration whose examiner wrote the questions',
    yLabel: "base model's EM on them (%)",
    xs: iterationsAxis(iterations),
    series,
    yMinSpan: 5,
    note:
      'lower = harder questions; mean over seeds, bars: ± std; ' +
      'no point where the examiner wrote no valid question',
  });
}
