// Teacher-vs-student heatmap: a rollout's tokens coloured by the per-token top-K KL between the student and
// the privileged teacher, or by log p_teacher − log p_student of the sampled token (diverging). Tool tokens
// (the search results the environment appended) carry no loss: they are shown hatched and marked masked.
// Hovering or focusing a token (arrow keys move between tokens) shows both top-K lists.
import type { QuestionRecord, RolloutRecord, TokenRecord } from '../../selfplay/events.ts';
import { fmtIteration, fmtNum, fmtSig, fmtSigned, fmtStep } from '../format.ts';
import { cls, html, type Html } from '../html.ts';
import type { PrivilegedMode } from '../../env/prompts.ts';
import { DIFF_SCALE, KL_SCALE, diffColor, klColor, renderHistogram, renderScaleLegend } from './heat-scale.ts';
import { heatmapPng } from '../heatmap-png.ts';
import { renderPromptsSeen } from './prompts-seen.ts';
import { renderAblation } from './ablation.ts';
import { shownToken, visibleText, type HeatMode } from './token-text.ts';
import type { AblationResult, AblationRollout } from '../../lab/ablation.ts';

/** What the panel asks the worker: the ablation of one rollout (teacher forwards under every privileged mode). */
export type AblateFn = (
  r: AblationRollout,
) => Promise<{ ok: true; result: AblationResult; scorer: 'teacher' | 'student' } | { ok: false; error: string }>;

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

function tokenTitle(t: TokenRecord): string {
  if (!t.policy) return 'tool/prompt token: masked (no loss, no KL)';
  return `KL ${fmtSig(t.kl)} · log p_S ${fmtNum(t.studentLogp)} · log p_T ${fmtNum(t.teacherLogp)}`;
}

/**
 * The token strip, coloured on the shared absolute scale. `focusIndex` gets the roving tab stop (defaults to the first
 * policy token).
 */
export function renderTokens(tokens: readonly TokenRecord[], mode: HeatMode, focusIndex?: number): Html {
  const stop =
    focusIndex ??
    Math.max(
      0,
      tokens.findIndex((t) => t.policy === 1),
    );
  return html`${tokens.map((t, i) => {
    const bg = t.policy ? (mode === 'kl' ? klColor(t.kl) : diffColor(t.teacherLogp - t.studentLogp)) : '';
    return html`<span class="${cls('tok', t.policy ? 'policy' : 'masked', t.text === '' && 'empty')}" data-i="${i}"
      tabindex="${i === stop ? 0 : -1}"${
        bg ? html` style="background:${bg}"` : ''
      } title="${tokenTitle(t)}">${visibleText(t.text)}</span>`;
  })}`;
}

export function renderLegend(mode: HeatMode): Html {
  const masked = html`<span class="swatch masked"
    aria-hidden="true"></span><span class="legend-note">tool tokens (masked)</span>`;
  if (mode === 'kl') {
    return html`<div class="legend" aria-label="colour scale">${renderScaleLegend('kl')}
      <span class="legend-note">the darker, the more the privileged teacher disagrees</span>${masked}</div>`;
  }
  return html`<div class="legend" aria-label="colour scale">${renderScaleLegend('diff')}
    <span class="legend-note"><span class="down">red</span>: the teacher finds the sampled token less likely than the student did (it is pushed down); <span class="up">blue</span>: more likely (pushed up)</span>
    ${masked}</div>`;
}

const prob = (lp: number) => Math.exp(lp);

/** A probability as a bar on a 0..1 track, with its value. */
function probBar(p: number, who: 's' | 't'): Html {
  return html`<span class="pbar" aria-hidden="true"><span class="pfill ${who}"
    style="width:${(Math.min(1, p) * 100).toFixed(1)}%"></span></span><span class="pval">${fmtNum(p)}</span>`;
}

const SAMPLED = html`<span class="sampled-mark" title="the token the student sampled">◀ sampled</span>`;

/**
 * Both top-K distributions of a token as bars: the student's top-K with the teacher's probabilities of the same
 * tokens, the sampled token marked (and added below the K when it is outside them); then the teacher's own
 * favourites among the K. `pinned` says whether a click pinned it (a live run then keeps it in view).
 */
