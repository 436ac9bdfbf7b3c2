// The student stage (ALGORITHM.md sections 1, 4-6): n rollouts per question with the current student, EM
// rewards against the examiner's answer, GRPO advantages per question, then PPO epochs over minibatches of
// L_S = L_GRPO + β·KL_ref + λ·D. The old log-probs are the rollout's own sampling log-probs; the teacher
// scores the same response ids after its privileged prompt; it follows the student by EMA after every
// optimizer step.
import { privilegedBlock, studentPrompt } from '../env/prompts.ts';
import type { Rng } from '../env/random.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { groupAdvantages, learnableShare } from '../rl/advantages.ts';
import {
  assertAligned,
  perPolicyToken,
  policyBatch,
  teacherSequence,
  treeBatch,
  type MaskedSequence,
  type PolicyBatch,
} from '../rl/batch.ts';
import { constantLogits, policyLogits, policyLogprobs } from '../rl/forward.ts';
import { studentLoss, tokenScores, type StudentLossSettings } from '../rl/losses.ts';
import { studentReward } from '../rl/rewards.ts';
import { policyTokens, rolloutAnswer, runRollouts, type Rollout } from '../rl/rollout.ts';
import { lambdaAt } from '../rl/schedule.ts';
import { encodePrompt } from './base-model.ts';
import { mean, now, rngFor, rolloutOptions, split, uniform, type RunContext } from './context.ts';
import { rolloutBudget } from './memory-plan.ts';
import { packMicroBatches, perRolloutBound, rolloutMeasures, treeUnits, type PassMeasure } from './micro-batches.ts';
import { questionsOfStep } from './data.ts';
import type { TrainQuestion } from './environment.ts';
import type { RolloutRecord, StepMetrics, TokenRecord } from './events.ts';
import { searchStats } from './measures.ts';
import { privilegedOptions, teacherPromptIds } from './prompt-ids.ts';
import { gradientStep, warmupLr, warmupSteps, type Where } from './update.ts';

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

export interface StudentStepResult {
  metrics: StepMetrics;
  records: RolloutRecord[];
  /** The step's rollouts as its update used them (absent for a skipped step; scripts/scale-check replays them). */
  collected?: Collected;
}

/** One student step's rollouts and what they earned: n per question, EM rewards, GRPO advantages. */
export interface Collected {
  qs: TrainQuestion[];
  rollouts: Rollout[];
  answers: (string | null)[];
  rewards: number[];
  /** The question (GRPO group) of each rollout. */
  groups: number[];
  advantages: number[];
  /** The teacher's prompt of each question (none without a teacher). */
  teacherPrompts: number[][];
}

/** What the PPO epochs of a step did: mean metrics per optimizer step and the gradient norms. */
interface Updated {
  means: Record<string, number>;
  gradNorms: number[];
  optimizerSteps: number;
  /** Updates skipped for want of evidence (--empty-updates skip). */
  skipped: number;
  /** The learning rate of the last update applied (0: none was). */
  lr: number;
}

export async function studentStep(
  ctx: RunContext,
  iteration: number,
  step: number,
  set: readonly TrainQuestion[],
): Promise<StudentStepResult> {
  const c = ctx.config;
  const t0 = now();
  const qs = questionsOfStep(set, step, c.studentBatch);
  if (qs.length === 0) {
    ctx.emit({
      type: 'log',
      level: 'warn',
      message: `student step ${step} of iteration ${iteration + 1}: no training questions; skipped`,
    });
    return { metrics: { stage: 'student', iteration, step, skipped: 1 }, records: [] };
  }
  const rng = rngFor(c.seed, 'student', iteration, step);
  const progress = (label: string) =>
    ctx.emit({ type: 'progress', stage: 'student', iteration, done: step, total: c.studentSteps, label });
  progress('rollouts');
  const col = await collect(ctx, qs, rng);
  const settings = lossSettings(ctx, iteration);
  const records = await rolloutRecords(ctx, col, iteration, step, settings, rng);
  const upd = await update(ctx, col, settings, rng, { stage: 'student', iteration, step }, progress);
  const metrics = stepMetrics(col, upd, settings, { iteration, step, seconds: (now() - t0) / 1000 });
  return { metrics, records, collected: col };
}

