// The teaching demo's views as strings: the software-GPU check reads the adapter info; the ablation view lists
// the modes in order with their numbers and colours each mode's tokens on the heatmap's shared scale; the
// before/after view counts right answers per model.
import { describe, expect, it } from 'vitest';
import type { AblationResult } from '../../../src/lab/ablation.ts';
import type { RolloutRecord } from '../../../src/selfplay/events.ts';
import { meanGain, renderAblation } from '../../../src/ui/panels/ablation.ts';
import { renderBeforeAfter } from '../../../src/ui/panels/before-after.ts';
import { renderFindings, renderGuide, softwareAdapter } from '../../../src/ui/panels/guide.ts';
import { klColor } from '../../../src/ui/panels/heat-scale.ts';

describe('the software-GPU warning', () => {
  const info = (description: string, isCpu = false) => ({ vendor: 'x', architecture: '', description, isCpu });
  it('names SwiftShader, lavapipe and llvmpipe from the adapter info, and nothing for a hardware GPU', () => {
    expect(softwareAdapter(info('SwiftShader Device (Subzero)'))).toBe('SwiftShader');
    expect(softwareAdapter({ ...info(''), vendor: 'mesa', architecture: 'lavapipe' })).toBe('lavapipe');
    expect(softwareAdapter(info('llvmpipe (LLVM 15.0.6, 256 bits)', true))).toBe('llvmpipe');
    expect(softwareAdapter(info('Microsoft Basic Render Driver', true))).toBe('a software adapter');
    expect(softwareAdapter(info('NVIDIA GeForce RTX 4060 Laptop GPU'))).toBeNull();
  });
  it('the guide has a paragraph per role and the loss terms', () => {
    const g = renderGuide().text;
    for (const role of ['examiner', 'student', 'teacher']) expect(g).toContain(`data-role="${role}"`);
    for (const t of ['grpo', 'beta', 'lambda', 'd']) expect(g).toContain(`data-term="${t}"`);
    expect(g).toContain('id="guide-findings"');
  });

  it("the guide shows what the example's experiment found: a row per comparison and the sentence on the privilege", () => {
    const finding = {
      name: 'piplay − self',
      label: 'π-Play against the self control',
      interval: '−0.5 [−3.0, +2.0]',
      questionOnly: '[−2.1, +1.2]',
      perSeed: '1: −1.0, 2: <b>0</b>',
      verdict: 'not shown (the interval holds 0)' as const,
    };
    const e = { source: 'results/experiment-47', scope: '5 seeds', findings: [finding], summary: 'It is <not> shown.' };
    const g = renderFindings(e).text;
    expect(g).toContain('<code>results/experiment-47</code>: 5 seeds.');
    expect(g).toContain('<tr data-finding="piplay − self"><td>π-Play against the self control</td>');
    expect(g).toContain('−0.5 [−3.0, +2.0]');
    expect(g).toContain('1: −1.0, 2: &lt;b&gt;0&lt;/b&gt;');
    expect(g).toContain('<strong>It is &lt;not&gt; shown.</strong>');
    expect(g).toContain('<td class="verdict" title="not shown (the interval holds 0)">not shown</td>');
    expect(renderFindings({ ...e, summary: null }).text).not.toContain('findings-summary');
  });
});

describe('the ablation view', () => {
  const tokens = [
    { id: 1, text: 'a', policy: 1 as const, studentLogp: -1, teacherLogp: -1, kl: 0 },
    { id: 2, text: 'tool', policy: 0 as const, studentLogp: 0, teacherLogp: 0, kl: 0 },
    { id: 3, text: 'b', policy: 1 as const, studentLogp: -2, teacherLogp: -2, kl: 0 },
  ];
  const r = { tokens, privilegedMode: 'full' } as unknown as RolloutRecord;
  const a: AblationResult = {
    studentLogp: [-1, -2],
    answerTokens: [1],
    modes: [
      { mode: 'none', block: '', teacherLogp: [-1, -2], kl: [0, 0], distill: 0, answerShare: null },
      { mode: 'full', block: 'x\n', teacherLogp: [-0.5, -1], kl: [0.01, 0.5], distill: 0.255, answerShare: 0.98 },
    ],
  };
  it('lists the modes with D, the answer share, the mean gain, and colours their tokens on the shared scale', () => {
    const v = renderAblation(r, a, 'teacher', 'kl').text;
    expect(v.indexOf('data-mode="none"')).toBeLessThan(v.indexOf('data-mode="full"'));
    expect(v).toContain('98.0%');
    expect(v).toMatch(/class="run-mode"/);
    expect(meanGain(a.modes[1]!, a.studentLogp)).toBeCloseTo(0.75, 9);
    expect(v).toContain(klColor(0.5));
    expect(v).toContain('tok masked');
  });
});

describe('the before/after view', () => {
  it('counts the right answers of each model', () => {
    const ans = (correct: boolean) => ({ answer: correct ? 'Paris' : '', correct, text: '…' });
    const v = renderBeforeAfter([
      { question: 'q1', hops: 1, gold: ['Paris'], base: ans(false), student: ans(true) },
      { question: 'q2', hops: 2, gold: ['Rome'], base: ans(false), student: ans(false) },
    ]).text;
    expect(v).toMatch(/base model 0 right,\s+trained student 1 right/);
    expect(v).toContain('(no answer)');
  });
});
