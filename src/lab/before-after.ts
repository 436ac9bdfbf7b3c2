// Before and after: the same held-out questions answered greedily by the base model (the weights every policy
// started from) and by the trained student, side by side. The base model is built from the run's host weights
// for the comparison only and freed after it.
import { CausalLM } from '../model/decoder.ts';
import type { RunContext } from '../selfplay/context.ts';
import type { EvalQuestion } from '../selfplay/environment.ts';
import { evaluate, type EvalResult } from '../selfplay/evaluate.ts';

export interface Answered {
  answer: string;
  correct: boolean;
  /** The whole greedy rollout (thinking, searches, passages, answer). */
  text: string;
}

export interface BeforeAfterRow {
  question: string;
  hops: number;
  /** The accepted answers. */
  gold: string[];
  base: Answered;
  student: Answered;
}

/** Up to `perHop` held-out questions of each hop count, in the set's order. */
export function pickQuestions(set: readonly EvalQuestion[], perHop: number): EvalQuestion[] {
  const taken = new Map<number, number>();
  return set.filter((q) => {
    const n = taken.get(q.hops) ?? 0;
    taken.set(q.hops, n + 1);
    return n < perHop;
  });
}

/** Greedy answers of the base model and of `student` to `questions` (no events: this is not the run's evaluation). */
export async function beforeAndAfter(
  ctx: Pick<RunContext, 'config' | 'base' | 'env' | 'engine'>,
  student: CausalLM,
  questions: readonly EvalQuestion[],
): Promise<BeforeAfterRow[]> {
  if (questions.length === 0)
    throw new Error('piplay: the comparison needs held-out questions (the run has none: --eval-per-hop is 0)');
  const quiet = { ...ctx, emit: () => undefined };
  const base = CausalLM.fromHost(ctx.engine, ctx.base.cfg, (name) => ctx.base.weights.get(name));
  let before: EvalResult;
  try {
    before = await evaluate(quiet, -1, base, questions);
  } finally {
    base.dispose();
  }
  const after = await evaluate(quiet, -1, student, questions);
  const pick = (a: EvalResult['answers'][number]): Answered => ({
    answer: a.answer,
    correct: a.correct,
    text: a.text,
  });
  return questions.map((q, i) => ({
    question: q.question,
    hops: q.hops,
    gold: [...q.answers],
    base: pick(before.answers[i]!),
    student: pick(after.answers[i]!),
  }));
}
