// The prompts of the three roles, as plain strings (the model wraps them in its chat template).
// Short on purpose: tiny models, short contexts.
//
//   student  = STUDENT_INSTRUCTIONS + "\n" + "Question: <q>\n"
//   teacher  = STUDENT_INSTRUCTIONS + "\n" + <privileged block ending in "\n"> + "Question: <q>\n"
// so the teacher's prompt is the student's with the privileged block inserted before the question, and
// the rollout tokens that follow are the same for both (ALGORITHM.md section 6).

import { Rng, type Seed } from './random.ts';
import type { Passage } from './corpus.ts';
import {
  ANSWER_CLOSE,
  ANSWER_OPEN,
  INFORMATION_CLOSE,
  INFORMATION_OPEN,
  QUESTION_CLOSE,
  QUESTION_OPEN,
  SEARCH_CLOSE,
  SEARCH_OPEN,
  THINK_CLOSE,
  THINK_OPEN,
  type ExaminerOutput,
} from './tags.ts';

type Doc = Pick<Passage, 'title' | 'text'>;

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** `(Title: T) text`, the form a source document takes in prompts. */
export function formatSource(doc: Doc): string {
  return `(Title: ${oneLine(doc.title)}) ${oneLine(doc.text)}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// ---------------------------------------------------------------------------------------------------
// Student

export const STUDENT_INSTRUCTIONS =
  `Answer the question. Think inside ${THINK_OPEN} ${THINK_CLOSE} every time you get new information. ` +
  `To search, write ${SEARCH_OPEN} query ${SEARCH_CLOSE}; the results come back inside ${INFORMATION_OPEN} ${INFORMATION_CLOSE}. ` +
  `Search as often as you need. When you know the answer, write it inside ${ANSWER_OPEN} ${ANSWER_CLOSE} ` +
  `without explanation, for example ${ANSWER_OPEN} Beijing ${ANSWER_CLOSE}.`;

export interface StudentPromptInput {
  question: string;
}

function questionLine(question: string): string {
  return `Question: ${oneLine(question)}\n`;
}

export function studentPrompt(input: StudentPromptInput): string {
  return `${STUDENT_INSTRUCTIONS}\n${questionLine(input.question)}`;
}

// ---------------------------------------------------------------------------------------------------
// Examiner

export interface ExaminerPromptInput {
  /** The source document the question must start from. */
  source: Doc;
  /** h >= 1: the question must need h hops (h - 1 searches). */
  hops: number;
}

export function examinerPrompt(input: ExaminerPromptInput): string {
  const h = input.hops;
  if (!(Number.isInteger(h) && h >= 1)) throw new RangeError(`examinerPrompt: hops must be >= 1 (got ${h})`);
  const task =
    h === 1
      ? 'Write one question and its answer from the source document below. The answer must be a fact stated in the document. Do not search.'
      : `Write one question and its answer that take exactly ${plural(h, 'hop')}, starting from the source document below. ` +
        `Hop 1 is an entity named in the document. Search exactly ${plural(h - 1, 'time')} with ${SEARCH_OPEN} query ${SEARCH_CLOSE}, ` +
        `each time following a fact about the previous hop; the results come back inside ${INFORMATION_OPEN} ${INFORMATION_CLOSE}. ` +
        `The question names only hop 1; the answer is hop ${h}.`;
  return (
    `${task} Think inside ${THINK_OPEN} ${THINK_CLOSE} before each step. ` +
    `End with ${QUESTION_OPEN} question ${QUESTION_CLOSE}${ANSWER_OPEN} answer ${ANSWER_CLOSE}. ` +
    `The answer is a short name, place or year that appears in the documents but not in the question.\n` +
    `Hops: ${h}\nSource document: ${formatSource(input.source)}\n`
  );
}

// ---------------------------------------------------------------------------------------------------
// Teacher: the student prompt with privileged context before the question

/** The question construction path: everything the examiner saw and wrote. */
export interface Qcp {
  source: Doc;
  hops: number;
  /** Each search the examiner made, with the body of the tool reply it got. */
  searches: { query: string; information: string }[];
  question: string;
  answer: string;
}

/** The QCP of a parsed examiner transcript: its searches paired in order with the tool replies. */
export function qcpFromExaminer(source: Doc, hops: number, parsed: ExaminerOutput): Qcp {
  const searches = parsed.searches.map((query, i) => ({ query, information: parsed.informations[i] ?? '' }));
  return { source, hops, searches, question: parsed.question, answer: parsed.answer };
}

/** ALGORITHM.md section 6: full QCP (default), partial QCP, answer only, answer + hop count, none. */
export type PrivilegedMode = 'full' | 'partial' | 'gt' | 'gt-hop' | 'none';
export const PRIVILEGED_MODES: readonly PrivilegedMode[] = ['full', 'partial', 'gt', 'gt-hop', 'none'];

export interface PrivilegedOptions {
  /** Seeds which hops 'partial' drops (required for 'partial'). */
  seed?: Seed;
  /** Share of the QCP's hops 'partial' drops, rounded down (default 0.5). */
  dropFraction?: number;
}

export const PRIVILEGED_HEADER = 'Private notes on how this question was made:';

/**
 * The hops of a QCP that 'partial' keeps: the QCP has 1 + #searches hops (the source document, then
 * each search with its results); floor(dropFraction · hops) of them, chosen by the seed, are dropped.
 * (So a 1-hop QCP is kept whole.) Returns the kept hop indices in order (0 = source).
 */
export function keptHops(qcp: Qcp, options: PrivilegedOptions): number[] {
  const n = 1 + qcp.searches.length;
  if (options.seed === undefined) throw new Error("privileged mode 'partial' needs a seed");
  const drop = Math.floor((options.dropFraction ?? 0.5) * n);
  const dropped = new Set(new Rng(options.seed).sample([...Array(n).keys()], drop));
  return [...Array(n).keys()].filter((i) => !dropped.has(i));
}

/** The privileged block (ends with "\n"; '' for 'none'). */
export function privilegedBlock(qcp: Qcp, mode: PrivilegedMode, options: PrivilegedOptions = {}): string {
  switch (mode) {
    case 'none':
      return '';
    case 'gt':
      return `${PRIVILEGED_HEADER} the answer is ${oneLine(qcp.answer)}.\n`;
    case 'gt-hop':
      return `${PRIVILEGED_HEADER} the answer is ${oneLine(qcp.answer)}; it takes ${plural(qcp.hops, 'hop')}.\n`;
    case 'full':
    case 'partial': {
      const keep = mode === 'full' ? null : new Set(keptHops(qcp, options));
      const lines = [PRIVILEGED_HEADER];
      if (!keep || keep.has(0)) lines.push(`Source document: ${formatSource(qcp.source)}`);
      qcp.searches.forEach((s, i) => {
        if (keep && !keep.has(i + 1)) return;
        lines.push(`Search ${i + 1}: ${oneLine(s.query)}`, `${INFORMATION_OPEN}${s.information}${INFORMATION_CLOSE}`);
      });
      lines.push(`Question: ${oneLine(qcp.question)}`, `Answer: ${oneLine(qcp.answer)}`);
      return lines.join('\n') + '\n';
    }
  }
}

export interface TeacherPromptInput extends StudentPromptInput {
  qcp: Qcp;
  mode: PrivilegedMode;
  options?: PrivilegedOptions;
}

/** The student prompt with the privileged block inserted before the question line. */
export function teacherPrompt(input: TeacherPromptInput): string {
  return `${STUDENT_INSTRUCTIONS}\n${privilegedBlock(input.qcp, input.mode, input.options)}${questionLine(input.question)}`;
}
