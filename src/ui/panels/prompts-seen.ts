// What each model saw, side by side: the student's prompt (instructions + question) and the teacher's, which is
// the same with the privileged block (construction path, partial path, answer …, per --privileged) inserted before
// the question line (env/prompts.ts). Both then score the same response tokens, the heatmap below.
import { STUDENT_INSTRUCTIONS, studentPrompt } from '../../env/prompts.ts';
import type { RolloutRecord } from '../../selfplay/events.ts';
import { html, type Html } from '../html.ts';

const MODE_NAMES: Record<string, string> = {
  full: 'the full construction path',
  partial: 'part of the construction path',
  gt: 'the answer',
  'gt-hop': 'the answer and the hop count',
  none: 'nothing (Dr. Zero)',
  self: "nothing beyond the student's own prompt (the self control)",
};

/** The student prompt split where the teacher's block goes: instructions (with their newline), question line. */
function promptParts(question: string): { head: string; question: string } {
  const text = studentPrompt({ question });
  const head = `${STUDENT_INSTRUCTIONS}\n`;
  return { head, question: text.slice(head.length) };
}

function column(title: string, body: Html, extra = ''): Html {
  return html`<section class="seen-col ${extra}"><h4>${title}</h4>${body}</section>`;
}

/** The two prompts of rollout `r`; records without the teacher's block say it was not recorded. */
export function renderPromptsSeen(r: RolloutRecord): Html {
  const p = promptParts(r.question);
  const student = column(
    'Student saw',
    html`<pre class="seen-prompt"><span class="seen-instr">${p.head}</span><span class="seen-question">${p.question}</span></pre>`,
    'student',
  );
  let teacher: Html;
  if (r.privilegedBlock === undefined) {
    teacher = column(
      'Teacher saw',
      html`<p class="seen-note">The teacher's prompt was not recorded for this run (it was made before rollouts kept it).</p>`,
      'teacher',
    );
  } else if (r.privilegedBlock === null) {
    teacher = column(
      'Teacher saw',
      html`<p class="seen-note">No teacher in this run (--privileged none, Dr. Zero): nothing is distilled.</p>`,
      'teacher none',
    );
  } else if (r.privilegedBlock === '') {
    teacher = column(
      'Teacher saw',
      html`<pre class="seen-prompt"><span class="seen-instr">${p.head}</span><span class="seen-question">${p.question}</span></pre>
        <p class="seen-note">The student's own prompt (--privileged ${r.privilegedMode ?? 'self'}, the control): the teacher knows nothing the student does not; it differs only by being a slow EMA copy of the student.</p>`,
      'teacher',
    );
  } else {
    const mode = r.privilegedMode ? (MODE_NAMES[r.privilegedMode] ?? r.privilegedMode) : 'its privileged context';
    teacher = column(
      'Teacher saw',
      html`<pre class="seen-prompt"><span class="seen-instr">${p.head}</span><mark class="seen-priv"
        title="only the teacher saw this: ${mode}">${r.privilegedBlock}</mark><span class="seen-question">${p.question}</span></pre>
        <p class="seen-key"><mark class="seen-priv">highlighted</mark>: what only the teacher saw (${mode}, --privileged ${r.privilegedMode ?? '?'})</p>`,
      'teacher',
    );
  }
  return html`<div class="prompts-seen">${student}${teacher}</div>
    <p class="seen-shared muted">Both prompts are followed by the same response tokens, shown below: the student sampled them, the teacher only scored them.</p>`;
}
