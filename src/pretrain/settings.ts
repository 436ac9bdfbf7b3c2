// The settings of a pretraining run, for the page's form and the flags of `npm run pretrain` alike, each
// declared once in PRETRAIN_FIELDS: its default, label, help, flag and checks (the settings type and the
// defaults are derived from it; src/cli/pretrain-args.ts builds the CLI's usage and parsing from it). Plain data and no GPU code, so the page can check a form before the worker is asked.
import { CONTROL_TOKENS, TOOL_TAGS } from '../model/tokenizer-train.ts';
import type { PretrainOptions } from './run.ts';

/** The smallest tokenizer: the 256 bytes plus the control tokens and tool tags. */
export const MIN_VOCAB = 256 + CONTROL_TOKENS.length + TOOL_TAGS.length;

interface FieldSpec {
  label: string;
  /** The value when none is given. */
  default: number;
  help: string;
  integer: boolean;
  min: number;
  /** Exclusive upper bound. */
  below?: number;
  /** Inclusive upper bound. */
  max?: number;
  /** Ignored when training continues an existing model (its config.json decides). */
  shape?: boolean;
  /** Shown under "advanced". */
  advanced?: boolean;
  /** Its `npm run pretrain` flag ('size' for hidden and layers: --size HxL); none for a setting only the page offers. */
  flag?: string;
  /** The CLI's help text, where the page's `help` (shown under the field's label) is too terse on its own. */
  cliHelp?: string;
}

/** The table's keys are the settings' names; each entry is one setting's whole declaration. */
const table = <K extends string>(fields: Record<K, FieldSpec>): Record<K, FieldSpec> => fields;

export const PRETRAIN_FIELDS = table({
  steps: { label: 'steps', default: 1500, help: 'optimizer steps', integer: true, min: 1, flag: 'steps' },
  batch: { label: 'batch', default: 4, help: 'rows per step', integer: true, min: 1, flag: 'batch' },
  seq: {
    label: 'seq',
    default: 512,
    help: 'tokens per row (a transcript must fit in one)',
    integer: true,
    min: 16,
    flag: 'seq',
  },
  lr: {
    label: 'lr',
    default: 2e-3,
    help: 'peak learning rate; warm-up, then cosine decay',
    integer: false,
    min: 0,
    flag: 'lr',
  },
  hidden: {
    label: 'hidden',
    default: 96,
    help: 'width, a multiple of 8 (4 heads, 2 kv heads)',
    integer: true,
    min: 8,
    shape: true,
    flag: 'size',
  },
  layers: { label: 'layers', default: 3, help: 'decoder layers', integer: true, min: 1, shape: true, flag: 'size' },
  vocab: {
    label: 'vocab',
    default: 1024,
    help: `tokenizer size, at least ${MIN_VOCAB} (bytes + special tokens)`,
    integer: true,
    min: MIN_VOCAB,
    shape: true,
    flag: 'vocab',
  },
  seed: {
    label: 'seed',
    default: 0,
    help: 'of the text, the tokenizer and the weights',
    integer: true,
    min: 0,
    flag: 'seed',
    cliHelp: 'seed of the text, the tokenizer and the weights',
  },
  passageShare: {
    label: 'passage share',
    default: 0.3,
    help: 'share of passage text; the rest are transcripts',
    integer: false,
    min: 0,
    below: 1,
    flag: 'passage-share',
  },
  /** Copying drills per generated world (data.drillsPerWorld). */
  drills: {
    label: 'drills',
    default: 0,
    help: 'copying drills (names, then again) per world',
    integer: true,
    min: 0,
    flag: 'drills',
  },
  /** Student transcripts per generated world (data.studentPerWorld). */
  student: {
    label: 'student transcripts',
    default: 40,
    help: 'per world: a scripted student answering a question with the search tool',
    integer: true,
    min: 0,
    advanced: true,
    flag: 'student',
  },
  /** Share of the student transcripts with 2 or 3 hops, 4:1 (data.studentHops). */
  studentMultiHop: {
    label: 'student multi-hop share',
    default: 0.1,
    help: 'share of student transcripts with 2 or 3 hops (4:1); the rest are 1-hop',
    integer: false,
    min: 0,
    below: 1,
    advanced: true,
    flag: 'student-multi-hop',
  },
  /** Transcripts with the teacher's privileged prompt per generated world (data.teacherPerWorld). */
  teacher: {
    label: 'teacher transcripts',
    default: 0,
    help: "per world: the scripted student given the teacher's privileged prompt (most need seq 1024)",
    integer: true,
    min: 0,
    flag: 'teacher',
    cliHelp:
      "transcripts per world of the scripted student given the teacher's privileged prompt (its question's construction path, part of it, or the answer), so self-play's teacher can read its notes; most need rows of 1024 tokens (--seq 1024)",
  },
  /** Share of the teacher transcripts with 2 to 4 hops, 3:2:1 (data.teacherHops; 0.6 is 4:3:2:1). */
  teacherMultiHop: {
    label: 'teacher multi-hop share',
    default: 0.6,
    help: 'share of teacher transcripts with 2, 3 or 4 hops (3:2:1); the rest are 1-hop',
    integer: false,
    min: 0,
    max: 1,
    advanced: true,
    flag: 'teacher-multi-hop',
  },
  /** Share of the teacher transcripts whose last quote is a slip (data.teacherSlips). */
  teacherSlips: {
    label: 'teacher slips',
    default: 0,
    help: 'share of teacher transcripts whose last quote is wrong; the answer comes from the notes',
    integer: false,
    min: 0,
    below: 1,
    advanced: true,
    flag: 'teacher-slips',
    cliHelp:
      "share (0 up to 1) of the teacher transcripts where the scripted student's last quote is a wrong sentence (shown, not a target) and its right answer can only come from the privileged notes, so self-play's teacher learns to read them",
  },
  /** Share of the teacher transcripts with compact notes (data.teacherCompact). */
  teacherCompact: {
    label: 'teacher compact notes',
    default: 0,
    help: "share of teacher transcripts whose notes are compact, as self-play's --notes compact shows them",
    integer: false,
    min: 0,
    max: 1,
    advanced: true,
    flag: 'teacher-compact',
    cliHelp:
      "share (0 to 1) of the teacher transcripts whose full or partial notes are compact: each document of the question's path cut to the sentence that leads to the next step, as self-play's --notes compact shows them",
  },
  /** Examiner transcripts per generated world (data.examinerPerWorld). */
  examiner: {
    label: 'examiner transcripts',
    default: 20,
    help: 'per world: a scripted examiner writing a 1- to 4-hop question from a source passage',
    integer: true,
    min: 0,
    flag: 'examiner',
    cliHelp:
      'transcripts per world of a scripted examiner that quotes the facts it follows and writes a 1- to 4-hop question from a source passage (hops 4:3:2:1)',
  },
  copyWarmup: {
    label: 'copy warm-up',
    default: 0,
    help: 'first steps on a synthetic copying task (random spans, repeated)',
    integer: true,
    min: 0,
    flag: 'copy-warmup',
    cliHelp: 'the first N of --steps train on a synthetic copying task (random spans, repeated)',
  },
  copyEvery: {
    label: 'copy every',
    default: 0,
    help: 'after the warm-up, every this many steps one is a copying step (0: none)',
    integer: true,
    min: 0,
    flag: 'copy-every',
  },
  /** Entities per generated world (data.worldSize). */
  worldSize: {
    label: 'world size',
    default: 80,
    help: 'entities per generated world',
    integer: true,
    min: 20,
    advanced: true,
  },
  tokenizerWorlds: {
    label: 'tokenizer worlds',
    default: 10,
    help: 'worlds whose text trains the tokenizer',
    integer: true,
    min: 1,
    advanced: true,
    shape: true,
  },
  logEvery: {
    label: 'log every',
    default: 10,
    help: 'read the loss back every this many steps',
    integer: true,
    min: 1,
    advanced: true,
    flag: 'log-every',
  },
});

