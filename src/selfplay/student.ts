// The student stage (ALGORITHM.md sections 1, 4-6): n rollouts per question with the current student, EM
// rewards against the examiner's answer, GRPO advantages per question, then PPO epochs over minibatches of
// L_S = L_GRPO + β·KL_ref + λ·D. The old log-probs are the rollout's own sampling log-probs; the teacher
// scores the same response ids after its privileged prompt; it follows the student by EMA after every
// optimizer step.
import { studentPrompt, teacherPrompt } from '../env/prompts.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { tokenLogprobs } from '../gpu/ops/log_softmax.ts';
import { topkKl } from '../gpu/ops/topk_kl.ts';
import { groupAdvantages, learnableShare } from '../rl/advantages.ts';
import { assertAligned, perPolicyToken, policyBatch, teacherSequence, type PolicyBatch } from '../rl/batch.ts';
import { constantLogits, policyLogits, policyLogprobs } from '../rl/forward.ts';
import { studentLoss, type StudentLossSettings } from '../rl/losses.ts';
import { studentReward } from '../rl/rewards.ts';
import { policyTokens, rolloutAnswer, runRollouts, type Rollout } from '../rl/rollout.ts';
import { lambdaAt } from '../rl/schedule.ts';
import { encodePrompt } from './base-model.ts';
import { chunks, mean, now, rngFor, rolloutOptions, split, uniform, type RunContext } from './context.ts';
import { questionsOfStep } from './data.ts';
import type { TrainQuestion } from './environment.ts';
import type { RolloutRecord, StepMetrics, TokenRecord } from './events.ts';
import { searchStats } from './measures.ts';
import { gradientStep } from './update.ts';

/** Entries of a token's top-K list kept in a rollout record (for the hover view). */
const RECORD_TOPK = 8;

export function lossSettings(ctx: RunContext, iteration: number): StudentLossSettings {
  const c = ctx.config;
  return {
    epsLow: c.epsLow,
    epsHigh: c.epsHigh,
    beta: c.beta,
    lambda: ctx.policies.teacher ? lambdaAt(c.lambda, iteration) : 0,
    topK: c.topK,
    tail: c.tail,
    direction: c.kl,
  };
}

/**
 * The teacher's prompt ids for a training question (privileged block before the question), with the run's
 * privileged mode and seed unless others are given (the teacher probe compares modes).
 */
export function teacherPromptIds(ctx: Pick<RunContext, 'config' | 'base'>, q: TrainQuestion, mode = ctx.config.privileged, seed = ctx.config.seed): number[] {
  const c = ctx.config;
  const text = teacherPrompt({
    question: q.question,
    qcp: q.qcp,
    mode,
    options: { seed: `${seed}/${q.id}`, dropFraction: c.partialDrop },
  });
  return encodePrompt(ctx.base.tokenizer, text);
}

export interface StudentStepResult {
  metrics: StepMetrics;
  records: RolloutRecord[];
}

