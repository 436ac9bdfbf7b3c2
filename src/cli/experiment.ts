// npm run experiment -- [--out DIR] [--seeds 1,2,3] [--arms base,drzero,piplay,partial,gt] [--preset demo]
//                       [--resume] [--drift-questions N] [--probe-questions N] [--<setting> value ...]
// The demo-scale reproduction of the papers' claims (ALGORITHM.md section 7): for every seed, the base model
// (evaluated only), Dr. Zero (--privileged none) and π-Play with each privileged context, all in this
// process through SelfPlayRun. Each run writes the folder `npm run train` writes, under DIR/runs/<arm>-seed<k>/,
// plus result.json (what the report uses) and, for trained arms, drift.jsonl (the base model's answers to
// each iteration's examiner questions). After every run DIR/results.md, results.json, em_by_iteration.svg
// and drift.svg are rewritten from all finished runs, with per-question.jsonl (every held-out question's outcome
// per arm, seed and evaluation) and the paired comparisons made from it (src/lab/experiment/paired.ts). Before the runs, the teacher probe (src/lab/probe.ts)
// scores the base model as teacher with each arm's privileged context (DIR/probe.json), and the examiner probe
// (src/lab/examiner-probe.ts) checks the questions the base model writes (DIR/examiner-probe.json); both
// are in results.md.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import {
  ARM_NAMES,
  DEFAULT_ARMS,
  DEFAULT_SEEDS,
  parseArmSettings,
  parseArms,
  parseSeeds,
  planExperiment,
  type ArmSettings,
} from '../lab/experiment/plan.ts';
import { ConfigError, optionHelp, PRESETS, type PresetName } from '../selfplay/config.ts';
import { countOption, MAX_QUESTIONS, parseArgs } from './args.ts';
import { stopOnInterrupt } from './interrupt.ts';
import { checkFolderLock, lockFolder } from './folder-lock.ts';
import { checkOutFolder } from './out-folder.ts';
import { formatTime } from './progress.ts';
import { plural } from '../env/prompts.ts';
import { runCommand } from './command.ts';
import { Experiment, experimentOutRule } from './experiment-runner.ts';

const USAGE = [
  'usage: npm run experiment -- [--out DIR] [--seeds 1,2,3] [--arms LIST] [--preset NAME] [--arm-settings FILE] ' +
    '[--resume] [--<setting> value ...]',
  '  --out DIR              the experiment folder (default runs/experiment)',
  `  --seeds LIST           seeds, one run per arm and seed (default ${DEFAULT_SEEDS.join(',')})`,
  `  --arms LIST            of ${ARM_NAMES.join(', ')} (default ${DEFAULT_ARMS.join(',')})`,
  `  --preset NAME          starting settings of every run: ${Object.keys(PRESETS).join(', ')} (default demo)`,
  '  --arm-settings FILE    settings of single arms, JSON {"<arm>": {"<flag>": "value", ...}, ...}: each arm at ' +
    'its own dev-world choice',
  '  --resume               keep the runs DIR already finished, continue unfinished ones from their checkpoint',
  '  --drift-questions N    at most N examiner questions per iteration for the drift measure (default 0: all)',
  '  --probe-questions N    questions of the teacher and examiner probes of the base model before the runs (default ' +
    '40; 0 skips)',
  'settings (each overrides the preset in every run; --seed and --privileged are set by --seeds and --arms):',
  ...optionHelp(),
].join('\n');

/** The JSON file of --arm-settings, read and checked (errors name the file). */
function readArmSettings(path: string): ArmSettings {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`--arm-settings: cannot read ${path} (${(e as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`--arm-settings: ${path} is not valid JSON (${(e as Error).message})`);
  }
  return parseArmSettings(json, path);
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(
    argv,
    ['out', 'seeds', 'arms', 'preset', 'arm-settings', 'drift-questions', 'probe-questions'],
    ['resume', 'help'],
  );
  if (args.own['help']) {
    console.log(USAGE);
    return 0;
  }
  const out = resolve(args.own['out'] ?? 'runs/experiment');
  const preset = (args.own['preset'] ?? 'demo') as PresetName;
  const arms = args.own['arms'] !== undefined ? parseArms(args.own['arms']) : DEFAULT_ARMS;
  const seeds = args.own['seeds'] !== undefined ? parseSeeds(args.own['seeds']) : DEFAULT_SEEDS;
  const driftQuestions = countOption(args.own, 'drift-questions', 0, MAX_QUESTIONS);
  const probeQuestionCount = countOption(args.own, 'probe-questions', 40, MAX_QUESTIONS);
  const resume = args.own['resume'] === 'true';
  const armSettingsFile = args.own['arm-settings'];
  const armSettings = armSettingsFile === undefined ? {} : readArmSettings(resolve(armSettingsFile));
  const jobs = planExperiment({ preset, arms, seeds, settings: args.settings, armSettings });
  checkFolderLock(out);
  if (checkOutFolder(out, experimentOutRule(resume)) === 'own' && !resume) {
    throw new ConfigError(
      `--out: ${out} already holds a run; pass --resume to keep finished runs and continue the others, or choose ` +
        'another --out',
    );
  }
  // One process per experiment folder (its runs' folders with it).
  lockFolder(out, resume ? 'npm run experiment --resume' : 'npm run experiment');

  const engine = await Engine.create(nodeHost());
  const exp = new Experiment(engine, out, jobs, {
    resume,
    driftQuestions,
    probeQuestions: probeQuestionCount,
    preset,
    settings: args.settings,
    arms,
    seeds,
    armSettings,
  });
  await exp.check();
  const c = jobs.find((j) => j.train)?.config ?? jobs[0]!.config;
  const env = exp.env(c);
  console.log(
    `experiment: ${engine.info.description} (${engine.info.host}); preset ${preset}, model ${c.model}; arms ` +
      `${arms.join(', ')}; seeds ${seeds.join(', ')}; ${plural(c.iterations, 'iteration')} x (${c.examinerSteps} examiner + ` +
      `${c.studentSteps} student steps); ${env.evalSet.length} held-out questions; ${plural(jobs.length, 'run')}; out ${out}`,
  );

  const interrupt = stopOnInterrupt();
  const t0 = Date.now();
  let finished: boolean;
  try {
    await exp.runProbe();
    finished = await exp.runAll(interrupt.signal);
  } finally {
    interrupt.release();
    exp.dispose();
  }
  engine.destroy();
  if (!finished) {
    console.log(
      `experiment: stopped; ${exp.results.length} of ${jobs.length} runs finished (results.md has them); continue ` +
        'with --resume',
    );
    return 130;
  }
  console.log(`\n${readFileSync(join(out, 'results.md'), 'utf8')}`);
  console.log(
    `experiment: done in ${formatTime((Date.now() - t0) / 1000)}; ${join(out, 'results.md')}, em_by_iteration.svg, ` +
      'drift.svg',
  );
  return 0;
}

runCommand('experiment', main);