export type PretrainKey = keyof typeof PRETRAIN_FIELDS;
/** A run's settings as the page's form holds them: every option of the recipe that is a number, all given. */
export type PretrainSettings = Record<PretrainKey, number>;

export const PRETRAIN_DEFAULTS: Readonly<PretrainSettings> = Object.fromEntries(
  (Object.keys(PRETRAIN_FIELDS) as PretrainKey[]).map((k) => [k, PRETRAIN_FIELDS[k].default]),
) as PretrainSettings;

const stepsOk = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= PRETRAIN_FIELDS.steps.min;

/** Problems per field (empty when the settings can be used). */
export function pretrainProblems(s: Partial<Record<PretrainKey, unknown>>): Map<PretrainKey, string> {
  const out = new Map<PretrainKey, string>();
  for (const [key, f] of Object.entries(PRETRAIN_FIELDS) as [PretrainKey, FieldSpec][]) {
    const v = s[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) out.set(key, `${f.label} must be a number`);
    else if (f.integer && !Number.isInteger(v)) out.set(key, `${f.label} must be a whole number`);
    else if (key === 'lr' ? v <= 0 : v < f.min)
      out.set(key, `${f.label} must be ${key === 'lr' ? 'above 0' : `at least ${f.min}`}`);
    else if (f.below !== undefined && v >= f.below) out.set(key, `${f.label} must be below ${f.below}`);
    else if (f.max !== undefined && v > f.max) out.set(key, `${f.label} must be at most ${f.max}`);
    // Against the steps only when they are usable themselves (else the steps' own message says what is wrong).
    else if (key === 'copyWarmup' && stepsOk(s.steps) && v > s.steps)
      out.set(key, `copy warm-up must be at most the steps (${s.steps})`);
    else if (key === 'hidden' && v % 8 !== 0) out.set(key, 'hidden must be a multiple of 8 (4 heads of an even width)');
  }
  return out;
}

/** The recipe's options for settings from the page's form or the command line (a model to continue aside). */
export function settingsToOptions(s: PretrainSettings): PretrainOptions {
  return {
    seed: s.seed,
    steps: s.steps,
    batch: s.batch,
    seq: s.seq,
    lr: s.lr,
    hidden: s.hidden,
    layers: s.layers,
    vocab: s.vocab,
    tokenizerWorlds: s.tokenizerWorlds,
    passageShare: s.passageShare,
    logEvery: s.logEvery,
    copyWarmup: s.copyWarmup,
    copyEvery: s.copyEvery,
    data: {
      worldSize: s.worldSize,
      studentPerWorld: s.student,
      studentHops: [1 - s.studentMultiHop, (4 * s.studentMultiHop) / 5, s.studentMultiHop / 5],
      drillsPerWorld: s.drills,
      teacherPerWorld: s.teacher,
      teacherHops: [1 - s.teacherMultiHop, s.teacherMultiHop / 2, s.teacherMultiHop / 3, s.teacherMultiHop / 6],
      teacherSlips: s.teacherSlips,
      teacherCompact: s.teacherCompact,
      examinerPerWorld: s.examiner,
    },
  };
}
