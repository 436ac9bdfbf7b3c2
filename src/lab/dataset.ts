// The questions a run's examiner wrote, as a dataset for trainers that outgrow one tab. Each row is in TRL's
// conversational prompt-only form: `prompt` is the student's chat turn; `teacher_prompt` the teacher's (the
// same turn with the privileged block before the question, as piplay's teacher reads it); `privileged_context`
// the privileged block alone, the column TRL's self-distillation trainers (SDFTTrainer, SDPOTrainer) read and
// append to the prompt themselves; and `answer` (the examiner's), `hops` and the construction path, which
// GRPOTrainer hands to reward functions as keyword arguments. Rows are the examiner's valid questions (format
// reward f > 0), as self-play trains on.
import {
  privilegedBlock,
  studentPrompt,
  teacherPrompt,
  type NotesRendering,
  type PrivilegedMode,
  type Qcp,
} from '../env/prompts.ts';
import { formatInformationBody } from '../env/tags.ts';
import type { QuestionRecord } from '../selfplay/events.ts';

export interface TrlRow {
  prompt: { role: 'user'; content: string }[];
  teacher_prompt: { role: 'user'; content: string }[];
  /** The privileged block of `teacher_prompt` alone ('' when the mode has none). */
  privileged_context: string;
  answer: string;
  hops: number;
  /** The student's k correct of n rollouts when the examiner wrote it (0 < k < n: learnable). */
  k: number;
  n: number;
  iteration: number;
  /** The examiner step that wrote it, or -1 for the run's data generation. */
  step: number;
  /** The construction path: the source document, then each query and the passages it returned. */
  qcp: Qcp;
}

/** The QCP of a question record; each tool reply is rendered whole from the passages the search returned. */
export function qcpOfRecord(r: QuestionRecord): Qcp {
  const [source, ...searches] = r.qcp;
  const doc = source?.passages[0];
  if (source?.kind !== 'source' || !doc)
    throw new Error(`piplay: question '${r.question}' has no source document in its construction path`);
  return {
    source: { title: doc.title, text: doc.text },
    hops: r.hops,
    searches: searches.map((s) => ({ query: s.query ?? '', information: formatInformationBody(s.passages) })),
    question: r.question,
    answer: r.answer,
  };
}

/** One row per valid question of `records`, the teacher's prompt in privileged mode `mode`. */
export function trlRows(
  records: readonly QuestionRecord[],
  mode: PrivilegedMode,
  opts: { seed: number; partialDrop: number; notes?: NotesRendering },
): TrlRow[] {
  return records
    .filter((r) => r.formatReward > 0 && r.question.trim() !== '' && r.answer.trim() !== '')
    .map((r, i) => {
      const qcp = qcpOfRecord(r);
      const options = { seed: `${opts.seed}/dataset-${i}`, dropFraction: opts.partialDrop, notes: opts.notes };
      const teacher = teacherPrompt({ question: r.question, qcp, mode, options });
      return {
        prompt: [{ role: 'user', content: studentPrompt({ question: r.question }) }],
        teacher_prompt: [{ role: 'user', content: teacher }],
        privileged_context: privilegedBlock(qcp, mode, options),
        answer: r.answer,
        hops: r.hops,
        k: r.k,
        n: r.n,
        iteration: r.iteration,
        step: r.step,
        qcp,
      };
    });
}

/**
 * A row in verl's RL dataset fields (its examples' preprocess scripts): `prompt` as chat messages, the
 * `reward_model`'s rule-style `ground_truth` (the examiner's answer), and `extra_info` with the hops, the
 * teacher's prompt, the privileged block and where the question came from; `need_tools_kwargs`, `question` and
 * `tools_kwargs.search.create_kwargs` are what verl's search-tool recipe (its Search-R1-like multi-turn example)
 * reads to create the search tool of each rollout.
 */
export interface VerlRow {
  data_source: 'piplay';
  prompt: { role: 'user'; content: string }[];
  ability: 'search-qa';
  reward_model: { style: 'rule'; ground_truth: string };
  extra_info: {
    split: 'train';
    index: number;
    hops: number;
    teacher_prompt: { role: 'user'; content: string }[];
    privileged_context: string;
    k: number;
    n: number;
    iteration: number;
    step: number;
    question: string;
    need_tools_kwargs: true;
    tools_kwargs: { search: { create_kwargs: { ground_truth: string; question: string; data_source: 'piplay' } } };
  };
}

export function verlRow(r: TrlRow, index: number): VerlRow {
  const question = r.qcp.question;
  return {
    data_source: 'piplay',
    prompt: r.prompt,
    ability: 'search-qa',
    reward_model: { style: 'rule', ground_truth: r.answer },
    extra_info: {
      split: 'train',
      index,
      hops: r.hops,
      teacher_prompt: r.teacher_prompt,
      privileged_context: r.privileged_context,
      k: r.k,
      n: r.n,
      iteration: r.iteration,
      step: r.step,
      question,
      need_tools_kwargs: true,
      tools_kwargs: { search: { create_kwargs: { ground_truth: r.answer, question, data_source: 'piplay' } } },
    },
  };
}
