// The run folder of `npm run train`: one JSON object per line in metrics.jsonl, questions.jsonl,
// rollouts.jsonl and eval.jsonl, the settings in config.json, checkpoints/ (see DirStorage).
// On resume each log is cut back to the records the checkpoint had seen, so no step is logged twice.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { readInputFile, readInputJson } from '../node/input-file.ts';
import { ConfigError, type SelfPlayConfig, upgradeConfig, validateConfig } from '../selfplay/config.ts';
import { dirname, join, resolve } from 'node:path';
import { otherBase, otherRun, type LatestCheckpoint, type RunState } from '../selfplay/checkpoint.ts';
import type { BaseModel } from '../selfplay/base-model.ts';
import type { DirStorage } from './fs-storage.ts';
import { codeVersion } from '../node/code-version.ts';
import type { RunEvent } from '../selfplay/events.ts';
import { cleanLeftovers, writeFileAtomically } from './atomic-folder.ts';
import { LOCK_NAME } from './folder-lock.ts';
import { withPath } from './fs-errors.ts';
import { MAX_JSON_BYTES, readJson, type OutRule } from './out-folder.ts';
import { makeFolder } from '../node/make-folder.ts';

export const LOGS = {
  metrics: 'metrics.jsonl',
  questions: 'questions.jsonl',
  rollouts: 'rollouts.jsonl',
  eval: 'eval.jsonl',
} as const;
export type LogName = keyof typeof LOGS;

/** The run's identity, which its checkpoints carry: {format, id, createdAt}. */
export const RUN_ID_FILE = 'run.json';
const RUN_FORMAT = 'piplay-run';

/** Everything `npm run train` writes at the top of its run folder. */
export const RUN_NAMES = [
  'config.json',
  RUN_ID_FILE,
  ...Object.values(LOGS),
  'checkpoints',
  'student',
  LOCK_NAME,
] as const;

/** A folder of RUN_NAMES is a run when its config.json holds a run's settings or it has a checkpoint. */
export function isRunFolder(dir: string): boolean {
  const c = readJson(join(dir, 'config.json'));
  const settings = c !== null && 'examinerSteps' in c && 'studentSteps' in c;
  return settings || existsSync(join(dir, 'checkpoints', 'latest.json'));
}

/**
 * Refuses an output path inside a run folder (`flag` names the option): a run folder holds only what train writes,
 * so that it can be resumed (checkOutFolder refuses a folder holding anything else).
 */
export function checkNotInRun(path: string, flag: string): void {
  const p = resolve(path);
  for (let d = dirname(p); ; d = dirname(d)) {
    if (isRunFolder(d))
      throw new ConfigError(
        `${flag}: ${p} is inside the run folder ${d}, which holds only what npm run train writes (another file ` +
          'there stops the run from resuming); write it elsewhere',
      );
    if (dirname(d) === d) return;
  }
}

/**
 * The settings in a run folder's config.json, checked as flags are (a file missing a setting, or holding a value
 * no flag takes, is refused by name); `flag` names the option that gave the folder.
 */
export function readRunConfig(dir: string, flag: string): SelfPlayConfig {
  const path = join(dir, 'config.json');
  let json: unknown;
  try {
    json = readInputJson(path, { maxBytes: MAX_JSON_BYTES });
  } catch (e) {
    throw new ConfigError(`${flag}: ${(e as Error).message.replace(/^piplay: /, '')}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new ConfigError(`${flag}: ${path} holds no run's settings; give a run folder of npm run train`);
  try {
    // `code` is the code that started the run (writeConfig), not a setting.
    const { code: _, ...settings } = json as SelfPlayConfig & { code?: unknown };
    return validateConfig(upgradeConfig(settings as SelfPlayConfig));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    throw new ConfigError(`${flag}: ${path} holds settings piplay refuses: ${e.message}`);
  }
}

/** The --out rule of `npm run train` (see checkOutFolder). */
export function trainOutRule(resume: boolean): OutRule {
  const own = 'a run of npm run train (to --resume)';
  return { flag: '--out', command: 'npm run train', own, names: RUN_NAMES, marker: isRunFolder, resume };
}

/** The most bytes a log of a run may have. */
const MAX_LOG_BYTES = 512 * 2 ** 20;

const readText = (path: string) =>
  new TextDecoder().decode(readInputFile(path, { maxBytes: MAX_LOG_BYTES, what: 'a log' }));

/** The records of a log file, one JSON object per line ([] when the file is missing); a bad line is named. */
export function readLog<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const text = readText(path);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as T;
      } catch (e) {
        throw new Error(
          `line ${i + 1} of ${path} is not valid JSON (${(e as Error).message}); is it a log of npm run train?`,
        );
      }
    });
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

