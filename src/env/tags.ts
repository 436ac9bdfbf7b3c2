// The tool format (ALGORITHM.md section 2): Search-R1 style tags.
//
//   <think>…</think>            reasoning (student, examiner)
//   <search>query</search>      a tool call; generation stops at `</search>`
//   <information>…</information> the environment's reply, appended as token ids, never sampled
//   <answer>…</answer>          the student's final answer; generation stops at `</answer>`
//   <question>…</question><answer>…</answer>  the examiner's output; it stops at `</answer>` after `<question>`
//
// The tool reply, exactly (see formatInformation):
//   <information>Doc 1 (Title: T1) text1\nDoc 2 (Title: T2) text2\nDoc 3 (Title: T3) text3</information>
// - one line per passage, joined by a single "\n", no newline after the last one, no space or newline
//   inside the tags at either end;
// - white-space runs (newlines included) inside titles and texts collapse to one space, so "\n" only
//   ever separates documents;
// - no passages: `<information>No results.</information>`.
// Whatever separates the block from the surrounding turns (the caller's choice) is not part of it.
//
// The parsers below take the text the policy itself wrote, as its turns (the runs of sampled ids between
// the tool replies the environment appended; a rollout's mask tells them apart, see rl/rollout.ts), and
// never the prompt. An `<information>` block the policy wrote is its own text, not a tool reply. For a
// transcript string whose blocks are all the environment's (scripted pretraining text, tests),
// splitTranscript gives the same pieces.

import type { Passage } from './corpus.ts';

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';
export const SEARCH_OPEN = '<search>';
export const SEARCH_CLOSE = '</search>';
export const INFORMATION_OPEN = '<information>';
export const INFORMATION_CLOSE = '</information>';
export const ANSWER_OPEN = '<answer>';
export const ANSWER_CLOSE = '</answer>';
export const QUESTION_OPEN = '<question>';
export const QUESTION_CLOSE = '</question>';

const TAG_PAIRS = {
  think: [THINK_OPEN, THINK_CLOSE],
  search: [SEARCH_OPEN, SEARCH_CLOSE],
  information: [INFORMATION_OPEN, INFORMATION_CLOSE],
  answer: [ANSWER_OPEN, ANSWER_CLOSE],
  question: [QUESTION_OPEN, QUESTION_CLOSE],
} as const;

/**
 * `<tag> body </tag>`, a space inside each tag: the form in which the prompts show the format and the scripted
 * pretraining transcripts write it. Without a body, `<tag> </tag>`.
 */
export function inTags(tag: keyof typeof TAG_PAIRS, body?: string): string {
  const [open, close] = TAG_PAIRS[tag];
  return body === undefined ? `${open} ${close}` : `${open} ${body} ${close}`;
}

/** Strings at which student generation stops (the stop string stays in the generated text). */
export const STUDENT_STOP_STRINGS: readonly string[] = [SEARCH_CLOSE, ANSWER_CLOSE];
/** Strings at which examiner generation may stop; `</answer>` only counts after a `<question>` (see stopAction). */
export const EXAMINER_STOP_STRINGS: readonly string[] = [SEARCH_CLOSE, ANSWER_CLOSE];

/** The body of a tool reply when retrieval found nothing. */
export const NO_RESULTS = 'No results.';

export type Role = 'student' | 'examiner';

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** `Doc i (Title: T) text` (i is 1-based), on one line. */
export function formatDoc(index: number, passage: Pick<Passage, 'title' | 'text'>): string {
  return `Doc ${index} (Title: ${oneLine(passage.title)}) ${oneLine(passage.text)}`;
}

/** The body of a tool reply, without the tags: the docs joined by "\n", or NO_RESULTS. */
export function formatInformationBody(passages: readonly Pick<Passage, 'title' | 'text'>[]): string {
  return passages.length ? passages.map((p, i) => formatDoc(i + 1, p)).join('\n') : NO_RESULTS;
}

const DOC_LINE = /^Doc (\d+) \(Title: (.*?)\) (.*)$/;

/**
 * The docs of a tool reply's body, as formatInformationBody wrote them (index, title, text), or null when the
 * body is not docs (no results, an error message).
 */
export function parseInformationBody(body: string): { index: number; title: string; text: string }[] | null {
  const docs = [];
  for (const line of body.split('\n')) {
    const m = DOC_LINE.exec(line);
    if (!m) return null;
    docs.push({ index: Number(m[1]), title: m[2]!, text: m[3]! });
  }
  return docs;
}

/** The tool reply block, exactly `<information>Doc 1 (Title: T) text\nDoc 2 (Title: …) …</information>`. */
export function formatInformation(passages: readonly Pick<Passage, 'title' | 'text'>[]): string {
  return `${INFORMATION_OPEN}${formatInformationBody(passages)}${INFORMATION_CLOSE}`;
}

/**
 * Whether generation should stop at the end of `turnText` (the text generated so far in this turn),
 * and why: 'search' when it ends with `</search>`, 'answer' when it ends with `</answer>` (for the
 * examiner only if a `<question>` came before), null otherwise.
 */
