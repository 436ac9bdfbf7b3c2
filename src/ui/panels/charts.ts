// Training curves, TensorBoard-like: one small uPlot chart per quantity, a smoothing slider (debiased
// exponential moving average, drawn over the faint raw curve) and values under the cursor in each legend.
// Curated charts come first (the quantities the paper reports); every other metric the run emits gets a
// chart of its own below them, so nothing the loop measures is hidden. A second run (a stored run or a recorded
// example, e.g. Dr. Zero beside π-Play) can be overlaid: its curves share the charts, dashed, in the same colours.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { fmtNum } from '../format.ts';
import { html } from '../html.ts';
import type { Series } from '../state.ts';
import { metricsCsv, metricsJsonl } from '../metrics-export.ts';

/** TensorBoard's smoothing: an EMA with weight w, debiased at the start; non-finite values are passed over. */
export function smooth(values: readonly (number | null)[], w: number): (number | null)[] {
  if (w <= 0) return values.slice();
  let last = 0;
  let n = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) return null;
    last = last * w + (1 - w) * v;
    n++;
    return last / (1 - Math.pow(w, n));
  });
}

/** Aligns series on the union of their x values (null where a series has no point). */
export function align(series: readonly Series[]): { x: number[]; ys: (number | null)[][] } {
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const pos = new Map(xs.map((x, i) => [x, i]));
  const ys = series.map((s) => {
    const y: (number | null)[] = new Array(xs.length).fill(null);
    s.x.forEach((x, i) => (y[pos.get(x)!] = s.y[i]!));
    return y;
  });
  return { x: xs, ys };
}

export interface ChartSpec {
  id: string;
  title: string;
  /** The axis the chart's series share ('eval' points are evaluations; stages count their own steps). */
  xLabel: string;
  /** Series: a metric key (`stage/name`) pattern and its legend label. The first match of each is used. */
  series: { match: RegExp; label: string }[];
  range01?: boolean;
  note?: string;
  /** x is the iteration an evaluation followed (0: before training), labelled so on the axis and in the legend. */
  iterationAxis?: boolean;
  /** A schedule that holds each value until the next point: drawn as steps, never smoothed. */
  stepped?: boolean;
  /** Each point is a measurement of its own (a held-out evaluation), not a noisy step: never smoothed. */
  measured?: boolean;
}

/** Whether a chart draws its series smoothed (bold) over their raw values (faint). */
const smoothed = (spec: Pick<ChartSpec, 'stepped' | 'measured'> | undefined) => !spec?.stepped && !spec?.measured;

/** The x range of an iteration axis over the iterations `xs` (none yet: before training alone), padded by 0.4. */
export function iterationRange(xs: ArrayLike<number | null | undefined>): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (typeof x !== 'number') continue;
    lo = Math.min(lo, x);
    hi = Math.max(hi, x);
  }
  return lo <= hi ? [lo - 0.4, hi + 0.4] : [-0.4, 0.4];
}

/** An evaluation's x: the iteration it followed, 0 for the one before training. */
export function iterationLabel(x: number): string {
  return x <= 0 ? 'before training' : `iteration ${x}`;
}