/** n rollouts per question with the current student, their EM rewards and GRPO advantages. */
async function collect(ctx: RunContext, qs: TrainQuestion[], rng: Rng): Promise<Collected> {
  const c = ctx.config;
  const tok = ctx.base.tokenizer;
  const n = c.rolloutsPerQuestion;
  const prompts = qs.flatMap((q) =>
    Array.from({ length: n }, () => encodePrompt(tok, studentPrompt({ question: q.question }))),
  );
  const rollouts = await runRollouts(
    ctx.policies.student,
    tok,
    prompts,
    rolloutOptions(ctx, 'student', uniform(rng.fork('sampling'))),
  );
  const answers = rollouts.map(rolloutAnswer);
  const rewards = rollouts.map((_, i) => studentReward(answers[i]!, qs[Math.floor(i / n)]!.answer));
  const groups = rollouts.map((_, i) => Math.floor(i / n));
  const teacherPrompts = ctx.policies.teacher ? qs.map((q) => teacherPromptIds(ctx, q)) : [];
  return { qs, rollouts, answers, rewards, groups, advantages: groupAdvantages(rewards, groups), teacherPrompts };
}

/** The teacher's view of rollouts `idx`: the same response ids after its privileged prompt (null without a teacher). */
function teacherBatch(ctx: RunContext, col: Collected, idx: number[]): PolicyBatch | null {
  if (!ctx.policies.teacher) return null;
  const n = ctx.config.rolloutsPerQuestion;
  return policyBatch(
    idx.map((i) => teacherSequence(col.rollouts[i]!, col.teacherPrompts[Math.floor(i / n)]!)),
    ctx.base.tokenizer.padId ?? 0,
  );
}

let treePacking = true;

/**
 * Whether a question's rollouts share one prefix tree in the student's passes (default) or each has its own row,
 * for tests and benchmarks that compare the two (both give the same loss and gradients: test/unit/rl/
 * tree-loss.gpu.test.ts).
 */
export function setTreePacking(on: boolean): void {
  treePacking = on;
}

/** A pass's batch: each tree of rollouts (sequences of `seq`) in one row, or without tree packing a row each. */
function passBatch(trees: readonly number[][], seq: (i: number) => MaskedSequence, pad: number): PolicyBatch {
  return treePacking
    ? treeBatch(
        trees.map((t) => t.map(seq)),
        pad,
      )
    : policyBatch(trees.flat().map(seq), pad);
}

/** The teacher's view of the trees of rollouts: the same response trees after its privileged prompt. */
function teacherTrees(ctx: RunContext, col: Collected, trees: readonly number[][]): PolicyBatch | null {
  if (!ctx.policies.teacher) return null;
  const n = ctx.config.rolloutsPerQuestion;
  return passBatch(
    trees,
    (i) => teacherSequence(col.rollouts[i]!, col.teacherPrompts[Math.floor(i / n)]!),
    ctx.base.tokenizer.padId ?? 0,
  );
}

/**
 * The passes of a minibatch's distinct rollouts `idx`, each a list of prefix trees (a question's rollouts, or
 * part of them where the whole would not fit one pass): trees measured as a rollout is (studentMeasures), by
 * their packed length, and packed into passes as rollouts are (packMicroBatches).
 */
function studentPasses(ctx: RunContext, col: Collected, idx: readonly number[]): number[][][] {
  const c = ctx.config;
  const { rollouts, teacherPrompts } = col;
  const n = c.rolloutsPerQuestion;
  const perRollout = studentMeasures(ctx, col, idx);
  if (!treePacking) return packMicroBatches(idx, c.microBatch, perRollout).map((pass) => pass.map((i) => [i]));
  const [, policy, teacher] = perRollout;
  /** The measures of a tree of `rs` (one question's rollouts) with `nodes` packed tokens. */
  const measuresOf = (rs: readonly number[], nodes: number) => {
    const prompt = rollouts[rs[0]!]!.promptLength;
    const values = [nodes, rs.reduce((a, i) => a + policy!.of(i), 0)];
    if (teacher) values.push(nodes - prompt + teacherPrompts[Math.floor(rs[0]! / n)]!.length);
    return values;
  };
  const within = (values: number[]) =>
    c.microBatch <= 0 || values.every((v, k) => v <= c.microBatch * perRollout[k]!.perRollout);
  const units = treeUnits(
    idx,
    (i) => Math.floor(i / n),
    (i) => rollouts[i]!.ids,
    (rs, nodes) => within(measuresOf(rs, nodes)),
  );
  const unitValues = units.map((u) => measuresOf(u.rollouts, u.nodes));
  const measures: PassMeasure[] = perRollout.map((m, k) => ({ ...m, of: (u: number) => unitValues[u]![k]! }));
  return packMicroBatches(
    units.map((_, u) => u),
    c.microBatch,
    measures,
  ).map((pass) => pass.map((u) => units[u]!.rollouts));
}