export class RunFolder {
  constructor(readonly dir: string) {
    withPath('create', dir, () => makeFolder(dir));
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  writeJson(name: string, value: unknown): void {
    writeFileAtomically(this.path(name), JSON.stringify(value, null, 2) + '\n', { replace: true });
  }

  /** The run's identity from run.json; null when the folder has none (a run of an older version). */
  runId(): string | null {
    const p = this.path(RUN_ID_FILE);
    if (!existsSync(p)) return null;
    const j = readJson(p);
    if (j?.format !== RUN_FORMAT || typeof j.id !== 'string' || !j.id)
      throw new Error(`piplay: ${p} is not a run identity of piplay (${JSON.stringify({ format: RUN_FORMAT })}, id)`);
    return j.id;
  }

  /**
   * Readies the folder for a run. Resuming `cp`: a checkpoint of another run, or of a base whose files changed, is
   * refused before anything in the folder is touched; then a killed save's leftovers are removed and the logs cut
   * to the checkpoint. A new run: empty logs, config.json and a new run.json. `say` prints each note. Returns the
   * run's identity (null: a run of an older version, without one).
   */
  async prepare(
    storage: DirStorage,
    cp: LatestCheckpoint | null,
    config: SelfPlayConfig,
    base: BaseModel,
    say: (note: string) => void,
  ): Promise<string | null> {
    const runId = cp ? this.runId() : null;
    if (cp) {
      const refused = otherRun(cp.state, runId ?? undefined) ?? otherBase(cp.state, base);
      if (refused) throw new ConfigError(`--resume: ${this.dir}: ${refused.replace(/^piplay: /, '')}`);
    }
    for (const f of await storage.removeLeftovers())
      say(`removed ${f}, left behind by a run that was killed while saving`);
    for (const done of cleanLeftovers(this.dir, RUN_NAMES)) say(done);
    if (cp) {
      for (const note of this.truncateLogs(cp.state.records)) say(`warning: ${note}`);
      return runId;
    }
    this.resetLogs();
    this.writeConfig(config);
    return this.newRunId();
  }

  /** A new run's identity, written to run.json. */
  newRunId(): string {
    const id = crypto.randomUUID();
    this.writeJson(RUN_ID_FILE, { format: RUN_FORMAT, id, createdAt: new Date().toISOString() });
    return id;
  }

  /** config.json: the run's settings, and the code that started it (`code`: its commit, and whether dirty). */
  writeConfig(config: SelfPlayConfig): void {
    this.writeJson('config.json', { ...config, code: codeVersion() });
  }

  /** Empties every log (a new run). */
  resetLogs(): void {
    for (const f of Object.values(LOGS)) withPath('write', this.path(f), () => writeFileSync(this.path(f), ''));
  }

  /**
   * Keeps the first `records[name]` lines of each log (a resumed run: what was logged after the checkpoint goes).
   * Returns what else was lost, in words: a log deleted or cut short of the records the checkpoint counts, or a
   * last line cut mid-way (dropped), so that a resume never hides a gap in its logs.
   */
  truncateLogs(records: RunState['records']): string[] {
    const notes: string[] = [];
    for (const [name, file] of Object.entries(LOGS) as [LogName, string][]) {
      const p = this.path(file);
      const want = records[name];
      const text = existsSync(p) ? readText(p) : null;
      const lines = (text ?? '').split('\n');
      const tail = lines.pop()!; // '' when the file ends with a line end
      if (tail !== '' && !isJson(tail)) {
        if (lines.filter((l) => l !== '').length < want)
          notes.push(`the last line of ${p} was cut mid-way (${tail.length} characters); it was dropped`);
      } else if (tail !== '') lines.push(tail);
      const whole = lines.filter((l) => l !== '');
      if (text === null && want > 0)
        notes.push(`${p} is missing: the ${want} records the checkpoint counts in it are lost; it starts again here`);
      else if (whole.length < want)
        notes.push(
          `${p} holds ${whole.length} of the ${want} records the checkpoint counts (it was cut or edited); the ` +
            'missing ones are not written again',
        );
      const keep = whole.slice(0, want);
      withPath('write', p, () => writeFileSync(p, keep.map((l) => l + '\n').join('')));
    }
    return notes;
  }

  append(name: LogName, value: unknown): void {
    const p = this.path(LOGS[name]);
    withPath('write', p, () => appendFileSync(p, JSON.stringify(value) + '\n'));
  }

  /** Writes an event to its log, if it has one. */
  log(ev: RunEvent): void {
    if (ev.type === 'metrics') this.append('metrics', ev.metrics);
    else if (ev.type === 'question') this.append('questions', ev.record);
    else if (ev.type === 'rollout') this.append('rollouts', ev.record);
    else if (ev.type === 'eval') this.append('eval', ev.metrics);
  }
}
