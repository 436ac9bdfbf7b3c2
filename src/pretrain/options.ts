// The options of a pretraining run (src/pretrain/run.ts) and of its data (src/pretrain/data.ts), as types only:
// the settings table (settings.ts) maps onto them, and the modules that use them read them from here.
import type { ReadFile } from '../model/files.ts';
import type { TrainSettings } from './train.ts';

/** What the documents of a world are made of; a setting left out takes its value in DATA_DEFAULTS (data.ts). */
export interface DataSettings {
  seed: number;
  /**
   * Entities (= passages) per world. Small worlds, many of them: each name occurs in only a
   * few documents, so the model cannot memorise names and has to learn to copy them from its context.
   */
  worldSize?: number;
  /** Student transcripts per world. */
  studentPerWorld?: number;
  /** Weights of the student's hop counts 1, 2, 3, ... */
  studentHops?: readonly number[];
  /** Transcripts with the teacher's privileged prompt per world. */
  teacherPerWorld?: number;
  /** Weights of their hop counts 1, 2, 3, 4 (by default those of self-play's questions). */
  teacherHops?: readonly number[];
  /** Weights of their privileged modes full, partial, gt, gt-hop. */
  teacherModes?: readonly number[];
  /**
   * Share of them where the scripted student's last quote is a wrong sentence (not a target)
   * and its answer, still right, can only come from the notes: so self-play's teacher learns to read them.
   */
  teacherSlips?: number;
  /**
   * Share of those slips where only the wrong sentence is shown and the model is trained on
   * what follows it: closing its notes and answering. Without it the whole slipped turn is context, and the
   * one decision at the last hop (answer now, or search again) is a target only in the unslipped rest.
   */
  teacherSlipStops?: number;
  /**
   * Share of those slips whose last search shows only the passages that do not state the answer,
   * so that no document holds it and the answer can come only from the notes.
   */
  teacherSlipBlind?: number;
  /**
   * Share of them whose only targets are the answer and the turn's end (transcripts.ts answerTargetsOnly):
   * the searches and quotes, which the student's prompt shares, are context, so these train the teacher's
   * reading of its notes and not the student's search.
   */
  teacherAnswerOnly?: number;
  /**
   * Share of them whose full or partial notes are compact (env/prompts.ts compactQcp: each
   * document of the path cut to the sentence that leads on), as self-play's `--notes compact` shows them.
   */
  teacherCompact?: number;
  /**
   * Share of the compact notes that open with the answer in the words of the GT notes (env/prompts.ts
   * 'answer-first'), as self-play's `--notes answer-first` shows them.
   */
  teacherAnswerFirst?: number;
  /** Examiner transcripts per world. */
  examinerPerWorld?: number;
  /** Weights of the examiner's hop counts 1, 2, 3, 4. */
  examinerHops?: readonly number[];
  /** Copying drills per world, each repeating `drillNames` names of the world. */
  drillsPerWorld?: number;
  /** Names per drill, [min, max]. */
  drillNames?: readonly [number, number];
}

export interface PretrainOptions {
  seed: number;
  steps: number;
  /** Rows per step. */
  batch: number;
  /** Tokens per row. */
  seq: number;
  lr: number;
  hidden: number;
  layers: number;
  /** Tokenizer vocabulary (default 1024). */
  vocab?: number;
  /** Worlds whose text trains the tokenizer (default 10). */
  tokenizerWorlds?: number;
  /** Share of training tokens that are passage text (default 0.3). */
  passageShare?: number;
  /** Read the loss back every this many steps (default 10). */
  logEvery?: number;
  /** The first this many of `steps` train on the synthetic copying task (copy-task.ts) instead of text (default 0). */
  copyWarmup?: number;
  /**
   * After the warm-up, every this many steps one is a copy-task step (default 0: none), so copying keeps
   * being practised while the text is learned.
   */
  copyEvery?: number;
  /**
   * Rows of the copying task, [rows, tokens] (default [16, 32]): short rows, because early in training
   * attention is spread over the whole row, and the one key that predicts the next token gets a share of
   * it that shrinks with the row's length (in PyTorch, scripts/torch-train/copy_sweep.py, 16 x 32 rows
   * learn the task faster than 8 x 64 for the same tokens; see TRAINING.md).
   */
  copyRows?: readonly [number, number];
  /**
   * Continue training this model folder (its weights and tokenizer) instead of a fresh tokenizer and
   * initialisation; hidden, layers and vocab then come from its config.json. Give another `seed` for text
   * the model has not seen.
   */
  from?: { files: ReadFile; source: string };
  data?: Partial<DataSettings>;
  train?: Partial<TrainSettings>;
}
