// The settings of a pretraining run, for the page's form and the flags of `npm run pretrain` alike, each
// declared once in PRETRAIN_FIELDS in the project's settings schema (src/settings/schema.ts, as self-play's):
// its kind and bounds, default, label, group, help, flag, checks and where its value goes in
// pretrain()'s options (the settings type, the defaults, the checks and settingsToOptions are derived from it;
// src/cli/pretrain-args.ts builds the CLI's usage and parsing from it). Plain data and no GPU code, so the page
// can check a form before the worker is asked.
import { CONTROL_TOKENS, TOOL_TAGS } from '../model/tokenizer-train.ts';
import { describeKind, int, kindAccepts, num, type Setting } from '../settings/schema.ts';
import type { DataSettings, PretrainOptions } from './options.ts';

/** The smallest tokenizer: the 256 bytes plus the control tokens and tool tags. */
export const MIN_VOCAB = 256 + CONTROL_TOKENS.length + TOOL_TAGS.length;

/** The most drills or transcripts of one kind per world (a world of the default size has 80 entities). */
const MAX_PER_WORLD = 100_000;

/** The keys of T whose values are numbers. */
type NumberKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends number ? K : never }[keyof T];

/**
 * Where a setting's value goes in pretrain()'s options: one of its numbers, or `data.` and one of its data
 * settings; `as` turns the number into an option that is not a number itself.
 */
type Destination =
  | { into: NumberKeys<PretrainOptions> | `data.${NumberKeys<DataSettings>}`; as?: never }
  | { into: `data.${keyof DataSettings}`; as: (v: number) => readonly number[] };

/**
 * One pretraining setting: a setting of the project's schema (src/settings/schema.ts: kind and bounds, help, the
 * default as its `paper` value, the page's label and group) with where its value goes, a check against other
 * settings, and what only pretraining has.
 */
type FieldSpec = Destination &
  Omit<Setting<number>, 'flag' | 'label'> & {
    label: string;
    /**
     * A check beyond the bounds: the problem, or undefined. `valid` holds the settings that passed their own
     * bounds (a setting checked against another is not, while the other's own message says what is wrong).
     */
    check?: (v: number, valid: Readonly<Record<string, number>>) => string | undefined;
    /** Ignored when training continues an existing model (its config.json decides). */
    shape?: boolean;
    /** Its `npm run pretrain` flag ('size' for hidden and layers: --size HxL); none for a setting only the page has. */
    flag?: string;
    /** The CLI's help text, where the page's `help` (shown under the field's label) is too terse on its own. */
    cliHelp?: string;
  };

/** The table's keys are the settings' names; each entry is one setting's whole declaration. */
const table = <K extends string>(fields: Record<K, FieldSpec>): Record<K, FieldSpec> => fields;

