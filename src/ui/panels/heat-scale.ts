// The heatmap's colour scales: absolute and logarithmic, the same for every rollout of every run, so one colour
// means one KL everywhere and a near-zero KL never looks hot. Per-token top-K KL goes from 1e−4 nats (and less:
// almost clear) to 1 nat (and more: full colour); |log p_T − log p_S| from 1e−3 to 4 nats, blue where the teacher
// finds the sampled token more likely, red where less. Also the per-token KL histogram on the same axis.
import { fmtNum } from '../format.ts';
import { html, type Html } from '../html.ts';

export interface LogScale {
  lo: number;
  hi: number;
}

/** Per-token top-K KL, in nats. */
export const KL_SCALE: LogScale = { lo: 1e-4, hi: 1 };
/** |log p_T − log p_S| of the sampled token, in nats. */
export const DIFF_SCALE: LogScale = { lo: 1e-3, hi: 4 };

/** Where v falls on a log scale: 0 at or below lo, 1 at or above hi (0 for 0, NaN and negatives). */
export function logPosition(v: number, s: LogScale): number {
  if (!(v > s.lo)) return 0;
  if (v >= s.hi) return 1;
  return Math.log(v / s.lo) / Math.log(s.hi / s.lo);
}

const alpha = (t: number) => (0.04 + 0.86 * t).toFixed(3);

/** Sequential colour for a per-token KL: clear -> deep orange. */
export function klColor(kl: number): string {
  return `rgba(230, 81, 0, ${alpha(logPosition(kl, KL_SCALE))})`;
}

/** Diverging colour for log p_T − log p_S: blue where the teacher is more sure of the token, red where less. */
export function diffColor(d: number): string {
  const a = alpha(logPosition(Math.abs(d), DIFF_SCALE));
  return d >= 0 ? `rgba(25, 113, 194, ${a})` : `rgba(201, 42, 42, ${a})`;
}

/** A decade as a short tick: 1e−4, 1e−3, 0.01, 0.1, 1. */
export function decadeText(v: number): string {
  return v < 0.01 ? `1e−${Math.round(-Math.log10(v))}` : String(Number(v.toPrecision(1)));
}

/** The scale's decades (the legend's ticks): 1e−4, 1e−3, ..., 1. */
export function decades(s: LogScale): number[] {
  const out: number[] = [];
  for (let e = Math.ceil(Math.log10(s.lo) - 1e-9); e <= Math.floor(Math.log10(s.hi) + 1e-9); e++) out.push(10 ** e);
  return out;
}

export interface HistBin {
  /** [from, to) in nats; the first bin starts at 0, the last ends at Infinity. */
  from: number;
  to: number;
  count: number;
}

/**
 * Per-token KL counted in half-decade bins of the colour scale, with one bin below its low end and one at or
 * above its high end, so every token is counted once.
 */
export function klHistogram(kls: readonly number[], s: LogScale = KL_SCALE, perDecade = 2): HistBin[] {
  const steps = Math.round(Math.log10(s.hi / s.lo) * perDecade);
  const edges = Array.from({ length: steps + 1 }, (_, i) => s.lo * 10 ** (i / perDecade));
  const bins: HistBin[] = [{ from: 0, to: s.lo, count: 0 }];
  for (let i = 0; i < steps; i++) bins.push({ from: edges[i]!, to: edges[i + 1]!, count: 0 });
  bins.push({ from: s.hi, to: Infinity, count: 0 });
  for (const v of kls) {
    if (!Number.isFinite(v)) continue;
    let b = 0;
    if (v >= s.hi) b = bins.length - 1;
    else if (v >= s.lo) b = 1 + Math.min(steps - 1, Math.floor(Math.log10(v / s.lo) * perDecade + 1e-9));
    bins[b]!.count++;
  }
  return bins;
}

const rangeText = (b: HistBin) =>
  b.from === 0
    ? `below ${fmtNum(b.to)}`
    : b.to === Infinity
      ? `${fmtNum(b.from)} or more`
      : `${fmtNum(b.from)} to ${fmtNum(b.to)}`;

/** The histogram as bars coloured like the tokens they count (a bar's title says its range and count). */
export function renderHistogram(kls: readonly number[]): Html {
  const bins = klHistogram(kls);
  const max = Math.max(1, ...bins.map((b) => b.count));
  const bars = bins.map((b) => {
    const mid = b.from === 0 ? 0 : b.to === Infinity ? b.from : Math.sqrt(b.from * b.to);
    const h = b.count ? Math.max(8, (100 * b.count) / max) : 0;
    return html`<span class="hist-bin" data-count="${b.count}"
      title="${b.count} token${b.count === 1 ? '' : 's'} with KL ${rangeText(b)}"><span class="hist-bar"
        style="height:${h.toFixed(0)}%;background:${klColor(mid).replace(/[\d.]+\)$/, '0.9)')}"></span></span>`;
  });
  return html`<figure class="kl-hist" aria-label="histogram of per-token KL on the colour scale's axis">
    <div class="hist-bars">${bars}</div><figcaption>per-token KL of this rollout (${kls.length} tokens), same axis</figcaption></figure>`;
}

/** The legend: the scale's range and ticks on a ramp drawn with the tokens' own colours. */
export function renderScaleLegend(mode: 'kl' | 'diff'): Html {
  if (mode === 'kl') {
    const ramp = [0, 0.25, 0.5, 0.75, 1].map((t) => `rgba(230, 81, 0, ${alpha(t)})`).join(', ');
    const ticks = decades(KL_SCALE).map(
      (v) => html`<span style="left:${(100 * logPosition(v, KL_SCALE)).toFixed(1)}%">${decadeText(v)}</span>`,
    );
    return html`<div class="scale" data-lo="${KL_SCALE.lo}" data-hi="${KL_SCALE.hi}">
      <span class="scale-ramp" style="background:linear-gradient(90deg, ${ramp})" aria-hidden="true"></span>
      <span class="scale-ticks" aria-hidden="true">${ticks}</span>
      <span class="legend-note">per-token top-K KL, log scale, the same for every rollout and run: ≤ ${fmtNum(KL_SCALE.lo)} nats almost clear, ≥ ${fmtNum(KL_SCALE.hi)} nat full colour</span></div>`;
  }
  const side = (rgb: string) => [0, 0.5, 1].map((t) => `rgba(${rgb}, ${alpha(t)})`);
  const ramp = [...side('201, 42, 42').reverse(), ...side('25, 113, 194')].join(', ');
  // Ticks at ±0.01 and ±1 nat and 0 in the middle (|d| at most the low end), left to right.
  const pos = (v: number) => 50 + Math.sign(v) * 50 * logPosition(Math.abs(v), DIFF_SCALE);
  const ticks = [-1, -0.01, 0, 0.01, 1].map(
    (v) => html`<span style="left:${pos(v).toFixed(1)}%">${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v)}</span>`,
  );
  return html`<div class="scale" data-lo="${DIFF_SCALE.lo}" data-hi="${DIFF_SCALE.hi}">
    <span class="scale-ramp" style="background:linear-gradient(90deg, ${ramp})" aria-hidden="true"></span>
    <span class="scale-ticks" aria-hidden="true">${ticks}</span>
    <span class="legend-note">log p<sub>T</sub> − log p<sub>S</sub> in nats, log scale by size (${fmtNum(DIFF_SCALE.lo)} to ${fmtNum(DIFF_SCALE.hi)}), the same for every rollout and run</span></div>`;
}