export async function studentStep(ctx: RunContext, iteration: number, step: number, set: readonly TrainQuestion[]): Promise<StudentStepResult> {
  const c = ctx.config;
  const e = ctx.engine;
  const tok = ctx.base.tokenizer;
  const { student, teacher, reference } = ctx.policies;
  const t0 = now();
  const qs = questionsOfStep(set, step, c.studentBatch);
  if (qs.length === 0) {
    ctx.emit({ type: 'log', level: 'warn', message: `student step ${step} of iteration ${iteration}: no training questions; skipped` });
    return { metrics: { stage: 'student', iteration, step, skipped: 1 }, records: [] };
  }
  const rng = rngFor(c.seed, 'student', iteration, step);
  const n = c.rolloutsPerQuestion;
  const prompts = qs.flatMap((q) => Array.from({ length: n }, () => encodePrompt(tok, studentPrompt({ question: q.question }))));
  const progress = (label: string) => ctx.emit({ type: 'progress', stage: 'student', iteration, done: step, total: c.studentSteps, label });
  progress('rollouts');
  const rollouts = await runRollouts(student, tok, prompts, rolloutOptions(ctx, 'student', uniform(rng.fork('sampling'))));
  const questionOf = (i: number) => qs[Math.floor(i / n)]!;
  const answers = rollouts.map(rolloutAnswer);
  const rewards = rollouts.map((_, i) => studentReward(answers[i]!, questionOf(i).answer));
  const groups = rollouts.map((_, i) => Math.floor(i / n));
  const advantages = groupAdvantages(rewards, groups);
  const tPrompts = teacher ? qs.map((q) => teacherPromptIds(ctx, q)) : [];
  const settings = lossSettings(ctx, iteration);
  const pad = tok.padId ?? 0;
  const teacherBatch = (idx: number[]): PolicyBatch | null =>
    teacher ? policyBatch(idx.map((i) => teacherSequence(rollouts[i]!, tPrompts[Math.floor(i / n)]!)), pad) : null;

  // Token-level records of a few rollouts, as the loss sees them before this step's updates.
  const sampled = rng.fork('records').sample(rollouts.map((_, i) => i), c.rolloutSamples);
  const records: RolloutRecord[] = [];
  for (const i of sampled) {
    records.push({
      iteration,
      step,
      question: questionOf(i).question,
      gold: questionOf(i).answer,
      hops: questionOf(i).hops,
      answer: answers[i] ?? '',
      reward: rewards[i]!,
      advantage: advantages[i]!,
      searches: rollouts[i]!.searches.map((s) => s.query),
      tokens: await tokenRecords(ctx, rollouts[i]!, teacherBatch([i]), settings),
    });
  }

  const sums: Record<string, number> = {};
  const gradNorms: number[] = [];
  let optimizerSteps = 0;
  for (let epoch = 0; epoch < c.ppoEpochs; epoch++) {
    const order = rng.fork(`epoch-${epoch}`).shuffle(rollouts.map((_, i) => i));
    for (const mb of split(order, c.miniBatches)) {
      const tokens = mb.reduce((s, i) => s + policyTokens(rollouts[i]!), 0);
      const micros = [];
      for (const idx of chunks(mb, c.microBatch)) {
        const sb = policyBatch(idx.map((i) => rollouts[i]!), pad);
        const tb = teacherBatch(idx);
        if (tb) assertAligned(sb, tb);
        const refLogp = reference && settings.beta > 0 ? await policyLogprobs(reference, sb, c.temperature) : null;
        const weight = sb.targets.length / tokens;
        micros.push({
          weight,
          run: () => {
            const logits = policyLogits(student, sb, c.temperature);
            const teacherLogits = teacher && tb ? constantLogits(teacher, tb, c.temperature) : null;
            const r = studentLoss(
              {
                logits,
                teacherLogits,
                targets: sb.targets,
                oldLogp: perPolicyToken(sb, (b, t) => rollouts[idx[b]!]!.logprobs[t]!),
                refLogp,
                advantages: perPolicyToken(sb, (b) => advantages[idx[b]!]!),
                weight,
              },
              settings,
            );
            return {
              loss: r.loss,
              metrics: { policy_loss: r.policyLoss, distill: r.distill, clip_fraction: r.clipFraction, kl_ref: r.klRef, entropy: r.entropy, ppo_kl: r.ppoKl },
            };
          },
        });
      }
      progress(`update ${optimizerSteps + 1}/${c.ppoEpochs * c.miniBatches}`);
      const upd = await gradientStep(e, ctx.policies.studentOpt, micros, { stage: 'student', iteration, step });
      // The teacher follows the student after every student optimizer step.
      ctx.policies.emaTeacher(c.tau);
      optimizerSteps++;
      gradNorms.push(upd.gradNorm);
      for (const [k, v] of Object.entries(upd.metrics)) sums[k] = (sums[k] ?? 0) + v;
    }
  }
  const avg = (k: string) => (sums[k] ?? 0) / Math.max(optimizerSteps, 1);
  const seconds = (now() - t0) / 1000;
  const stats = searchStats(rollouts);
  const totalTokens = rollouts.reduce((s, r) => s + policyTokens(r), 0);
  const metrics: StepMetrics = {
    stage: 'student',
    iteration,
    step,
    loss: avg('policy_loss') + settings.lambda * avg('distill'),
    policy_loss: avg('policy_loss'),
    distill: avg('distill'),
    lambda: settings.lambda,
    clip_fraction: avg('clip_fraction'),
    kl_ref: avg('kl_ref'),
    entropy: avg('entropy'),
    ppo_kl: avg('ppo_kl'),
    reward: mean(rewards),
    learnable_share: learnableShare(rewards, groups),
    answered_share: mean(answers.map((a) => (a === null ? 0 : 1))),
    searches_per_rollout: stats.searches,
    redundancy: stats.redundancy,
    response_tokens: totalTokens / rollouts.length,
    fallback_share: mean(qs.map((q) => (q.origin === 'world' ? 1 : 0))),
    grad_norm: mean(gradNorms),
    optimizer_steps: optimizerSteps,
    tokens_per_s: totalTokens / Math.max(seconds, 1e-9),
    step_seconds: seconds,
  };
  return { metrics, records };
}

