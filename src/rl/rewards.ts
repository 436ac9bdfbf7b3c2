// Rewards (ALGORITHM.md section 3). Pure functions; the examiner's format reward follows Dr. Zero's
// public code (`compute_challenger_format_scores`) line by line, including its quirks, noted below.

import { exactMatch, normalizeAnswer } from '../env/em.ts';
import { countValidSearches, lastAnswer, parseExaminerOutput, type ExaminerOutput } from '../env/tags.ts';

// ---------------------------------------------------------------------------------------------------
// Student

/** r = EM(prediction, gold) in {0, 1}; no answer (null) scores 0. */
export function studentReward(prediction: string | null, gold: string | readonly string[]): number {
  return prediction !== null && exactMatch(prediction, gold) ? 1 : 0;
}

/** The student reward of a whole rollout text: EM of its last `<answer>` (0 when there is none). */
export function studentRewardOfRollout(rolloutText: string, gold: string | readonly string[]): number {
  return studentReward(lastAnswer(rolloutText), gold);
}

// ---------------------------------------------------------------------------------------------------
// Examiner: difficulty

/**
 * r_d = 1[0 < k < n] · (n - k)/(n - 1): 0 for a question no rollout solved (k = 0) or all solved (k = n),
 * 1 when exactly one of n solved, decreasing linearly in k. n = 1 gives 0 (Dr. Zero asserts n > 1).
 */
export function difficultyReward(k: number, n: number): number {
  if (!Number.isInteger(k) || !Number.isInteger(n) || n < 1 || k < 0 || k > n) {
    throw new RangeError(`difficultyReward: need integers 0 <= k <= n, n >= 1 (got k=${k}, n=${n})`);
  }
  return solvable(k, n) ? (n - k) / (n - 1) : 0;
}

/** Whether k right of n rollouts leaves a signal: some but not all solved it (0 < k < n). */
export function solvable(k: number, n: number): boolean {
  return k > 0 && k < n;
}

/** r_d from the n student rewards (EM in {0,1}) of one question. */
export function difficultyRewardOfOutcomes(outcomes: readonly number[]): number {
  return difficultyReward(outcomes.filter((r) => r > 0).length, outcomes.length);
}

// ---------------------------------------------------------------------------------------------------
// Examiner: format

export interface ExaminerFormatInput {
  /** Extracted question and answer ('' when missing). */
  question: string;
  answer: string;
  /** The requested hop count h >= 1. */
  hops: number;
  /** Per assistant turn: does it open with a complete <think>…</think>? */
  turns: readonly { thinks: boolean }[];
  /** Number of well-formed searches (non-empty query). */
  validSearches: number;
  /** Number of tool replies in the transcript. */
  toolReplies: number;
  /** Text of the source document (title and text, as shown to the examiner). */
  sourceText: string;
  /** Texts of the tool replies, in order. */
  retrievedTexts: readonly string[];
}

export interface ExaminerFormatReward {
  /** f in [0, 1]. */
  f: number;
  /** Non-empty question and answer, and the normalised answer not inside the normalised question. */
  integrity: boolean;
  /** Share of assistant turns opening with <think> (0 when there are no turns). */
  think: number;
  tool: number;
  ans: number;
}

/** The words of the answer that make the `ans` term: 1 up to 5 words, 0.5 up to 10. */
export const ANSWER_WORDS_FULL = 5;
export const ANSWER_WORDS_HALF = 10;

/**
 * tool = 1 for h = 1 (whatever was searched); for h > 1 it is 0 unless the valid searches are as many as
 * the tool replies and at least one, and then min((1 + #valid)/h, 1). (Dr. Zero's condition
 * `tool_calls == len(doc_matches) and tool_calls > 0`; for h = 1 that branch also gives 1.)
 */
export function toolScore(hops: number, validSearches: number, toolReplies: number): number {
  let reward = hops === 1 ? 1 : 0;
  if (validSearches === toolReplies && validSearches > 0) reward = Math.min((1 + validSearches) / hops, 1);
  return reward;
}

/**
 * ans = 1 if the normalised answer is "yes"/"no" or occurs (as a substring, Dr. Zero's `in`) in the
 * normalised evidence and has at most 5 words; 0.5 for at most 10 words; else 0 (and 0 when empty).
 */
export function answerScore(answer: string, evidence: string): number {
  const a = normalizeAnswer(answer);
  if (a.length === 0) return 0;
  if (!(a === 'yes' || a === 'no' || normalizeAnswer(evidence).includes(a))) return 0;
  const words = a.split(' ').length;
  if (words <= ANSWER_WORDS_FULL) return 1;
  if (words <= ANSWER_WORDS_HALF) return 0.5;
  return 0;
}

/**
 * The examiner's format reward f (Dr. Zero): 0 unless the question and answer are non-empty and the
 * normalised answer is not a substring of the normalised question; else (1 + think + tool + ans)/4.
 * The evidence for `ans` is the source text, plus the tool replies only when the tool condition held
 * (valid searches == tool replies > 0), as in Dr. Zero.
 */
export function examinerFormatReward(input: ExaminerFormatInput): ExaminerFormatReward {
  const { question, answer, hops, turns, validSearches, toolReplies } = input;
  if (!(Number.isInteger(hops) && hops >= 1))
    throw new RangeError(`examinerFormatReward: hops must be >= 1 (got ${hops})`);
  const think = turns.length ? turns.filter((t) => t.thinks).length / turns.length : 0;
  const tool = toolScore(hops, validSearches, toolReplies);
  const toolsHeld = validSearches === toolReplies && validSearches > 0;
  const evidence = toolsHeld ? [input.sourceText, ...input.retrievedTexts].join('\n\n') : input.sourceText;
  const ans = answerScore(answer, evidence);
  const q = question.trim();
  const a = answer.trim();
  const integrity = q.length > 0 && a.length > 0 && !normalizeAnswer(q).includes(normalizeAnswer(a));
  const f = integrity ? (1 + think + tool + ans) / 4 : 0;
  return { f, integrity, think, tool, ans };
}

/** The format-reward input of a parsed examiner transcript. */
export function formatInputOf(parsed: ExaminerOutput, hops: number, sourceText: string): ExaminerFormatInput {
  return {
    question: parsed.question,
    answer: parsed.answer,
    hops,
    turns: parsed.turns,
    validSearches: countValidSearches(parsed.searches),
    toolReplies: parsed.informations.length,
    sourceText,
    retrievedTexts: parsed.informations,
  };
}

/** f of a raw examiner transcript (its generated turns with the tool replies in between). */
export function examinerFormatRewardOfTranscript(
  transcript: string,
  hops: number,
  sourceText: string,
): ExaminerFormatReward {
  return examinerFormatReward(formatInputOf(parseExaminerOutput(transcript), hops, sourceText));
}

// ---------------------------------------------------------------------------------------------------
// Examiner: total

/** r = 0.5·f + r_d, with r_d counted only when f > 0 (Dr. Zero only runs the student on such questions). */
export function examinerReward(format: number, difficulty: number): number {
  return 0.5 * format + (format > 0 ? difficulty : 0);
}

/** r from f and the student's k correct out of n rollouts. */
export function examinerRewardOfCounts(format: number, k: number, n: number): number {
  return examinerReward(format, format > 0 ? difficultyReward(k, n) : 0);
}
