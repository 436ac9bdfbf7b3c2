// npm run record-example [-- --out public/examples --arms piplay,drzero --keep DIR --<setting> value ...]
// npm run record-example -- --from results/experiment-47 [--seed 1] [--out DIR --arms ...]
// Records the example runs the page opens with one click (no training, no GPU), as recordings
// (src/worker/recording.ts) in --out with the index the page reads. With --from, each arm is that seed's run of
// an experiment of `npm run experiment` (the shipped examples: results/experiment-47, seed 1), with the base arm's
// evaluation as its "before training" point. Without it, each arm is a real, short run of `npm run train` on the
// demo preset's default model (the smoke preset's sizes with that model's sampling temperature, a few more
// student steps and token-level rollouts); settings given here override those defaults. Re-run it after the
// default model changes: nothing here depends on which model that is.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ARMS as EXPERIMENT_ARMS, type ArmName } from '../lab/experiment/plan.ts';
import { experimentFindings } from '../lab/experiment/findings.ts';
import type { Comparison } from '../lab/experiment/paired.ts';
import { ConfigError, DEMO, keyOfFlag } from '../selfplay/config.ts';
import { countOption, MAX_SEED, scanArgs } from './args.ts';
import { readJson } from './out-folder.ts';
import { runCommand } from './command.ts';
import { fileBytes, recordingFromExperiment, recordingFromRunFolder, writeExamples } from './run-recording.ts';

/** The arms a recording can hold (of the experiment's, src/lab/experiment/plan.ts), with the page's title of each. */
const TITLES: Partial<Record<ArmName, string>> = {
  piplay: 'π-Play (teacher sees the full construction path)',
  drzero: 'Dr. Zero (no teacher)',
  self: "self control (the same teacher, reading only the student's prompt)",
};

/** What an arm adds to the shared settings: its teacher's context where it is not the preset's (none is Dr. Zero). */
function armFlags(arm: ArmName): string[] {
  const p = EXPERIMENT_ARMS[arm].privileged;
  return p === null || p === DEMO.privileged ? [] : ['--privileged', p];
}

const ARMS = Object.fromEntries(
  (Object.keys(TITLES) as ArmName[]).map((a) => [a, { flags: armFlags(a), title: TITLES[a]! }]),
) as Record<string, { flags: string[]; title: string }>;

/** A short run of the default model with rollouts worth reading: real turn lengths, searches, several per step. */
export const RECORD_SETTINGS: [string, string][] = [
  ['--preset', 'smoke'],
  ['--model', DEMO.model],
  ['--temperature', String(DEMO.temperature)],
  ['--max-turns', '3'],
  ['--turn-tokens', String(DEMO.turnTokens)],
  ['--tool-tokens', String(DEMO.toolTokens)],
  ['--student-steps', '2'],
  ['--rollout-samples', '3'],
  ['--eval-per-hop', '2'],
];

const USAGE = [
  'usage: npm run record-example [-- --out DIR --arms piplay,drzero --keep DIR --<setting> value ...]',
  '       npm run record-example -- --from EXPERIMENT [--seed N --out DIR --arms piplay,drzero]',
  '  --out DIR     where the recordings and index.json go (default public/examples)',
  `  --arms LIST   which runs to record: ${Object.keys(ARMS).join(', ')} (default all)`,
  '  --from DIR    record the runs of this experiment folder of npm run experiment (no training)',
  "  --seed N      with --from: which seed's runs (default 1)",
  '  --keep DIR    keep the run folders there (default: a temporary folder, removed at the end)',
  `  settings of npm run train override the defaults: ${RECORD_SETTINGS.map((s) => s.join(' ')).join(' ')}`,
].join('\n');

const TRAIN = fileURLToPath(new URL('./train.ts', import.meta.url));

