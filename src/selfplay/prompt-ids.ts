// The prompts of a training question as the policies read them (token ids, chat template applied): the teacher's,
// with the privileged block the run's mode and seed make. The student stage and the instruments (probes, the
// ablation, the prompt lengths) all build them here.
import { teacherPrompt, type PrivilegedOptions } from '../env/prompts.ts';
import { encodePrompt } from './base-model.ts';
import type { RunContext } from './context.ts';
import type { TrainQuestion } from './environment.ts';

/**
 * The teacher's prompt ids for a training question (privileged block before the question), with the run's
 * privileged mode and seed unless others are given (the teacher probe compares modes).
 */
export function teacherPromptIds(
  ctx: Pick<RunContext, 'config' | 'base'>,
  q: Pick<TrainQuestion, 'id' | 'question' | 'qcp'>,
  mode = ctx.config.privileged,
  seed = ctx.config.seed,
): number[] {
  const text = teacherPrompt({ question: q.question, qcp: q.qcp, mode, options: privilegedOptions(ctx, q, seed) });
  return encodePrompt(ctx.base.tokenizer, text);
}

/** What 'partial' removes of a question's path: seeded per question, so every use of the block agrees. */
export function privilegedOptions(
  ctx: Pick<RunContext, 'config'>,
  q: Pick<TrainQuestion, 'id'>,
  seed = ctx.config.seed,
): PrivilegedOptions {
  return { seed: `${seed}/${q.id}`, dropFraction: ctx.config.partialDrop, notes: ctx.config.notes };
}
