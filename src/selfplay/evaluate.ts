// Evaluation (ALGORITHM.md section 7): greedy student rollouts on the held-out questions, searching the held-out
// world's corpus (Environment.heldOut); exact match per hop count and overall, searches per rollout, query
// redundancy, and each question's outcome by id (what paired comparisons between runs are made of).
import { studentPrompt } from '../env/prompts.ts';
import type { CausalLM } from '../model/decoder.ts';
import { studentReward } from '../rl/rewards.ts';
import { rolloutAnswer, runRollouts, type Rollout } from '../rl/rollout.ts';
import { encodePrompt } from './base-model.ts';
import { chunks, rolloutOptions, type RunContext } from './context.ts';
import type { Environment, EvalQuestion } from './environment.ts';
import type { EvalMetrics } from './events.ts';
import { repeatedQueries, searchStats } from './measures.ts';

export interface EvalResult {
  metrics: EvalMetrics;
  /** Per question: the answer given ('' if none), whether it matched, and the whole rollout's text. */
  answers: { id: string; question: string; hops: number; answer: string; correct: boolean; text: string }[];
}

/** What evaluation needs of a run: no policies besides the model it is given. */
export type EvalContext = Pick<RunContext, 'config' | 'base' | 'env' | 'emit'>;

/** The student role's greedy rollouts of `model` from `prompts`, as evaluation runs them. */
export function greedyRollouts(
  ctx: Pick<RunContext, 'config' | 'env' | 'base'>,
  model: CausalLM,
  prompts: readonly number[][],
): Promise<Rollout[]> {
  // Greedy: the random source is never read.
  return runRollouts(
    model,
    ctx.base.tokenizer,
    prompts,
    rolloutOptions(ctx, 'student', () => 0.5, true),
  );
}

export async function evaluate(
  ctx: EvalContext,
  iteration: number,
  model: CausalLM,
  questions: readonly EvalQuestion[] = ctx.env.heldOut.evalSet,
  /** Whose corpus the search tool reads: the held-out world's, unless the questions are of another world. */
  searched: Environment = ctx.env.heldOut,
): Promise<EvalResult> {
  const tok = ctx.base.tokenizer;
  const held = { ...ctx, env: searched };
  const rollouts: Rollout[] = [];
  const batches = chunks(questions, ctx.config.evalBatch);
  let done = 0;
  for (const batch of batches) {
    ctx.emit({ type: 'progress', stage: 'eval', iteration, done, total: questions.length });
    const prompts = batch.map((q) => encodePrompt(tok, studentPrompt({ question: q.question })));
    rollouts.push(...(await greedyRollouts(held, model, prompts)));
    done += batch.length;
  }
  ctx.emit({ type: 'progress', stage: 'eval', iteration, done, total: questions.length });
  const answers = questions.map((q, i) => {
    const a = rolloutAnswer(rollouts[i]!);
    return {
      id: q.id,
      question: q.question,
      hops: q.hops,
      answer: a ?? '',
      correct: studentReward(a, q.answers) === 1,
      text: rollouts[i]!.text,
    };
  });
  const byHop = new Map<number, { n: number; ok: number }>();
  for (const a of answers) {
    const h = byHop.get(a.hops) ?? { n: 0, ok: 0 };
    h.n++;
    if (a.correct) h.ok++;
    byHop.set(a.hops, h);
  }
  const emByHop: Record<string, number> = {};
  for (const [h, v] of [...byHop].sort((x, y) => x[0] - y[0])) emByHop[String(h)] = v.ok / v.n;
  const stats = searchStats(rollouts);
  return {
    metrics: {
      iteration,
      em: answers.length ? answers.filter((a) => a.correct).length / answers.length : 0,
      emByHop,
      searchesPerRollout: stats.searches,
      redundancy: stats.redundancy,
      n: answers.length,
      outcomes: answers.map((a, i) => {
        const queries = rollouts[i]!.searches.map((s) => s.query);
        return {
          id: a.id,
          hops: a.hops,
          correct: a.correct,
          answer: a.answer,
          searches: queries.length,
          repeats: repeatedQueries(queries),
        };
      }),
    },
    answers,
  };
}
