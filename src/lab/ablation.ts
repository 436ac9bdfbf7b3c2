// Live ablation of one student rollout: the teacher scores the very same response tokens after each privileged
// context (none, GT, GT + hop count, partial QCP, full QCP), with teacher forwards only (no training), so a class
// sees what each piece of privileged information changes. Per mode: the teacher's log-prob of each sampled token,
// the per-token top-K distillation term D against the student (as the student's loss computes it), the mean D and
// the share of D on the answer tokens. The prompts of the modes differ only in the privileged block inserted
// before the question line (env/prompts.ts); 'none' is the student's own prompt, so with the teacher's weights
// equal to the student's (at the start of a run, or a run without a teacher) its D is 0 on every token.
import { privilegedBlock, studentPrompt, type PrivilegedMode, type Qcp } from '../env/prompts.ts';
import { ANSWER_CLOSE, ANSWER_OPEN } from '../env/tags.ts';
import type { Tensor } from '../gpu/tensor.ts';
import type { CausalLM } from '../model/decoder.ts';
import { policyBatch, teacherSequence, type ResponseSequence } from '../rl/batch.ts';
import { policyLogits } from '../rl/forward.ts';
import { tokenScores } from '../rl/losses.ts';
import { encodePrompt } from '../selfplay/base-model.ts';
import type { RunContext } from '../selfplay/context.ts';
import { answerSpan } from './probe.ts';
import { privilegedOptions, teacherPromptIds } from '../selfplay/prompt-ids.ts';

/** The modes in the order of how much the teacher is told: nothing, the answer, + hops, part of the path, all. */
export const ABLATION_MODES: readonly PrivilegedMode[] = ['none', 'gt', 'gt-hop', 'partial', 'full'];

/** What an ablation needs of a rollout: its question (with id and path) and its response tokens. */
export interface AblationRollout {
  /** The training question's id (seeds what 'partial' removes, as in the run). */
  questionId: string;
  question: string;
  qcp: Qcp;
  /** The response after the prompt: sampled (policy 1) and tool (policy 0) tokens in order. */
  tokens: readonly { id: number; policy: 0 | 1 }[];
}

export interface ModeScore {
  mode: PrivilegedMode;
  /** The privileged block of this mode's prompt ('' for 'none'). */
  block: string;
  /** Per policy token of the response (in order): log p_teacher(sampled token) after this mode's prompt. */
  teacherLogp: number[];
  /** Per policy token: the top-K distillation term D between the student and this teacher. */
  kl: number[];
  /** Mean D over the policy tokens. */
  distill: number;
  /** The share of the summed D on the tokens of the answer span (null: no answer, or D is 0). */
  answerShare: number | null;
}

export interface AblationResult {
  /** Per policy token: log p_student(sampled token) after the student's prompt. */
  studentLogp: number[];
  /** Policy-token indices (into studentLogp / kl) inside the answer span. */
  answerTokens: number[];
  modes: ModeScore[];
}

export type AblationContext = Pick<RunContext, 'config' | 'base' | 'engine'>;

/** The rollout as a masked sequence after `prompt` (the record keeps only its response). */
function sequenceAfter(prompt: readonly number[], r: AblationRollout): ResponseSequence {
  return {
    ids: [...prompt, ...r.tokens.map((t) => t.id)],
    mask: [...new Array<number>(prompt.length).fill(0), ...r.tokens.map((t) => t.policy)],
    promptLength: prompt.length,
  };
}

async function readAll<T extends Record<string, Tensor>>(t: T): Promise<Record<keyof T, number[]>> {
  const out = {} as Record<keyof T, number[]>;
  for (const k of Object.keys(t) as (keyof T)[]) {
    out[k] = Array.from(await t[k]!.read());
    t[k]!.dispose();
  }
  return out;
}

/**
 * Scores `r` under each of `modes` with `teacher` against `student` (the student's own prompt). No tape: nothing
 * trains, and the models are unchanged.
 */
export async function ablateRollout(
  ctx: AblationContext,
  student: CausalLM,
  teacher: CausalLM,
  r: AblationRollout,
  modes: readonly PrivilegedMode[] = ABLATION_MODES,
): Promise<AblationResult> {
  if (!r.tokens.some((t) => t.policy))
    throw new Error('piplay: the ablation needs a rollout with at least one token the student sampled');
  const e = ctx.engine;
  const c = ctx.config;
  const tok = ctx.base.tokenizer;
  const pad = tok.padId ?? 0;
  const settings = { topK: Math.min(c.topK, student.cfg.vocabSize), tail: c.tail, direction: c.kl };
  const studentSeq = sequenceAfter(encodePrompt(tok, studentPrompt({ question: r.question })), r);
  const sb = policyBatch([studentSeq], pad);
  const targets = sb.targets;
  const q = { id: r.questionId, question: r.question, qcp: r.qcp };
  const id = (s: string) => tok.tokenToId(s) ?? -1;
  const answerTokens = answerSpan(Array.from(targets), id(ANSWER_OPEN), id(ANSWER_CLOSE));
  const sl = e.noGrad(() => e.tidy(() => policyLogits(student, sb, c.temperature)));
  try {
    const studentLogp = (
      await readAll(e.noGrad(() => e.tidy(() => ({ slp: tokenScores(sl, null, targets, settings).slp }))))
    ).slp;
    const out: ModeScore[] = [];
    for (const mode of modes) {
      const tb = policyBatch([teacherSequence(studentSeq, teacherPromptIds(ctx, q, mode))], pad);
      if (tb.targets.length !== targets.length)
        throw new Error(`piplay: the ablation's '${mode}' sequence lists other tokens than the student's`);
      const scored = e.noGrad(() =>
        e.tidy(() => {
          const s = tokenScores(sl, policyLogits(teacher, tb, c.temperature), targets, settings);
          return { tlp: s.tlp!, kl: s.kl! };
        }),
      );
      const h = await readAll(scored);
      const sum = h.kl.reduce((a, b) => a + b, 0);
      const onAnswer = answerTokens.reduce((a, j) => a + h.kl[j]!, 0);
      out.push({
        mode,
        block: privilegedBlock(r.qcp, mode, privilegedOptions(ctx, q)),
        teacherLogp: h.tlp,
        kl: h.kl,
        distill: sum / h.kl.length,
        answerShare: answerTokens.length && sum > 0 ? onAnswer / sum : null,
      });
    }
    return { studentLogp, answerTokens, modes: out };
  } finally {
    // The head's hidden rows and any logits it made are the ablation's; its shards are the model's weights.
    sl.h.dispose();
    sl.logits?.dispose();
  }
}