export const PRETRAIN_FIELDS = table({
  steps: {
    into: 'steps',
    kind: int(1, 10_000_000),
    label: 'steps',
    group: 'main',
    paper: 1500,
    help: 'optimizer steps',
    flag: 'steps',
  },
  batch: {
    into: 'batch',
    kind: int(1, 65_536),
    label: 'batch',
    group: 'main',
    paper: 4,
    help: 'rows per step',
    flag: 'batch',
  },
  seq: {
    into: 'seq',
    kind: int(16, 1 << 20),
    label: 'seq',
    group: 'main',
    paper: 512,
    help: 'tokens per row (a transcript must fit in one)',
    flag: 'seq',
  },
  lr: {
    into: 'lr',
    kind: num(0, undefined, true),
    label: 'lr',
    group: 'main',
    paper: 2e-3,
    help: 'peak learning rate; warm-up, then cosine decay',
    flag: 'lr',
  },
  hidden: {
    into: 'hidden',
    kind: int(8, 65_536),
    label: 'hidden',
    group: 'main',
    paper: 96,
    help: 'width, a multiple of 8 (4 heads, 2 kv heads)',
    check: (v) => (v % 8 !== 0 ? 'hidden must be a multiple of 8 (4 heads of an even width)' : undefined),
    shape: true,
    flag: 'size',
  },
  layers: {
    into: 'layers',
    kind: int(1, 256),
    label: 'layers',
    group: 'main',
    paper: 3,
    help: 'decoder layers',
    shape: true,
    flag: 'size',
  },
  vocab: {
    into: 'vocab',
    kind: int(MIN_VOCAB, 1 << 20),
    label: 'vocab',
    group: 'main',
    paper: 1024,
    help: `tokenizer size, at least ${MIN_VOCAB} (bytes + special tokens)`,
    shape: true,
    flag: 'vocab',
  },
  seed: {
    into: 'seed',
    kind: int(0),
    label: 'seed',
    group: 'main',
    paper: 0,
    help: 'of the text, the tokenizer and the weights',
    flag: 'seed',
    cliHelp: 'seed of the text, the tokenizer and the weights',
  },
  passageShare: {
    into: 'passageShare',
    kind: num(0, undefined, false, 1),
    label: 'passage share',
    group: 'main',
    paper: 0.3,
    help: 'share of passage text; the rest are transcripts',
    flag: 'passage-share',
  },
  drills: {
    into: 'data.drillsPerWorld',
    kind: int(0, MAX_PER_WORLD),
    label: 'drills',
    group: 'main',
    paper: 0,
    help: 'copying drills (names, then again) per world',
    flag: 'drills',
  },
  student: {
    into: 'data.studentPerWorld',
    kind: int(0, MAX_PER_WORLD),
    label: 'student transcripts',
    paper: 40,
    help: 'per world: a scripted student answering a question with the search tool',
    flag: 'student',
  },
  studentMultiHop: {
    into: 'data.studentHops',
    kind: num(0, undefined, false, 1),
    // The weights of 1, 2 and 3 hops.
    as: (share) => [1 - share, (4 * share) / 5, share / 5],
    label: 'student multi-hop share',
    paper: 0.1,
    help: 'share of student transcripts with 2 or 3 hops (4:1); the rest are 1-hop',
    flag: 'student-multi-hop',
  },
  teacher: {
    into: 'data.teacherPerWorld',
    kind: int(0, MAX_PER_WORLD),
    label: 'teacher transcripts',
    group: 'main',
    paper: 0,
    help: "per world: the scripted student given the teacher's privileged prompt (most need seq 1024)",
    flag: 'teacher',
    cliHelp:
      "transcripts per world of the scripted student given the teacher's privileged prompt (its question's " +
      "construction path, part of it, or the answer), so self-play's teacher can read its notes; most need rows " +
      'of 1024 tokens (--seq 1024)',
  },
  /** Share of the teacher transcripts with 2 to 4 hops, 3:2:1 (0.6 is 4:3:2:1). */
  teacherMultiHop: {
    into: 'data.teacherHops',
    kind: num(0, 1),
    // The weights of 1, 2, 3 and 4 hops.
    as: (share) => [1 - share, share / 2, share / 3, share / 6],
    label: 'teacher multi-hop share',
    paper: 0.6,
    help: 'share of teacher transcripts with 2, 3 or 4 hops (3:2:1); the rest are 1-hop',
    flag: 'teacher-multi-hop',
  },
  teacherSlips: {
    into: 'data.teacherSlips',
    kind: num(0, undefined, false, 1),
    label: 'teacher slips',
    paper: 0,
    help: 'share of teacher transcripts whose last quote is wrong; the answer comes from the notes',
    flag: 'teacher-slips',
    cliHelp:
      "share (0 up to 1) of the teacher transcripts where the scripted student's last quote is a wrong sentence " +
      "(shown, not a target) and its right answer can only come from the privileged notes, so self-play's " +
      'teacher learns to read them',
  },
  teacherSlipStops: {
    into: 'data.teacherSlipStops',
    kind: num(0, 1),
    label: 'teacher slip stops',
    paper: 0,
    help: 'share of slips where closing the notes and answering after the wrong quote are targets',
    flag: 'teacher-slip-stops',
    cliHelp:
      'share (0 to 1) of the teacher slips where only the wrong sentence is context: closing the notes and ' +
      'answering after it are targets, so the teacher learns to stop searching when its notes say the path ends',
  },
  teacherSlipBlind: {
    into: 'data.teacherSlipBlind',
    kind: num(0, 1),
    label: 'teacher blind slips',
    paper: 0,
    help: 'share of slips whose last search shows only passages that do not state the answer',
    flag: 'teacher-slip-blind',
    cliHelp:
      'share (0 to 1) of the teacher slips whose last search result keeps only the passages that do not state ' +
      'the answer: no document holds it, so the answer can come from the privileged notes alone',
  },
  teacherAnswerOnly: {
    into: 'data.teacherAnswerOnly',
    kind: num(0, 1),
    label: 'teacher answer-only targets',
    paper: 0,
    help: 'share of teacher transcripts whose only targets are the answer (searches and quotes are context)',
    flag: 'teacher-answer-only',
    cliHelp:
      'share (0 to 1) of the teacher transcripts whose searches and quotes are context and whose only ' +
      "targets are the answer and the turn's end: they train reading the answer from the notes without " +
      'training the search and quoting that the student shares',
  },
  teacherCompact: {
    into: 'data.teacherCompact',
    kind: num(0, 1),
    label: 'teacher compact notes',
    paper: 0,
    help: "share of teacher transcripts whose notes are compact, as self-play's --notes compact shows them",
    flag: 'teacher-compact',
    cliHelp:
      'share (0 to 1) of the teacher transcripts whose full or partial notes are compact: each document of ' +
      "the question's path cut to the sentence that leads to the next step, as self-play's --notes compact " +
      'shows them',
  },
  teacherAnswerFirst: {
    into: 'data.teacherAnswerFirst',
    kind: num(0, 1),
    label: 'teacher answer-first notes',
    paper: 0,
    help: "share of compact notes opened by the answer, as self-play's --notes answer-first shows them",
    flag: 'teacher-answer-first',
    cliHelp:
      "share (0 to 1) of the teacher transcripts' compact notes that open with the answer in the words of the " +
      "GT notes, as self-play's --notes answer-first shows them",
  },
  examiner: {
    into: 'data.examinerPerWorld',
    kind: int(0, MAX_PER_WORLD),
    label: 'examiner transcripts',
    group: 'main',
    paper: 20,
    help: 'per world: a scripted examiner writing a 1- to 4-hop question from a source passage',
    flag: 'examiner',
    cliHelp:
      'transcripts per world of a scripted examiner that quotes the facts it follows and writes a 1- to 4-hop ' +
      'question from a source passage (hops 4:3:2:1)',
  },
  copyWarmup: {
    into: 'copyWarmup',
    kind: int(0),
    label: 'copy warm-up',
    group: 'main',
    paper: 0,
    help: 'first steps on a synthetic copying task (random spans, repeated)',
    check: (v, valid) =>
      valid.steps !== undefined && v > valid.steps
        ? `copy warm-up must be at most the steps (${valid.steps})`
        : undefined,
    flag: 'copy-warmup',
    cliHelp: 'the first N of --steps train on a synthetic copying task (random spans, repeated)',
  },
  copyEvery: {
    into: 'copyEvery',
    kind: int(0),
    label: 'copy every',
    group: 'main',
    paper: 0,
    help: 'after the warm-up, every this many steps one is a copying step (0: none)',
    flag: 'copy-every',
  },
  worldSize: {
    into: 'data.worldSize',
    kind: int(20, 100_000),
    label: 'world size',
    paper: 80,
    help: 'entities per generated world',
  },
  tokenizerWorlds: {
    into: 'tokenizerWorlds',
    kind: int(1, 10_000),
    label: 'tokenizer worlds',
    paper: 10,
    help: 'worlds whose text trains the tokenizer',
    shape: true,
  },
  logEvery: {
    into: 'logEvery',
    kind: int(1),
    label: 'log every',
    paper: 10,
    help: 'read the loss back every this many steps',
    flag: 'log-every',
  },
});

