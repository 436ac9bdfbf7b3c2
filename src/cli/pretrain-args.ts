// The command line of `npm run pretrain`, read by the project's one parser (scanArgs in src/cli/args.ts). The
// numeric settings' flags, defaults, help and checks are the page's (PRETRAIN_FIELDS in
// src/pretrain/settings.ts), so both accept the same values; --out, --from, --world-out and --check are the
// CLI's own. Pure: importing this starts no engine and reads no files.
import { existsSync } from 'node:fs';
import { readInputFile } from '../node/input-file.ts';
import { join } from 'node:path';
import type { PretrainOptions } from '../pretrain/run.ts';
import { countOption, MAX_QUESTIONS, scanArgs } from './args.ts';
import { parseNumber } from '../settings/schema.ts';
import type { OutRule } from './out-folder.ts';
import {
  PRETRAIN_DEFAULTS,
  PRETRAIN_FIELDS,
  pretrainProblems,
  settingsToOptions,
  type PretrainKey,
  type PretrainSettings,
} from '../pretrain/settings.ts';

const KEYS = Object.keys(PRETRAIN_FIELDS) as PretrainKey[];
const d = PRETRAIN_DEFAULTS;

/** The CLI's own options, [flag and argument, help]. */
const OWN_LINES: [string, string][] = [
  ['--out DIR', 'model folder to write (default public/models/piplay-tiny)'],
  [
    '--from DIR',
    'continue training this model folder (weights and tokenizer; --size and --vocab are\nthen ignored); ' +
      'give another --seed so it reads text it has not seen',
  ],
  [
    '--world-out DIR',
    "where the default world's corpus.jsonl and eval.jsonl go (default public/worlds/default; '' to skip)",
  ],
  [
    '--write-stream DIR',
    'write the start model and every batch to DIR instead of training, for scripts/torch-train/pretrain.py',
  ],
  ['--check N', 'greedy rollouts on N 1-hop eval questions of the default world afterwards (default 25; 0 skips)'],
];

/** One line per settings flag, in the table's order; hidden and layers share --size HxL. */
function settingLines(): [string, string][] {
  const lines: [string, string][] = [];
  for (const k of KEYS) {
    const f = PRETRAIN_FIELDS[k];
    if (k === 'hidden') lines.push(['--size HxL', `hidden width x layers (default ${d.hidden}x${d.layers})`]);
    else if (f.flag && f.flag !== 'size')
      lines.push([`--${f.flag} ${f.kind.t === 'int' ? 'N' : 'X'}`, `${f.cliHelp ?? f.help} (default ${d[k]})`]);
  }
  return lines;
}

function usage(): string {
  const lines = [...settingLines(), ...OWN_LINES];
  const width = Math.max(...lines.map(([flag]) => flag.length)) + 2;
  const line = ([flag, help]: [string, string]) =>
    `  ${flag.padEnd(width)}${help.replaceAll('\n', `\n  ${' '.repeat(width)}`)}`;
  return ['usage: npm run pretrain -- [options]', ...lines.map(line)].join('\n');
}

export const PRETRAIN_USAGE = usage();

/** What the command line asks for; `options` lacks `from`, whose files the caller opens. */
export interface PretrainArgs {
  options: PretrainOptions;
  /** The model folder to continue, if any. */
  from?: string;
  out: string;
  /** '' to skip writing the default world. */
  worldOut: string;
  /** Eval questions to check afterwards (0 skips). */
  check: number;
  /** Write the batches here instead of training (src/cli/pretrain-stream.ts). */
  writeStream?: string;
}

/** Parses the arguments (without node and the script), or 'help'; throws naming the flag, then the usage. */
export function parsePretrainArgs(argv: string[]): PretrainArgs | 'help' {
  const flags = new Set(KEYS.flatMap((k) => PRETRAIN_FIELDS[k].flag ?? []));
  const scanned = scanArgs(argv, ['out', 'from', 'world-out', 'check', 'write-stream'], ['help'], (flag) =>
    flags.has(flag),
  );
  if (scanned.own['help']) return 'help';
  const values = new Map<string, string>([...Object.entries(scanned.own), ...scanned.given]);
  const value = (flag: string) => values.get(flag);

  const s: PretrainSettings = { ...d };
  for (const k of KEYS) {
    const flag = PRETRAIN_FIELDS[k].flag;
    const v = flag && flag !== 'size' ? value(flag) : undefined;
    if (v !== undefined) s[k] = parseNumber(v.trim());
  }
  const size = value('size')?.split('x');
  if (size) {
    if (size.length !== 2) throw new Error(`--size must look like 96x3 (hidden x layers)\n${PRETRAIN_USAGE}`);
    [s.hidden, s.layers] = size.map((v) => parseNumber(v.trim())) as [number, number];
  }
  const problems = pretrainProblems(s);
  if (problems.size)
    throw new Error(
      [...[...problems].map(([k, why]) => `--${PRETRAIN_FIELDS[k].flag}: ${why}`), PRETRAIN_USAGE].join('\n'),
    );

  const from = value('from');
  const writeStream = value('write-stream');
  return {
    ...(writeStream ? { writeStream } : {}),
    options: settingsToOptions(s),
    ...(from ? { from } : {}),
    out: value('out') ?? 'public/models/piplay-tiny',
    worldOut: value('world-out') ?? 'public/worlds/default',
    check: countOption(scanned.own, 'check', 25, MAX_QUESTIONS),
  };
}

/** A model folder pretrain wrote: the model's files and a TRAINING.md that says so. */
export const PRETRAIN_OUT_RULE: OutRule = {
  flag: '--out',
  command: 'npm run pretrain',
  own: 'a model folder that npm run pretrain made (it is replaced)',
  names: ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'TRAINING.md'],
  marker: (dir) => {
    const md = join(dir, 'TRAINING.md');
    return (
      existsSync(md) &&
      new TextDecoder().decode(readInputFile(md, { maxBytes: 2 ** 24 })).includes('`npm run pretrain`')
    );
  },
};
export const WORLD_OUT_RULE: OutRule = {
  flag: '--world-out',
  command: 'npm run pretrain',
  own: "a default world's corpus.jsonl and eval.jsonl (they are replaced)",
  names: ['corpus.jsonl', 'eval.jsonl'],
};
export const STREAM_OUT_RULE: OutRule = {
  flag: '--write-stream',
  command: 'npm run pretrain -- --write-stream',
  own: 'a stream folder that --write-stream wrote (it is replaced)',
  names: ['model', 'spec.json', 'steps.bin', 'ids.bin', 'targets.bin', 'mask.bin', 'stats.json'],
};
