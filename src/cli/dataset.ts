// npm run dataset -- --run DIR --out FILE.jsonl|FILE.parquet [--privileged full|partial|gt|gt-hop|none]
// The questions a run's examiner wrote (valid ones), with the student's and the teacher's prompts, the answer
// and the construction path (src/lab/dataset.ts): as JSONL in TRL's conversational fields, or as parquet
// in verl's fields (src/cli/parquet.ts): the data to run the same recipe at scale on an existing engine. Never
// overwrites a file, and writes none for a run without a valid question.
import { existsSync } from 'node:fs';
import { writeFileAtomically } from './atomic-folder.ts';
import { join, resolve } from 'node:path';
import { PRIVILEGED_MODES, type PrivilegedMode } from '../env/prompts.ts';
import { ConfigError } from '../selfplay/config.ts';
import type { QuestionRecord } from '../selfplay/events.ts';
import { trlRows, verlRow } from '../lab/dataset.ts';
import { scanArgs } from './args.ts';
import { verlParquet } from './parquet.ts';
import { runCommand } from './command.ts';
import { checkNotInRun, isRunFolder, LOGS, readLog, readRunConfig } from './run-folder.ts';

const USAGE = [
  'usage: npm run dataset -- --run DIR --out FILE.jsonl|FILE.parquet [--privileged MODE]',
  '  --run DIR          a run folder of npm run train (its questions.jsonl and config.json)',
  "  --out FILE         the file to write (refused if it exists): .jsonl in TRL's fields, .parquet in verl's",
  "  --privileged MODE  the teacher prompt's privileged block: full, partial, gt, gt-hop or none (default: the run's)",
].join('\n');

function main(argv: string[]): number {
  const { own } = scanArgs(argv, ['run', 'out', 'privileged'], ['help'], () => false);
  if (own['help']) {
    console.log(USAGE);
    return 0;
  }
  if (!own['run'] || !own['out']) throw new ConfigError(`give --run DIR and --out FILE\n${USAGE}`);
  const dir = resolve(own['run']);
  const out = resolve(own['out']);
  if (existsSync(out)) throw new ConfigError(`--out: ${out} exists; piplay never overwrites a file: give a new path`);
  checkNotInRun(out, '--out');
  const configPath = join(dir, 'config.json');
  if (!existsSync(configPath))
    throw new ConfigError(`--run: ${configPath} is missing; give a run folder of npm run train`);
  if (!isRunFolder(dir))
    throw new ConfigError(`--run: ${configPath} holds no run's settings; give a run folder of npm run train`);
  const config = readRunConfig(dir, '--run');
  const mode = (own['privileged'] ?? config.privileged) as PrivilegedMode;
  if (!PRIVILEGED_MODES.includes(mode))
    throw new ConfigError(`--privileged: '${mode}' is not allowed; use one of ${PRIVILEGED_MODES.join(', ')}`);
  const questionsPath = join(dir, LOGS.questions);
  const rows = trlRows(readLog<QuestionRecord>(questionsPath), mode, {
    seed: config.seed,
    partialDrop: config.partialDrop,
    notes: config.notes ?? 'passages',
  });
  if (rows.length === 0) {
    const what = existsSync(questionsPath)
      ? 'holds no valid question (one with a question, an answer and a format reward above 0)'
      : 'is missing (the run wrote no question)';
    throw new ConfigError(
      `--run: ${questionsPath} ${what}; nothing was written. Give a run whose examiner wrote valid questions ` +
        '(a longer run, or a base model that follows the examiner prompt)',
    );
  }
  const parquet = out.toLowerCase().endsWith('.parquet');
  const bytes = parquet ? verlParquet(rows.map(verlRow)) : rows.map((r) => JSON.stringify(r) + '\n').join('');
  // Whole or not at all (a full disk leaves no truncated file under the name), and never over a file.
  writeFileAtomically(out, bytes, { replace: false });
  console.log(
    `dataset: ${rows.length} questions (privileged ${mode}) in ${out}, ${parquet ? "verl's" : "TRL's"} fields`,
  );
  return 0;
}

runCommand('dataset', main);
