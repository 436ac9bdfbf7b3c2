// The live ablation of one rollout in the heatmap view: the same student tokens as the teacher scores them after
// each privileged context (none, GT, GT + hops, partial, full), one strip per mode on the heatmap's shared colour
// scale, with each mode's mean D, the answer tokens' share of it and the mean log p_T − log p_S, so a class sees
// what each piece of privileged information changes.
import type { PrivilegedMode } from '../../env/prompts.ts';
import type { AblationResult, ModeScore } from '../../lab/ablation.ts';
import type { RolloutRecord } from '../../selfplay/events.ts';
import { fmtNum, fmtSigned } from '../format.ts';
import { cls, html, type Html } from '../html.ts';
import { diffColor, klColor, renderScaleLegend } from './heat-scale.ts';
import { visibleText, type HeatMode } from './token-text.ts';

/** What the teacher is told under each mode, in a few words. */
export const MODE_TOLD: Record<PrivilegedMode, string> = {
  none: "nothing: the student's own prompt (what the self control's teacher sees)",
  self: "nothing: the student's own prompt (the control)",
  gt: 'the answer',
  'gt-hop': 'the answer and the hop count',
  partial: 'about half of the construction path',
  full: 'the whole construction path: source, searches, results, question, answer',
};

/** Mean log p_T − log p_S over the policy tokens. */
export function meanGain(m: ModeScore, studentLogp: readonly number[]): number {
  if (m.teacherLogp.length === 0) return 0;
  return m.teacherLogp.reduce((a, v, j) => a + v - studentLogp[j]!, 0) / m.teacherLogp.length;
}

/** The rollout's tokens coloured by one mode's per-token value (policy tokens in order; tool tokens hatched). */
function strip(r: RolloutRecord, m: ModeScore, studentLogp: readonly number[], mode: HeatMode): Html {
  let j = 0;
  return html`${r.tokens.map((t) => {
    if (!t.policy) return html`<span class="tok masked">${visibleText(t.text)}</span>`;
    const kl = m.kl[j]!;
    const d = m.teacherLogp[j]! - studentLogp[j]!;
    j++;
    const bg = mode === 'kl' ? klColor(kl) : diffColor(d);
    return html`<span class="tok policy" style="background:${bg}"
      title="${m.mode}: KL ${fmtNum(kl)} · log p_T − log p_S ${fmtSigned(d, 3)}">${visibleText(t.text)}</span>`;
  })}`;
}

/** The ablation's table and strips for rollout `r`. `scorer` says whose weights scored it. */
export function renderAblation(
  r: RolloutRecord,
  a: AblationResult,
  scorer: 'teacher' | 'student',
  mode: HeatMode,
): Html {
  const rows = a.modes.map(
    (m) => html`<tr data-mode="${m.mode}" class="${cls(m.mode === r.privilegedMode && 'run-mode')}">
      <th scope="row"><code>${m.mode}</code>${m.mode === r.privilegedMode ? html` <small class="muted">(the run's)</small>` : ''}</th>
      <td>${MODE_TOLD[m.mode]}</td>
      <td class="num d-total">${fmtNum(m.distill)}</td>
      <td class="num answer-share">${m.answerShare === null ? '–' : `${(100 * m.answerShare).toFixed(1)}%`}</td>
      <td class="num">${fmtSigned(meanGain(m, a.studentLogp), 3)}</td></tr>`,
  );
  const strips = a.modes.map(
    (m) => html`<div class="abl-strip" data-mode="${m.mode}"><span class="abl-label"><code>${m.mode}</code></span>
      <div class="tokens abl-tokens">${strip(r, m, a.studentLogp, mode)}</div></div>`,
  );
  const who =
    scorer === 'teacher'
      ? 'the run’s teacher as it is now (its weights may have moved since the rollout was recorded)'
      : 'the student’s own weights (this run has no teacher; a teacher starts as the student)';
  return html`<p class="muted">Scored by ${who}; teacher forwards only, nothing trains. The prompts differ only in the
    privileged block before the question; the tokens are the same student tokens.</p>
    <table class="abl-table"><thead><tr><th>context</th><th>the teacher is told</th><th title="mean per-token top-K distillation term">D per token</th>
      <th title="share of the summed D on the tokens of the student's answer">answer tokens' share of D</th><th>mean log p<sub>T</sub> − log p<sub>S</sub></th></tr></thead>
      <tbody>${rows}</tbody></table>
    <div class="legend" aria-label="colour scale">${renderScaleLegend(mode)}</div>
    <div class="abl-strips">${strips}</div>`;
}