async function main(argv: string[]): Promise<number> {
  const args = scanArgs(
    argv,
    ['out', 'arms', 'keep', 'from', 'seed'],
    ['help'],
    (f) => f === 'preset' || keyOfFlag(f) !== null,
  );
  if (args.own['help']) {
    console.log(USAGE);
    return 0;
  }
  const out = resolve(args.own['out'] ?? 'public/examples');
  // By default every arm a recording can hold; from an experiment, those it ran.
  const from = args.own['from'];
  const ran = (a: string) =>
    from === undefined || existsSync(join(resolve(from), 'runs', `${a}-seed${args.own['seed'] ?? '1'}`));
  const arms = (args.own['arms'] ?? Object.keys(ARMS).filter(ran).join(',')).split(',').filter(Boolean);
  for (const a of arms)
    if (!ARMS[a]) throw new ConfigError(`--arms: unknown arm '${a}' (${Object.keys(ARMS).join(', ')})`);
  if (args.own['from'] !== undefined) return recordExperiment(args.own['from'], args, out, arms);
  if (args.own['seed'] !== undefined) throw new ConfigError('--seed chooses a run of an experiment: give --from too');
  const given = new Map(args.given.map(([f, v]) => [`--${f}`, v]));
  const settings = [...RECORD_SETTINGS.filter(([f]) => !given.has(f)), ...given].flat();
  const keep = args.own['keep'] ? resolve(args.own['keep']) : null;
  const root = keep ?? mkdtempSync(join(tmpdir(), 'piplay-record-'));
  try {
    const recordings = arms.map((arm) => {
      const dir = join(root, arm);
      const flags = [...settings, ...ARMS[arm]!.flags];
      const command = `npm run train -- --out DIR ${flags.join(' ')}`;
      console.log(`record-example: ${arm}: ${command}`);
      const r = spawnSync(process.execPath, ['--import', 'tsx', TRAIN, '--out', dir, ...flags], { stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`record-example: the ${arm} run failed (exit ${r.status ?? r.signal})`);
      return recordingFromRunFolder(dir, { name: arm, title: ARMS[arm]!.title, command });
    });
    for (const f of writeExamples(out, recordings)) console.log(`record-example: wrote ${f} (${fileBytes(f)} bytes)`);
  } finally {
    if (!keep) rmSync(root, { recursive: true, force: true });
  }
  return 0;
}

/** What record-example reads of an experiment's results.json (its report): the settings, and the comparisons of a
 * version that keeps them. */
type ExperimentReport = {
  meta?: Partial<Record<string, unknown>> & { seeds?: number[]; iterations?: number };
  comparisons?: Comparison[];
};

/** The command that ran the experiment (given as `from`), as its report's settings tell. */
function experimentCommand(meta: ExperimentReport['meta'] = {}, from: string): string {
  const list = (v: unknown) => (Array.isArray(v) ? v.join(',') : null);
  const parts = [`npm run experiment -- --out ${from}`];
  if (typeof meta.preset === 'string') parts.push(`--preset ${meta.preset}`);
  if (list(meta.seeds)) parts.push(`--seeds ${list(meta.seeds)}`);
  if (list(meta.arms)) parts.push(`--arms ${list(meta.arms)}`);
  if (Array.isArray(meta.settings)) parts.push(...meta.settings.map(String));
  return parts.join(' ');
}

/** The recordings of an experiment's runs of one seed (--from): no training. */
function recordExperiment(from: string, args: ReturnType<typeof scanArgs>, out: string, arms: string[]): number {
  if (args.given.length > 0 || args.own['keep'] !== undefined)
    throw new ConfigError(
      `--from records runs that have finished: settings (${args.given.map(([f]) => `--${f}`).join(' ') || '--keep'}) apply to new runs only`,
    );
  const seed = countOption(args.own, 'seed', 1, MAX_SEED);
  const dir = resolve(from);
  const report = (readJson(join(dir, 'results.json')) ?? {}) as ExperimentReport;
  const command = experimentCommand(report.meta, from);
  const recordings = arms.map((arm) =>
    recordingFromExperiment(dir, arm, seed, {
      name: arm,
      title: ARMS[arm]!.title,
      command: `${command} (its run ${arm}, seed ${seed})`,
    }),
  );
  // What the experiment found, for the page's guide.
  const { seeds, iterations } = report.meta ?? {};
  const found =
    report.comparisons && seeds && iterations
      ? experimentFindings(from, { seeds, iterations }, report.comparisons)
      : undefined;
  if (!found)
    console.log(`record-example: ${join(dir, 'results.json')} holds no paired comparisons; no findings shown`);
  for (const f of writeExamples(out, recordings, found))
    console.log(`record-example: wrote ${f} (${fileBytes(f)} bytes)`);
  return 0;
}

runCommand('record-example', main);