export type PretrainKey = keyof typeof PRETRAIN_FIELDS;
/** A run's settings as the page's form holds them: every option of the recipe that is a number, all given. */
export type PretrainSettings = Record<PretrainKey, number>;

export const PRETRAIN_DEFAULTS: Readonly<PretrainSettings> = Object.fromEntries(
  (Object.keys(PRETRAIN_FIELDS) as PretrainKey[]).map((k) => [k, PRETRAIN_FIELDS[k].paper]),
) as PretrainSettings;

const KEYS = Object.keys(PRETRAIN_FIELDS) as PretrainKey[];

/** The problem of one value with its own bounds, or undefined. */
function boundsProblem(f: FieldSpec, v: unknown): string | undefined {
  return kindAccepts(f.kind, v) ? undefined : `${f.label} must be ${describeKind(f.kind)}`;
}

/** Problems per field, in the table's order (empty when the settings can be used). */
export function pretrainProblems(s: Partial<Record<PretrainKey, unknown>>): Map<PretrainKey, string> {
  const problems = new Map<PretrainKey, string>();
  const valid: Record<string, number> = {};
  for (const key of KEYS) {
    const why = boundsProblem(PRETRAIN_FIELDS[key], s[key]);
    if (why) problems.set(key, why);
    else valid[key] = s[key] as number;
  }
  for (const key of KEYS) {
    const why = key in valid ? PRETRAIN_FIELDS[key].check?.(valid[key]!, valid) : undefined;
    if (why) problems.set(key, why);
  }
  return new Map(KEYS.flatMap((k) => (problems.has(k) ? [[k, problems.get(k)!] as const] : [])));
}

/** The table's settings of `from` (a request that carries them among other fields). */
export function pickPretrainSettings(from: Readonly<PretrainSettings>): PretrainSettings {
  return Object.fromEntries(KEYS.map((k) => [k, from[k]])) as PretrainSettings;
}

/** The recipe's options for settings from the page's form or the command line (a model to continue aside). */
export function settingsToOptions(s: PretrainSettings): PretrainOptions {
  const options: Record<string, unknown> = {};
  const data: Record<string, unknown> = {};
  for (const key of KEYS) {
    const f = PRETRAIN_FIELDS[key];
    const value = f.as ? f.as(s[key]) : s[key];
    if (f.into.startsWith('data.')) data[f.into.slice('data.'.length)] = value;
    else options[f.into] = value;
  }
  // Every required option is some field's destination (the unit tests compare the whole result).
  return { ...options, data } as unknown as PretrainOptions;
}