/** The quantities the paper reports, in the order it discusses them. */
export const CURATED: ChartSpec[] = [
  {
    id: 'em',
    title: 'Held-out EM by hop',
    xLabel: 'evaluated after',
    range01: true,
    iterationAxis: true,
    measured: true,
    series: [
      { match: /^eval\/em$/, label: 'all' },
      { match: /^eval\/em_hop1$/, label: '1-hop' },
      { match: /^eval\/em_hop2$/, label: '2-hop' },
      { match: /^eval\/em_hop3$/, label: '3-hop' },
      { match: /^eval\/em_hop4$/, label: '4-hop' },
    ],
  },
  {
    id: 'student-reward',
    title: 'Student reward (EM on the examiner’s questions) · share of questions GRPO learns from',
    xLabel: 'student step',
    range01: true,
    series: [
      { match: /^student\/(reward|reward_mean|student_reward)$/, label: 'reward' },
      { match: /^student\/learnable_share$/, label: 'questions GRPO learns from' },
    ],
  },
  {
    id: 'examiner-reward',
    title: 'Examiner reward · share of 0<k<n · share true of the world',
    xLabel: 'examiner step',
    series: [
      { match: /^examiner\/(reward|reward_mean|examiner_reward)$/, label: 'reward' },
      { match: /^examiner\/(solvable_share|learnable_share|mid_share)$/, label: '0<k<n' },
      { match: /^examiner\/(format_reward|format)$/, label: 'format' },
      { match: /^examiner\/right_share$/, label: 'true' },
    ],
  },
  {
    id: 'kl',
    title: 'KL to teacher (top-K distillation term)',
    xLabel: 'student step',
    series: [{ match: /^student\/(distill|kl|topk_kl|distill_kl)$/, label: 'KL' }],
  },
  {
    id: 'lambda',
    title: 'λ (distillation weight)',
    xLabel: 'student step',
    stepped: true,
    series: [{ match: /^student\/(lambda|lam)$/, label: 'λ' }],
  },
  {
    id: 'clip',
    title: 'Clip fraction',
    xLabel: 'student step',
    range01: true,
    series: [{ match: /^student\/(clip_fraction|clip_frac|clipfrac)$/, label: 'clipped' }],
  },
  {
    id: 'searches',
    title: 'Searches per rollout',
    xLabel: 'step of each stage',
    series: [
      { match: /^student\/(searches_per_rollout|searches)$/, label: 'student' },
      { match: /^examiner\/(searches_per_rollout|searches)$/, label: 'examiner' },
    ],
  },
  {
    id: 'tps',
    title: 'Tokens / s',
    xLabel: 'step of each stage',
    series: [
      { match: /^student\/(tokens_per_s|tokens_per_sec)$/, label: 'student' },
      { match: /^examiner\/(tokens_per_s|tokens_per_sec)$/, label: 'examiner' },
    ],
  },
];

export interface ResolvedChart {
  spec: ChartSpec;
  keys: string[];
  labels: string[];
}

/** Curated charts that have data, then one chart per remaining metric (grouped by stage). */
export function resolveCharts(keys: Iterable<string>, curated: readonly ChartSpec[] = CURATED): ResolvedChart[] {
  const all = [...keys].sort();
  const used = new Set<string>();
  const out: ResolvedChart[] = [];
  for (const spec of curated) {
    const ks: string[] = [];
    const ls: string[] = [];
    for (const s of spec.series) {
      const k = all.find((x) => s.match.test(x) && !used.has(x));
      if (k) {
        ks.push(k);
        ls.push(s.label);
      }
    }
    if (ks.length) {
      ks.forEach((k) => used.add(k));
      out.push({ spec, keys: ks, labels: ls });
    }
  }
  for (const k of all) {
    if (used.has(k)) continue;
    const [stage, name] = [k.slice(0, k.indexOf('/')), k.slice(k.indexOf('/') + 1)];
    const spec: ChartSpec = {
      id: `m-${k}`,
      title: `${name} (${stage})`,
      xLabel: stage === 'eval' ? 'evaluated after' : `${stage} step`,
      series: [],
    };
    if (stage === 'eval') spec.iterationAxis = true;
    out.push({ spec, keys: [k], labels: [name] });
  }
  return out;
}

const COLORS = ['#3b5bdb', '#e8590c', '#2b8a3e', '#ae3ec9', '#c92a2a', '#0c8599'];

