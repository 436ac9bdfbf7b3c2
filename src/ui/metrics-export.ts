// The run's metrics as files: one JSON object per point (JSONL) or one CSV row per point, each with its series
// (`stage/metric`), x on that chart's axis, iteration, step and value, in the order the series were reported.
import type { Series } from './state.ts';

export interface MetricRow {
  series: string;
  x: number;
  iteration: number;
  step: number;
  value: number;
}

export function metricRows(series: ReadonlyMap<string, Series>): MetricRow[] {
  const rows: MetricRow[] = [];
  for (const [key, s] of series) {
    s.x.forEach((x, i) =>
      rows.push({ series: key, x, iteration: s.at[i]!.iteration, step: s.at[i]!.step, value: s.y[i]! }),
    );
  }
  return rows;
}

export function metricsJsonl(series: ReadonlyMap<string, Series>): string {
  return metricRows(series)
    .map((r) => JSON.stringify(r) + '\n')
    .join('');
}

/** CSV (RFC 4180): a series name with a comma or a quote is quoted. */
export function metricsCsv(series: ReadonlyMap<string, Series>): string {
  const cell = (v: string | number) =>
    typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v);
  const lines = metricRows(series).map((r) => [r.series, r.x, r.iteration, r.step, r.value].map(cell).join(','));
  return ['series,x,iteration,step,value', ...lines].join('\n') + '\n';
}
