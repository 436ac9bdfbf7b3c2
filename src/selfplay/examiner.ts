// The examiner stage (ALGORITHM.md sections 1, 3-5): sample source documents and hop counts, let the
// examiner write a question with search, score each valid question with n student rollouts (difficulty),
// and update the examiner with HRPO (advantages standardised within each hop count), on-policy.
import { formatSource, type Passage } from '../env/index.ts';
import { examinerPrompt, qcpFromExaminer, studentPrompt, type Qcp } from '../env/prompts.ts';
import { parseExaminerTurns } from '../env/tags.ts';
import { groupAdvantages } from '../rl/advantages.ts';
import { perPolicyToken, policyBatch } from '../rl/batch.ts';
import { policyLogits, policyLogprobs } from '../rl/forward.ts';
import { examinerLoss } from '../rl/losses.ts';
import {
  difficultyReward,
  examinerFormatReward,
  examinerReward,
  formatInputOf,
  solvable,
  studentReward,
  type ExaminerFormatReward,
} from '../rl/rewards.ts';
import { policyTokens, rolloutAnswer, runRollouts, type Rollout } from '../rl/rollout.ts';
import { encodePrompt } from './base-model.ts';
import { mean, now, rngFor, rolloutOptions, uniform, type RunContext } from './context.ts';
import { rolloutBudget } from './memory-plan.ts';
import { packMicroBatches, rolloutMeasures } from './micro-batches.ts';
import type { QcpStep, QuestionRecord, StepMetrics } from './events.ts';
import { gradientStep, warmupLr, warmupSteps, type StepResult } from './update.ts';
import type { CausalLM } from '../model/decoder.ts';

/** One examiner rollout, parsed and scored for format. */
export interface WrittenQuestion {
  source: Passage;
  hops: number;
  rollout: Rollout;
  question: string;
  answer: string;
  qcp: Qcp;
  format: ExaminerFormatReward;
}

type RolloutContext = Pick<RunContext, 'config' | 'env' | 'base'>;

/**
 * `examiner`'s rollouts from the given sources and hop counts, parsed; used by the stage, data generation and the
 * probe.
 */
export async function writeQuestions(
  ctx: RolloutContext,
  examiner: CausalLM,
  items: { source: Passage; hops: number }[],
  random: () => number,
): Promise<WrittenQuestion[]> {
  const tok = ctx.base.tokenizer;
  const prompts = items.map((it) => encodePrompt(tok, examinerPrompt({ source: it.source, hops: it.hops })));
  const rollouts = await runRollouts(examiner, tok, prompts, rolloutOptions(ctx, 'examiner', random));
  return rollouts.map((rollout, i) => {
    const { source, hops } = items[i]!;
    // The examiner's own turns and the tool replies it got (as it saw them, cut to the budget), from the rollout.
    const parsed = parseExaminerTurns({
      turns: rollout.policyTurns,
      informations: rollout.searches.map((s) => s.information),
    });
    const format = examinerFormatReward(formatInputOf(parsed, hops, formatSource(source)));
    const qcp = qcpFromExaminer(source, hops, parsed, rollout.searches);
    return { source, hops, rollout, question: parsed.question, answer: parsed.answer, qcp, format };
  });
}

/** k correct out of n rollouts of `student` per question (its sampling policy, no training). */
export async function solveCounts(
  ctx: RolloutContext,
  student: CausalLM,
  questions: { question: string; answer: string }[],
  random: () => number,
): Promise<number[]> {
  const n = ctx.config.rolloutsPerQuestion;
  if (questions.length === 0) return [];
  const tok = ctx.base.tokenizer;
  const prompts = questions.flatMap((q) =>
    Array.from({ length: n }, () => encodePrompt(tok, studentPrompt({ question: q.question }))),
  );
  const rollouts = await runRollouts(student, tok, prompts, rolloutOptions(ctx, 'student', random));
  return questions.map((q, i) => {
    let k = 0;
    for (let j = 0; j < n; j++) k += studentReward(rolloutAnswer(rollouts[i * n + j]!), q.answer);
    return k;
  });
}

export function qcpSteps(w: Pick<WrittenQuestion, 'source' | 'rollout'>): QcpStep[] {
  const plain = (p: Passage) => ({ id: p.id, title: p.title, text: p.text });
  return [
    { kind: 'source', passages: [plain(w.source)] },
    ...w.rollout.searches.map((s) => ({ kind: 'search' as const, query: s.query, passages: s.passages.map(plain) })),
  ];
}

/** right_share: of the questions written, the share true of the world (none for a corpus without a world). */
export function rightShareMetric(
  ctx: Pick<RunContext, 'env'>,
  written: readonly WrittenQuestion[],
): { right_share?: number } {
  const share = ctx.env.rightShare(written);
  return share === undefined ? {} : { right_share: share };
}

export interface ExaminerStepResult {
  metrics: StepMetrics;
  questions: QuestionRecord[];
  /** The step's rollouts, parsed, in the order of `questions` (scripts/scale-check replays them). */
  written: WrittenQuestion[];
}

