// The SVG line-plot renderer and the experiment's two plots: well-formed XML with an <svg> root, one
// polyline per series with one point per iteration, breaks at missing values, error bars, escaping.
import { describe, expect, it } from 'vitest';
import { aggregate, type SeedResult } from '../../../../src/lab/experiment/aggregate.ts';
import { driftSvg, emByIterationSvg } from '../../../../src/lab/experiment/plots.ts';
import { linePlot, niceStep, runsOf, xmlEscape } from '../../../../src/lab/experiment/svg.ts';
import { parseXml, polylinePoints } from '../../../helpers/xml-check.ts';

describe('SVG renderer', () => {
  it('the XML check itself rejects what is not well-formed', () => {
    expect(parseXml('<svg a="1"><g><line/></g><text>x &amp; y</text></svg>').root).toBe('svg');
    expect(() => parseXml('<svg><g></svg>')).toThrow(/closes/);
    expect(() => parseXml('<svg><g>')).toThrow(/unclosed/);
    expect(() => parseXml('<svg><text>a & b</text></svg>')).toThrow(/bare '&'/);
    expect(() => parseXml('<svg a=1></svg>')).toThrow(/bad attributes/);
    expect(() => parseXml('<svg></svg><svg></svg>')).toThrow(/second root/);
  });

  it('helpers: round steps, runs of values, escaping', () => {
    expect(niceStep(5)).toBe(1);
    expect(niceStep(37)).toBe(10);
    expect(niceStep(0.3)).toBeCloseTo(0.1, 12);
    expect(niceStep(0)).toBe(1);
    expect(runsOf([1, 2, null, 3, NaN, null, 4, 5])).toEqual([[0, 1], [3], [6, 7]]);
    expect(runsOf([null, null])).toEqual([]);
    expect(xmlEscape(`a<b>&"c'`)).toBe('a&lt;b&gt;&amp;&quot;c&apos;');
  });

  it('one polyline per series with a point per x, dots, error bars, a legend; text escaped', () => {
    const svg = linePlot({
      title: 'EM <by> iteration & "arm"',
      xLabel: 'iteration',
      yLabel: 'EM (%)',
      xs: [1, 2, 3],
      series: [
        { id: 'a', name: 'A & co', ys: [10, 20, 30], err: [2, null, 0] },
        { id: 'b', name: 'B', ys: [5, 5, 5], dashed: true },
      ],
    });
    const { root, elements } = parseXml(svg);
    expect(root).toBe('svg');
    const lines = elements.filter((e) => e.name === 'polyline');
    expect(lines.map((e) => e.attrs['data-series'])).toEqual(['a', 'b']);
    for (const l of lines) expect(polylinePoints(l)).toHaveLength(3);
    expect(lines[1]!.attrs['stroke-dasharray']).toBeDefined();
    expect(elements.filter((e) => e.name === 'circle')).toHaveLength(6);
    // y grows upwards: the larger value is higher on the page (smaller y), x increases left to right.
    const pa = polylinePoints(lines[0]!);
    expect(pa[0]![0]).toBeLessThan(pa[1]![0]);
    expect(pa[2]![1]).toBeLessThan(pa[0]![1]);
    // One error bar (only where err > 0): a vertical line in series a's group.
    const bars = elements.filter(
      (e) =>
        e.name === 'line' &&
        e.path.includes('g') &&
        e.attrs['x1'] === e.attrs['x2'] &&
        e.attrs['stroke'] === lines[0]!.attrs['stroke'],
    );
    expect(bars).toHaveLength(1);
    expect(svg).toContain('EM &lt;by&gt; iteration &amp; &quot;arm&quot;');
    expect(svg).toContain('A &amp; co');
    // Every coordinate inside the canvas.
    for (const l of lines)
      for (const [x, y] of polylinePoints(l)) expect(x >= 0 && x <= 640 && y >= 0 && y <= 400).toBe(true);
  });

  it('a missing value breaks the line; no values at all says so', () => {
    const svg = linePlot({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      xs: [1, 2, 3, 4],
      series: [{ id: 's', name: 's', ys: [1, null, 3, 4] }],
    });
    const lines = parseXml(svg).elements.filter((e) => e.name === 'polyline');
    expect(lines.map((l) => polylinePoints(l).length)).toEqual([1, 2]);
    const empty = linePlot({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      xs: [1],
      series: [{ id: 's', name: 's', ys: [null] }],
    });
    expect(parseXml(empty).elements.filter((e) => e.name === 'polyline')).toHaveLength(0);
    expect(empty).toContain('no data');
  });

  it("the experiment's plots: a polyline per arm with one point per iteration; drift for trained arms only", () => {
    const ev = (iteration: number, em: number) => ({
      iteration,
      em,
      emByHop: { '1': em },
      searchesPerRollout: 1,
      redundancy: 0,
      n: 10,
    });
    const r = (arm: string, seed: number, trained: boolean, evals: ReturnType<typeof ev>[]): SeedResult => ({
      arm,
      seed,
      trained,
      iterations: 3,
      evals,
      drift: trained
        ? [0, 1, 2].map((i) => ({ iteration: i, n: i === 2 && seed === 1 ? 0 : 5, em: 0.5 - 0.1 * i, emByHop: {} }))
        : [],
      generation: [],
      seconds: 1,
    });
    const results = [1, 2].flatMap((s) => [
      r('base', s, false, [ev(-1, 0.1)]),
      r('piplay', s, true, [ev(0, 0.2), ev(1, 0.3 * s), ev(2, 0.4)]),
    ]);
    const summaries = aggregate(results, ['base', 'piplay'], 3);
    const em = parseXml(emByIterationSvg(summaries, 3));
    expect(em.root).toBe('svg');
    const lines = em.elements.filter((e) => e.name === 'polyline');
    expect(lines.map((l) => l.attrs['data-series'])).toEqual(['base', 'piplay']);
    for (const l of lines) expect(polylinePoints(l)).toHaveLength(3);
    // The base arm is a flat line.
    expect(new Set(polylinePoints(lines[0]!).map((p) => p[1])).size).toBe(1);
    const drift = parseXml(driftSvg(summaries, 3));
    const dl = drift.elements.filter((e) => e.name === 'polyline');
    expect(dl.map((l) => l.attrs['data-series'])).toEqual(['piplay']);
    expect(polylinePoints(dl[0]!)).toHaveLength(3);
    // Falling EM on the examiner's questions: the line goes down the page (y grows).
    const ys = polylinePoints(dl[0]!).map((p) => p[1]);
    expect(ys[0]!).toBeLessThan(ys[1]!);
    expect(ys[1]!).toBeLessThan(ys[2]!);
  });
});
