// The teacher probe: what the privileged context gives the teacher, and where the distillation term
// pushes the student. Run on training-side questions (world-generated, never the held-out set), for the
// student's prompt and for each privileged mode:
//   - the teacher generating on its own (greedy, from its privileged prompt): EM, searches, answered share;
//   - on the student's own sampled rollouts (what distillation trains on): at the first decision (the
//     token after the first </think>, where a response chooses between searching and answering), the
//     probability each prompt gives <search> and <answer>; the per-token top-K distillation term D overall
//     and at that decision, and at a few other K against the full-vocabulary KL (how much of the teacher's
//     signal the top-K term keeps) and on the answer tokens; and, inside the <answer> span, how much more
//     probable the teacher finds the student's answer tokens than the student does (log p_T − log p_S),
//     separately for right and wrong answers. A teacher that uses its context raises right answers and
//     lowers wrong ones; one that prefers <answer> over <search> at the first decision teaches the student
//     to answer without searching.
import { studentPrompt, type PrivilegedMode } from '../env/prompts.ts';
import { ANSWER_CLOSE, ANSWER_OPEN, SEARCH_OPEN, THINK_CLOSE } from '../env/tags.ts';
import { TOPK_KL_MAX_K } from '../gpu/ops/topk_kl.ts';
import { logitRowsAt, logitVocab, rowLogprobs, rowTopkKl, type VocabHead } from '../gpu/ops/vocab_head.ts';
import type { CausalLM } from '../model/decoder.ts';
import { policyBatch, teacherSequence, type MaskedSequence } from '../rl/batch.ts';
import { policyLogits } from '../rl/forward.ts';
import { fullKl, logSoftmaxRow } from '../rl/full-kl.ts';
import { studentReward } from '../rl/rewards.ts';
import { rolloutAnswer, runRollouts, type Rollout } from '../rl/rollout.ts';
import { encodePrompt } from '../selfplay/base-model.ts';
import { chunks, mean, rngFor, rolloutOptions, uniform, type RunContext } from '../selfplay/context.ts';
import type { TrainQuestion } from '../selfplay/environment.ts';
import { greedyRollouts } from '../selfplay/evaluate.ts';
import { teacherPromptIds } from '../selfplay/prompt-ids.ts';
import { searchStats } from '../selfplay/measures.ts';

export type ProbeContext = Pick<RunContext, 'config' | 'base' | 'env' | 'engine'>;

/** The actions a response chooses between at its first decision. */
export const DECISION_TAGS = { search: SEARCH_OPEN, answer: ANSWER_OPEN } as const;
export type DecisionTag = keyof typeof DECISION_TAGS;

export interface ProbeRow {
  /** 'student' (the student's prompt, no privileged block) or a privileged mode. */
  prompt: 'student' | PrivilegedMode;
  /** Greedy generation from this prompt (the teacher's own behaviour with its context). */
  em: number;
  searchesPerRollout: number;
  answeredShare: number;
  /** Mean probability of each action at the first decision of the student's rollouts. */
  decision: Record<DecisionTag, number>;
  /** Mean per-token top-K distillation term over all policy tokens of the student's rollouts (0 for 'student'). */
  distill: number;
  /** The same term at the first decision only. */
  distillDecision: number;
  /** Mean log p(prompt) − log p(student) over the answer tokens of right (and wrong) student answers. */
  answerGainRight: number | null;
  answerGainWrong: number | null;
  /** The mean top-K term over the tokens of the student's answer spans, and the share of all of D they hold. */
  distillAnswer: number | null;
  distillAnswerShare: number | null;
  /** The mean per-token top-K term at each K of the result's `coverageKs` (all 0 for 'student'). */
  distillAtK: number[];
  /** The mean per-token KL over the whole vocabulary, which the top-K term approximates from below. */
  klFull: number;
}

export interface ProbeResult {
  questions: number;
  /** The student's sampled rollouts the rows score: their EM and searches. */
  studentEm: number;
  studentSearches: number;
  rightAnswers: number;
  /** The K values of each row's `distillAtK`: a few around the configured K, up to the kernel's maximum. */
  coverageKs: number[];
  rows: ProbeRow[];
}

