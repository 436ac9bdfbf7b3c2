// Reads a question back into the world's knowledge graph: which entity it starts from and which relation
// steps it follows, by the templates of questions.ts, and checks its answer against the graph. This is how
// the project tells whether the examiner wrote a true question, one a student could answer from the
// corpus, beside the format reward (which only checks the tags, the searches and that the answer appears
// in the documents). Only world corpora can be audited; the examiner is never trained on the verdict.
import { normalizeAnswer } from '../em.ts';
import type { WorldIndex } from './index.ts';
import { answersOfChain, STEPS, stepDef, valueText, type StepDef, type StepId } from './questions.ts';
import type { EntityType } from './types.ts';

/** One way to read a question: a start entity and the steps from it. */
export interface QuestionReading {
  start: string;
  steps: StepId[];
}

/**
 * - 'right': it reads as a chain of the world with exactly one answer, and the examiner's answer is it.
 * - 'wrong': it reads as such a chain, but the examiner's answer is not the chain's answer.
 * - 'unanswerable': it reads as a chain, but the chain has no answer or several (e.g. "Who founded X?"
 *   where X was founded by no one), so no answer is right.
 * - 'unreadable': no template of the world reads it (a garbled question, or an entity not in the world).
 */
export type QuestionVerdict = 'right' | 'wrong' | 'unanswerable' | 'unreadable';
export const QUESTION_VERDICTS: readonly QuestionVerdict[] = ['right', 'wrong', 'unanswerable', 'unreadable'];

export interface QuestionAudit {
  verdict: QuestionVerdict;
  /** The reading the verdict comes from (the best one when several type-check). */
  reading?: QuestionReading;
  /** The chain's answers, as names or years (empty for 'unreadable'). */
  answers: string[];
}

/** Lower case, single spaces, and one '?' at the end with no space before it (spacing is not the examiner's fault). */
function clean(s: string): string {
  const t = s.trim().replace(/\s+/g, ' ').replace(/ ?\?$/, '').toLowerCase();
  return `${t}?`;
}

/** The template's text before and after {x}, lower-cased. */
function splitTemplate(t: string): [string, string] {
  const i = t.indexOf('{x}');
  return [t.slice(0, i).toLowerCase(), t.slice(i + 3).toLowerCase()];
}

const NOUN_PHRASES = STEPS.flatMap((def) => def.np.map((t) => ({ def, parts: splitTemplate(t) })));
const ASKS = STEPS.flatMap((def) => def.ask.map((t) => ({ def, parts: splitTemplate(t) })));

/** The type a reading ends on. */
function endType(ix: WorldIndex, r: QuestionReading): EntityType | 'year' {
  const last = r.steps.at(-1);
  return last ? stepDef(last).to : ix.entity(r.start).type;
}

/** Every reading of a description ("the capital of the country containing X"), type-checked. */
function readDescription(ix: WorldIndex, text: string, depth: number): QuestionReading[] {
  const out: QuestionReading[] = (ix.byName.get(text) ?? []).map((e) => ({ start: e.id, steps: [] }));
  if (depth > 0) for (const { def, parts } of NOUN_PHRASES) out.push(...extend(ix, text, def, parts, depth));
  return out;
}

/** Readings of `text` as `parts[0]` + description + `parts[1]`, followed by the step `def`. */
function extend(
  ix: WorldIndex,
  text: string,
  def: StepDef,
  [pre, post]: [string, string],
  depth: number,
): QuestionReading[] {
  if (text.length <= pre.length + post.length || !text.startsWith(pre) || !text.endsWith(post)) return [];
  const inner = text.slice(pre.length, text.length - post.length);
  return readDescription(ix, inner, depth - 1)
    .filter((r) => endType(ix, r) === def.from)
    .map((r) => ({ start: r.start, steps: [...r.steps, def.id] }));
}

/** Every reading of a question by the world's templates (at most `maxHops` steps), type-checked. */
export function readQuestion(ix: WorldIndex, question: string, maxHops = 6): QuestionReading[] {
  const text = clean(question);
  return ASKS.flatMap(({ def, parts }) => extend(ix, text, def, parts, maxHops - 1));
}

/** The verdict on an examiner's question and answer (see QuestionVerdict). */
export function auditQuestion(ix: WorldIndex, question: string, answer: string): QuestionAudit {
  const rank: Record<QuestionVerdict, number> = { right: 0, wrong: 1, unanswerable: 2, unreadable: 3 };
  let best: QuestionAudit = { verdict: 'unreadable', answers: [] };
  const given = normalizeAnswer(answer);
  for (const reading of readQuestion(ix, question)) {
    const answers = answersOfChain(ix, reading.start, reading.steps).map((v) => valueText(ix, v));
    const verdict: QuestionVerdict =
      answers.length !== 1 ? 'unanswerable' : normalizeAnswer(answers[0]!) === given ? 'right' : 'wrong';
    if (rank[verdict] < rank[best.verdict]) best = { verdict, reading, answers };
  }
  return best;
}
