// The prompts of the three roles, as plain strings (the model wraps them in its chat template).
// Short on purpose: tiny models, short contexts.
//
//   student  = STUDENT_INSTRUCTIONS + "\n" + "Question: <q>\n"
//   teacher  = STUDENT_INSTRUCTIONS + "\n" + <privileged block ending in "\n"> + "Question: <q>\n"
// so the teacher's prompt is the student's with the privileged block inserted before the question, and
// the rollout tokens that follow are the same for both (ALGORITHM.md section 6).

import { Rng, type Seed } from './random.ts';
import type { Passage } from './corpus.ts';
import { mentions, sentencesOf } from './sentences.ts';
import {
  INFORMATION_CLOSE,
  INFORMATION_OPEN,
  formatDoc,
  inTags,
  parseInformationBody,
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

/** `n word` with the word in the plural unless n is 1: "1 hop", "2 hops" (prompts and the CLI's logs). */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// ---------------------------------------------------------------------------------------------------
// Student

export const STUDENT_INSTRUCTIONS =
  `Answer the question. Think inside ${inTags('think')} every time you get new information. ` +
  `To search, write ${inTags('search', 'query')}; the results come back inside ${inTags('information')}. ` +
  `Search as often as you need. When you know the answer, write it inside ${inTags('answer')} ` +
  `without explanation, for example ${inTags('answer', 'Beijing')}.`;

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
      ? 'Write one question and its answer from the source document below. ' +
        'The answer must be a fact stated in the document. Do not search.'
      : `Write one question and its answer that take exactly ${plural(h, 'hop')}, ` +
        'starting from the source document below. ' +
        'Hop 1 is an entity named in the document. ' +
        `Search exactly ${plural(h - 1, 'time')} with ${inTags('search', 'query')}, ` +
        'each time following a fact about the previous hop; ' +
        `the results come back inside ${inTags('information')}. ` +
        `The question names only hop 1; the answer is hop ${h}.`;
  return (
    `${task} Think inside ${inTags('think')} before each step. ` +
    `End with ${inTags('question', 'question')}${inTags('answer', 'answer')}. ` +
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

/**
 * The QCP of a parsed examiner rollout: its source, the searches the tool answered (query and reply), question
 * and answer.
 */
export function qcpFromExaminer(
  source: Doc,
  hops: number,
  parsed: Pick<ExaminerOutput, 'question' | 'answer'>,
  searches: readonly { query: string; information: string }[],
): Qcp {
  return {
    source,
    hops,
    searches: searches.map((s) => ({ query: s.query, information: s.information })),
    question: parsed.question,
    answer: parsed.answer,
  };
}

/**
 * ALGORITHM.md section 6: full QCP (default), partial QCP, answer only, answer + hop count, none (no teacher: Dr.
 * Zero), and self, the control: the same EMA teacher and distillation as π-Play, whose prompt is the student's own
 * (no privileged block), so D is only the pull towards a slow copy of the student.
 */
export type PrivilegedMode = 'full' | 'partial' | 'gt' | 'gt-hop' | 'none' | 'self';
export const PRIVILEGED_MODES: readonly PrivilegedMode[] = ['full', 'partial', 'gt', 'gt-hop', 'none', 'self'];

/** The modes whose teacher reads privileged information (not 'none', which has no teacher, nor 'self'). */
export const isPrivileged = (mode: PrivilegedMode): boolean => mode !== 'none' && mode !== 'self';

/**
 * How 'full' and 'partial' notes show the path's documents: whole ('passages', the papers' rendering), or
 * each document cut to the sentence that leads on ('compact', see compactQcp); 'answer-first' is the compact
 * notes opened by the answer in the words of the 'gt' notes, so that their first line is the 'gt' block.
 * Every rendering holds the same path: the source, each search's query and result, the question and answer.
 */
export type NotesRendering = 'passages' | 'compact' | 'answer-first';
export const NOTES_RENDERINGS: readonly NotesRendering[] = ['passages', 'compact', 'answer-first'];

export interface PrivilegedOptions {
  /** How the path's documents are shown (default 'passages'). */
  notes?: NotesRendering;
  /** Seeds what 'partial' removes (required for 'partial'). */
  seed?: Seed;
  /** Share of the QCP's content (the words of its source passage and search results) 'partial' removes
   *  (default 0.5). */
  dropFraction?: number;
}

export const PRIVILEGED_HEADER = 'Private notes on how this question was made:';

/** What 'partial' keeps of a QCP: the source (null when removed) and the searches kept, with their 1-based numbers. */
export interface PartialQcp {
  source: Doc | null;
  searches: { number: number; query: string; information: string }[];
}

const WORD = /\S+/g;

/** `text` up to the end of its `keep`-th word (white space inside kept, trailing white space dropped). */
function firstWords(text: string, keep: number): string {
  if (keep <= 0) return '';
  let end = 0;
  let k = 0;
  for (const m of text.matchAll(WORD)) {
    end = m.index + m[0].length;
    if (++k === keep) break;
  }
  return text.slice(0, end);
}

/**
 * The paper's partial QCP, "randomly truncating half of the original QCP": round(dropFraction · W) of the W
 * words of the path's content (the source passage's text, then each search's results) are removed, so every
 * hop count loses about half (a 1-hop path, half of its source passage). Pieces are taken in a seeded order:
 * each is removed whole while the words still to remove cover it; the piece where the count runs out loses
 * its tail. Queries, titles, the question and the answer are kept (they are the path's frame, not content).
 */
export function partialQcp(qcp: Qcp, options: PrivilegedOptions): PartialQcp {
  if (options.seed === undefined) throw new Error("privileged mode 'partial' needs a seed");
  const texts = [qcp.source.text, ...qcp.searches.map((s) => s.information)];
  const kept = texts.map((t) => [...t.matchAll(WORD)].length);
  let remove = Math.round((options.dropFraction ?? 0.5) * kept.reduce((a, b) => a + b, 0));
  for (const i of new Rng(options.seed).shuffle([...texts.keys()])) {
    const d = Math.min(kept[i]!, remove);
    kept[i]! -= d;
    remove -= d;
  }
  const cut = (i: number) => firstWords(texts[i]!, kept[i]!);
  return {
    source: kept[0]! > 0 ? { title: qcp.source.title, text: cut(0) } : null,
    searches: qcp.searches.flatMap((s, j) =>
      kept[j + 1]! > 0 ? [{ number: j + 1, query: s.query, information: cut(j + 1) }] : [],
    ),
  };
}

/** How strongly a sentence leads to `lead`: it names it whole (best), or the number of its words it shares. */
function leadScore(sentence: string, lead: string): number {
  if (mentions(sentence, lead)) return Number.POSITIVE_INFINITY;
  const words = new Set(sentence.toLowerCase().match(/\w+/g) ?? []);
  return (lead.toLowerCase().match(/\w+/g) ?? []).filter((w) => w.length > 2 && words.has(w)).length;
}

/** The sentence of the texts that leads best to `lead` (the first on a tie), with the index of its text. */
function bestSentence(texts: readonly string[], lead: string): { index: number; sentence: string } {
  let best = { index: 0, sentence: sentencesOf(texts[0] ?? '')[0] ?? '', score: -1 };
  texts.forEach((text, index) => {
    for (const sentence of sentencesOf(text)) {
      const score = leadScore(sentence, lead);
      if (score > best.score) best = { index, sentence, score };
    }
  });
  return best;
}

/**
 * A search reply cut to the one sentence of its documents that leads best to `lead`, as
 * `Doc k (Title: T) sentence`. Replies that are not docs (no results, an error) are kept whole.
 */
function compactInformation(information: string, lead: string): string {
  const docs = parseInformationBody(information);
  if (!docs) return information;
  const { index, sentence } = bestSentence(
    docs.map((d) => d.text),
    lead,
  );
  return formatDoc(docs[index]!.index, { title: docs[index]!.title, text: sentence });
}

/**
 * The compact notes of a path: the same source, searches, question and answer, with each document cut to
 * the one sentence that leads to the next step: the sentence that names the next search's query (or, for
 * the last document, the answer), else the one sharing most of its words. Every word kept is one the
 * examiner saw; the notes of a 3-hop path fall from about 500 tokens to under 100, within a small model's
 * reach.
 */
export function compactQcp(qcp: Qcp): Qcp {
  const lead = (i: number) => qcp.searches[i]?.query ?? qcp.answer;
  return {
    ...qcp,
    source: { title: qcp.source.title, text: bestSentence([qcp.source.text], lead(0)).sentence },
    searches: qcp.searches.map((s, j) => ({
      query: s.query,
      information: compactInformation(s.information, lead(j + 1)),
    })),
  };
}

/** The privileged block (ends with "\n"; '' for 'none' and 'self'). */
export function privilegedBlock(qcp: Qcp, mode: PrivilegedMode, options: PrivilegedOptions = {}): string {
  switch (mode) {
    case 'none':
    case 'self':
      return '';
    case 'gt':
      return `${PRIVILEGED_HEADER} the answer is ${oneLine(qcp.answer)}.\n`;
    case 'gt-hop':
      return `${PRIVILEGED_HEADER} the answer is ${oneLine(qcp.answer)}; it takes ${plural(qcp.hops, 'hop')}.\n`;
    case 'full':
    case 'partial': {
      if (options.notes === 'compact' || options.notes === 'answer-first') qcp = compactQcp(qcp);
      const path: PartialQcp =
        mode === 'full'
          ? { source: qcp.source, searches: qcp.searches.map((s, j) => ({ number: j + 1, ...s })) }
          : partialQcp(qcp, options);
      const lines = [options.notes === 'answer-first' ? privilegedBlock(qcp, 'gt').trimEnd() : PRIVILEGED_HEADER];
      if (path.source) lines.push(`Source document: ${formatSource(path.source)}`);
      for (const s of path.searches)
        lines.push(
          `Search ${s.number}: ${oneLine(s.query)}`,
          `${INFORMATION_OPEN}${s.information}${INFORMATION_CLOSE}`,
        );
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
  const block = privilegedBlock(input.qcp, input.mode, input.options);
  return `${STUDENT_INSTRUCTIONS}\n${block}${questionLine(input.question)}`;
}