/**
 * What bounds a student pass (src/selfplay/micro-batches.ts): the student's padded tokens, the teacher's (its
 * privileged prompt is longer) and the policy tokens whose logits the loss reads, each at most what a rollout of
 * the run's turn budgets may hold.
 */
function studentMeasures(ctx: RunContext, col: Collected, mb: readonly number[]): PassMeasure[] {
  const c = ctx.config;
  const { response, policy } = rolloutBudget(c);
  const { rollouts, teacherPrompts } = col;
  const n = c.rolloutsPerQuestion;
  const measures = rolloutMeasures(mb, (i) => rollouts[i]!, response, policy);
  if (ctx.policies.teacher) {
    const teacherPrompt = (i: number) => teacherPrompts[Math.floor(i / n)]!.length;
    const teacher = (i: number) => teacherPrompt(i) + rollouts[i]!.ids.length - rollouts[i]!.promptLength;
    const budget = Math.max(...mb.map(teacherPrompt)) + response;
    measures.push({ of: teacher, perRollout: perRolloutBound(mb, teacher, budget), kind: 'padded' });
  }
  return measures;
}

/** Token-level records of a few rollouts, as the loss sees them before this step's updates. */
async function rolloutRecords(
  ctx: RunContext,
  col: Collected,
  iteration: number,
  step: number,
  settings: StudentLossSettings,
  rng: Rng,
): Promise<RolloutRecord[]> {
  const n = ctx.config.rolloutsPerQuestion;
  const sampled = rng.fork('records').sample(
    col.rollouts.map((_, i) => i),
    ctx.config.rolloutSamples,
  );
  const records: RolloutRecord[] = [];
  for (const i of sampled) {
    const q = col.qs[Math.floor(i / n)]!;
    records.push({
      iteration,
      step,
      question: q.question,
      gold: q.answer,
      hops: q.hops,
      answer: col.answers[i] ?? '',
      reward: col.rewards[i]!,
      advantage: col.advantages[i]!,
      searches: col.rollouts[i]!.searches.map((s) => s.query),
      tokens: await tokenRecords(ctx, col.rollouts[i]!, teacherBatch(ctx, col, [i]), settings),
      privilegedMode: ctx.config.privileged,
      privilegedBlock: ctx.policies.teacher
        ? privilegedBlock(q.qcp, ctx.config.privileged, privilegedOptions(ctx, q))
        : null,
      questionId: q.id,
      qcp: q.qcp,
    });
  }
  return records;
}

/**
 * PPO epochs over minibatches of L_S; the teacher follows the student by EMA after every optimizer step. With
 * --empty-updates skip, a minibatch whose rollouts all have advantage 0 is no update at all: no step, no moment
 * update, no EMA.
 */
async function update(
  ctx: RunContext,
  col: Collected,
  settings: StudentLossSettings,
  rng: Rng,
  where: Where,
  progress: (label: string) => void,
): Promise<Updated> {
  const c = ctx.config;
  const { student, teacher, reference } = ctx.policies;
  const pad = ctx.base.tokenizer.padId ?? 0;
  const { rollouts, advantages } = col;
  const sums: Record<string, number> = {};
  const gradNorms: number[] = [];
  let optimizerSteps = 0;
  let skipped = 0;
  let lr = 0;
  const opt = ctx.policies.studentOpt;
  for (let epoch = 0; epoch < c.ppoEpochs; epoch++) {
    const order = rng.fork(`epoch-${epoch}`).shuffle(rollouts.map((_, i) => i));
    for (const mb of split(order, c.miniBatches)) {
      if (c.emptyUpdates === 'skip' && mb.every((i) => advantages[i] === 0)) {
        skipped++;
        continue;
      }
      const tokens = mb.reduce((s, i) => s + policyTokens(rollouts[i]!), 0);
      const micros = [];
      // Each distinct rollout is passed once, its tokens weighted by its copies (a question's rollouts are often
      // the same sequence: on the demo 40 rollouts held 23), and a question's rollouts share one prefix tree:
      // the prompt and every common beginning once (on the demo, half the tokens).
      const { distinct, copies } = distinctRollouts(col, mb);
      for (const trees of studentPasses(ctx, col, distinct)) {
        const idx = trees.flat();
        const sb = passBatch(trees, (i) => rollouts[i]!, pad);
        const tb = teacherTrees(ctx, col, trees);
        if (tb) assertAligned(sb, tb);
        const refLogp = reference && settings.beta > 0 ? await policyLogprobs(reference, sb, c.temperature) : null;
        const tokenCopies = perPolicyToken(sb, (b) => copies.get(idx[b]!)!);
        const counted = tokenCopies.reduce((n, k) => n + k, 0);
        const weight = counted / tokens;
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
                // The token-means weight each token by its mask: a token of a rollout with k copies counts k times.
                mask: counted === tokenCopies.length ? undefined : tokenCopies,
                weight,
              },
              settings,
            );
            return {
              loss: r.loss,
              metrics: {
                policy_loss: r.policyLoss,
                distill: r.distill,
                clip_fraction: r.clipFraction,
                kl_ref: r.klRef,
                entropy: r.entropy,
                ppo_kl: r.ppoKl,
              },
            };
          },
        });
      }
      progress(`update ${optimizerSteps + 1}/${c.ppoEpochs * c.miniBatches}`);
      lr = warmupLr(c.lr, opt.stepCount + 1, warmupSteps(c, 'student'));
      const upd = await gradientStep(ctx.engine, opt, micros, where, lr);
      ctx.policies.emaTeacher(c.tau);
      optimizerSteps++;
      gradNorms.push(upd.gradNorm);
      for (const [k, v] of Object.entries(upd.metrics)) sums[k] = (sums[k] ?? 0) + v;
    }
  }
  const means = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / Math.max(optimizerSteps, 1)]));
  return { means, gradNorms, optimizerSteps, skipped, lr };
}

