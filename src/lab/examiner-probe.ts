// The examiner probe: can the examiner write questions the student can learn from? It writes questions
// from sampled source documents of the world, as in self-play's examiner stage (sampled, the config's hop
// weights), and each is checked three ways: its format (f > 0: what self-play keeps), whether it is true
// of the world (src/env/world/audit.ts: it reads as a chain of the world's relations and the examiner's
// answer is the chain's answer), and how often n of the student's sampled rollouts answer it (0 < k < n:
// where the difficulty reward and GRPO get a signal). Without true questions the student's reward is ~0
// and self-play has nothing to teach but the teacher's distillation term.
import { QUESTION_VERDICTS, type QuestionVerdict } from '../env/index.ts';
import type { CausalLM } from '../model/decoder.ts';
import { solvable } from '../rl/rewards.ts';
import { mean, rngFor, uniform, chunks } from '../selfplay/context.ts';
import { solveCounts, writeQuestions, type WrittenQuestion } from '../selfplay/examiner.ts';
import type { ProbeContext } from './probe.ts';

export interface ExaminerProbeRow {
  /** The hop count asked for, or 'all'. */
  hops: number | 'all';
  questions: number;
  /** Share with a valid format (f > 0). */
  valid: number;
  /** Share of each verdict, over all questions written. */
  verdicts: Record<QuestionVerdict, number>;
  /** Share of all questions written that some but not all student rollouts answered. */
  solvable: number;
  /** The student's mean k/n on the valid questions (null without any). */
  studentAccuracy: number | null;
}

export interface ExaminerProbeExample {
  hops: number;
  question: string;
  answer: string;
  verdict: QuestionVerdict;
  /** Student rollouts right, of n (n = 0: not valid, not put to the student). */
  k: number;
  n: number;
}

export interface ExaminerProbeResult {
  rows: ExaminerProbeRow[];
  examples: ExaminerProbeExample[];
}

/** `count` questions by `examiner` on sampled sources of the world, each judged as above; `student` answers them. */
export async function probeExaminer(
  ctx: ProbeContext,
  examiner: CausalLM,
  student: CausalLM,
  count: number,
  seed: number,
): Promise<ExaminerProbeResult> {
  if (!ctx.env.canMakeQuestions)
    throw new Error(
      'piplay: the examiner probe needs the world corpus (--corpus world): it checks each question against the world',
    );
  const c = ctx.config;
  const rng = rngFor(seed, 'probe', 'examiner');
  const pick = rng.fork('sources');
  const items = Array.from({ length: count }, () => ({
    source: ctx.env.sampleSource(pick),
    hops: ctx.env.sampleHops(pick, c.hopWeights),
  }));
  const written: WrittenQuestion[] = [];
  const sampling = uniform(rng.fork('examiner-sampling'));
  for (const batch of chunks(items, c.evalBatch))
    written.push(...(await writeQuestions(ctx, examiner, batch, sampling)));
  const n = c.rolloutsPerQuestion;
  const valid = written.flatMap((w, i) => (w.format.f > 0 ? [i] : []));
  const ks = new Map<number, number>();
  const solving = uniform(rng.fork('student-sampling'));
  for (const idx of chunks(valid, Math.max(1, Math.floor(c.evalBatch / n)))) {
    const got = await solveCounts(
      ctx,
      student,
      idx.map((i) => written[i]!),
      solving,
    );
    idx.forEach((i, j) => ks.set(i, got[j]!));
  }
  const examples: ExaminerProbeExample[] = written.map((w, i) => ({
    hops: w.hops,
    question: w.question,
    answer: w.answer,
    verdict: ctx.env.auditQuestion(w.question, w.answer)!,
    k: ks.get(i) ?? 0,
    n: ks.has(i) ? n : 0,
  }));
  const row = (hops: number | 'all', of: number[]): ExaminerProbeRow => {
    const share = (test: (i: number) => boolean) => (of.length ? of.filter(test).length / of.length : 0);
    const answered = of.filter((i) => ks.has(i));
    return {
      hops,
      questions: of.length,
      valid: share((i) => written[i]!.format.f > 0),
      verdicts: Object.fromEntries(
        QUESTION_VERDICTS.map((v) => [v, share((i) => examples[i]!.verdict === v)]),
      ) as Record<QuestionVerdict, number>,
      solvable: share((i) => ks.has(i) && solvable(ks.get(i)!, n)),
      studentAccuracy: answered.length ? mean(answered.map((i) => ks.get(i)! / n)) : null,
    };
  };
  const all = written.map((_, i) => i);
  const hopCounts = [...new Set(written.map((w) => w.hops))].sort((a, b) => a - b);
  return {
    rows: [
      ...hopCounts.map((h) =>
        row(
          h,
          all.filter((i) => written[i]!.hops === h),
        ),
      ),
      row('all', all),
    ],
    examples,
  };
}
