// Teacher-vs-student heatmap: a rollout's tokens coloured by the per-token top-K KL between the student and
// the privileged teacher, or by log p_teacher − log p_student of the sampled token (diverging). Tool tokens
// (the search results the environment appended) carry no loss: they are shown hatched and marked masked.
// Hovering or focusing a token (arrow keys move between tokens) shows both top-K lists.
import type { QuestionRecord, RolloutRecord, TokenRecord } from '../../selfplay/events.ts';
import { fmtIteration, fmtNum, fmtSigned, fmtStep } from '../format.ts';
import { cls, html, type Html } from '../html.ts';
import type { PrivilegedMode } from '../../env/prompts.ts';

export type HeatMode = 'kl' | 'diff';

/** The q-quantile of |values| (robust colour-scale maximum; never 0). */
export function robustMax(values: readonly number[], q = 0.95): number {
  const a = values.map(Math.abs).filter(Number.isFinite).sort((x, y) => x - y);
  if (a.length === 0) return 1;
  const v = a[Math.min(a.length - 1, Math.floor(q * (a.length - 1)))]!;
  return v > 1e-9 ? v : Math.max(a[a.length - 1]!, 1e-9);
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Sequential colour for a KL value: transparent -> deep orange. */
export function klColor(v: number, max: number): string {
  const t = clamp01(v / max);
  return `rgba(230, 81, 0, ${(0.06 + 0.84 * t).toFixed(3)})`;
}

/** Diverging colour for log p_T − log p_S: blue where the teacher is more sure of the token, red where less. */
export function diffColor(d: number, max: number): string {
  const t = clamp01(Math.abs(d) / max);
  const a = (0.06 + 0.84 * t).toFixed(3);
  return d >= 0 ? `rgba(25, 113, 194, ${a})` : `rgba(201, 42, 42, ${a})`;
}

/** A token's text made visible: newlines as ↵ (then a real break), tabs as →, nothing as ∅. */
export function visibleText(text: string): string {
  if (text === '') return '∅';
  return text.replace(/\t/g, '→\t').replace(/\r?\n/g, '↵\n');
}

/**
 * A token's text for a chip or a list, where layout does not show it: every space as ␣, tab as ⇥, newline
 * as ↵ (no real break), carriage return as ␍, nothing as ∅, so a whitespace token is never blank.
 */
export function shownToken(text: string): string {
  if (text === '') return '∅';
  return text.replace(/ /g, '␣').replace(/\t/g, '⇥').replace(/\r?\n/g, '↵').replace(/\r/g, '␍');
}

export interface HeatStats {
  policy: number;
  masked: number;
  meanKl: number;
  sumKl: number;
  meanDiff: number;
  /** Indices of the policy tokens with the largest KL. */
  top: number[];
}

export function heatStats(tokens: readonly TokenRecord[], topN = 5): HeatStats {
  let policy = 0;
  let sumKl = 0;
  let sumDiff = 0;
  const idx: number[] = [];
  tokens.forEach((t, i) => {
    if (!t.policy) return;
    policy++;
    sumKl += t.kl;
    sumDiff += t.teacherLogp - t.studentLogp;
    idx.push(i);
  });
  idx.sort((a, b) => tokens[b]!.kl - tokens[a]!.kl);
  return {
    policy,
    masked: tokens.length - policy,
    meanKl: policy ? sumKl / policy : 0,
    sumKl,
    meanDiff: policy ? sumDiff / policy : 0,
    top: idx.slice(0, topN),
  };
}

export function scaleFor(tokens: readonly TokenRecord[], mode: HeatMode): number {
  const pol = tokens.filter((t) => t.policy);
  return robustMax(pol.map((t) => (mode === 'kl' ? t.kl : t.teacherLogp - t.studentLogp)));
}

function tokenTitle(t: TokenRecord): string {
  if (!t.policy) return 'tool/prompt token: masked (no loss, no KL)';
  return `KL ${fmtNum(t.kl)} · log p_S ${fmtNum(t.studentLogp)} · log p_T ${fmtNum(t.teacherLogp)}`;
}

/** The token strip. `focusIndex` gets the roving tab stop (defaults to the first policy token). */
export function renderTokens(tokens: readonly TokenRecord[], mode: HeatMode, max: number, focusIndex?: number): Html {
  const stop = focusIndex ?? Math.max(0, tokens.findIndex((t) => t.policy === 1));
  return html`${tokens.map((t, i) => {
    const bg = t.policy ? (mode === 'kl' ? klColor(t.kl, max) : diffColor(t.teacherLogp - t.studentLogp, max)) : '';
    return html`<span class="${cls('tok', t.policy ? 'policy' : 'masked', t.text === '' && 'empty')}" data-i="${i}" tabindex="${i === stop ? 0 : -1}"${
      bg ? html` style="background:${bg}"` : ''
    } title="${tokenTitle(t)}">${visibleText(t.text)}</span>`;
  })}`;
}

export function renderLegend(mode: HeatMode, max: number): Html {
  if (mode === 'kl') {
    return html`<div class="legend" aria-label="colour scale">
      <span>0</span><span class="ramp kl" aria-hidden="true"></span><span>≥ ${fmtNum(max)}</span>
      <span class="legend-note">per-token top-K KL between student and teacher: the darker, the more the privileged teacher disagrees</span>
      <span class="swatch masked" aria-hidden="true"></span><span class="legend-note">tool tokens (masked)</span></div>`;
  }
  return html`<div class="legend" aria-label="colour scale">
    <span>−${fmtNum(max)}</span><span class="ramp diff" aria-hidden="true"></span><span>+${fmtNum(max)}</span>
    <span class="legend-note"><span class="down">red</span>: the teacher finds the sampled token less likely than the student did (it is pushed down); <span class="up">blue</span>: more likely (pushed up)</span>
    <span class="swatch masked" aria-hidden="true"></span><span class="legend-note">tool tokens (masked)</span></div>`;
}

const prob = (lp: number) => Math.exp(lp);

/** The student's top-K next-token list with the teacher's log-probs of the same tokens. */
export function renderTokenDetail(t: TokenRecord | undefined, index: number): Html {
  if (!t) return html`<p class="muted">Hover or focus a token (Tab into the text, then arrow keys) to see both top-K lists.</p>`;
  const head = html`<p class="detail-head">token ${index}: <code class="tokname">${shownToken(t.text)}</code> <span class="muted">id ${t.id}</span></p>`;
  if (!t.policy) {
    return html`${head}<p class="masked-note">Masked: this token came from the search tool (or the prompt), not from the student. It gets no policy loss and no distillation term.</p>`;
  }
  const d = t.teacherLogp - t.studentLogp;
  const summary = html`<dl class="detail-nums">
    <div><dt>p<sub>S</sub>(token)</dt><dd>${fmtNum(prob(t.studentLogp))}</dd></div>
    <div><dt>p<sub>T</sub>(token)</dt><dd>${fmtNum(prob(t.teacherLogp))}</dd></div>
    <div><dt>log p<sub>T</sub> − log p<sub>S</sub></dt><dd class="${d >= 0 ? 'up' : 'down'}">${fmtSigned(d, 3)}</dd></div>
    <div><dt>top-K KL</dt><dd>${fmtNum(t.kl)}</dd></div></dl>`;
  if (!t.topk || t.topk.ids.length === 0) return html`${head}${summary}<p class="muted">No top-K lists were recorded for this token.</p>`;
  const tk = t.topk;
  const rows = tk.ids.map((id, j) => {
    const ps = prob(tk.studentLogp[j]!);
    const pt = prob(tk.teacherLogp[j]!);
    return html`<tr class="${cls(id === t.id && 'sampled')}">
      <td class="rank">${j + 1}</td><td><code>${shownToken(tk.texts[j] ?? '')}</code></td>
      <td class="num">${fmtNum(ps)}<span class="bar s" style="width:${(ps * 100).toFixed(1)}%"></span></td>
      <td class="num">${fmtNum(pt)}<span class="bar t" style="width:${(pt * 100).toFixed(1)}%"></span></td></tr>`;
  });
  // The teacher's own favourites among the K (the student's list re-ranked by the teacher).
  const byTeacher = tk.ids.map((_, j) => j).sort((a, b) => tk.teacherLogp[b]! - tk.teacherLogp[a]!);
  const tTop = byTeacher.slice(0, 5).map((j) => html`<li><code>${shownToken(tk.texts[j] ?? '')}</code> ${fmtNum(prob(tk.teacherLogp[j]!))}</li>`);
  const outside = tk.ids.includes(t.id) ? '' : html`<p class="muted">The sampled token is outside the student's top-${tk.ids.length} (it was sampled at temperature > 0); its KL term still covers the top-K plus the tail.</p>`;
  return html`${head}${summary}${outside}
    <p class="muted">teacher's top choices among these: </p><ol class="teacher-top">${tTop}</ol>
    <div class="topk-scroll"><table class="topk"><caption>student's top-${tk.ids.length} (sampled token highlighted)</caption>
    <thead><tr><th>#</th><th>token</th><th>p<sub>S</sub> student</th><th>p<sub>T</sub> teacher</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

export type { PrivilegedMode };

/** What the teacher saw that the student did not: the question's construction path (or less, per mode). */
export function renderPrivileged(q: QuestionRecord | undefined, mode: PrivilegedMode, gold: string, hops: number): Html {
  if (mode === 'none') {
    return html`<div class="privileged none"><h4>No teacher</h4><p>Privileged context is off (Dr. Zero): the KL shown is 0 and no distillation term is used.</p></div>`;
  }
  const answer = html`<p>answer: <strong>${gold}</strong>${mode === 'gt-hop' ? html` · ${hops} hops` : ''}</p>`;
  if (mode === 'gt' || mode === 'gt-hop' || !q) {
    return html`<div class="privileged"><h4>The teacher also saw</h4>${answer}${
      !q && (mode === 'full' || mode === 'partial') ? html`<p class="muted">and the question’s construction path (this question’s path was not among the questions the run reported)</p>` : ''
    }</div>`;
  }
  let n = 0;
  const steps = q.qcp.map((s) =>
    s.kind === 'source'
      ? html`<li><span class="qcp-kind">source</span> ${s.passages[0]?.title ?? ''}</li>`
      : html`<li><span class="qcp-kind">search ${++n}</span> <code>${s.query ?? ''}</code> → ${s.passages.map((p) => p.title).join(', ')}</li>`,
  );
  return html`<div class="privileged"><h4>The teacher also saw ${mode === 'partial' ? '(part of) ' : ''}how the question was made</h4>
    <ol class="priv-path">${steps}</ol>${answer}</div>`;
}

/** The whole view for one rollout. */
export function renderHeatmapView(r: RolloutRecord, mode: HeatMode, q: QuestionRecord | undefined, privileged: PrivilegedMode): Html {
  const max = scaleFor(r.tokens, mode);
  const st = heatStats(r.tokens);
  return html`<div class="heat-top">
    <div class="heat-q"><span class="badge hops">${r.hops}-hop</span> <span class="q-text">${r.question}</span>
      <span class="${cls('verdict', r.reward > 0 ? 'good' : 'bad')}">${r.reward > 0 ? '✓' : '✗'} ${r.answer || '(no answer)'}</span></div>
    ${renderPrivileged(q, privileged, r.gold, r.hops)}
  </div>
  <p class="summary">${st.policy} student tokens · ${st.masked} masked tool/prompt tokens · mean KL ${fmtNum(st.meanKl)} · sum ${fmtNum(st.sumKl)} ·
    mean log p<sub>T</sub>−log p<sub>S</sub> ${fmtSigned(st.meanDiff, 3)}</p>
  ${
    st.top.length
      ? html`<p class="summary">largest disagreements: ${st.top.map(
          (i) => html`<button type="button" class="jump" data-i="${i}">${shownToken(r.tokens[i]!.text)} <small>${fmtNum(r.tokens[i]!.kl)}</small></button> `,
        )}</p>`
      : ''
  }
  ${renderLegend(mode, max)}
  <div class="heat-body">
    <div class="tokens" role="group" aria-label="rollout tokens: Tab to enter, arrow keys to move between tokens">${renderTokens(r.tokens, mode, max)}</div>
    <aside class="token-detail" aria-live="polite">${renderTokenDetail(undefined, -1)}</aside>
  </div>`;
}

/** Rollout picker, mode switch, and the hover/focus/keyboard behaviour of the token strip. */
export class HeatmapPanel {
  private mode: HeatMode = 'kl';
  private select: HTMLSelectElement;
  private body: HTMLElement;
  private rollouts: readonly RolloutRecord[] = [];
  private questions: readonly QuestionRecord[] = [];
  private follow = true;
  privileged: PrivilegedMode = 'full';

  constructor(root: HTMLElement) {
    root.innerHTML = html`<div class="toolbar">
      <label>rollout <select class="rollout-select"></select></label>
      <div class="seg-switch" role="radiogroup" aria-label="colour by">
        <label><input type="radio" name="heat-mode" value="kl" checked> top-K KL</label>
        <label><input type="radio" name="heat-mode" value="diff"> log p<sub>T</sub> − log p<sub>S</sub></label>
      </div></div><div class="heat"></div>`.text;
    this.select = root.querySelector('.rollout-select')!;
    this.body = root.querySelector('.heat')!;
    this.select.addEventListener('change', () => {
      this.follow = this.select.selectedIndex === 0;
      this.draw();
    });
    for (const r of root.querySelectorAll<HTMLInputElement>('input[name=heat-mode]')) {
      r.addEventListener('change', () => {
        this.mode = r.value as HeatMode;
        this.draw();
      });
    }
    this.body.addEventListener('mouseover', (e) => this.show(e.target as HTMLElement, false));
    this.body.addEventListener('focusin', (e) => this.show(e.target as HTMLElement, false));
    this.body.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLElement>('button.jump');
      if (b) this.focusToken(Number(b.dataset.i));
    });
    this.body.addEventListener('keydown', (e) => this.key(e));
  }

  private current(): RolloutRecord | undefined {
    const i = Number(this.select.value);
    return Number.isFinite(i) ? this.rollouts[i] : undefined;
  }

  render(rollouts: readonly RolloutRecord[], questions: readonly QuestionRecord[]): void {
    const before = this.select.value;
    this.rollouts = rollouts;
    this.questions = questions;
    const opts: string[] = [];
    for (let i = rollouts.length - 1; i >= 0; i--) {
      const r = rollouts[i]!;
      opts.push(html`<option value="${i}">${fmtIteration(r.iteration)} · ${fmtStep(r.step)} · ${r.reward > 0 ? '✓' : '✗'} · ${r.question.slice(0, 60)}</option>`.text);
    }
    this.select.innerHTML = opts.join('');
    if (!this.follow && before) this.select.value = before;
    if (this.select.selectedIndex < 0) this.select.selectedIndex = 0;
    if (this.follow || before !== this.select.value) this.draw();
  }

  private draw(): void {
    const r = this.current();
    if (!r) {
      this.body.innerHTML = html`<p class="empty">No rollouts yet. Once the student has answered a question, its tokens appear here, coloured by how much the privileged teacher disagrees with each.</p>`.text;
      return;
    }
    let q: QuestionRecord | undefined;
    for (let i = this.questions.length - 1; i >= 0 && !q; i--) if (this.questions[i]!.question === r.question) q = this.questions[i];
    this.body.innerHTML = renderHeatmapView(r, this.mode, q, this.privileged).text;
  }

  private show(target: HTMLElement, move: boolean): void {
    const tok = target.closest<HTMLElement>('.tok');
    const r = this.current();
    if (!tok || !r) return;
    const i = Number(tok.dataset.i);
    for (const el of this.body.querySelectorAll('.tok.active')) el.classList.remove('active');
    tok.classList.add('active');
    const detail = this.body.querySelector('.token-detail');
    if (detail) detail.innerHTML = renderTokenDetail(r.tokens[i], i).text;
    if (move) tok.focus();
  }

  focusToken(i: number): void {
    const tok = this.body.querySelector<HTMLElement>(`.tok[data-i="${i}"]`);
    if (!tok) return;
    for (const el of this.body.querySelectorAll<HTMLElement>('.tok[tabindex="0"]')) el.tabIndex = -1;
    tok.tabIndex = 0;
    tok.focus();
    this.show(tok, false);
  }

  private key(e: KeyboardEvent): void {
    const tok = (e.target as HTMLElement).closest<HTMLElement>('.tok');
    const r = this.current();
    if (!tok || !r) return;
    const i = Number(tok.dataset.i);
    const last = r.tokens.length - 1;
    const next: Record<string, number> = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: last };
    if (!(e.key in next)) return;
    e.preventDefault();
    this.focusToken(Math.max(0, Math.min(last, next[e.key]!)));
  }
}
