// What a π-Play run tells whoever listens (the command line, the browser UI, the run folder). Plain data
// only (structured-clone safe), so events cross from the worker to the page unchanged.

import type { PrivilegedMode, Qcp } from '../env/prompts.ts';

export type Stage = 'eval' | 'examiner' | 'generate' | 'student' | 'checkpoint' | 'pretrain' | 'load';

/** One entry of a construction path: the source document, then each search with what it returned. */
export interface QcpStep {
  kind: 'source' | 'search';
  /** The query (for 'search'). */
  query?: string;
  /** Passages shown at this step: the source document, or the top-3 results of the query. */
  passages: { id: string; title: string; text: string }[];
}

export interface QuestionRecord {
  iteration: number;
  step: number;
  question: string;
  answer: string;
  hops: number;
  qcp: QcpStep[];
  /** Student rollouts that answered correctly (k) out of n. */
  k: number;
  n: number;
  formatReward: number;
  difficultyReward: number;
  examinerReward: number;
  /** HRPO advantage the examiner's rollout got. */
  advantage: number;
}

/** One token of a rollout, for the transcript views and the teacher-vs-student heatmap. */
export interface TokenRecord {
  id: number;
  /** Display text of the token. */
  text: string;
  /** 1 if the student sampled it (gets loss), 0 for prompt and tool tokens. */
  policy: 0 | 1;
  /** log p_student(token) (policy tokens only, else 0). */
  studentLogp: number;
  /** log p_teacher(token) with the privileged context (policy tokens only, else 0). */
  teacherLogp: number;
  /** The per-token top-K distillation term (policy tokens only, else 0). */
  kl: number;
  /** The student's top-K next-token list and the teacher's log-probs of the same tokens (for hover). */
  topk?: { ids: number[]; texts: string[]; studentLogp: number[]; teacherLogp: number[] };
}

export interface RolloutRecord {
  iteration: number;
  step: number;
  question: string;
  gold: string;
  hops: number;
  /** The student's final answer ('' if none). */
  answer: string;
  reward: number;
  advantage: number;
  searches: string[];
  /** The response part (after the prompt): sampled and tool tokens in order. */
  tokens: TokenRecord[];
  /** The run's --privileged mode. Absent in records made before it was recorded. */
  privilegedMode?: PrivilegedMode;
  /**
   * The privileged block of the teacher's prompt (env/prompts.ts `privilegedBlock`, ending in "\n"): the
   * teacher saw the student's prompt with this inserted before the question line. null without a teacher
   * (--privileged none: Dr. Zero). Absent in records made before it was recorded.
   */
  privilegedBlock?: string | null;
  /**
   * The training question's id and construction path, from which the teacher's prompt of every privileged mode
   * is rebuilt (the ablation of this rollout). Absent in records made before they were recorded.
   */
  questionId?: string;
  qcp?: Qcp;
}

export interface StepMetrics {
  stage: Stage;
  iteration: number;
  step: number;
  /** Losses and rewards of this step; names are stable (they become chart series and JSONL keys). */
  [metric: string]: number | string;
}

export interface EvalMetrics {
  iteration: number;
  /** Held-out exact match overall and per hop count ("1".."4"). */
  em: number;
  emByHop: Record<string, number>;
  searchesPerRollout: number;
  redundancy: number;
  n: number;
  /** Each question's outcome, in the held-out set's order (absent in logs of older versions). */
  outcomes?: EvalOutcome[];
}

/** One held-out question's greedy answer; `id` names the same question in every run. */
export interface EvalOutcome {
  id: string;
  hops: number;
  correct: boolean;
  answer: string;
  /** Searches of the greedy rollout, and how many of its queries repeat an earlier one (absent in older logs). */
  searches?: number;
  repeats?: number;
}

export type RunEvent =
  | {
      type: 'progress';
      stage: Stage;
      iteration: number;
      done: number;
      total: number;
      etaSeconds?: number;
      /** After a unit: the whole run's seconds left, from the units measured so far (run-estimate.ts). */
      runEtaSeconds?: number;
      /** After a unit: the measured seconds per unit of work, for estimating later runs on this GPU. */
      secondsPerWork?: number;
      label?: string;
    }
  | { type: 'metrics'; metrics: StepMetrics }
  | { type: 'question'; record: QuestionRecord }
  | { type: 'rollout'; record: RolloutRecord }
  | { type: 'eval'; metrics: EvalMetrics }
  | { type: 'checkpoint'; name: string; iteration: number; step: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string };

export type RunListener = (event: RunEvent) => void;
