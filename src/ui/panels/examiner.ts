// Examiner view: each generated question with its hop count, answer, how many of the student's n rollouts
// solved it, its rewards, and the construction path (source document -> each search and what it returned
// -> question/answer) laid out as a path.
import type { QcpStep, QuestionRecord } from '../../selfplay/events.ts';
import { fmtIteration, fmtNum, fmtSigned, fmtStep } from '../format.ts';
import { cls, html, type Html } from '../html.ts';

/** Escapes `text` and marks each case-insensitive occurrence of `needle` (the answer) in it. */
export function highlight(text: string, needle: string): Html {
  const n = needle.trim();
  if (n.length < 2) return html`${text}`;
  const lower = text.toLowerCase();
  const target = n.toLowerCase();
  const parts: Html[] = [];
  let from = 0;
  for (;;) {
    const at = lower.indexOf(target, from);
    if (at < 0) break;
    parts.push(html`${text.slice(from, at)}<mark>${text.slice(at, at + n.length)}</mark>`);
    from = at + n.length;
  }
  parts.push(html`${text.slice(from)}`);
  return html`${parts}`;
}

const CLIP = 220;

function passage(p: QcpStep['passages'][number], answer: string): Html {
  const long = p.text.length > CLIP;
  const body = long
    ? html`<details class="passage-more"><summary>${highlight(p.text.slice(0, CLIP), answer)}…</summary>${highlight(p.text, answer)}</details>`
    : highlight(p.text, answer);
  return html`<li class="passage"><span class="passage-title">${p.title}</span> <span class="passage-id">${p.id}</span><div class="passage-text">${body}</div></li>`;
}

/** The construction path as an ordered list of nodes joined by arrows. */
export function renderQcp(q: Pick<QuestionRecord, 'qcp' | 'question' | 'answer'>): Html {
  let search = 0;
  const nodes = q.qcp.map((s) => {
    const head =
      s.kind === 'source'
        ? html`<div class="qcp-head"><span class="qcp-kind">source document</span></div>`
        : html`<div class="qcp-head"><span class="qcp-kind">search ${++search}</span> <code class="query">${s.query ?? ''}</code></div>`;
    const passages = s.passages.length
      ? html`<ol class="passages">${s.passages.map((p) => passage(p, q.answer))}</ol>`
      : html`<p class="muted">no passages</p>`;
    return html`<li class="${cls('qcp-node', s.kind)}">${head}${passages}</li>`;
  });
  nodes.push(
    html`<li class="qcp-node final"><div class="qcp-head"><span class="qcp-kind">question</span></div><p class="q-text">${q.question || '(none)'}</p><p class="a-text">answer: <strong>${q.answer || '(none)'}</strong></p></li>`,
  );
  return html`<ol class="qcp-path" aria-label="question construction path">${nodes}</ol>`;
}

/** k of n rollouts solved, as dots (filled = solved). */
export function solvedDots(k: number, n: number): Html {
  if (n === 0)
    return html`<span class="solved unscored"
      title="not scored by the student: the question's format is invalid, or it was written for the training set">not scored</span>`;
  const dots = Array.from({ length: n }, (_, i) =>
    i < k ? html`<span class="dot on"></span>` : html`<span class="dot"></span>`,
  );
  const kind = k === 0 ? 'unsolved' : k === n ? 'trivial' : 'learnable';
  return html`<span class="${cls('solved', kind)}" title="${k} of ${n} student rollouts answered correctly (${kind})"
    aria-label="${k} of ${n} solved">${dots} <span class="kn">${k}/${n}</span></span>`;
}

export function renderQuestion(q: QuestionRecord, open = false): Html {
  return html`<article class="card question-card" data-iteration="${q.iteration}" data-step="${q.step}">
  <header class="card-head">
    <span class="badge hops" title="hop count">${q.hops}-hop</span>
    <span class="meta">${fmtIteration(q.iteration)} · ${fmtStep(q.step)}</span>
    ${solvedDots(q.k, q.n)}
  </header>
  <p class="${cls('q-text', !q.question && 'missing')}">${q.question || '(no question extracted from the examiner’s output)'}</p>
  <p class="a-text">answer: <strong>${q.answer || '(none)'}</strong></p>
  <dl class="rewards">
    <div><dt>difficulty r<sub>d</sub></dt><dd>${fmtNum(q.difficultyReward, 2)}</dd></div>
    <div><dt>format f</dt><dd>${fmtNum(q.formatReward, 2)}</dd></div>
    <div><dt>examiner r</dt><dd>${fmtNum(q.examinerReward, 2)}</dd></div>
    <div><dt>HRPO A</dt><dd class="${q.advantage > 0 ? 'pos' : q.advantage < 0 ? 'neg' : ''}">${fmtSigned(q.advantage)}</dd></div>
  </dl>
  <details class="qcp"${open ? html` open` : ''}><summary>construction path (${q.qcp.filter((s) => s.kind === 'search').length} searches)</summary>${renderQcp(q)}</details>
</article>`;
}