export function stopAction(turnText: string, role: Role): 'search' | 'answer' | null {
  if (turnText.endsWith(SEARCH_CLOSE)) return 'search';
  if (turnText.endsWith(ANSWER_CLOSE)) {
    if (role === 'student' || turnText.includes(QUESTION_OPEN)) return 'answer';
  }
  return null;
}

export type StudentAction = { kind: 'search'; query: string } | { kind: 'answer'; answer: string } | { kind: 'none' };

const ACTION = /<(search|answer)>([\s\S]*?)<\/\1>/;

/**
 * The action of one student turn: the first complete `<search>…</search>` or `<answer>…</answer>`
 * (Search-R1's rule; a tag inside <think> counts too, as the stop strings would have stopped there).
 * Contents are trimmed; an empty query is still a search (the caller decides what it is worth).
 */
export function parseStudentTurn(text: string): StudentAction {
  const m = ACTION.exec(text);
  if (!m) return { kind: 'none' };
  const body = m[2]!.trim();
  return m[1] === 'search' ? { kind: 'search', query: body } : { kind: 'answer', answer: body };
}

const INFORMATION_BLOCK = /<information>[\s\S]*?<\/information>/g;
const INFORMATION_CAPTURE = /<information>([\s\S]*?)<\/information>/g;

/** A transcript's pieces, every `<information>` block taken as a tool reply. */
export interface TranscriptParts {
  /** The policy's turns: the pieces between tool replies, empty ones dropped. */
  turns: string[];
  /** The bodies of the tool replies, in order. */
  informations: string[];
}

/** Splits a transcript string whose `<information>` blocks are all tool replies (not for rollouts: use their mask). */
export function splitTranscript(text: string): TranscriptParts {
  return {
    turns: text.split(INFORMATION_BLOCK).filter((t) => t.trim() !== ''),
    informations: [...text.matchAll(INFORMATION_CAPTURE)].map((m) => m[1]!),
  };
}

/** The text with every `<information>…</information>` block removed (a transcript's own text). */
export function stripInformation(text: string): string {
  return text.replace(INFORMATION_BLOCK, '');
}

function lastTag(text: string, open: string, close: string): string | null {
  const re = new RegExp(`${open}([\\s\\S]*?)${close.replace('/', '\\/')}`, 'g');
  let last: string | null = null;
  for (const m of text.matchAll(re)) last = m[1]!;
  return last === null ? null : last.trim();
}

/** The last `<answer>…</answer>` of the policy's own text, trimmed; null if none. */
export function finalAnswer(policyText: string): string | null {
  return lastTag(policyText, ANSWER_OPEN, ANSWER_CLOSE);
}

/** The student's final answer in a transcript string: the last `<answer>` outside tool replies; null if none. */
export function lastAnswer(fullText: string): string | null {
  return finalAnswer(stripInformation(fullText));
}

/** True when a turn opens with a complete think block (Dr. Zero: `^\s*<think>(.*?)</think>`). */
export function opensWithThink(turn: string): boolean {
  return /^\s*<think>[\s\S]*?<\/think>/.test(turn);
}

export interface ExaminerOutput {
  /** Last `<question>…</question>` (trimmed), '' if none. */
  question: string;
  /** Last `<answer>…</answer>` (trimmed), '' if none. */
  answer: string;
  /** Every `<search>…</search>` query the examiner wrote, trimmed, in order (empty ones included). */
  searches: string[];
  /** One entry per assistant turn (the text between tool replies). */
  turns: { thinks: boolean }[];
  /** The bodies of the tool replies, in order. */
  informations: string[];
}

/**
 * Parses the examiner's turns (its own text between the tool replies) and the tool replies it got. Tolerant:
 * junk around or between tags is ignored, unclosed tags are not matched.
 */
export function parseExaminerTurns(parts: TranscriptParts): ExaminerOutput {
  const own = parts.turns.join('\n');
  return {
    question: lastTag(own, QUESTION_OPEN, QUESTION_CLOSE) ?? '',
    answer: lastTag(own, ANSWER_OPEN, ANSWER_CLOSE) ?? '',
    searches: [...own.matchAll(/<search>([\s\S]*?)<\/search>/g)].map((m) => m[1]!.trim()),
    turns: parts.turns.filter((t) => t.trim() !== '').map((t) => ({ thinks: opensWithThink(t) })),
    informations: parts.informations,
  };
}

/** parseExaminerTurns of a transcript string whose `<information>` blocks are all tool replies. */
export function parseExaminerOutput(text: string): ExaminerOutput {
  return parseExaminerTurns(splitTranscript(text));
}

/** Searches with a non-empty query. */
export function countValidSearches(searches: readonly string[]): number {
  return searches.filter((q) => q.trim() !== '').length;
}

/** The number of assistant turns that open with <think>. */
export function countThinkingTurns(turns: readonly { thinks: boolean }[]): number {
  return turns.filter((t) => t.thinks).length;
}