/**
 * The rollouts of `idx` with each distinct one once (its first), and the copies of each. Rollouts of one question
 * with the same ids, mask and sampling log-probs have the same reward and advantage and give the loss the same
 * terms, so one pass with each token weighted by the copies gives the loss and the gradients of passing every copy.
 */
export function distinctRollouts(
  col: Pick<Collected, 'rollouts' | 'groups' | 'advantages'>,
  idx: readonly number[],
): { distinct: number[]; copies: Map<number, number> } {
  const first = new Map<string, number>();
  const copies = new Map<number, number>();
  for (const i of idx) {
    const r = col.rollouts[i]!;
    const key = [col.groups[i], col.advantages[i], r.ids.join(','), r.mask.join(''), r.logprobs.join(',')].join('|');
    const at = first.get(key);
    if (at === undefined) {
      first.set(key, i);
      copies.set(i, 1);
    } else copies.set(at, copies.get(at)! + 1);
  }
  return { distinct: [...first.values()], copies };
}

/** The step's metrics line (ALGORITHM.md section 7). */
function stepMetrics(
  col: Collected,
  upd: Updated,
  settings: StudentLossSettings,
  at: { iteration: number; step: number; seconds: number },
): StepMetrics {
  const { rollouts, rewards, answers, qs } = col;
  const avg = (k: string) => upd.means[k] ?? 0;
  const stats = searchStats(rollouts);
  const totalTokens = rollouts.reduce((s, r) => s + policyTokens(r), 0);
  return {
    stage: 'student',
    iteration: at.iteration,
    step: at.step,
    loss: avg('policy_loss') + settings.lambda * avg('distill'),
    policy_loss: avg('policy_loss'),
    distill: avg('distill'),
    lambda: settings.lambda,
    clip_fraction: avg('clip_fraction'),
    kl_ref: avg('kl_ref'),
    entropy: avg('entropy'),
    ppo_kl: avg('ppo_kl'),
    reward: mean(rewards),
    learnable_share: learnableShare(rewards, col.groups),
    answered_share: mean(answers.map((a) => (a === null ? 0 : 1))),
    searches_per_rollout: stats.searches,
    redundancy: stats.redundancy,
    response_tokens: totalTokens / rollouts.length,
    fallback_share: mean(qs.map((q) => (q.origin === 'world' ? 1 : 0))),
    grad_norm: mean(upd.gradNorms),
    optimizer_steps: upd.optimizerSteps,
    skipped_updates: upd.skipped,
    lr: upd.lr,
    tokens_per_s: totalTokens / Math.max(at.seconds, 1e-9),
    step_seconds: at.seconds,
  };
}

/** Per response token: student and teacher log-probs, the distillation term and the top-K list. */
async function tokenRecords(
  ctx: RunContext,
  rollout: Rollout,
  tb: PolicyBatch | null,
  s: StudentLossSettings,
): Promise<TokenRecord[]> {
  const e = ctx.engine;
  const tok = ctx.base.tokenizer;
  const { student, teacher } = ctx.policies;
  const sb = policyBatch([rollout], tok.padId ?? 0);
  const T = ctx.config.temperature;
  const out: Record<string, Tensor> = e.noGrad(() =>
    e.tidy(() => ({
      ...tokenScores(policyLogits(student, sb, T), teacher && tb ? policyLogits(teacher, tb, T) : null, sb.targets, s),
    })),
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
