// Student view: the n rollouts of a question side by side, turn by turn (thinking, searches, the passages
// the search tool returned, the answer), each marked correct or not, with its GRPO advantage.
import type { RolloutRecord, TokenRecord } from '../../selfplay/events.ts';
import { fmtIteration, fmtNum, fmtSigned, fmtStep } from '../format.ts';
import { cls, html, type Html } from '../html.ts';
import { groupRollouts, type RolloutGroup } from '../state.ts';

export type SegmentKind = 'think' | 'search' | 'information' | 'answer' | 'text';

export interface Segment {
  kind: SegmentKind;
  text: string;
  /** The tag was opened but never closed (the token budget ran out). */
  open?: boolean;
}

export interface Turn {
  segments: Segment[];
}

const TAG = /<(think|search|information|answer)>([\s\S]*?)(?:<\/\1>|$)/g;

/** Splits a transcript into tagged segments (Search-R1 tags); untagged text becomes 'text' segments. */
export function segmentText(text: string): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    const before = text.slice(last, m.index);
    if (before.trim()) out.push({ kind: 'text', text: before.trim() });
    const closed = m[0].endsWith(`</${m[1]}>`);
    out.push({ kind: m[1] as SegmentKind, text: m[2]!.trim(), ...(closed ? {} : { open: true }) });
    last = m.index! + m[0].length;
  }
  const rest = text.slice(last);
  if (rest.trim()) out.push({ kind: 'text', text: rest.trim() });
  return out;
}

/** Segments grouped into turns: a turn ends with the tool's reply (an information block). */
export function turnsOf(tokens: readonly TokenRecord[]): Turn[] {
  const segments = segmentText(tokens.map((t) => t.text).join(''));
  const turns: Turn[] = [{ segments: [] }];
  for (const s of segments) {
    turns[turns.length - 1]!.segments.push(s);
    if (s.kind === 'information') turns.push({ segments: [] });
  }
  if (turns.length > 1 && turns[turns.length - 1]!.segments.length === 0) turns.pop();
  return turns;
}

const LABEL: Record<SegmentKind, string> = {
  think: 'thinking',
  search: 'search',
  information: 'retrieved (tool, masked)',
  answer: 'answer',
  text: 'text',
};

function renderSegment(s: Segment): Html {
  const body =
    s.kind === 'information'
      ? html`<details><summary>${s.text.slice(0, 140)}${s.text.length > 140 ? '…' : ''}</summary><pre>${s.text}</pre></details>`
      : html`<pre>${s.text}</pre>`;
  return html`<div class="${cls('seg', s.kind, s.open && 'unclosed')}"><span class="seg-label">${LABEL[s.kind]}${s.open ? ' (unclosed)' : ''}</span>${body}</div>`;
}

export function renderRollout(r: RolloutRecord, index: number): Html {
  const correct = r.reward > 0;
  const turns = turnsOf(r.tokens);
  return html`<article class="${cls('card', 'rollout', correct ? 'correct' : 'wrong')}"
    aria-label="rollout ${index + 1}">
  <header class="card-head">
    <span class="verdict"
      title="${correct ? 'exact match with the examiner\u2019s answer' : 'not an exact match'}">${correct ? '✓ correct' : '✗ wrong'}</span>
    <span class="meta">#${index + 1} · reward ${fmtNum(r.reward, 2)}</span>
    <span class="${cls('adv', r.advantage > 0 ? 'pos' : r.advantage < 0 ? 'neg' : '')}"
      title="GRPO advantage (r − mean)/(std + 1e-6) within the group">A ${fmtSigned(r.advantage)}</span>
  </header>
  <p class="a-text">answer: <strong>${r.answer || '(none)'}</strong> · ${r.searches.length} search${r.searches.length === 1 ? '' : 'es'}</p>
  <ol class="turns">${turns.map((t, i) => html`<li class="turn"><span class="turn-no">turn ${i + 1}</span>${t.segments.map(renderSegment)}</li>`)}</ol>
</article>`;
}

/** One question's rollouts; `n` (rollouts per question) notes when the run recorded only some of them. */
export function renderGroup(g: RolloutGroup, n = 0): Html {
  const k = g.rollouts.filter((r) => r.reward > 0).length;
  const partial =
    n > g.rollouts.length
      ? html`<p class="muted note">${g.rollouts.length} of its ${n} rollouts were recorded token by token (the run records “rollout samples” rollouts per step; raise it in the advanced settings to see whole groups). The advantages are those of the full group.</p>`
      : '';
  return html`<section class="group" aria-label="rollouts of one question">
  <header class="group-head">
    <span class="badge hops">${g.hops}-hop</span>
    <span class="meta">${fmtIteration(g.iteration)} · ${fmtStep(g.step)} · ${k}/${g.rollouts.length} correct</span>
    <p class="q-text">${g.question}</p>
    <p class="a-text">gold: <strong>${g.gold}</strong></p>${partial}
  </header>
  <div class="rollouts">${g.rollouts.map(renderRollout)}</div>
</section>`;
}

export function renderStudent(rollouts: readonly RolloutRecord[], groupIndex = 0, n = 0): Html {
  const groups = groupRollouts(rollouts);
  if (groups.length === 0) {
    return html`<p class="empty">No rollouts yet. The student's rollouts appear here during its stage (and while the examiner's questions are scored).</p>`;
  }
  const g = groups[Math.min(groupIndex, groups.length - 1)]!;
  return renderGroup(g, n);
}

/** A group picker (newest first) above one group's rollouts. */
export class StudentPanel {
  private select: HTMLSelectElement;
  private body: HTMLElement;
  private follow = true;
  private last: readonly RolloutRecord[] = [];
  /** Rollouts per question of the run (for the "m of n recorded" note). */
  n = 0;

  constructor(root: HTMLElement) {
    root.innerHTML = html`<div class="toolbar"><label>question <select class="group-select"></select></label>
      <label><input type="checkbox" class="follow"
        checked> follow the newest</label></div><div class="body"></div>`.text;
    this.select = root.querySelector('.group-select')!;
    this.body = root.querySelector('.body')!;
    const follow = root.querySelector<HTMLInputElement>('.follow')!;
    this.select.addEventListener('change', () => {
      this.follow = this.select.selectedIndex === 0;
      follow.checked = this.follow;
      this.draw();
    });
    follow.addEventListener('change', () => {
      this.follow = follow.checked;
      if (this.follow) this.select.selectedIndex = 0;
      this.draw();
    });
  }

  render(rollouts: readonly RolloutRecord[]): void {
    this.last = rollouts;
    const groups = groupRollouts(rollouts);
    const keep = this.follow ? null : this.select.value;
    this.select.innerHTML = groups
      .map(
        (g) =>
          html`<option value="${g.key}">${fmtIteration(g.iteration)} · ${fmtStep(g.step)} · ${g.hops}-hop · ${g.question.slice(0, 70)}</option>`
            .text,
      )
      .join('');
    if (keep !== null) this.select.value = keep;
    if (this.select.selectedIndex < 0) this.select.selectedIndex = 0;
    this.draw();
  }

  private draw(): void {
    const groups = groupRollouts(this.last);
    const g = groups.find((x) => x.key === this.select.value) ?? groups[0];
    this.body.innerHTML = g ? renderGroup(g, this.n).text : renderStudent([]).text;
  }
}