/** Per response token: student and teacher log-probs, the distillation term and the top-K list. */
async function tokenRecords(ctx: RunContext, rollout: Rollout, tb: PolicyBatch | null, s: StudentLossSettings): Promise<TokenRecord[]> {
  const e = ctx.engine;
  const tok = ctx.base.tokenizer;
  const { student, teacher } = ctx.policies;
  const sb = policyBatch([rollout], tok.padId ?? 0);
  const M = sb.targets.length;
  const out = e.noGrad(() =>
    e.tidy(() => {
      const targets = e.tensor(sb.targets, [M], 'i32');
      const sl = policyLogits(student, sb, ctx.config.temperature);
      const slp = tokenLogprobs(sl, targets);
      if (!teacher || !tb) return { slp } as Record<string, Tensor>;
      const tl = policyLogits(teacher, tb, ctx.config.temperature);
      const d = topkKl(sl, tl, e.tensor(new Float32Array(M).fill(1), [M]), { k: s.topK, tail: s.tail, direction: s.direction });
      return { slp, tlp: tokenLogprobs(tl, targets), kl: d.perToken, ids: d.ids, sTop: d.studentLogp, tTop: d.teacherLogp } as Record<string, Tensor>;
    }),
  );
  const host: Record<string, ArrayLike<number>> = {};
  for (const [k, t] of Object.entries(out)) {
    host[k] = await t.read();
    t.dispose();
  }
  const K = s.topK;
  const response = rollout.ids.slice(rollout.promptLength);
  const texts = tok.decodeEach(response);
  let m = 0;
  return response.map((id, j) => {
    const policy = rollout.mask[rollout.promptLength + j] ? 1 : 0;
    const rec: TokenRecord = { id, text: texts[j] ?? '', policy, studentLogp: 0, teacherLogp: 0, kl: 0 };
    if (policy) {
      rec.studentLogp = host['slp']![m]!;
      if (host['tlp']) {
        rec.teacherLogp = host['tlp'][m]!;
        rec.kl = host['kl']![m]!;
        const ids = Array.from({ length: Math.min(K, RECORD_TOPK) }, (_, k) => host['ids']![m * K + k]!);
        rec.topk = {
          ids,
          texts: ids.map((x) => tok.decode([x])),
          studentLogp: ids.map((_, k) => host['sTop']![m * K + k]!),
          teacherLogp: ids.map((_, k) => host['tTop']![m * K + k]!),
        };
      }
      m++;
    }
    return rec;
  });
}
