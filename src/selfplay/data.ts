// Data generation (ALGORITHM.md section 1 (b)): the updated examiner writes the student's training set;
// questions whose format is valid (f > 0) are kept. A model that rarely writes a valid question (a tiny or
// random base) may leave the set short: the project's fallback (`fallbackQuestions: 'world'`) tops it up
// with world-generated questions and says so in the metrics (fallback_share) and the log. With
// `studentQuestions: 'world'` (an ablation) the world generator writes all of it (fallback_share 1).
import { mean, now, rngFor, uniform, type RunContext } from './context.ts';
import type { TrainQuestion } from './environment.ts';
import type { QuestionRecord, StepMetrics } from './events.ts';
import { qcpSteps, rightShareMetric, writeQuestions, type WrittenQuestion } from './examiner.ts';

export interface GeneratedData {
  questions: TrainQuestion[];
  metrics: StepMetrics;
  records: QuestionRecord[];
}

export function trainingSetSize(ctx: RunContext): number {
  const c = ctx.config;
  return c.trainQuestions > 0 ? c.trainQuestions : c.studentSteps * c.studentBatch;
}

export async function generateTrainingSet(ctx: RunContext, iteration: number): Promise<GeneratedData> {
  const c = ctx.config;
  const t0 = now();
  const target = trainingSetSize(ctx);
  const rng = rngFor(c.seed, 'generate', iteration);
  const out: TrainQuestion[] = [];
  const records: QuestionRecord[] = [];
  // --student-questions world: the world generator writes the whole set (an oracle examiner), no rollouts.
  const oracle = c.studentQuestions === 'world';
  const maxBatches = oracle ? 0 : Math.ceil(target / c.examinerBatch) * c.generationRounds;
  /** One per source document: the best-formatted of its --examiner-samples rollouts. */
  const written: WrittenQuestion[] = [];
  let rollouts = 0;
  for (let b = 0; b < maxBatches && out.length < target; b++) {
    ctx.emit({
      type: 'progress',
      stage: 'generate',
      iteration,
      done: out.length,
      total: target,
      label: `batch ${b + 1}`,
    });
    const pick = rng.fork(`sources-${b}`);
    const items = Array.from({ length: c.examinerBatch }, () => ({
      source: ctx.env.sampleSource(pick),
      hops: ctx.env.sampleHops(pick, c.hopWeights),
    }));
    const samples = c.examinerSamples;
    const tries = await writeQuestions(
      ctx,
      ctx.policies.examiner,
      items.flatMap((it) => Array.from({ length: samples }, () => it)),
      uniform(rng.fork(`sampling-${b}`)),
    );
    rollouts += tries.length;
    const batch = items.map((_, i) => bestFormatted(tries.slice(i * samples, (i + 1) * samples)));
    written.push(...batch);
    for (const w of batch) {
      if (w.format.f <= 0 || out.length >= target) continue;
      out.push({
        id: `it${iteration}-q${out.length}`,
        question: w.question,
        answer: w.answer,
        hops: w.hops,
        qcp: w.qcp,
        origin: 'examiner',
      });
      records.push({
        iteration,
        step: -1,
        question: w.question,
        answer: w.answer,
        hops: w.hops,
        qcp: qcpSteps(w),
        k: 0,
        n: 0,
        formatReward: w.format.f,
        difficultyReward: 0,
        examinerReward: 0.5 * w.format.f,
        advantage: 0,
      });
    }
  }
  const fromExaminer = out.length;
  if (out.length < target && (oracle || c.fallbackQuestions === 'world') && ctx.env.canMakeQuestions) {
    const pick = rng.fork('fallback');
    for (let tries = 0; out.length < target && tries < 4 * target; tries++) {
      const q = ctx.env.worldQuestion(pick, ctx.env.sampleHops(pick, c.hopWeights), `it${iteration}-w${out.length}`);
      if (q) out.push(q);
    }
    if (!oracle) {
      ctx.emit({
        type: 'log',
        level: 'warn',
        message:
          `iteration ${iteration + 1}: the examiner wrote ${fromExaminer} valid questions of ${target} ` +
          `needed; ${out.length - fromExaminer} world-generated questions fill the rest`,
      });
    }
  } else if (out.length < target) {
    ctx.emit({
      type: 'log',
      level: 'warn',
      message: `iteration ${iteration + 1}: the examiner wrote ${out.length} valid questions of ${target} wanted`,
    });
  }
  ctx.emit({ type: 'progress', stage: 'generate', iteration, done: out.length, total: target });
  const seconds = (now() - t0) / 1000;
  const formats = written.map((w) => w.format.f);
  const metrics: StepMetrics = {
    stage: 'generate',
    iteration,
    step: 0,
    questions: out.length,
    examiner_rollouts: rollouts,
    valid_share: written.length ? formats.filter((f) => f > 0).length / written.length : 0,
    ...rightShareMetric(ctx, written),
    format_reward: mean(formats),
    fallback_share: out.length ? (out.length - fromExaminer) / out.length : 0,
    mean_hops: mean(out.map((q) => q.hops)),
    step_seconds: seconds,
  };
  return { questions: out, metrics, records };
}

/** The rollout with the highest format reward (the first of equals): Dr. Zero's pick among a document's samples. */
export function bestFormatted(tries: readonly WrittenQuestion[]): WrittenQuestion {
  let best = tries[0]!;
  for (const t of tries) if (t.format.f > best.format.f) best = t;
  return best;
}

/** The questions of student step `step`: consecutive, wrapping around a short set. */
export function questionsOfStep(set: readonly TrainQuestion[], step: number, batch: number): TrainQuestion[] {
  if (set.length === 0) return [];
  return Array.from({ length: batch }, (_, j) => set[(step * batch + j) % set.length]!);
}