function withAlpha(hex: string, a: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

interface Live {
  chart: uPlot;
  signature: string;
  el: HTMLElement;
}

/** A short axis tick: 0.25, 12, 1.5k, 3e−7. */
export function tickText(t: number): string {
  if (t === 0) return '0';
  const a = Math.abs(t);
  if (a < 1e-3 || a >= 1e6) return t.toExponential(0).replace('-', '−').replace('e+', 'e');
  if (a >= 1e4) return `${Number((t / 1e3).toFixed(1))}k`;
  return String(Number(t.toPrecision(3))).replace('-', '−');
}

/** The y range: the data's, padded; a flat series gets a unit-sized range instead of uPlot's 0..100. */
function yRange(_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax {
  if (min === null || max === null) return [0, 1];
  if (min === max) {
    if (min === 0) return [0, 1];
    const pad = Math.abs(min) * 0.5;
    return [min - pad, max + pad];
  }
  const pad = (max - min) * 0.08;
  return [min >= 0 && min - pad < 0 ? 0 : min - pad, max + pad];
}

/** Integer step ticks (points are steps); uPlot picks the first increment that fits. */
const STEP_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

/**
 * A chart's data: x, then each series smoothed and raw (the layout chartOptions expects); a stepped or measured
 * chart's "smoothed" copy is its raw values.
 */
export function chartData(
  x: number[],
  ys: (number | null)[][],
  weight: number,
  spec?: Pick<ChartSpec, 'stepped' | 'measured'>,
): uPlot.AlignedData {
  return [x, ...ys.flatMap((y) => [smooth(y, smoothed(spec) ? weight : 0), y])];
}

/** The index of a series' last point (the legend shows it while the cursor is off the chart), or null. */
export function lastIndex(values: ArrayLike<number | null | undefined> | undefined): number | null {
  if (!values) return null;
  for (let i = values.length - 1; i >= 0; i--)
    if (values[i] !== null && values[i] !== undefined && Number.isFinite(values[i])) return i;
  return null;
}

/** How one curve is drawn: its colour (an index into the palette) and whether it is dashed (an overlaid run). */
export interface LineStyle {
  color: number;
  dashed: boolean;
}

/**
 * uPlot options of a chart: per label a bold smoothed curve and a faint raw one (also used by the pretraining
 * panel); `lines` styles each label's pair (default: a colour each, solid).
 */
export function chartOptions(
  spec: ChartSpec,
  labels: readonly string[],
  size: { width: number; height: number },
  lines: readonly LineStyle[] = labels.map((_, i) => ({ color: i, dashed: false })),
): uPlot.Options {
  const xText = (x: number) => (spec.iterationAxis ? iterationLabel(x) : String(x));
  // Off the chart (idx null) the legend shows the latest point; under the cursor, the point there.
  const s: uPlot.Series[] = [
    {
      label: spec.xLabel,
      value: (u, v, _si, idx) => {
        if (idx !== null) return v === null ? '–' : xText(v);
        const j = lastIndex(u.data[1]);
        return j === null ? '–' : `${xText(u.data[0][j]!)} (latest)`;
      },
    },
  ];
  const paths = spec.stepped ? uPlot.paths.stepped?.({ align: 1 }) : undefined;
  labels.forEach((label, i) => {
    const line = lines[i] ?? { color: i, dashed: false };
    const color = COLORS[line.color % COLORS.length]!;
    const dash = line.dashed ? { dash: [6, 4] } : {};
    // The smoothed curve's legend shows the raw value beside it, as TensorBoard's tooltip does.
    s.push({
      label,
      stroke: color,
      width: 2,
      spanGaps: true,
      ...dash,
      ...(paths ? { paths } : {}),
      value: (u, v, si, idx) => {
        const j = idx ?? lastIndex(u.data[si]);
        const shown = idx === null ? (j === null ? null : (u.data[si]![j] as number | null)) : v;
        if (j === null || shown === null) return '–';
        const raw = u.data[si + 1]?.[j] as number | null;
        return smoothed(spec) ? `${fmtNum(shown)} (raw ${fmtNum(raw)})` : fmtNum(shown);
      },
    });
    s.push({
      label: `${label} raw`,
      class: 'raw',
      stroke: withAlpha(color, 0.28),
      width: 1,
      spanGaps: true,
      ...dash,
      points: { show: false },
      ...(paths ? { paths } : {}),
    });
  });
  return {
    ...size,
    series: s,
    // An iteration axis spans the iterations evaluated so far (uPlot widens a one-point scale to 0..100, which
    // labelled a new run's axis "iteration 20 ... iteration 100"), padded so its end labels are not cut off.
    scales: {
      x: {
        time: false,
        ...(spec.iterationAxis ? { range: (u: uPlot): uPlot.Range.MinMax => iterationRange(u.data[0]) } : {}),
      },
      y: spec.range01 ? { range: [0, 1] as uPlot.Range.MinMax } : { range: yRange },
    },
    axes: [
      {
        label: spec.xLabel,
        size: 36,
        incrs: STEP_INCRS,
        ...(spec.iterationAxis ? { values: (_u: uPlot, ticks: number[]) => ticks.map(iterationLabel) } : {}),
      },
      { size: 50, values: (_u, ticks) => ticks.map(tickText) },
    ],
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
  };
}

/** A run drawn over the current one: what to call it in legends, and its series. */
export interface Overlay {
  title: string;
  series: Map<string, Series>;
}

/** An overlay's name in a legend: its title without a closing parenthetical (a recorded example's explanation). */
const legendName = (title: string) => title.replace(/\s*\([^()]*\)$/, '') || title;

/** A choice of run to overlay. */
export interface OverlayChoice {
  id: string;
  title: string;
}

/**
 * One chart's curves: the current run's series for the chart's keys, then the overlay's for the same keys (dashed,
 * each in the colour of its key, labelled with the overlay's short name). Keys neither run has are left out.
 */
export function overlaidSeries(
  keys: readonly string[],
  labels: readonly string[],
  series: Map<string, Series>,
  overlay: Overlay | null,
): { series: Series[]; labels: string[]; lines: LineStyle[]; signature: string } {
  const out: Series[] = [];
  const ls: string[] = [];
  const lines: LineStyle[] = [];
  const sig: string[] = [];
  keys.forEach((k, i) => {
    const s = series.get(k);
    if (!s) return;
    out.push(s);
    ls.push(labels[i]!);
    lines.push({ color: i, dashed: false });
    sig.push(k);
  });
  if (overlay) {
    keys.forEach((k, i) => {
      const s = overlay.series.get(k);
      if (!s) return;
      out.push(s);
      ls.push(`${labels[i]!} · ${legendName(overlay.title)}`);
      lines.push({ color: i, dashed: true });
      sig.push(`overlay:${overlay.title}:${k}`);
    });
  }
  return { series: out, labels: ls, lines, signature: sig.join('|') };
}

export class ChartsPanel {
  private main: HTMLElement;
  private other: HTMLElement;
  private otherBox: HTMLDetailsElement;
  private live = new Map<string, Live>();
  private weight = 0.6;
  private last: Map<string, Series> = new Map();
  private overlay: Overlay | null = null;
  private overlaySelect: HTMLSelectElement;
  /** Told the run picked to overlay ('' for none). */
  onOverlay: (id: string) => void = () => {};

  constructor(root: HTMLElement) {
    root.innerHTML = html`<div class="toolbar">
      <label for="smoothing">smoothing</label>
      <input id="smoothing" type="range" min="0" max="0.99" step="0.01" value="${this.weight}"
        aria-describedby="smoothing-note">
      <output for="smoothing" id="smoothing-value">${this.weight.toFixed(2)}</output>
      <span class="muted"
        id="smoothing-note">bold: smoothed (debiased moving average) · faint: raw · hover a chart for values</span>
      <label>compare with <select class="overlay-select"
        aria-describedby="overlay-note"><option value="">no other run</option></select></label>
      <span class="muted sr-only"
        id="overlay-note">draws another run's curves dashed over these, e.g. Dr. Zero or the self control beside π-Play</span>
      <span class="export" role="group" aria-label="download the metrics">download metrics
        <button type="button" class="small" data-export="jsonl">JSONL</button><button type="button" class="small"
          data-export="csv">CSV</button></span>
    </div><div class="chart-grid main-charts"></div>
    <details class="other-charts"><summary>every other metric the run reports</summary><div class="chart-grid"></div></details>`.text;
    this.main = root.querySelector('.main-charts')!;
    this.otherBox = root.querySelector('.other-charts')!;
    this.other = this.otherBox.querySelector('.chart-grid')!;
    this.overlaySelect = root.querySelector<HTMLSelectElement>('.overlay-select')!;
    this.overlaySelect.addEventListener('change', () => this.onOverlay(this.overlaySelect.value));
    const slider = root.querySelector<HTMLInputElement>('#smoothing')!;
    const out = root.querySelector<HTMLOutputElement>('#smoothing-value')!;
    slider.addEventListener('input', () => {
      this.weight = Number(slider.value);
      out.value = this.weight.toFixed(2);
      this.render(this.last);
    });
    for (const b of root.querySelectorAll<HTMLButtonElement>('button[data-export]'))
      b.addEventListener('click', () => this.download(b.dataset.export as 'jsonl' | 'csv'));
    if (typeof ResizeObserver !== 'undefined') {
      const ro = new ResizeObserver(() => {
        for (const l of this.live.values()) if (l.el.clientWidth) l.chart.setSize(this.size(l.el));
      });
      ro.observe(this.main);
      ro.observe(this.other);
    }
  }

  /** The runs that can be overlaid (the selection is kept while it is still offered). */
  setOverlayChoices(choices: readonly OverlayChoice[]): void {
    const keep = this.overlaySelect.value;
    this.overlaySelect.innerHTML =
      html`<option value="">no other run</option>${choices.map((c) => html`<option value="${c.id}">${c.title}</option>`)}`.text;
    this.overlaySelect.value = choices.some((c) => c.id === keep) ? keep : '';
  }

  /** Draws `overlay` over the current run (null: none), and shows it as the selected choice. */
  setOverlay(overlay: Overlay | null, id = ''): void {
    this.overlay = overlay;
    if (this.overlaySelect.value !== id) this.overlaySelect.value = id;
    this.render(this.last);
  }

  /** Saves every point of every series shown (raw values) as metrics.jsonl or metrics.csv. */
  private download(kind: 'jsonl' | 'csv'): void {
    const text = kind === 'jsonl' ? metricsJsonl(this.last) : metricsCsv(this.last);
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: kind === 'jsonl' ? 'application/jsonl' : 'text/csv' }));
    a.download = `metrics.${kind}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  }

  private size(el: HTMLElement): { width: number; height: number } {
    return { width: Math.max(240, el.clientWidth - 10), height: 170 };
  }

  render(series: Map<string, Series>): void {
    this.last = series;
    const overlay = this.overlay;
    const charts = resolveCharts(new Set([...series.keys(), ...(overlay?.series.keys() ?? [])]));
    this.main.querySelector('.empty')?.remove();
    if (charts.length === 0) {
      for (const l of this.live.values()) l.chart.destroy();
      this.live.clear();
      this.main.innerHTML = html`<p class="empty">No metrics yet. Each step of the run adds a point here.</p>`.text;
      this.otherBox.hidden = true;
      return;
    }
    const keep = new Set<string>();
    let others = 0;
    for (const c of charts) {
      const curated = !c.spec.id.startsWith('m-');
      if (!curated) others++;
      keep.add(c.spec.id);
      const curves = overlaidSeries(c.keys, c.labels, series, overlay);
      const aligned = align(curves.series);
      const data = chartData(aligned.x, aligned.ys, this.weight, c.spec);
      const signature = curves.signature;
      let l = this.live.get(c.spec.id);
      if (l && l.signature !== signature) {
        l.chart.destroy();
        l.el.remove();
        l = undefined;
      }
      if (!l) {
        const el = document.createElement('figure');
        el.className = 'chart';
        el.dataset.chart = c.spec.id;
        el.innerHTML = html`<figcaption>${c.spec.title}</figcaption>`.text;
        (curated ? this.main : this.other).append(el);
        const opts = chartOptions(c.spec, curves.labels, this.size(el), curves.lines);
        l = { chart: new uPlot(opts, data, el), signature, el };
        this.live.set(c.spec.id, l);
      } else {
        l.chart.setData(data);
      }
    }
    for (const [id, l] of this.live) {
      if (!keep.has(id)) {
        l.chart.destroy();
        l.el.remove();
        this.live.delete(id);
      }
    }
    this.otherBox.hidden = others === 0;
    this.otherBox.querySelector('summary')!.textContent = `every other metric the run reports (${others})`;
  }
}