export async function examinerStep(ctx: RunContext, iteration: number, step: number): Promise<ExaminerStepResult> {
  const c = ctx.config;
  const e = ctx.engine;
  const t0 = now();
  const rng = rngFor(c.seed, 'examiner', iteration, step);
  const pick = rng.fork('sources');
  const items = Array.from({ length: c.examinerBatch }, () => ({
    source: ctx.env.sampleSource(pick),
    hops: ctx.env.sampleHops(pick, c.hopWeights),
  }));
  const progress = (label: string) =>
    ctx.emit({ type: 'progress', stage: 'examiner', iteration, done: step, total: c.examinerSteps, label });
  progress('examiner rollouts');
  const written = await writeQuestions(ctx, ctx.policies.examiner, items, uniform(rng.fork('examiner-sampling')));

  // Difficulty: only questions with f > 0 are put to the student (r_d counts only then).
  const valid = written.flatMap((w, i) => (w.format.f > 0 ? [i] : []));
  progress(`student rollouts on ${valid.length} valid questions`);
  const ks = await solveCounts(
    ctx,
    ctx.policies.student,
    valid.map((i) => written[i]!),
    uniform(rng.fork('student-sampling')),
  );
  const n = c.rolloutsPerQuestion;
  const kOf = new Map(valid.map((i, j) => [i, ks[j]!]));
  const difficulty = written.map((_, i) => (kOf.has(i) ? difficultyReward(kOf.get(i)!, n) : 0));
  const rewards = written.map((w, i) => examinerReward(w.format.f, difficulty[i]!));
  const advantages = groupAdvantages(
    rewards,
    written.map((w) => w.hops),
  );

  // L_E over the examiner's own tokens, token-mean over the batch.
  const totalTokens = written.reduce((s, w) => s + policyTokens(w.rollout), 0);
  const pad = ctx.base.tokenizer.padId ?? 0;
  // Passes bounded by what the memory plan sizes an examiner pass by (src/selfplay/micro-batches.ts): its padded
  // tokens within a prompt and one turn per rollout (or the longest rollout, where longer), its policy tokens
  // within the most one rollout samples.
  const all = written.map((_, i) => i);
  const measures = rolloutMeasures(all, (i) => written[i]!.rollout, rolloutBudget(c).examiner, 0);
  const parts = packMicroBatches(all, c.microBatch, measures);
  const batches = parts.map((idx) =>
    policyBatch(
      idx.map((i) => written[i]!.rollout),
      pad,
    ),
  );
  // Dr. Zero's KL to the frozen base (its eq. 2), when examinerBeta > 0.
  const reference = c.examinerBeta > 0 ? ctx.policies.reference : null;
  const refLogps: (Float32Array | null)[] = [];
  for (const b of batches) refLogps.push(reference ? await policyLogprobs(reference, b, c.temperature) : null);
  const micros = parts.map((idx, k) => {
    const batch = batches[k]!;
    const weight = batch.targets.length / totalTokens;
    return {
      weight,
      run: () => {
        const logits = policyLogits(ctx.policies.examiner, batch, c.temperature);
        const adv = perPolicyToken(batch, (b) => advantages[idx[b]!]!);
        const r = examinerLoss({
          logits,
          targets: batch.targets,
          advantages: adv,
          weight,
          refLogp: refLogps[k]!,
          beta: c.examinerBeta,
        });
        return { loss: r.loss, metrics: { loss: r.policyLoss, kl_ref: r.klRef } };
      },
    };
  });
  // --empty-updates skip: rewards equal within every hop group leave every advantage 0, so nothing to learn.
  const skip = c.emptyUpdates === 'skip' && advantages.every((a) => a === 0);
  const opt = ctx.policies.examinerOpt;
  const lr = skip ? 0 : warmupLr(c.examinerLr, opt.stepCount + 1, warmupSteps(c, 'examiner'));
  progress(skip ? 'no update (every advantage is 0)' : 'update');
  const update: StepResult = skip
    ? { metrics: {}, gradNorm: 0 }
    : await gradientStep(e, opt, micros, { stage: 'examiner', iteration, step }, lr);

  const questions: QuestionRecord[] = written.map((w, i) => ({
    iteration,
    step,
    question: w.question,
    answer: w.answer,
    hops: w.hops,
    qcp: qcpSteps(w),
    k: kOf.get(i) ?? 0,
    n: kOf.has(i) ? n : 0,
    formatReward: w.format.f,
    difficultyReward: difficulty[i]!,
    examinerReward: rewards[i]!,
    advantage: advantages[i]!,
  }));
  const seconds = (now() - t0) / 1000;
  const solvableCount = valid.filter((i) => solvable(kOf.get(i)!, n)).length;
  const metrics: StepMetrics = {
    stage: 'examiner',
    iteration,
    step,
    loss: update.metrics['loss'] ?? 0,
    ...(reference ? { kl_ref: update.metrics['kl_ref'] ?? 0 } : {}),
    reward: mean(rewards),
    format_reward: mean(written.map((w) => w.format.f)),
    difficulty_reward: mean(valid.map((i) => difficulty[i]!)),
    valid_share: valid.length / written.length,
    ...rightShareMetric(ctx, written),
    solvable_share: solvableCount / written.length,
    student_accuracy: valid.length ? mean(valid.map((i) => kOf.get(i)! / n)) : 0,
    mean_hops: mean(written.map((w) => w.hops)),
    searches_per_rollout: mean(written.map((w) => w.rollout.searches.length)),
    policy_tokens: totalTokens,
    grad_norm: update.gradNorm,
    skipped_updates: skip ? 1 : 0,
    lr,
    tokens_per_s: totalTokens / Math.max(seconds, 1e-9),
    step_seconds: seconds,
  };
  return { metrics, questions, written };
}
