// From a run folder of `npm run train` to a recorded run (src/worker/recording.ts) the page opens with no
// training, and the examples' index the page lists (public/examples/index.json). A file is written only where
// nothing is, or where an earlier recording or index of ours is, so no user file is ever replaced.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type SelfPlayConfig } from '../selfplay/config.ts';
import type { EvalMetrics, QuestionRecord, RolloutRecord, RunEvent, StepMetrics } from '../selfplay/events.ts';
import { makeRecording, RECORDING_FORMAT, type RunRecording } from '../worker/recording.ts';
import { writeFileAtomically } from './atomic-folder.ts';
import { readJson } from './out-folder.ts';
import { checkNotInRun, LOGS, readLog } from './run-folder.ts';
import { withPath } from './fs-errors.ts';
import { makeFolder } from '../node/make-folder.ts';
import { runDir } from '../lab/experiment/plan.ts';
import type { ExperimentFindings } from '../lab/experiment/findings.ts';

export const EXAMPLES_FORMAT = 'piplay-examples';

/** public/examples/index.json: the recordings the page offers, first the one its example control opens. */
export interface ExamplesIndex {
  format: typeof EXAMPLES_FORMAT;
  examples: { file: string; name: string; title: string }[];
  /** What the experiment the examples were recorded from found (record-example --from), for the page's guide. */
  experiment?: ExperimentFindings;
}

/** The run's events, read back from its logs (evaluations, step metrics, questions, rollouts). */
export function runFolderEvents(dir: string): RunEvent[] {
  const events: RunEvent[] = [];
  for (const m of readLog<EvalMetrics>(join(dir, LOGS.eval))) events.push({ type: 'eval', metrics: m });
  for (const m of readLog<StepMetrics>(join(dir, LOGS.metrics))) events.push({ type: 'metrics', metrics: m });
  for (const r of readLog<QuestionRecord>(join(dir, LOGS.questions))) events.push({ type: 'question', record: r });
  for (const r of readLog<RolloutRecord>(join(dir, LOGS.rollouts))) events.push({ type: 'rollout', record: r });
  return events;
}

/** A recording of the run in `dir` (its config.json and logs). */
export function recordingFromRunFolder(
  dir: string,
  meta: { name: string; title: string; command: string; recordedAt?: string },
): RunRecording {
  const config = readJson(join(dir, 'config.json')) as SelfPlayConfig | null;
  if (!config || !('examinerSteps' in config))
    throw new ConfigError(`${dir} is not a run folder of npm run train (its config.json holds no run settings)`);
  const events = runFolderEvents(dir);
  if (!events.some((e) => e.type === 'rollout'))
    throw new ConfigError(`${join(dir, LOGS.rollouts)} holds no rollout: the recording would show no heatmap`);
  return makeRecording(
    { ...meta, base: config.model, recordedAt: meta.recordedAt ?? new Date().toISOString(), config },
    events,
  );
}

/**
 * A recording of one run of an experiment of `npm run experiment` (its folder `dir`): the arm's run for `seed`,
 * with the base arm's evaluation of the same seed as its "before training" point where the run did not evaluate
 * before training itself (the experiment's trained arms skip it: the base arm is the same weights, evaluated
 * greedily on the same questions).
 */
export function recordingFromExperiment(
  dir: string,
  arm: string,
  seed: number,
  meta: { name: string; title: string; command: string; recordedAt?: string },
): RunRecording {
  const run = join(dir, runDir(arm, seed));
  if (!existsSync(join(run, 'result.json')))
    throw new ConfigError(
      `${run} is not a finished run of the experiment in ${dir} (no result.json): finish it with npm run experiment -- --out ${dir} --resume, or record another --seed`,
    );
  const rec = recordingFromRunFolder(run, meta);
  if (rec.events.some((e) => e.type === 'eval' && e.metrics.iteration < 0)) return rec;
  const before = readLog<EvalMetrics>(join(dir, runDir('base', seed), LOGS.eval)).filter((m) => m.iteration < 0);
  return { ...rec, events: [...before.map((metrics) => ({ type: 'eval' as const, metrics })), ...rec.events] };
}

/** Refuses to replace `path` unless it is missing or a file this command wrote (`ours` says which). */
export function checkReplaceable(path: string, ours: (j: Record<string, unknown>) => boolean, what: string): void {
  if (!existsSync(path)) return;
  const j = readJson(path);
  if (j && ours(j)) return;
  throw new ConfigError(
    `${path} exists and is not ${what}; npm run record-example replaces only its own files. Move it away or ` +
      'choose another --out folder.',
  );
}

export const isRecordingJson = (j: Record<string, unknown>) => j.format === RECORDING_FORMAT;
export const isExamplesIndex = (j: Record<string, unknown>) => j.format === EXAMPLES_FORMAT;

/** Writes the recordings and their index into `out` (checked first: nothing is written if any file is refused). */
export function writeExamples(
  out: string,
  recordings: readonly RunRecording[],
  experiment?: ExperimentFindings,
): string[] {
  const files = recordings.map((r) => join(out, `${r.name}.json`));
  files.forEach((f) => checkReplaceable(f, isRecordingJson, 'a piplay run recording'));
  const indexPath = join(out, 'index.json');
  checkNotInRun(indexPath, '--out');
  checkReplaceable(indexPath, isExamplesIndex, 'an examples index of piplay');
  const index: ExamplesIndex = {
    format: EXAMPLES_FORMAT,
    examples: recordings.map((r) => ({ file: `${r.name}.json`, name: r.name, title: r.title })),
    ...(experiment ? { experiment } : {}),
  };
  withPath('create', out, () => makeFolder(out));
  recordings.forEach((r, i) => writeFileAtomically(files[i]!, JSON.stringify(r) + '\n', { replace: true }));
  writeFileAtomically(indexPath, JSON.stringify(index, null, 2) + '\n', { replace: true });
  return [...files, indexPath];
}

/** The bytes of a file, for the size report. */
export const fileBytes = (path: string): number => statSync(path).size;
