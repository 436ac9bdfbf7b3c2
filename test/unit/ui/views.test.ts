// The page's views as pure functions of hand-built run events (no DOM needed): what each panel renders,
// the state the events fold into, and the helpers behind the setup panel (settings, memory estimates).
import { readFileSync } from 'node:fs';
import type uPlot from 'uplot';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/model/config.ts';
import { PRESETS, valueText } from '../../../src/selfplay/config.ts';
import type { QuestionRecord, RolloutRecord, TokenRecord } from '../../../src/selfplay/events.ts';
import { fmtBytes, fmtDuration, fmtIteration, fmtNum, fmtSigned } from '../../../src/ui/format.ts';
import { escapeHtml, html, raw } from '../../../src/ui/html.ts';
import {
  CURATED,
  align,
  chartData,
  chartOptions,
  iterationLabel,
  overlaidSeries,
  resolveCharts,
  smooth,
} from '../../../src/ui/panels/charts.ts';
import { isResumable, pickMetrics, renderCheckpointList, whereText } from '../../../src/ui/panels/checkpoints.ts';
import {
  filterQuestions,
  highlight,
  renderExaminer,
  renderQcp,
  renderQuestion,
  solvedDots,
} from '../../../src/ui/panels/examiner.ts';
import {
  heatStats,
  renderHeatmapView,
  renderPrivileged,
  renderTokenDetail,
  renderTokens,
} from '../../../src/ui/panels/heatmap.ts';
import { shownToken, visibleText } from '../../../src/ui/panels/token-text.ts';
import {
  DIFF_SCALE,
  KL_SCALE,
  diffColor,
  klColor,
  klHistogram,
  logPosition,
  renderHistogram,
  renderScaleLegend,
} from '../../../src/ui/panels/heat-scale.ts';
import { renderLog } from '../../../src/ui/panels/messages.ts';
import { renderProgress } from '../../../src/ui/panels/progress.ts';
import {
  ADVANCED_FIELDS,
  MAIN_FIELDS,
  controlState,
  readSettings,
  renderCorpusStatus,
  renderEstimate,
  renderField,
} from '../../../src/ui/panels/setup.ts';
import { renderGroup, segmentText, turnsOf } from '../../../src/ui/panels/student.ts';
import { applyEvent, emptyState, etaSeconds, groupRollouts, questionFor } from '../../../src/ui/state.ts';
import type { CheckpointMeta } from '../../../src/worker/checkpoint-store.ts';
import { estimateRun, loraParams } from '../../../src/selfplay/memory-plan.ts';
import { hubIdProblem } from '../../../src/worker/hub.ts';
import { relativeNames } from '../../../src/worker/model-source.ts';

const question: QuestionRecord = {
  iteration: 0,
  step: 2,
  question: 'Which city was the founder of <Acme> born in?',
  answer: 'Driwick',
  hops: 2,
  qcp: [
    { kind: 'source', passages: [{ id: 'org-1', title: 'Acme', text: 'Acme was founded by Nexglis Zidez.' }] },
    {
      kind: 'search',
      query: 'Nexglis Zidez',
      passages: [
        { id: 'person-13', title: 'Nexglis Zidez', text: 'Born in Driwick in 1706, Nexglis Zidez became a composer.' },
        { id: 'city-2', title: 'Driwick', text: 'Driwick is a city.' },
      ],
    },
  ],
  k: 1,
  n: 5,
  formatReward: 1,
  difficultyReward: 1,
  examinerReward: 1.5,
  advantage: 0.84,
};

function tok(text: string, policy: 0 | 1, kl = 0, s = -1, t = -1, topk?: TokenRecord['topk']): TokenRecord {
  return {
    id: text.length,
    text,
    policy,
    studentLogp: policy ? s : 0,
    teacherLogp: policy ? t : 0,
    kl: policy ? kl : 0,
    ...(topk ? { topk } : {}),
  };
}