export interface ExaminerFilter {
  hops: number | null;
  /** Only questions with 0 < k < n (the ones that teach the student). */
  learnableOnly: boolean;
}

export function filterQuestions(questions: readonly QuestionRecord[], f: ExaminerFilter): QuestionRecord[] {
  return questions.filter(
    (q) => (f.hops === null || q.hops === f.hops) && (!f.learnableOnly || (q.k > 0 && q.k < q.n)),
  );
}

export function renderExaminerSummary(questions: readonly QuestionRecord[]): Html {
  if (questions.length === 0) return html``;
  const learnable = questions.filter((q) => q.k > 0 && q.k < q.n).length;
  const mean = (f: (q: QuestionRecord) => number) => questions.reduce((s, q) => s + f(q), 0) / questions.length;
  return html`<p class="summary">${questions.length} questions · mean hops ${fmtNum(
    mean((q) => q.hops),
    2,
  )} · 0&lt;k&lt;n ${learnable}
    (${fmtNum(learnable / questions.length, 2)}) · mean examiner reward ${fmtNum(
      mean((q) => q.examinerReward),
      3,
    )}</p>`;
}

/** The list, newest first; the first card's path is open. */
export function renderExaminer(questions: readonly QuestionRecord[], f: ExaminerFilter, limit = 40): Html {
  const shown = filterQuestions(questions, f).slice(-limit).reverse();
  if (questions.length === 0) {
    return html`<p class="empty">No questions yet. The examiner writes them in its stage of each iteration; they appear here as they are scored.</p>`;
  }
  return html`${renderExaminerSummary(questions)}${
    shown.length
      ? shown.map((q, i) => renderQuestion(q, i === 0))
      : html`<p class="empty">No question matches the filter.</p>`
  }`;
}

/** Binds the filter controls of the examiner panel and re-renders on change. */
export class ExaminerPanel {
  private filter: ExaminerFilter = { hops: null, learnableOnly: false };
  private list: HTMLElement;
  private last: readonly QuestionRecord[] = [];

  constructor(root: HTMLElement) {
    root.innerHTML = html`<div class="toolbar">
      <label>hops <select class="f-hops"><option value="">all</option><option>1</option><option>2</option><option>3</option><option>4</option></select></label>
      <label><input type="checkbox" class="f-learnable"> only 0&lt;k&lt;n</label>
    </div><div class="list" aria-live="polite"></div>`.text;
    this.list = root.querySelector('.list')!;
    root.querySelector<HTMLSelectElement>('.f-hops')!.addEventListener('change', (e) => {
      const v = (e.target as HTMLSelectElement).value;
      this.filter.hops = v ? Number(v) : null;
      this.render(this.last);
    });
    root.querySelector<HTMLInputElement>('.f-learnable')!.addEventListener('change', (e) => {
      this.filter.learnableOnly = (e.target as HTMLInputElement).checked;
      this.render(this.last);
    });
  }

  render(questions: readonly QuestionRecord[]): void {
    this.last = questions;
    // Keep paths the user opened open across re-renders.
    const open = new Set(
      [...this.list.querySelectorAll<HTMLDetailsElement>('details.qcp[open]')].map(
        (d) => d.closest('.question-card')?.querySelector('.q-text')?.textContent,
      ),
    );
    this.list.innerHTML = renderExaminer(questions, this.filter).text;
    if (open.size) {
      for (const card of this.list.querySelectorAll('.question-card')) {
        if (open.has(card.querySelector('.q-text')?.textContent))
          card.querySelector<HTMLDetailsElement>('details.qcp')!.open = true;
      }
    }
  }
}