export function renderTokenDetail(t: TokenRecord | undefined, index: number, pinned = false): Html {
  if (!t)
    return html`<p class="muted">Hover or focus a token (Tab into the text, then arrow keys) to see both top-K distributions; click one (or press Enter) to pin it.</p>`;
  const pin = pinned
    ? html`<p class="pin-note pinned">Pinned: a live run keeps this token here. Click it again or press Esc to unpin.</p>`
    : html`<p class="pin-note muted">click the token (or press Enter) to pin it</p>`;
  const head = html`${pin}<p class="detail-head">token ${index}: <code class="tokname">${shownToken(t.text)}</code> <span class="muted">id ${t.id}</span></p>`;
  if (!t.policy) {
    return html`${head}<p class="masked-note">Masked: this token came from the search tool (or the prompt), not from the student. It gets no policy loss and no distillation term.</p>`;
  }
  const d = t.teacherLogp - t.studentLogp;
  const summary = html`<dl class="detail-nums">
    <div><dt>p<sub>S</sub>(token)</dt><dd>${fmtNum(prob(t.studentLogp))}</dd></div>
    <div><dt>p<sub>T</sub>(token)</dt><dd>${fmtNum(prob(t.teacherLogp))}</dd></div>
    <div><dt>log p<sub>T</sub> − log p<sub>S</sub></dt><dd class="${d >= 0 ? 'up' : 'down'}">${fmtSigned(d, 3)}</dd></div>
    <div><dt>top-K KL</dt><dd>${fmtNum(t.kl)}</dd></div></dl>`;
  if (!t.topk || t.topk.ids.length === 0)
    return html`${head}${summary}<p class="muted">No top-K lists were recorded for this token.</p>`;
  const tk = t.topk;
  const row = (j: number) => {
    const sampled = tk.ids[j] === t.id;
    return html`<tr class="${cls(sampled && 'sampled')}">
      <td class="rank">${j + 1}</td><td><code>${shownToken(tk.texts[j] ?? '')}</code>${sampled ? html` ${SAMPLED}` : ''}</td>
      <td class="pcell">${probBar(prob(tk.studentLogp[j]!), 's')}</td><td class="pcell">${probBar(prob(tk.teacherLogp[j]!), 't')}</td></tr>`;
  };
  const inside = tk.ids.includes(t.id);
  const outsideRow = inside
    ? ''
    : html`<tr class="sampled outside"><td class="rank">–</td><td><code>${shownToken(t.text)}</code> ${SAMPLED}</td>
      <td class="pcell">${probBar(prob(t.studentLogp), 's')}</td><td class="pcell">${probBar(prob(t.teacherLogp), 't')}</td></tr>`;
  const outside = inside
    ? ''
    : html`<p class="muted">The sampled token is outside the student's top-${tk.ids.length} (it was sampled at temperature > 0); its KL term still covers the top-K plus the tail.</p>`;
  // The teacher's own favourites among the K (the student's list re-ranked by the teacher).
  const byTeacher = tk.ids.map((_, j) => j).sort((a, b) => tk.teacherLogp[b]! - tk.teacherLogp[a]!);
  const tTop = byTeacher
    .slice(0, 5)
    .map(
      (j) =>
        html`<li class="${cls(tk.ids[j] === t.id && 'sampled')}"><code>${shownToken(tk.texts[j] ?? '')}</code>${tk.ids[j] === t.id ? html` ${SAMPLED}` : ''} ${probBar(prob(tk.teacherLogp[j]!), 't')}</li>`,
    );
  return html`${head}${summary}${outside}
    <div class="topk-scroll"><table class="topk"><caption>student's top-${tk.ids.length}: <span class="key s">student p<sub>S</sub></span> beside <span class="key t">teacher p<sub>T</sub></span></caption>
    <thead><tr><th>#</th><th>token</th><th>p<sub>S</sub> student</th><th>p<sub>T</sub> teacher</th></tr></thead><tbody>${tk.ids.map((_, j) => row(j))}${outsideRow}</tbody></table></div>
    <p class="muted teacher-top-head">the teacher's top choices among these:</p><ol class="teacher-top">${tTop}</ol>`;
}

