// A small line-plot renderer (pure): SVG written as text, no dependency. One polyline per series (one
// per unbroken run of values: a missing value breaks the line), a dot per value, an error bar (± std)
// where given, axes with round ticks, and a legend.

export interface Series {
  /** Legend text. */
  name: string;
  /** A stable id, written as data-series on the series' elements. */
  id: string;
  /** One value per x; null: no value there. */
  ys: (number | null)[];
  /** ± this around each value (error bars); null or 0: none. */
  err?: (number | null)[];
  dashed?: boolean;
  /** Stroke colour (default: the palette colour of the series' position). */
  color?: string;
}

export interface PlotSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  xs: number[];
  /** Tick text under each x (default: the x itself). */
  xTicks?: string[];
  series: Series[];
  /** The y range; default 0 .. a round number above the largest value + error (at least `yMinSpan`). */
  yMin?: number;
  yMax?: number;
  yMinSpan?: number;
  /** A line of small print under the plot. */
  note?: string;
  width?: number;
  height?: number;
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

/** Escapes text for XML content and attribute values. */
export function xmlEscape(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** A round step (1, 2 or 5 x 10^k) that cuts `span` into about `parts` parts. */
export function niceStep(span: number, parts = 5): number {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / parts;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

function fmt(v: number): string {
  const r = Math.round(v * 100) / 100;
  return Number.isInteger(r) ? String(r) : r.toFixed(2).replace(/0+$/, '');
}

function coord(v: number): string {
  return (Math.round(v * 10) / 10).toFixed(1);
}

/** Unbroken runs of indices whose value is a finite number. */
export function runsOf(ys: readonly (number | null)[]): number[][] {
  const runs: number[][] = [];
  let cur: number[] = [];
  ys.forEach((y, i) => {
    if (y !== null && Number.isFinite(y)) cur.push(i);
    else if (cur.length) {
      runs.push(cur);
      cur = [];
    }
  });
  if (cur.length) runs.push(cur);
  return runs;
}

export function linePlot(p: PlotSpec): string {
  const W = p.width ?? 640;
  const H = p.height ?? 400;
  const legendW = 200;
  const m = { left: 60, right: legendW + 20, top: 40, bottom: p.note ? 70 : 55 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;

  const values: number[] = [];
  for (const s of p.series) {
    s.ys.forEach((y, i) => {
      if (y === null || !Number.isFinite(y)) return;
      const e = s.err?.[i] ?? 0;
      values.push(y + (e && Number.isFinite(e) ? e : 0));
    });
  }
  const yMin = p.yMin ?? 0;
  const top = Math.max(yMin + (p.yMinSpan ?? 1), ...values);
  const step = niceStep(top - yMin);
  const yMax = p.yMax ?? yMin + Math.ceil((top - yMin) / step - 1e-9) * step;
  const xMin = Math.min(...p.xs);
  const xMax = Math.max(...p.xs);
  const xPad = xMax === xMin ? 1 : (xMax - xMin) * 0.06;
  const X = (x: number) => m.left + ((x - (xMin - xPad)) / (xMax - xMin + 2 * xPad)) * pw;
  const Y = (y: number) => m.top + ph - ((Math.min(Math.max(y, yMin), yMax) - yMin) / (yMax - yMin || 1)) * ph;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      'font-family="sans-serif" font-size="12">',
  );
  out.push(`<title>${xmlEscape(p.title)}</title>`);
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(
    `<text x="${coord(m.left + pw / 2)}" y="22" text-anchor="middle" font-size="14" ` +
      `font-weight="bold">${xmlEscape(p.title)}</text>`,
  );

  // Grid and y ticks.
  out.push('<g class="y-axis" stroke="#dddddd">');
  const yStep = niceStep(yMax - yMin);
  for (let k = 0, v = yMin; v <= yMax + 1e-9 && k < 50; k++, v = yMin + k * yStep) {
    out.push(`<line x1="${m.left}" y1="${coord(Y(v))}" x2="${m.left + pw}" y2="${coord(Y(v))}"/>`);
  }
  out.push('</g>');
  out.push('<g class="y-ticks" text-anchor="end" fill="#333333">');
  for (let k = 0, v = yMin; v <= yMax + 1e-9 && k < 50; k++, v = yMin + k * yStep) {
    out.push(`<text x="${m.left - 6}" y="${coord(Y(v) + 4)}">${fmt(v)}</text>`);
  }
  out.push('</g>');
  // Axes and x ticks.
  out.push(
    `<g class="axes" stroke="#333333"><line x1="${m.left}" y1="${m.top + ph}" x2="${m.left + pw}" ` +
      `y2="${m.top + ph}"/><line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + ph}"/></g>`,
  );
  out.push('<g class="x-ticks" text-anchor="middle" fill="#333333">');
  p.xs.forEach((x, i) =>
    out.push(`<text x="${coord(X(x))}" y="${m.top + ph + 18}">${xmlEscape(p.xTicks?.[i] ?? fmt(x))}</text>`),
  );
  out.push('</g>');
  out.push(
    `<text x="${coord(m.left + pw / 2)}" y="${m.top + ph + 38}" text-anchor="middle">${xmlEscape(p.xLabel)}</text>`,
  );
  out.push(
    `<text x="16" y="${coord(m.top + ph / 2)}" text-anchor="middle" transform="rotate(-90 16 ` +
      `${coord(m.top + ph / 2)})">${xmlEscape(p.yLabel)}</text>`,
  );

  // Series.
  p.series.forEach((s, si) => {
    const color = s.color ?? PALETTE[si % PALETTE.length]!;
    const id = xmlEscape(s.id);
    out.push(`<g class="series" data-series="${id}">`);
    for (const run of runsOf(s.ys)) {
      const pts = run.map((i) => `${coord(X(p.xs[i]!))},${coord(Y(s.ys[i]!))}`).join(' ');
      out.push(
        `<polyline data-series="${id}" points="${pts}" fill="none" stroke="${color}" ` +
          `stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      );
    }
    s.ys.forEach((y, i) => {
      if (y === null || !Number.isFinite(y)) return;
      const e = s.err?.[i];
      if (e && Number.isFinite(e) && e > 0) {
        const x = coord(X(p.xs[i]!));
        out.push(
          `<line x1="${x}" y1="${coord(Y(y - e))}" x2="${x}" y2="${coord(Y(y + e))}" stroke="${color}" ` +
            'stroke-width="1"/>',
        );
      }
      out.push(`<circle cx="${coord(X(p.xs[i]!))}" cy="${coord(Y(y))}" r="3" fill="${color}"/>`);
    });
    out.push('</g>');
  });
  if (p.series.every((s) => runsOf(s.ys).length === 0)) {
    out.push(
      `<text x="${coord(m.left + pw / 2)}" y="${coord(m.top + ph / 2)}" text-anchor="middle" fill="#888888">no ` +
        'data</text>',
    );
  }

  // Legend.
  out.push('<g class="legend">');
  p.series.forEach((s, si) => {
    const color = s.color ?? PALETTE[si % PALETTE.length]!;
    const y = m.top + 10 + si * 20;
    const x = W - legendW;
    out.push(
      `<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${color}" ` +
        `stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    out.push(`<text x="${x + 30}" y="${y + 4}">${xmlEscape(s.name)}</text>`);
  });
  out.push('</g>');
  if (p.note) out.push(`<text x="${m.left}" y="${H - 10}" font-size="10" fill="#555555">${xmlEscape(p.note)}</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
