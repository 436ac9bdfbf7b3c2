// The in-page guide: one paragraph per role, the student's loss written out with a tooltip per term, and a
// glossary of the words the views use (ALGORITHM.md sections 1, 3-5). Static text; also the software-GPU warning.
import type { EngineInfo } from '../../gpu/engine.ts';
import type { ExperimentFindings } from '../../lab/experiment/findings.ts';
import { html, type Html } from '../html.ts';

/** A term of the loss with its explanation as a tooltip (title) and as text for touch screens and readers. */
function term(id: string, shown: Html, tip: string): Html {
  return html`<span class="loss-term" data-term="${id}" tabindex="0" title="${tip}"
    aria-label="${tip}">${shown}</span>`;
}

/** The student's loss L_S = L_GRPO + β·KL_ref + λ·D, each term with its tooltip. */
export const LOSS_TERMS = {
  grpo:
    'L_GRPO: the clipped policy-gradient loss. Each rollout of a question gets the advantage A = (r − mean) / std ' +
    'of its group of n rollouts; the ratio exp(log p − log p_old) is clipped to [1 − ε_low, 1 + ε_high] (0.2).',
  beta: 'β·KL_ref: a k3 KL to the frozen base model that keeps the student near where it started (β = 0 by default).',
  lambda: 'λ: the distillation weight, per iteration (paper 0.1, 0.03, 0.03: it decays, which beat a fixed weight).',
  d:
    'D: the top-K distillation term. At every token the student sampled, its K most likely next tokens plus one tail ' +
    'bucket, KL(student ‖ teacher) against the privileged teacher scoring the same prefix. The heatmap colours it.',
} as const;

export function renderLoss(): Html {
  const t = LOSS_TERMS;
  return html`<p class="loss" aria-label="the student's loss">L<sub>S</sub> =
    ${term('grpo', html`L<sub>GRPO</sub>`, t.grpo)} + ${term('beta', html`β·KL<sub>ref</sub>`, t.beta)} +
    ${term('lambda', html`λ`, t.lambda)}·${term('d', html`D`, t.d)}</p>`;
}

export const GLOSSARY: { term: string; text: string }[] = [
  {
    term: 'GRPO',
    text:
      'Group Relative Policy Optimization, the student’s update: the n rollouts of one question form a group, and ' +
      'each is rewarded relative to the group (A = (r − mean) / std), so no value model is needed.',
  },
  {
    term: 'HRPO',
    text:
      'Hop-grouped Relative Policy Optimization, the examiner’s update: one question per source document, grouped ' +
      'by hop count and standardised within each group, so 1-hop and 4-hop questions are not compared directly.',
  },
  {
    term: '0<k<n',
    text:
      'A question the student answered k times out of n rollouts. Only 0 < k < n questions are learnable: all right ' +
      'or all wrong gives every rollout the same reward, so GRPO has no advantage; the examiner’s difficulty reward ' +
      '1[0<k<n]·(n − k)/(n − 1) pays for exactly these.',
  },
  {
    term: 'tail bucket',
    text:
      'In D, the probability outside the student’s top K tokens, 1 − Σ p, kept as one extra bucket on each side, so ' +
      'the K + 1 buckets are a whole distribution (off: renormalise over the K).',
  },
  {
    term: 'τ',
    text:
      'The teacher’s EMA rate: after every student optimizer step, teacher ← (1 − τ)·teacher + τ·student ' +
      '(τ = 0.05). The teacher is never trained by gradient; it follows the student slowly.',
  },
];

export function renderGuide(): Html {
  return html`<h3>How π-Play works</h3>
    <div class="roles">
      <p data-role="examiner"><strong>Examiner.</strong> Given a random source document and a hop count h, it searches
        h − 1 times and writes one question and its answer. Everything it saw and wrote (the source, each query and the
        passages returned, the question, the answer) is the question’s construction path. It is rewarded for valid
        questions that the student answers sometimes but not always, and trained with HRPO.</p>
      <p data-role="student"><strong>Student.</strong> Sees only the question. It answers by thinking, searching the
        corpus and answering, over several turns; it is rewarded 1 for an exact-match answer and trained with GRPO on n
        rollouts per question, plus λ·D that pulls each of its tokens towards the teacher’s distribution.</p>
      <p data-role="teacher"><strong>Teacher.</strong> The same network, but its prompt also holds privileged context:
        the construction path (or less: part of it, the answer, the answer and hop count; or, as the self control,
        nothing beyond the student’s own prompt). It never writes: it scores the student’s own tokens, and that
        disagreement is D (the “Teacher vs student” view). It follows the student by a slow moving average (τ).</p>
    </div>
    <section class="findings" id="guide-findings" aria-live="polite"></section>
    <h4>The student’s loss <small class="muted">(hover or focus a term)</small></h4>
    ${renderLoss()}
    <h4>Glossary</h4>
    <dl class="glossary">${GLOSSARY.map((g) => html`<div><dt>${g.term}</dt><dd>${g.text}</dd></div>`)}</dl>`;
}

/** A verdict for a narrow column: the note on the interval is the table's caption already. */
const shortVerdict = (v: string) => v.replace(/ \(the interval holds 0\)$/, '');

/**
 * What the experiment the recorded examples come from found (public/examples/index.json, written by
 * `npm run record-example --from`): its comparisons as its report states them, and what they support about the
 * privileged context.
 */
export function renderFindings(e: ExperimentFindings): Html {
  return html`<h4>What the experiment behind the recorded example found</h4>
    <p class="muted"><code>${e.source}</code>: ${e.scope}. A − B in points of held-out exact match, with its 95%
      interval over seeds and questions (a two-level bootstrap); “holds” only where the interval excludes 0.</p>
    <div class="findings-scroll" role="region" aria-label="the experiment's comparisons" tabindex="0">
    <table class="ba-table findings-table">
      <thead><tr><th scope="col">comparison</th><th scope="col">A − B [95%]</th><th scope="col">per seed</th>
        <th scope="col">verdict</th></tr></thead>
      <tbody>${e.findings.map(
        (f) => html`<tr data-finding="${f.name}"><td>${f.label}</td><td class="num">${f.interval}</td>
          <td class="num">${f.perSeed}</td><td class="verdict" title="${f.verdict}">${shortVerdict(f.verdict)}</td></tr>`,
      )}</tbody>
    </table></div>
    ${e.summary ? html`<p class="findings-summary"><strong>${e.summary}</strong></p>` : ''}`;
}

/** The software rasteriser an adapter is, from its info (null for a hardware GPU). */
export function softwareAdapter(
  info: Pick<EngineInfo, 'vendor' | 'architecture' | 'description' | 'isCpu'>,
): string | null {
  const text = `${info.vendor} ${info.architecture} ${info.description}`.toLowerCase();
  for (const [needle, name] of [
    ['swiftshader', 'SwiftShader'],
    ['lavapipe', 'lavapipe'],
    ['llvmpipe', 'llvmpipe'],
  ] as const)
    if (text.includes(needle)) return name;
  return info.isCpu ? 'a software adapter' : null;
}

/** The warning for a software GPU: one line, in the page's flow (it never covers a control). */
export function renderSoftwareWarning(name: string): Html {
  return html`<p class="gpu-warning" role="note"><strong>Software GPU (${name}):</strong> the browser runs WebGPU on the
    CPU, 10–100× slower than a graphics card. Use the smoke or quick preset, or open the page in a browser with hardware
    WebGPU.</p>`;
}
