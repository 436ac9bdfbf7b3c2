// Whether a command may write into the folder its --out names. A command writes only into a folder that
// is new, empty, or holds nothing but its own earlier output (a run to resume, a model it made); any
// other folder, such as a model folder or a folder of the user's own files, is refused before a byte is
// written, since writing there would replace files the command did not write.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readInputFile } from '../node/input-file.ts';
import { leftoverOf } from './atomic-folder.ts';
import { join } from 'node:path';
import { ConfigError } from '../selfplay/config.ts';

export interface OutRule {
  /** The option that names the folder, e.g. '--out'. */
  flag: string;
  /** The command, for messages: 'npm run train'. */
  command: string;
  /** What the command's own output is called in messages: 'a run of npm run train'. */
  own: string;
  /** The top-level names the command writes into the folder. */
  names: readonly string[];
  /** Extra proof that a folder of those names is the command's output (e.g. its config.json is a run's). */
  marker?: (dir: string) => boolean;
  /** The command continues its own output (--resume): a new or empty folder has nothing to continue. */
  resume?: boolean;
}

/** What the folder is: not there yet, empty, or the command's own output. */
export type OutKind = 'new' | 'empty' | 'own';

/** Checks `dir` against the rule; throws a ConfigError naming the folder and what to do. Writes nothing. */
export function checkOutFolder(dir: string, rule: OutRule): OutKind {
  const resumeHint = `drop --resume to start there, or give the folder of the run to continue`;
  if (!existsSync(dir)) {
    if (rule.resume) {
      throw new ConfigError(`--resume: ${dir} does not exist, so there is nothing to resume; ${resumeHint}`);
    }
    return 'new';
  }
  if (!statSync(dir).isDirectory()) {
    throw new ConfigError(`${rule.flag}: ${dir} is a file, not a folder; give a new or empty folder`);
  }
  const entries = readdirSync(dir).sort();
  if (entries.length === 0) {
    if (rule.resume) throw new ConfigError(`--resume: ${dir} is empty, so there is nothing to resume; ${resumeHint}`);
    return 'empty';
  }
  // What a killed writer of the command left beside its outputs is its own too (cleaned by the next run).
  const own = (n: string) => rule.names.includes(n) || rule.names.includes(leftoverOf(n)?.name ?? '');
  const foreign = entries.filter((n) => !own(n));
  if (foreign.length === 0 && (!rule.marker || rule.marker(dir))) return 'own';
  const shown = (foreign.length ? foreign : entries).slice(0, 5).join(', ') + (entries.length > 5 ? ', ...' : '');
  const model = isModelFolder(dir) ? ' It is a model folder: give it as --model, and a new folder as --out.' : '';
  throw new ConfigError(
    `${rule.flag}: ${dir} holds files that ${rule.command} did not write (${shown}); it writes only into a new or ` +
      `empty folder or ${rule.own}, so that it never replaces your files.${model} Choose another folder.`,
  );
}

/** An HF model folder: config.json with a model type or architectures, next to weights. */
export function isModelFolder(dir: string): boolean {
  const cfg = readJson(join(dir, 'config.json'));
  return cfg !== null && ('model_type' in cfg || 'architectures' in cfg);
}

/** The most bytes a settings or result file of a command may have. */
export const MAX_JSON_BYTES = 64 * 2 ** 20;

/** A file's JSON object, or null when it is missing, not a regular file of at most MAX_JSON_BYTES, or not a JSON
 *  object. */
export function readJson(path: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(new TextDecoder().decode(readInputFile(path, { maxBytes: MAX_JSON_BYTES }))) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
