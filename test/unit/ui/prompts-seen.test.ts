// The side-by-side prompts of the heatmap view: the teacher's column is exactly the teacher's prompt with its
// privileged block marked, the student's exactly the student's prompt; older records and Dr. Zero say so.
import { describe, expect, it } from 'vitest';
import {
  PRIVILEGED_HEADER,
  privilegedBlock,
  studentPrompt,
  teacherPrompt,
  type Qcp,
} from '../../../src/env/prompts.ts';
import type { RolloutRecord } from '../../../src/selfplay/events.ts';
import { renderPromptsSeen } from '../../../src/ui/panels/prompts-seen.ts';

const qcp: Qcp = {
  source: { title: 'Driwick', text: 'Driwick is a town <on> the river Alm.' },
  hops: 2,
  searches: [{ query: 'river Alm', information: 'The Alm flows into the Vesk.' }],
  question: 'Which river does the river at Driwick flow into?',
  answer: 'Vesk',
};

function record(over: Partial<RolloutRecord>): RolloutRecord {
  return {
    iteration: 0,
    step: 0,
    question: qcp.question,
    gold: qcp.answer,
    hops: 2,
    answer: '',
    reward: 0,
    advantage: 0,
    searches: [],
    tokens: [],
    ...over,
  };
}

/** The text a reader sees inside the first element matching `cls` (tags dropped, entities decoded). */
function textOf(markup: string, cls: string): string {
  const m = new RegExp(
    `<section class="seen-col ${cls}[^"]*">[\\s\\S]*?<pre class="seen-prompt">([\\s\\S]*?)</pre>`,
  ).exec(markup);
  if (!m) throw new Error(`no ${cls} prompt in ${markup}`);
  return m[1]!
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

describe('renderPromptsSeen', () => {
  it('shows the student prompt and the teacher prompt with the privileged block marked', () => {
    for (const mode of ['full', 'partial', 'gt', 'gt-hop'] as const) {
      const options = { seed: 's/q1', dropFraction: 0.5 };
      const block = privilegedBlock(qcp, mode, options);
      const out = renderPromptsSeen(record({ privilegedMode: mode, privilegedBlock: block })).text;
      expect(textOf(out, 'student')).toBe(studentPrompt({ question: qcp.question }));
      expect(textOf(out, 'teacher')).toBe(teacherPrompt({ question: qcp.question, qcp, mode, options }));
      const marked = /<mark class="seen-priv"[^>]*>([\s\S]*?)<\/mark>/.exec(out)![1]!;
      expect(marked).toContain(PRIVILEGED_HEADER);
      expect(marked).not.toContain('<on>');
      expect(out).toContain(`--privileged ${mode}`);
      expect(out).toMatch(/same response tokens/);
    }
  });

  it('says when there is no teacher (Dr. Zero) and when an older record did not keep the block', () => {
    const none = renderPromptsSeen(record({ privilegedMode: 'none', privilegedBlock: null })).text;
    expect(none).toMatch(/No teacher in this run.*Dr\. Zero/);
    expect(none).not.toContain('seen-priv');
    const old = renderPromptsSeen(record({})).text;
    expect(old).toMatch(/not recorded for this run/);
    expect(textOf(old, 'student')).toBe(studentPrompt({ question: qcp.question }));
  });
});