/** The K values the probe compares: 5, the configured K and the kernel's maximum, within the vocabulary. */
export function coverageKs(topK: number, vocabSize: number): number[] {
  const cap = Math.min(vocabSize, TOPK_KL_MAX_K);
  return [...new Set([5, topK, TOPK_KL_MAX_K].map((k) => Math.min(k, cap)))].sort((a, b) => a - b);
}

/** `n` world-generated training questions (held-out questions excluded), hops drawn as the config says. */
export function probeQuestions(ctx: ProbeContext, n: number, seed: number): TrainQuestion[] {
  if (!ctx.env.canMakeQuestions)
    throw new Error(
      'piplay: the teacher probe needs the world corpus (--corpus world): ' +
        'it draws questions with their construction paths from the world',
    );
  const rng = rngFor(seed, 'probe');
  const out: TrainQuestion[] = [];
  for (let tries = 0; out.length < n && tries < 8 * n; tries++) {
    const q = ctx.env.worldQuestion(rng, ctx.env.sampleHops(rng, ctx.config.hopWeights), `probe-${out.length}`);
    if (q) out.push(q);
  }
  return out;
}

/** Positions (in the policy-token order of one sequence) of the tokens inside its last <answer> span. */
export function answerSpan(targets: readonly number[], openId: number, closeId: number): number[] {
  const open = targets.lastIndexOf(openId);
  if (open < 0) return [];
  const out: number[] = [];
  for (let j = open + 1; j < targets.length; j++) {
    out.push(j); // includes </answer>: closing the answer is part of giving it
    if (targets[j] === closeId) break;
  }
  return out;
}

interface Scored {
  /** Per sequence: per policy token, log p under the scored prompt. */
  logp: number[][];
  /** Per sequence: the top-K distillation term per policy token against the student's logits. */
  kl: number[][];
  /** Per sequence: log p of each action at the first decision. */
  decision: Record<DecisionTag, number>[];
  /** Sums over all policy tokens: the top-K term at each K of `coverageKs`, and the full-vocabulary KL. */
  coverage: { byK: number[]; full: number };
}

/**
 * The first decision of a response (policy-token order): the first token after its first </think> that
 * is not white space (a tag), else its first token.
 */
export function decisionIndex(
  targets: readonly number[],
  thinkCloseId: number,
  isBlank: (id: number) => boolean,
): number {
  const j = targets.indexOf(thinkCloseId);
  if (j < 0) return 0;
  for (let k = j + 1; k < targets.length; k++) if (!isBlank(targets[k]!)) return k;
  return 0;
}

/**
 * Scores `seqs` under `model`, with the top-K term against the student's logits on `studentSeqs` and the
 * actions' log-probs at `decisions[i]` (a policy-token index of sequence i). No tensor it makes holds more
 * rows of [rows, V] logits than one storage binding does.
 */