const tokens: TokenRecord[] = [
  tok('<think>', 1, 0.01, -0.1, -0.1),
  tok('who founded', 1, 0.2, -2, -0.5, {
    ids: [11, 3],
    texts: ['who founded', 'x'],
    studentLogp: [-2, -0.2],
    teacherLogp: [-0.5, -3],
  }),
  tok('</think>', 1, 0.02),
  tok('<search>', 1, 0.05),
  tok('Nexglis', 1, 0.9, -3, -0.2),
  tok('</search>', 1, 0.01),
  tok('<information>Doc 1 (Title: Nexglis Zidez) Born in Driwick</information>', 0),
  tok('<answer>', 1, 0.03),
  tok('Driwick', 1, 0.5, -1.5, -0.1),
  tok('</answer>', 1, 0.01),
];

const rollout = (reward: number, advantage: number): RolloutRecord => ({
  iteration: 0,
  step: 3,
  question: question.question,
  gold: 'Driwick',
  hops: 2,
  answer: reward ? 'Driwick' : '',
  reward,
  advantage,
  searches: ['Nexglis'],
  tokens,
});

describe('html', () => {
  it('escapes interpolations and keeps nested templates', () => {
    const evil = '<img src=x onerror=alert(1)> & "q"';
    expect(html`<p title="${evil}">${evil}</p>`.text).toBe(`<p title="${escapeHtml(evil)}">${escapeHtml(evil)}</p>`);
    expect(html`<ul>${['a', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.text).toBe('<ul><li>a</li><li>b</li></ul>');
    expect(html`${raw('<b>')}${null}${false}${0}`.text).toBe('<b>0');
  });
});

describe('format', () => {
  it('numbers, sizes, durations, iterations', () => {
    expect(fmtBytes(1536)).toBe('1.5 KiB');
    expect(fmtDuration(3725)).toBe('1h 02m');
    expect(fmtDuration(65)).toBe('1m 05s');
    expect(fmtNum(-0.25)).toBe('−0.250');
    expect(fmtNum(1.5e-7)).toBe('1.50e−7');
    expect(fmtSigned(0.5)).toBe('+0.50');
    expect(fmtIteration(-1)).toBe('before training');
    expect(fmtIteration(0, 3)).toBe('iteration 1 of 3');
  });
});

describe('examiner view', () => {
  it('shows the question, answer, hops, k/n, rewards and the construction path as a path', () => {
    const out = renderQuestion(question, true).text;
    expect(out).toContain('Which city was the founder of &lt;Acme&gt; born in?');
    expect(out).toContain('2-hop');
    expect(out).toContain('1/5');
    expect(out).toContain('+0.84');
    expect(out).toMatch(/<details class="qcp" open>/);
    const path = renderQcp(question).text;
    // source -> search 1 (with the query and its passages) -> question, in that order
    const order = [
      'source document',
      'org-1',
      'search 1',
      '<code class="query">Nexglis Zidez',
      'person-13',
      'city-2',
      'qcp-kind">question',
    ].map((s) => path.indexOf(s));
    expect(order.every((x, i) => x >= 0 && (i === 0 || x > order[i - 1]!))).toBe(true);
    expect(path).toContain('<mark>Driwick</mark>');
  });

  it('marks unsolved, trivial and learnable questions; filters', () => {
    expect(solvedDots(0, 5).text).toContain('unsolved');
    expect(solvedDots(5, 5).text).toContain('trivial');
    expect(solvedDots(2, 5).text).toContain('learnable');
    expect(solvedDots(0, 0).text).toContain('not scored');
    const qs = [question, { ...question, hops: 1, k: 0 }];
    expect(filterQuestions(qs, { hops: 1, learnableOnly: false })).toHaveLength(1);
    expect(filterQuestions(qs, { hops: null, learnableOnly: true })).toEqual([question]);
    expect(renderExaminer([], { hops: null, learnableOnly: false }).text).toMatch(/No questions yet/);
    expect(renderExaminer(qs, { hops: null, learnableOnly: false }).text).toMatch(/2 questions/);
    expect(highlight('a Driwick b driwick', 'Driwick').text).toBe('a <mark>Driwick</mark> b <mark>driwick</mark>');
  });
});

describe('student view', () => {
  it('segments a transcript into thinking, searches, tool replies and the answer, turn by turn', () => {
    expect(segmentText('<think>a</think>x<search>q</search><answer>z')).toEqual([
      { kind: 'think', text: 'a' },
      { kind: 'text', text: 'x' },
      { kind: 'search', text: 'q' },
      { kind: 'answer', text: 'z', open: true },
    ]);
    const turns = turnsOf(tokens);
    expect(turns).toHaveLength(2);
    expect(turns[0]!.segments.map((s) => s.kind)).toEqual(['think', 'search', 'information']);
    expect(turns[1]!.segments.map((s) => s.kind)).toEqual(['answer']);
  });

  it('shows a group of rollouts with correctness and GRPO advantages', () => {
    const groups = groupRollouts([rollout(1, 0.7), rollout(0, -0.7)]);
    expect(groups).toHaveLength(1);
    const out = renderGroup(groups[0]!, 5).text;
    expect(out).toContain('✓ correct');
    expect(out).toContain('✗ wrong');
    expect(out).toContain('A +0.70');
    expect(out).toContain('A −0.70');
    expect(out).toContain('1/2 correct');
    expect(out).toMatch(/2 of its 5 rollouts were recorded/);
    expect(out).toContain('retrieved (tool, masked)');
  });
});

describe('teacher-vs-student heatmap', () => {
  it('colours policy tokens by KL or by log p_T − log p_S, and marks tool tokens as masked', () => {
    const strip = renderTokens(tokens, 'kl').text;
    expect((strip.match(/class="tok policy"/g) ?? []).length).toBe(9);
    expect((strip.match(/class="tok masked"/g) ?? []).length).toBe(1);
    expect((strip.match(/tabindex="0"/g) ?? []).length).toBe(1);
    expect(strip).toContain(`background:${klColor(0.9)}`);
    expect(strip).not.toMatch(/class="tok masked"[^>]*background/);
    expect(diffColor(1)).toMatch(/^rgba\(25, 113, 194/);
    expect(diffColor(-1)).toMatch(/^rgba\(201, 42, 42/);
    expect(visibleText('a\nb')).toBe('a↵\nb');
    expect(visibleText('')).toBe('∅');
    // Chips and lists, where layout cannot show whitespace: every whitespace character gets a sign.
    expect(shownToken(' ')).toBe('␣');
    expect(shownToken(' the\n\t')).toBe('␣the↵⇥');
    expect(shownToken('')).toBe('∅');
  });

  it('colours on one absolute log scale, the same for every rollout and run', () => {
    // A near-zero KL is almost clear whatever else the rollout holds; one KL is one colour everywhere.
    expect(klColor(1e-4)).toBe('rgba(230, 81, 0, 0.040)');
    expect(klColor(1e-5)).toBe(klColor(0));
    expect(klColor(1)).toBe('rgba(230, 81, 0, 0.900)');
    expect(klColor(5)).toBe(klColor(1));
    expect(logPosition(1e-2, KL_SCALE)).toBeCloseTo(0.5);
    expect(logPosition(Math.sqrt(DIFF_SCALE.lo * DIFF_SCALE.hi), DIFF_SCALE)).toBeCloseTo(0.5);
    const quiet = renderTokens([tok('a', 1, 1e-4), tok('b', 1, 2e-4)], 'kl').text;
    const loud = renderTokens([tok('a', 1, 1e-4), tok('b', 1, 0.9)], 'kl').text;
    expect(quiet.split('data-i="1"')[0]).toBe(loud.split('data-i="1"')[0]);
    expect(quiet).not.toContain(klColor(0.9));
    // The legend states the range; the histogram counts every token once on the same axis.
    expect(renderScaleLegend('kl').text).toMatch(
      /data-lo="0.0001" data-hi="1".*>1e−4<.*>1e−3<.*>0.01<.*>0.1<.*>1<.*log scale/s,
    );
    expect(renderScaleLegend('diff').text).toMatch(/log scale by size/);
    const bins = klHistogram([0, 5e-5, 1e-4, 5e-4, 0.05, 1, 7, Number.NaN]);
    expect(bins).toHaveLength(10);
    expect(bins.map((b) => b.count)).toEqual([2, 1, 1, 0, 0, 0, 1, 0, 0, 2]);
    expect(bins[1]).toMatchObject({ from: 1e-4 });
    expect((renderHistogram([0.1, 0.2]).text.match(/data-count="2"/g) ?? []).length).toBe(1);
  });

  it('summarises the rollout and shows both top-K lists of a token', () => {
    const st = heatStats(tokens, 2);
    expect(st.policy).toBe(9);
    expect(st.masked).toBe(1);
    expect(st.top).toEqual([4, 8]);
    const d = renderTokenDetail(tokens[1], 1).text;
    expect(d).toContain("student's top-2");
    expect(d).toMatch(/<tr class="sampled">/);
    expect(d).toContain(fmtNum(Math.exp(-0.5))); // p_T of the sampled token
    expect(renderTokenDetail(tokens[6], 6).text).toMatch(/Masked: this token came from the search tool/);
  });

  it('shows what the privileged teacher saw, per mode', () => {
    expect(renderPrivileged(question, 'full', 'Driwick', 2).text).toMatch(
      /how the question was made.*search 1.*Nexglis Zidez/s,
    );
    expect(renderPrivileged(question, 'gt', 'Driwick', 2).text).not.toContain('search 1');
    expect(renderPrivileged(question, 'gt-hop', 'Driwick', 2).text).toContain('2 hops');
    expect(renderPrivileged(question, 'none', 'Driwick', 2).text).toContain('Dr. Zero');
    const view = renderHeatmapView(rollout(1, 0.5), 'diff', questionFor([question], rollout(1, 0)), 'full').text;
    expect(view).toMatch(/largest disagreements, ranked by KL.*data-i="4" data-rank="1".*data-i="8" data-rank="2"/s);
    expect(view).toContain('9 student tokens · 1 masked');
  });
});

describe('run state', () => {
  it('folds metrics into per-stage series, evaluations into EM-by-hop series, and bounds lists', () => {
    const s = emptyState();
    applyEvent(s, {
      type: 'metrics',
      metrics: { stage: 'student', iteration: 0, step: 0, reward: 0.5, distill: 0.1, note: 'x' },
    });
    applyEvent(s, {
      type: 'metrics',
      metrics: { stage: 'student', iteration: 0, step: 1, reward: 0.7, distill: Number.NaN },
    });
    applyEvent(s, {
      type: 'eval',
      metrics: {
        iteration: 0,
        em: 0.3,
        emByHop: { '1': 0.5, '2': 0.1 },
        searchesPerRollout: 1.5,
        redundancy: 0,
        n: 20,
      },
    });
    expect(s.series.get('student/reward')).toEqual({
      x: [1, 2],
      y: [0.5, 0.7],
      at: [
        { iteration: 0, step: 0 },
        { iteration: 0, step: 1 },
      ],
    });
    expect(s.series.get('student/distill')!.y).toEqual([0.1]);
    expect(s.series.has('student/note')).toBe(false);
    expect(s.series.get('eval/em_hop2')!.y).toEqual([0.1]);
    for (let i = 0; i < 400; i++) applyEvent(s, { type: 'question', record: { ...question, step: i } });
    expect(s.questions).toHaveLength(300);
    expect(s.questions[0]!.step).toBe(100);
    applyEvent(s, { type: 'checkpoint', name: 'a', iteration: 1, step: 0 });
    expect(s.lastCheckpoint).toEqual({ name: 'a', iteration: 1, step: 0 });
    expect(renderLog(s.logs).text).toContain('checkpoint saved (slot a)');
  });

  it('estimates the time left from the run or from the pace so far', () => {
    const s = emptyState();
    applyEvent(s, { type: 'progress', stage: 'student', iteration: 0, done: 0, total: 4 }, 1000);
    applyEvent(s, { type: 'progress', stage: 'student', iteration: 0, done: 1, total: 4 }, 3000);
    expect(etaSeconds(s.progress!, 3000)).toBeCloseTo(6);
    applyEvent(s, { type: 'progress', stage: 'student', iteration: 0, done: 2, total: 4, etaSeconds: 9 }, 4000);
    expect(etaSeconds(s.progress!, 4000)).toBe(9);
    const bar = renderProgress(s.progress, 'running', 3, 4000).text;
    expect(bar).toContain('iteration 1 of 3');
    expect(bar).toContain('2 / 4');
    expect(bar).toContain('aria-valuenow="2"');
    expect(bar).toContain('width:50.0%');
    expect(bar).toContain('9s left');
  });

  it('counts the time left down while a unit runs, never up', () => {
    // The run's estimate after step 1 (38 s), then events within step 2 that carry none (rollouts, update).
    const s = emptyState();
    applyEvent(s, { type: 'progress', stage: 'student', iteration: 0, done: 1, total: 8, etaSeconds: 38 }, 0);
    applyEvent(s, { type: 'progress', stage: 'student', iteration: 0, done: 1, total: 8, label: 'rollouts' }, 5000);
    applyEvent(s, { type: 'progress', stage: 'student', iteration: 0, done: 1, total: 8, label: 'update' }, 20_000);
    const seen = [5000, 20_000, 30_000, 60_000].map((t) => etaSeconds(s.progress!, t)!);
    expect(seen).toEqual([33, 18, 8, 0]);
    // No estimate from the run: the pace of the units done so far, counted down from when the last one ended.
    const p = emptyState();
    applyEvent(p, { type: 'progress', stage: 'examiner', iteration: 0, done: 0, total: 3 }, 0);
    applyEvent(p, { type: 'progress', stage: 'examiner', iteration: 0, done: 1, total: 3 }, 10_000);
    applyEvent(p, { type: 'progress', stage: 'examiner', iteration: 0, done: 1, total: 3, label: 'update' }, 14_000);
    const linear = [10_000, 14_000, 25_000].map((t) => etaSeconds(p.progress!, t)!);
    expect(linear).toEqual([20, 16, 5]);
  });
});

describe('charts', () => {
  it('puts evaluations at the iteration they followed, labelled "before training", "iteration 1", ...', () => {
    const s = emptyState();
    for (const iteration of [-1, 0, 1])
      applyEvent(s, {
        type: 'eval',
        metrics: { iteration, em: 0.1, emByHop: {}, searchesPerRollout: 1, redundancy: 0, n: 4 },
      });
    expect(s.series.get('eval/em')!.x).toEqual([0, 1, 2]);
    expect([0, 1, 2].map(iterationLabel)).toEqual(['before training', 'iteration 1', 'iteration 2']);
    const em = CURATED.find((c) => c.id === 'em')!;
    const axis = chartOptions(em, ['all'], { width: 300, height: 100 }).axes![0]!;
    expect((axis.values as (u: unknown, t: number[]) => string[])(null, [0, 1])).toEqual([
      'before training',
      'iteration 1',
    ]);
  });

  it("spans a new run's axis over its evaluations, not uPlot's 0..100 (it read iteration 20 ... 100)", () => {
    const em = CURATED.find((c) => c.id === 'em')!;
    const range = chartOptions(em, ['all'], { width: 300, height: 100 }).scales!['x']!.range as (
      u: unknown,
      lo: number,
      hi: number,
    ) => [number, number];
    // uPlot hands a one-point scale to the range as 0..100.
    expect(range({ data: [[0]] }, 0, 100)).toEqual([-0.4, 0.4]);
    expect(range({ data: [[]] }, 0, 100)).toEqual([-0.4, 0.4]);
    expect(range({ data: [[0, 1, 2]] }, 0, 2)).toEqual([-0.4, 2.4]);
  });

  it('draws λ as steps, never smoothed', () => {
    const lambda = CURATED.find((c) => c.id === 'lambda')!;
    const data = chartData([1, 2, 3, 4], [[0.1, 0.1, 0.03, 0.03]], 0.6, lambda);
    expect(data[1]).toEqual([0.1, 0.1, 0.03, 0.03]);
    expect(chartOptions(lambda, ['λ'], { width: 300, height: 100 }).series[1]!.paths).toBeTypeOf('function');
  });

  it('draws held-out evaluations as measured, never smoothed', () => {
    const em = CURATED.find((c) => c.id === 'em')!;
    expect(chartData([0, 1, 2], [[0.42, 0.44, 0.46]], 0.6, em)[1]).toEqual([0.42, 0.44, 0.46]);
    const y = chartOptions(em, ['all'], { width: 300, height: 100 }).series[1]!.value as (
      u: uPlot,
      v: number | null,
      si: number,
      idx: number | null,
    ) => string;
    expect(
      y(
        {
          data: [
            [0, 1],
            [0.42, 0.46],
            [0.42, 0.46],
          ],
        } as unknown as uPlot,
        null,
        1,
        null,
      ),
    ).toBe('0.460');
  });

  it('shows the latest values in a legend while the cursor is off the chart', () => {
    const em = CURATED.find((c) => c.id === 'student-reward')!;
    const o = chartOptions({ ...em, iterationAxis: true }, ['all'], { width: 300, height: 100 });
    const u = {
      data: [
        [0, 1, 2],
        [0.1, 0.2, 0.3],
        [0.1, 0.25, 0.35],
      ],
    } as unknown as uPlot;
    const x = o.series[0]!.value as (u: uPlot, v: number | null, si: number, idx: number | null) => string;
    const y = o.series[1]!.value as (u: uPlot, v: number | null, si: number, idx: number | null) => string;
    expect(x(u, null, 0, null)).toBe('iteration 2 (latest)');
    expect(y(u, null, 1, null)).toBe('0.300 (raw 0.350)');
    expect(y(u, 0.2, 1, 1)).toBe('0.200 (raw 0.250)');
  });

  it('smooths like TensorBoard (debiased EMA) and aligns series on their steps', () => {
    expect(smooth([1, 1, 1], 0.9).map((v) => v!.toFixed(6))).toEqual(['1.000000', '1.000000', '1.000000']);
    const s = smooth([0, 10, null, 10], 0.5);
    expect(s[0]).toBe(0);
    expect(s[1]).toBeCloseTo((0.25 * 0 + 0.5 * 10) / 0.75);
    expect(s[2]).toBeNull();
    expect(smooth([3, 4], 0)).toEqual([3, 4]);
    expect(
      align([
        { x: [1, 2], y: [5, 6], at: [] },
        { x: [2, 3], y: [7, 8], at: [] },
      ]),
    ).toEqual({
      x: [1, 2, 3],
      ys: [
        [5, 6, null],
        [null, 7, 8],
      ],
    });
  });

  it('puts the paper’s quantities first and gives every other metric a chart', () => {
    const charts = resolveCharts([
      'eval/em',
      'eval/em_hop1',
      'student/reward',
      'student/distill',
      'student/lambda',
      'examiner/solvable_share',
      'student/grad_norm',
    ]);
    expect(charts.map((c) => c.spec.id)).toEqual([
      'em',
      'student-reward',
      'examiner-reward',
      'kl',
      'lambda',
      'm-student/grad_norm',
    ]);
    expect(charts[0]!.labels).toEqual(['all', '1-hop']);
    expect(charts[2]!.labels).toEqual(['0<k<n']);
  });

  it("labels an overlaid run's curves with its short name, dashed in its key's colour", () => {
    const s = (n: number) => ({ xs: [1], ys: [n] }) as never;
    const mine = new Map([['eval/em', s(1)]]);
    const title = "self control (the same teacher, reading only the student's prompt)";
    const c = overlaidSeries(['eval/em', 'eval/em_hop1'], ['all', '1-hop'], mine, {
      title,
      series: new Map([
        ['eval/em', s(2)],
        ['eval/em_hop1', s(3)],
      ]),
    });
    expect(c.labels).toEqual(['all', 'all · self control', '1-hop · self control']);
    expect(c.lines).toEqual([
      { color: 0, dashed: false },
      { color: 0, dashed: true },
      { color: 1, dashed: true },
    ]);
    // A stored run's title ('name', quoted) is kept whole, parentheses and all.
    const stored = overlaidSeries(['eval/em'], ['all'], mine, { title: "'my run (2)'", series: mine });
    expect(stored.labels).toEqual(['all', "all · 'my run (2)'"]);
  });
});

describe('checkpoints list', () => {
  const run: CheckpointMeta = {
    name: 'run-1',
    kind: 'run',
    createdAt: 0,
    updatedAt: Date.UTC(2024, 0, 1),
    bytes: 3 * 2 ** 20,
    cursor: { iteration: 0, stage: 'student', step: 2 },
    metrics: { em: 0.25, student_reward: 0.5, zzz: 1 },
    base: 'random-tiny',
  };
  it('lists runs with where they continue, their metrics and actions', () => {
    const out = renderCheckpointList([run, { ...run, name: 'm', kind: 'model', cursor: null }]).text;
    expect(out).toContain('next: iteration 1, student step 3');
    expect(out).toContain('3.0 MiB');
    expect(out).toMatch(/em <strong>0.250<\/strong>/);
    expect((out.match(/data-act="resume"/g) ?? []).length).toBe(1);
    expect((out.match(/data-act="export"/g) ?? []).length).toBe(2);
    expect(isResumable({ ...run, cursor: { iteration: 1, stage: 'done', step: 0 } })).toBe(false);
    expect(pickMetrics(run.metrics).map(([k]) => k)).toEqual(['em', 'student_reward', 'zzz']);
    expect(renderCheckpointList([]).text).toMatch(/No checkpoints yet/);
    expect(renderCheckpointList([run], true).text).toMatch(/data-act="resume" disabled/);
  });

  it('counts a finished run’s iterations in good English', () => {
    expect(whereText({ ...run, cursor: { iteration: 0, stage: 'done', step: 0 } })).toBe('finished (1 iteration)');
    expect(whereText({ ...run, cursor: { iteration: 2, stage: 'done', step: 0 } })).toBe('finished (3 iterations)');
  });
});

describe('setup', () => {
  const base = { ...PRESETS.smoke };
  it('renders every setting with its flag help, and reads them back with errors per field', () => {
    for (const k of [...MAIN_FIELDS, ...ADVANCED_FIELDS]) expect(renderField(k, base[k]).text).toContain(`name="${k}"`);
    expect(renderField('lambda', base.lambda).text).toContain('class="small suggestion" data-value="0.1,0.03,0.03"');
    expect(renderField('tail', true).text).toContain('checked');
    const values: Record<string, string | boolean> = {
      iterations: '2',
      lambda: '0.1, 0.01',
      tail: false,
      privileged: 'gt',
    };
    const ok = readSettings((k) => values[k], base);
    expect(ok.errors.size).toBe(0);
    expect(ok.config).toMatchObject({ iterations: 2, lambda: [0.1, 0.01], tail: false, privileged: 'gt' });
    const bad = readSettings((k) => ({ iterations: '0', topK: 'many' })[k as 'iterations'], base);
    expect(bad.config).toBeUndefined();
    expect(bad.errors.get('iterations')).toMatch(/--iterations/);
    expect(bad.errors.get('topK')).toMatch(/--topk/);
    // A relation between settings: Dr. Zero (no teacher) with λ > 0.
    const rel = readSettings((k) => ({ privileged: 'none', lambda: '0.1' })[k as 'lambda'], base);
    expect(rel.errors.get('lambda')).toMatch(/must be 0 with --privileged none/);
    expect(valueText([4, 3, 2, 1])).toBe('4,3,2,1');
  });

  it('enables the run controls that fit each phase', () => {
    expect(controlState('idle')).toEqual({ start: true, pause: false, resume: false, stop: false, save: false });
    expect(controlState('running')).toEqual({ start: false, pause: true, resume: false, stop: true, save: true });
    expect(controlState('paused')).toEqual({ start: false, pause: false, resume: true, stop: true, save: true });
  });

  it('estimates memory from config.json before anything is allocated, against the adapter limits', () => {
    const cfg = (name: string) =>
      parseConfig(JSON.parse(readFileSync(new URL(`../../../bench/configs/${name}.json`, import.meta.url), 'utf8')));
    const browser = { maxStorageBufferBindingSize: 128 * 2 ** 20, maxBufferSize: 256 * 2 ** 20 };
    const big = { maxStorageBufferBindingSize: 2 ** 31, maxBufferSize: 2 ** 31 };
    const tenPerPass = { ...PRESETS.demo, microBatch: 10 };
    const q3 = estimateRun(cfg('qwen3-0.6b'), tenPerPass, browser);
    expect(q3.fits).toBe(false);
    // The 594 MiB embedding is kept as row shards; an MLP activation of a micro-batch of 10 rollouts is too wide.
    expect(q3.problems.join(' ')).not.toMatch(/largest weight/);
    expect(q3.problems[0]).toMatch(/One activation of a training micro-batch \(27520 tokens × 3072\).*\(128 MiB\)/);
    // On a 2 GiB-buffer adapter a micro-batch of 10 rollouts (5 turns of 128 tokens each) makes
    // logits over 2 GiB for a 152k vocabulary: they are read chunk by chunk, one chunk of rows counted, at most
    // 128 MiB of them whatever the adapter binds (220 rows of 151,936).
    const q3tight = estimateRun(cfg('qwen3-0.6b'), tenPerPass, big);
    expect(q3tight.fits).toBe(true);
    expect(q3tight.breakdown.map((l) => l.label).join('\n')).toMatch(
      /logits of one chunk of rows \(220 of 6400 tokens/,
    );
    const q3big = estimateRun(cfg('qwen3-0.6b'), { ...PRESETS.demo, microBatch: 5 }, big);
    expect(q3big.fits).toBe(true);
    expect(q3big.params).toBeGreaterThan(5e8);
    expect(q3big.warnings.join(' ')).toMatch(/GiB/);
    const smol = estimateRun(cfg('smollm2-135m'), { ...PRESETS.demo, policies: 'lora' }, big);
    expect(smol.breakdown[0]!.label).toMatch(/one shared frozen base/);
    expect(loraParams(cfg('smollm2-135m'), 16)).toBeGreaterThan(0);
    const shown = renderEstimate({
      ok: false,
      where: 'x',
      memory: q3,
      error: q3.problems[0],
      errorKind: 'too-large',
    }).text;
    expect(shown).toContain('Too large for this GPU');
    expect(renderEstimate({ ok: true, where: 'x', memory: q3big, downloadBytes: 1.2e9, cached: false }).text).toMatch(
      /download 1\.1 GiB/,
    );
  });

  it('explains bad model ids and corpus errors', () => {
    expect(hubIdProblem('Qwen/Qwen3-0.6B')).toBeNull();
    expect(hubIdProblem('HuggingFaceTB/SmolLM2-135M-Instruct')).toBeNull();
    expect(hubIdProblem('not a model')).toMatch(/not a Hugging Face model id/);
    expect(hubIdProblem('https://huggingface.co/Qwen/Qwen3-0.6B')).toMatch(/not a URL: e\.g\. Qwen\/Qwen3-0\.6B/);
    expect(hubIdProblem('')).toMatch(/Enter a Hugging Face model id/);
    const out = renderCorpusStatus({ ok: false, error: 'my.jsonl:3: missing field "text"', line: 3 }).text;
    expect(out).toContain('my.jsonl:3: missing field &quot;text&quot;');
  });

  it('names a picked folder’s files relative to the folder', () => {
    const f = (name: string, rel: string) => Object.assign(new File(['x'], name), { webkitRelativePath: rel });
    const m = relativeNames([f('config.json', 'qwen/config.json'), f('model.safetensors', 'qwen/model.safetensors')]);
    expect([...m.keys()]).toEqual(['config.json', 'model.safetensors']);
    expect([...relativeNames([new File(['x'], 'config.json')]).keys()]).toEqual(['config.json']);
  });
});
