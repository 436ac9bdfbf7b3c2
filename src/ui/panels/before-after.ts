// Before and after: the same held-out questions answered greedily by the base model and by the trained student,
// side by side (the worker runs both; src/lab/before-after.ts). Asked for with a button, once a run has begun.
import type { Answered, BeforeAfterRow } from '../../lab/before-after.ts';
import { cls, html, type Html } from '../html.ts';

export type CompareFn = () => Promise<{ ok: true; rows: BeforeAfterRow[] } | { ok: false; error: string }>;

function answerCell(a: Answered, who: string): Html {
  return html`<td class="${cls('ba-answer', a.correct ? 'good' : 'bad')}" data-who="${who}">
    <span class="verdict">${a.correct ? '✓' : '✗'} ${a.answer || '(no answer)'}</span>
    <details><summary>whole answer</summary><pre class="ba-text">${a.text}</pre></details></td>`;
}

export function renderBeforeAfter(rows: readonly BeforeAfterRow[]): Html {
  const right = (k: 'base' | 'student') => rows.filter((r) => r[k].correct).length;
  return html`<p class="summary">${rows.length} held-out questions, greedy: base model ${right('base')} right,
    trained student ${right('student')} right.</p>
    <table class="ba-table"><thead><tr><th>question</th><th>gold</th><th>base model (before)</th><th>trained student (after)</th></tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr><td><span class="badge hops">${r.hops}-hop</span> ${r.question}</td><td>${r.gold.join(' / ')}</td>
        ${answerCell(r.base, 'base')}${answerCell(r.student, 'student')}</tr>`,
    )}</tbody></table>`;
}

export class BeforeAfterPanel {
  private out: HTMLElement;
  private button: HTMLButtonElement;

  constructor(
    root: HTMLElement,
    private compare: CompareFn,
  ) {
    root.innerHTML = html`<h3>Before and after</h3>
      <p>The same held-out questions answered greedily by the base model (the weights every policy started from) and by
      the student as it is now. Available once a run has started, and after it finished or stopped.</p>
      <p><button type="button" class="compare">Compare base model and trained student</button></p>
      <div class="ba-out" aria-live="polite"></div>`.text;
    this.out = root.querySelector('.ba-out')!;
    this.button = root.querySelector('button.compare')!;
    this.button.addEventListener('click', () => void this.run());
  }

  private async run(): Promise<void> {
    this.button.disabled = true;
    this.out.innerHTML = html`<p class="muted">Answering with both models…</p>`.text;
    try {
      const r = await this.compare();
      this.out.innerHTML = r.ok
        ? renderBeforeAfter(r.rows).text
        : html`<p class="ba-error" role="alert">Could not compare: ${r.error}</p>`.text;
    } finally {
      this.button.disabled = false;
    }
  }
}