export async function score(
  ctx: ProbeContext,
  model: CausalLM,
  student: CausalLM,
  seqs: MaskedSequence[],
  studentSeqs: MaskedSequence[],
  decisions: readonly number[],
  tagIds: Record<DecisionTag, number>,
  coverageKs: readonly number[],
): Promise<Scored> {
  const e = ctx.engine;
  const c = ctx.config;
  const pad = ctx.base.tokenizer.padId ?? 0;
  const self = model === student && seqs === studentSeqs;
  const out: Scored = { logp: [], kl: [], decision: [], coverage: { byK: coverageKs.map(() => 0), full: 0 } };
  const tags = Object.keys(tagIds) as DecisionTag[];
  for (const idx of chunks([...seqs.keys()], c.evalBatch)) {
    const tb = policyBatch(
      idx.map((i) => seqs[i]!),
      pad,
    );
    const sb = policyBatch(
      idx.map((i) => studentSeqs[i]!),
      pad,
    );
    const M = tb.targets.length;
    const t = e.noGrad(() =>
      e.tidy(() => {
        const targets = e.tensor(tb.targets, [M], 'i32');
        // LM heads over the policy rows: the row ops read their logits chunk by chunk where [M, V] would not
        // fit one storage binding (a real vocabulary), so no tensor of the probe exceeds it.
        const tl = policyLogits(model, tb, c.temperature);
        // The student scored against itself: the same logits, one forward pass.
        const sl = self ? tl : policyLogits(student, sb, c.temperature);
        const ones = e.tensor(new Float32Array(M).fill(1), [M]);
        const klAt = (k: number) =>
          rowTopkKl(sl, tl, ones, { k: Math.min(k, model.cfg.vocabSize), tail: c.tail, direction: c.kl }).perToken;
        // The configured K is one of coverageKs (both capped at the vocabulary): its term is computed once.
        const klK = self ? [] : coverageKs.map(klAt);
        const configured = coverageKs.indexOf(Math.min(c.topK, model.cfg.vocabSize));
        return { tl, sl, lp: rowLogprobs(tl, targets), kl: klK[configured] ?? klAt(c.topK), klK };
      }),
    );
    const lp = await t.lp.read();
    const kl = await t.kl.read();
    const V = logitVocab(t.tl);
    // Rows of the batch whose actions' log-probs are wanted (each sequence's first decision), by row.
    const decisionRows = new Map<number, number>();
    let m = 0;
    idx.forEach((i, b) => {
      const n = tb.owner.filter((o) => o === b).length;
      if (n > 0) decisionRows.set(m + decisions[i]!, b);
      m += n;
    });
    const decisionLps = new Map<number, Float64Array>();
    // The host reads [rows, V] logits one binding's worth of rows at a time: the full-vocabulary KL and the
    // log-softmax of the decision rows.
    const step = Math.min(t.tl.chunk, t.sl.chunk);
    for (let r0 = 0; r0 < M; r0 += step) {
      const rows = Math.min(step, M - r0);
      const chunkOf = (x: VocabHead) => e.noGrad(() => e.tidy(() => logitRowsAt(x, r0, rows)));
      const tz = chunkOf(t.tl);
      const logits = await tz.read();
      tz.dispose();
      for (const [r, b] of decisionRows)
        if (r >= r0 && r < r0 + rows) decisionLps.set(b, logSoftmaxRow(logits, r - r0, V));
      if (self) continue;
      // How much of the full-vocabulary KL the top-K term keeps (the student against itself: all 0).
      const sz = chunkOf(t.sl);
      const sLogits = await sz.read();
      sz.dispose();
      for (let r = 0; r < rows; r++) out.coverage.full += fullKl(sLogits, logits, r, V, c.kl);
    }
    for (const [j, x] of t.klK.entries()) for (const v of await x.read()) out.coverage.byK[j]! += v;
    const heads = [t.tl.h, t.tl.logits, t.sl.h, t.sl.logits].filter((x) => x !== null);
    for (const x of new Set([...heads, t.lp, t.kl, ...t.klK])) x.dispose(); // the heads' shards are the model's
    m = 0;
    idx.forEach((_, b) => {
      const n = tb.owner.filter((o) => o === b).length;
      out.logp.push(Array.from(lp.slice(m, m + n)));
      out.kl.push(Array.from(kl.slice(m, m + n)));
      const row = decisionLps.get(b) ?? null;
      const lps = tags.map((g) => (row ? row[tagIds[g]]! : -Infinity));
      out.decision.push(Object.fromEntries(tags.map((g, k) => [g, lps[k]!])) as Record<DecisionTag, number>);
      m += n;
    });
  }
  return out;
}

/**
 * Probes `teacher` (with each privileged mode's prompt) against `student` (with the student's prompt) on
 * `questions`. For the base model both are the same weights, as at the start of training.
 */