export type { PrivilegedMode };

/** What the teacher saw that the student did not: the question's construction path (or less, per mode). */
export function renderPrivileged(
  q: QuestionRecord | undefined,
  mode: PrivilegedMode,
  gold: string,
  hops: number,
): Html {
  if (mode === 'none') {
    return html`<div class="privileged none"><h4>No teacher</h4><p>Privileged context is off (Dr. Zero): the KL shown is 0 and no distillation term is used.</p></div>`;
  }
  if (mode === 'self') {
    return html`<div class="privileged none"><h4>The teacher saw only the student's prompt</h4><p>The control (--privileged self): the same EMA teacher and distillation as π-Play, without privileged information. The KL shown is the pull towards a slow copy of the student.</p></div>`;
  }
  const answer = html`<p>answer: <strong>${gold}</strong>${mode === 'gt-hop' ? html` · ${hops} hops` : ''}</p>`;
  if (mode === 'gt' || mode === 'gt-hop' || !q) {
    return html`<div class="privileged"><h4>The teacher also saw</h4>${answer}${
      !q && (mode === 'full' || mode === 'partial')
        ? html`<p class="muted">and the question’s construction path (this question’s path was not among the questions the run reported)</p>`
        : ''
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
export function renderHeatmapView(
  r: RolloutRecord,
  mode: HeatMode,
  q: QuestionRecord | undefined,
  privileged: PrivilegedMode,
): Html {
  const st = heatStats(r.tokens);
  const kls = r.tokens.filter((t) => t.policy).map((t) => t.kl);
  // A record that carries the teacher's block shows it in full below; an older one, the summary from its question.
  const recorded = r.privilegedBlock !== undefined;
  return html`<div class="${cls('heat-top', recorded && 'single')}">
    <div class="heat-q"><span class="badge hops">${r.hops}-hop</span> <span class="q-text">${r.question}</span>
      <span class="${cls('verdict', r.reward > 0 ? 'good' : 'bad')}">${r.reward > 0 ? '✓' : '✗'} ${r.answer || '(no answer)'}</span></div>
    ${recorded ? '' : renderPrivileged(q, r.privilegedMode ?? privileged, r.gold, r.hops)}
  </div>
  ${renderPromptsSeen(r)}
  <p class="summary">${st.policy} student tokens · ${st.masked} masked tool/prompt tokens · mean KL ${fmtNum(st.meanKl)} · sum ${fmtNum(st.sumKl)} ·
    mean log p<sub>T</sub>−log p<sub>S</sub> ${fmtSigned(st.meanDiff, 3)}</p>
  ${
    st.top.length
      ? html`<p class="summary top-kl">largest disagreements, ranked by KL: ${st.top.map(
          (i, rank) =>
            html`<button type="button" class="jump" data-i="${i}" data-rank="${rank + 1}"><span class="rank">${rank + 1}</span> <span class="chip-text">${shownToken(r.tokens[i]!.text)}</span> <small>${fmtNum(r.tokens[i]!.kl)}</small></button> `,
        )}</p>`
      : ''
  }
  <div class="scale-row">${renderLegend(mode)}${renderHistogram(kls)}</div>
  <div class="heat-body">
    <div class="tokens" role="group"
      aria-label="rollout tokens: Tab to enter, arrow keys to move between tokens">${renderTokens(r.tokens, mode)}</div>
    <aside class="token-detail" aria-live="polite">${renderTokenDetail(undefined, -1)}</aside>
  </div>`;
}

/**
 * Rollout picker, mode switch, and the hover/focus/keyboard behaviour of the token strip. A click (or Enter) pins
 * a token: its rollout stays shown and its detail stays put while a live run adds rollouts and the pointer moves
 * elsewhere; arrow keys move the pin; a second click or Esc unpins.
 */
export class HeatmapPanel {
  private mode: HeatMode = 'kl';
  private select: HTMLSelectElement;
  private body: HTMLElement;
  private rollouts: readonly RolloutRecord[] = [];
  private questions: readonly QuestionRecord[] = [];
  /** The rollout picked in the list; undefined: follow the newest. */
  private selected: RolloutRecord | undefined;
  private pinned: { rollout: RolloutRecord; i: number } | null = null;
  /** The rollout whose tokens hold the keyboard focus: a live run's new rollouts do not replace it. */
  private reading: RolloutRecord | undefined;
  /** True while draw() replaces the body (its focusout is not the person leaving the tokens). */
  private redrawing = false;
  /** Where the pointer was at its last mouse event (client coordinates). */
  private pointer = { x: Number.NaN, y: Number.NaN };
  /** What the body shows now (to redraw only on a change). */
  private drawn: { rollout: RolloutRecord | undefined; questions: number } = { rollout: undefined, questions: -1 };
  privileged: PrivilegedMode = 'full';
  private ablationEl: HTMLElement;
  /** The ablation asked for (of one rollout): pending, its result or why it failed. */
  private ablation: {
    rollout: RolloutRecord;
    state: 'pending' | 'done' | 'failed';
    result?: AblationResult;
    scorer?: 'teacher' | 'student';
    error?: string;
  } | null = null;

  constructor(
    root: HTMLElement,
    private ablate?: AblateFn,
  ) {
    root.innerHTML = html`<div class="toolbar">
      <label>rollout <select class="rollout-select"></select></label>
      <div class="seg-switch" role="radiogroup" aria-label="colour by">
        <label><input type="radio" name="heat-mode" value="kl" checked> top-K KL</label>
        <label><input type="radio" name="heat-mode" value="diff"> log p<sub>T</sub> − log p<sub>S</sub></label>
      </div><button type="button" class="small heat-png">Download PNG</button></div><div class="heat"></div>
      <section class="ablation" aria-labelledby="ablation-title"></section>`.text;
    this.select = root.querySelector('.rollout-select')!;
    this.body = root.querySelector('.heat')!;
    this.ablationEl = root.querySelector('.ablation')!;
    this.ablationEl.addEventListener('click', (e) => {
      if ((e.target as HTMLElement).closest('button.ablate')) void this.runAblation();
    });
    this.select.addEventListener('change', () => {
      this.selected = this.select.selectedIndex <= 0 ? undefined : this.rollouts[Number(this.select.value)];
      if (this.pinned && this.pinned.rollout !== this.current()) this.pinned = null;
      this.draw();
    });
    for (const r of root.querySelectorAll<HTMLInputElement>('input[name=heat-mode]')) {
      r.addEventListener('change', () => {
        this.mode = r.value as HeatMode;
        this.draw();
      });
    }
    // Hover is the pointer moving onto a token. When the page scrolls (focusing a token scrolls it into view) or
    // redraws under a pointer at rest, Chromium sends mouse events at the same point: content moving, not the
    // person pointing, and they must not take the detail from the token the keyboard is on.
    document.addEventListener('mousemove', (e) => {
      const moved = e.clientX !== this.pointer.x || e.clientY !== this.pointer.y;
      this.pointer = { x: e.clientX, y: e.clientY };
      if (moved && this.body.contains(e.target as Node)) this.show(e.target as HTMLElement);
    });
    this.body.addEventListener('focusin', (e) => {
      const tok = (e.target as HTMLElement).closest<HTMLElement>('.tok');
      if (!tok) return;
      this.reading ??= this.current();
      this.show(tok);
    });
    this.body.addEventListener('focusout', (e) => {
      if (!this.redrawing && !(e.relatedTarget as HTMLElement | null)?.closest('.heat .tok')) this.reading = undefined;
    });
    this.body.addEventListener('click', (e) => {
      const target = e.target as HTMLElement;
      const b = target.closest<HTMLElement>('button.jump');
      if (b) return this.focusToken(Number(b.dataset.i));
      const tok = target.closest<HTMLElement>('.tok');
      if (tok) this.togglePin(Number(tok.dataset.i));
    });
    this.body.addEventListener('keydown', (e) => this.key(e));
    root.querySelector('.heat-png')!.addEventListener('click', () => void this.downloadPng());
  }

  /** The rollout shown, in the colours shown, as a PNG file. */
  private async downloadPng(): Promise<void> {
    const r = this.current();
    if (!r) return;
    const tokens = r.tokens.map((t) => ({
      text: t.text,
      background: t.policy ? (this.mode === 'kl' ? klColor(t.kl) : diffColor(t.teacherLogp - t.studentLogp)) : null,
    }));
    const note =
      this.mode === 'kl'
        ? `per-token top-K KL, log scale ${KL_SCALE.lo} to ${KL_SCALE.hi} nat (the same for every rollout and run); ` +
          'grey: tool tokens (masked)'
        : `log p_T − log p_S, log scale by size ${DIFF_SCALE.lo} to ${DIFF_SCALE.hi} nats; blue: pushed up, red: ` +
          'pushed down; grey: tool tokens';
    const blob = await heatmapPng(
      `${fmtIteration(r.iteration)} · ${fmtStep(r.step)} · ${r.hops}-hop · ${r.question}`,
      tokens,
      note,
    );
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `heatmap-iteration${r.iteration + 1}-step${r.step + 1}-${this.mode}.png`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  }

  private current(): RolloutRecord | undefined {
    return this.pinned?.rollout ?? this.reading ?? this.selected ?? this.rollouts.at(-1);
  }

  render(rollouts: readonly RolloutRecord[], questions: readonly QuestionRecord[]): void {
    this.rollouts = rollouts;
    this.questions = questions;
    // A rollout that left the page's bounded list can no longer be shown.
    if (this.pinned && !rollouts.includes(this.pinned.rollout)) this.pinned = null;
    if (this.reading && !rollouts.includes(this.reading)) this.reading = undefined;
    if (this.selected && !rollouts.includes(this.selected)) this.selected = undefined;
    const opts: string[] = [];
    for (let i = rollouts.length - 1; i >= 0; i--) {
      const r = rollouts[i]!;
      opts.push(
        html`<option value="${i}">${fmtIteration(r.iteration)} · ${fmtStep(r.step)} · ${r.reward > 0 ? '✓' : '✗'} · ${r.question.slice(0, 60)}</option>`
          .text,
      );
    }
    this.select.innerHTML = opts.join('');
    const r = this.current();
    if (r) this.select.value = String(rollouts.indexOf(r));
    if (r !== this.drawn.rollout || questions.length !== this.drawn.questions) this.draw();
  }

  private draw(): void {
    const r = this.current();
    this.drawn = { rollout: r, questions: this.questions.length };
    if (!r) {
      this.body.innerHTML =
        html`<p class="empty">No rollouts yet. Once the student has answered a question, its tokens appear here, coloured by how much the privileged teacher disagrees with each.</p>`.text;
      this.drawAblation();
      return;
    }
    let q: QuestionRecord | undefined;
    for (let i = this.questions.length - 1; i >= 0 && !q; i--)
      if (this.questions[i]!.question === r.question) q = this.questions[i];
    // A redraw of the rollout the keyboard is on (a new question, a mode switch) keeps the focus on its token.
    const focused = document.activeElement?.closest<HTMLElement>('.heat .tok');
    const keep = focused && this.body.contains(focused) && r === this.reading ? Number(focused.dataset.i) : undefined;
    this.redrawing = true;
    this.body.innerHTML = renderHeatmapView(r, this.mode, q, this.privileged).text;
    this.redrawing = false;
    if (keep !== undefined) this.focusToken(keep);
    else if (this.pinned) this.detail(this.pinned.i);
    this.drawAblation();
  }

  /** Asks the worker to score the rollout shown under every privileged context; the view then holds that rollout. */
  private async runAblation(): Promise<void> {
    const r = this.current();
    if (!r || !this.ablate || this.ablation?.state === 'pending') return;
    this.selected = r;
    this.ablation = { rollout: r, state: 'pending' };
    this.drawAblation();
    if (!r.qcp || r.questionId === undefined) {
      this.ablation = {
        rollout: r,
        state: 'failed',
        error: 'this rollout was recorded without its construction path, so the other contexts cannot be rebuilt',
      };
    } else {
      const res = await this.ablate({
        questionId: r.questionId,
        question: r.question,
        qcp: r.qcp,
        tokens: r.tokens.map((t) => ({ id: t.id, policy: t.policy })),
      });
      this.ablation = res.ok
        ? { rollout: r, state: 'done', result: res.result, scorer: res.scorer }
        : { rollout: r, state: 'failed', error: res.error };
    }
    this.drawAblation();
  }

  private drawAblation(): void {
    const r = this.current();
    if (!r || !this.ablate) {
      this.ablationEl.innerHTML = '';
      return;
    }
    const a = this.ablation?.rollout === r ? this.ablation : null;
    const head = html`<h3 id="ablation-title">What each piece of privileged information changes</h3>`;
    const button = html`<button type="button" class="ablate"${a?.state === 'pending' ? html` disabled` : ''}>${
      a?.state === 'pending' ? 'Scoring under every context…' : 'Score this rollout under every context'
    }</button> <span class="muted">the teacher rescores these same tokens with none, GT, GT + hops, partial and full
      privileged context (teacher forwards only)</span>`;
    const body =
      a?.state === 'done'
        ? renderAblation(r, a.result!, a.scorer!, this.mode)
        : a?.state === 'failed'
          ? html`<p class="ablation-error" role="alert">Could not score the rollout: ${a.error ?? ''}</p>`
          : '';
    this.ablationEl.innerHTML = html`${head}<p>${button}</p>${body}`.text;
  }

  /** Shows token i in the detail (and marks it active, or pinned). */
  private detail(i: number): void {
    const r = this.current();
    if (!r) return;
    const pinned = this.pinned !== null && this.pinned.i === i;
    for (const el of this.body.querySelectorAll('.tok.active, .tok.pinned')) el.classList.remove('active', 'pinned');
    const tok = this.body.querySelector<HTMLElement>(`.tok[data-i="${i}"]`);
    tok?.classList.add('active');
    if (pinned) tok?.classList.add('pinned');
    tok?.setAttribute('aria-pressed', String(pinned));
    const el = this.body.querySelector('.token-detail');
    if (el) el.innerHTML = renderTokenDetail(r.tokens[i], i, pinned).text;
  }

  private show(target: HTMLElement): void {
    const tok = target.closest<HTMLElement>('.tok');
    // A pinned token keeps the detail until it is unpinned (or the keyboard moves the pin).
    if (!tok || this.pinned || tok.classList.contains('active')) return;
    this.detail(Number(tok.dataset.i));
  }

  private togglePin(i: number): void {
    const r = this.current();
    if (!r) return;
    this.pinned = this.pinned?.i === i ? null : { rollout: r, i };
    // A pin holds its rollout: the list stops following the newest.
    if (this.pinned) this.selected = r;
    this.detail(i);
  }

  focusToken(i: number): void {
    const tok = this.body.querySelector<HTMLElement>(`.tok[data-i="${i}"]`);
    if (!tok) return;
    for (const el of this.body.querySelectorAll<HTMLElement>('.tok[tabindex="0"]')) el.tabIndex = -1;
    tok.tabIndex = 0;
    if (this.pinned) this.pinned = { ...this.pinned, i };
    tok.focus();
    this.detail(i);
  }

  private key(e: KeyboardEvent): void {
    const tok = (e.target as HTMLElement).closest<HTMLElement>('.tok');
    const r = this.current();
    if (!tok || !r) return;
    const i = Number(tok.dataset.i);
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.togglePin(i);
      return;
    }
    if (e.key === 'Escape' && this.pinned) {
      e.preventDefault();
      this.pinned = null;
      this.detail(i);
      return;
    }
    const last = r.tokens.length - 1;
    const next: Record<string, number> = {
      ArrowRight: i + 1,
      ArrowDown: i + 1,
      ArrowLeft: i - 1,
      ArrowUp: i - 1,
      Home: 0,
      End: last,
    };
    if (!(e.key in next)) return;
    e.preventDefault();
    this.focusToken(Math.max(0, Math.min(last, next[e.key]!)));
  }
}