export async function probeTeacher(
  ctx: ProbeContext,
  student: CausalLM,
  teacher: CausalLM,
  questions: readonly TrainQuestion[],
  modes: readonly PrivilegedMode[],
  seed: number,
): Promise<ProbeResult> {
  const c = ctx.config;
  const tok = ctx.base.tokenizer;
  const id = (s: string) => {
    const v = tok.tokenToId(s);
    if (v === undefined)
      throw new Error(`piplay: the teacher probe needs the tag ${s} to be one token of the tokenizer`);
    return v;
  };
  const tagIds = { search: id(SEARCH_OPEN), answer: id(ANSWER_OPEN) };
  const [ansOpen, ansClose, thinkClose] = [id(ANSWER_OPEN), id(ANSWER_CLOSE), id(THINK_CLOSE)];
  const sPrompts = questions.map((q) => encodePrompt(tok, studentPrompt({ question: q.question })));
  const rollouts: Rollout[] = [];
  const rng = rngFor(seed, 'probe', 'student');
  for (const batch of chunks(sPrompts, c.evalBatch))
    rollouts.push(...(await runRollouts(student, tok, batch, rolloutOptions(ctx, 'student', uniform(rng)))));
  const right = rollouts.map((r, i) => studentReward(rolloutAnswer(r), questions[i]!.answer) === 1);
  const targets = rollouts.map((r) => r.ids.filter((_, t) => r.mask[t]));
  const isBlank = (x: number) => tok.decode([x]).trim() === '';
  const decisions = targets.map((t) => decisionIndex(t, thinkClose, isBlank));
  const ks = coverageKs(c.topK, student.cfg.vocabSize);
  const studentScore = await score(ctx, student, student, rollouts, rollouts, decisions, tagIds, ks);

  const rows: ProbeRow[] = [];
  for (const prompt of ['student', ...modes] as const) {
    const promptIds = (q: TrainQuestion) =>
      prompt === 'student'
        ? encodePrompt(tok, studentPrompt({ question: q.question }))
        : teacherPromptIds(ctx, q, prompt, seed);
    const model = prompt === 'student' ? student : teacher;
    // The prompt's own greedy behaviour.
    const own: Rollout[] = [];
    for (const batch of chunks(questions.map(promptIds), c.evalBatch))
      own.push(...(await greedyRollouts(ctx, model, batch)));
    const answers = own.map(rolloutAnswer);
    // The student's rollouts as this prompt scores them.
    const sc =
      prompt === 'student'
        ? studentScore
        : await score(
            ctx,
            model,
            student,
            rollouts.map((r, i) => teacherSequence(r, promptIds(questions[i]!))),
            rollouts,
            decisions,
            tagIds,
            ks,
          );
    const gains = { right: [] as number[], wrong: [] as number[] };
    const answerKl: number[] = [];
    rollouts.forEach((_, i) => {
      for (const j of answerSpan(targets[i]!, ansOpen, ansClose)) {
        (right[i] ? gains.right : gains.wrong).push(sc.logp[i]![j]! - studentScore.logp[i]![j]!);
        answerKl.push(sc.kl[i]![j]!);
      }
    });
    const klFlat = sc.kl.flat();
    const klSum = klFlat.reduce((a, b) => a + b, 0);
    const tokens = Math.max(1, klFlat.length);
    const stats = searchStats(own);
    rows.push({
      prompt,
      em: mean(answers.map((a, i) => studentReward(a, questions[i]!.answer))),
      searchesPerRollout: stats.searches,
      answeredShare: mean(answers.map((a) => (a === null ? 0 : 1))),
      decision: Object.fromEntries(
        (Object.keys(tagIds) as DecisionTag[]).map((g) => [g, mean(sc.decision.map((f) => Math.exp(f[g])))]),
      ) as Record<DecisionTag, number>,
      distill: mean(klFlat),
      distillDecision: mean(sc.kl.map((k, i) => k[decisions[i]!] ?? 0)),
      answerGainRight: gains.right.length ? mean(gains.right) : null,
      answerGainWrong: gains.wrong.length ? mean(gains.wrong) : null,
      distillAnswer: answerKl.length ? mean(answerKl) : null,
      distillAnswerShare: klSum > 0 ? answerKl.reduce((a, b) => a + b, 0) / klSum : null,
      distillAtK: sc.coverage.byK.map((x) => x / tokens),
      klFull: sc.coverage.full / tokens,
    });
  }
  return {
    questions: questions.length,
    studentEm: mean(right.map(Number)),
    studentSearches: searchStats(rollouts).searches,
    rightAnswers: right.filter(Boolean).length,
    coverageKs: ks,
    rows,
  };
}
