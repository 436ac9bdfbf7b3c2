// npm run train -- --out DIR [--preset smoke|demo|paper] [--resume] [--<setting> value ...]
// Runs π-Play self-play headless (Dawn in Node), printing a progress bar and one line per step, and writes
// the run folder: config.json, metrics.jsonl, questions.jsonl, rollouts.jsonl, eval.jsonl, checkpoints/,
// and at the end student/ (the trained student as an HF model folder; LoRA adapters merged into the weights).
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import { latestCheckpoint, type LatestCheckpoint, NonFiniteCheckpointError } from '../selfplay/checkpoint.ts';
import {
  checkPromptsFit,
  ConfigError,
  contextSource,
  makeConfig,
  optionHelp,
  PRESETS,
  PRESET_HELP,
  type PresetName,
  type PromptRole,
  type SelfPlayConfig,
} from '../selfplay/config.ts';
import { NonFiniteLossError } from '../selfplay/context.ts';
import { SelfPlayRun } from '../selfplay/loop.ts';
import { measurePrompts } from '../selfplay/prompt-lengths.ts';
import { estimateRun, type MemoryReport } from '../selfplay/memory-plan.ts';
import type { Environment } from '../selfplay/environment.ts';
import { parseArgs } from './args.ts';
import { stopOnInterrupt } from './interrupt.ts';
import { DirStorage } from './fs-storage.ts';
import { ConsoleReporter, formatTime } from './progress.ts';
import { plural } from '../env/prompts.ts';
import { deviceLimits, estimateLines, peakLine } from './memory.ts';
import { refusal } from '../selfplay/memory-plan.ts';
import { checkFolderLock, lockFolder } from './folder-lock.ts';
import { checkOutFolder } from './out-folder.ts';
import { checkNotInRun, RunFolder, trainOutRule } from './run-folder.ts';
import { buildBase, buildEnvironment, previewBase, readyRetriever } from './setup.ts';
import { runCommand } from './command.ts';
import { exportStudent } from './export-student.ts';
import type { BaseModel } from '../selfplay/base-model.ts';

const USAGE = [
  `usage: npm run train -- --out DIR [--preset ${Object.keys(PRESETS).join('|')}] [--resume] [--<setting> value ...]`,
  '  --out DIR            the run folder (required)',
  `  --preset NAME        starting settings (default demo): ${Object.entries(PRESET_HELP)
    .map(([p, h]) => `${p}: ${h}`)
    .join('; ')}`,
  '  --resume             continue the run in DIR from its latest checkpoint (with its stored settings)',
  'settings (each overrides the preset):',
  ...optionHelp(),
].join('\n');

/**
 * The run's settings: those its checkpoint stored (--resume, which takes no others), or the preset with the
 * settings given for a new run; a folder that holds a run, or a run's files, without --resume is refused.
 */
function runConfig(
  args: ReturnType<typeof parseArgs>,
  out: string,
  kind: ReturnType<typeof checkOutFolder>,
  cp: LatestCheckpoint | null,
  resume: boolean,
): SelfPlayConfig {
  if (resume) {
    if (!cp) throw new ConfigError(`--resume: ${out} holds no checkpoint to resume`);
    const given = Object.keys(args.settings);
    if (given.length || args.own['preset']) {
      throw new ConfigError(
        '--resume continues with the settings stored in the checkpoint; drop ' +
          `${given.length ? given.join(', ') : '--preset'}`,
      );
    }
    return cp.state.config;
  }
  if (cp) {
    throw new ConfigError(
      `--out: ${out} already holds a run (checkpoint at iteration ${cp.state.cursor.iteration + 1}, ` +
        `${cp.state.cursor.stage} step ${cp.state.cursor.step}); pass --resume to continue it, or choose another ` +
        'folder',
    );
  }
  // A run's files without a checkpoint (stopped before its first, or its checkpoints moved away) are still the
  // user's: never replaced.
  if (kind === 'own') {
    throw new ConfigError(
      `--out: ${out} holds a run's files (${readdirSync(out).sort().join(', ')}) but no checkpoint to resume; ` +
        'choose another folder, or remove this one yourself if its logs are not wanted',
    );
  }
  return makeConfig((args.own['preset'] ?? 'demo') as PresetName, args.settings);
}

/** The memory estimate, from config.json, the tokenizer and the run's prompts, before any weight is on the GPU. */
async function checkMemory(engine: Engine, config: SelfPlayConfig, env: Environment): Promise<MemoryReport> {
  const preview = await previewBase(config, env);
  const prompts = measurePrompts(config, preview, env);
  const roles: PromptRole[] =
    config.privileged === 'none' ? ['student', 'examiner'] : ['student', 'teacher', 'examiner'];
  checkPromptsFit(config, prompts, roles, preview.cfg.maxPositions, contextSource(config));
  const memory = estimateRun(preview.cfg, config, deviceLimits(engine), prompts);
  for (const line of estimateLines(memory)) console.log(line);
  const refused = refusal(memory);
  if (refused) throw new ConfigError(refused);
  return memory;
}

/** The line that says what is about to train: device, model, corpus, schedule, folder. */
function announce(run: SelfPlayRun, engine: Engine, base: BaseModel, env: Environment, out: string): string {
  const c = run.state.config;
  const params = run.ctx.policies.student.trainable().reduce((n, t) => n + t.size, 0);
  return (
    `train: ${engine.info.description} (${engine.info.host}); model ${base.name} (${base.cfg.layers} layers, width ` +
    `${base.cfg.hidden}, vocab ${base.cfg.vocabSize}, ${params} trained parameters per policy, ` +
    `${c.policies}); corpus ${env.passages.length} passages, ${env.evalSet.length} held-out questions; ` +
    `${plural(c.iterations, 'iteration')} x (${c.examinerSteps} examiner + ${c.studentSteps} student steps); ` +
    `out ${out}`
  );
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['out', 'preset'], ['resume', 'help']);
  if (args.own['help']) {
    console.log(USAGE);
    return 0;
  }
  const outArg = args.own['out'];
  if (!outArg) throw new ConfigError('--out is required: the folder the run writes');
  const out = resolve(outArg);
  const resume = args.own['resume'] === 'true';
  // Nothing is written (not even the folder) until the folder is known to be new, empty or a run of ours.
  checkFolderLock(out);
  const kind = checkOutFolder(out, trainOutRule(resume));
  if (kind !== 'own') checkNotInRun(out, '--out');
  // One process per run folder: a second train on it stops here, before reading or writing anything of it.
  lockFolder(out, resume ? 'npm run train --resume' : 'npm run train');
  const storage = new DirStorage(out);
  const cp = kind === 'own' ? await latestCheckpoint(storage) : null;

  const config = runConfig(args, out, kind, cp, resume);
  // The corpus, the held-out files and the base model are read (and checked) before the folder is touched.
  const env = buildEnvironment(config);
  await readyRetriever(config, env);
  const engine = await Engine.create(nodeHost());
  const memory = await checkMemory(engine, config, env);
  const base = await buildBase(engine, config, env);
  const folder = new RunFolder(out);
  const runId = await folder.prepare(storage, cp && resume ? cp : null, config, base, (l) =>
    console.error(`train: ${l}`),
  );
  const reporter = new ConsoleReporter();
  const run = await SelfPlayRun.start({
    engine,
    config,
    base,
    env,
    storage,
    resume,
    checkpoint: cp,
    ...(runId ? { runId } : {}),
    listener: (ev) => {
      folder.log(ev);
      reporter.handle(ev);
    },
  });
  // The policies are on the GPU now and nothing in this command reads the base's host weights again (the
  // page's before/after comparison does, in the worker): the checkpoint's bytes they hold go back instead
  // of sitting beside the run for its whole length.
  base.weights.clear();
  console.log(announce(run, engine, base, env, out));

  const interrupt = stopOnInterrupt();
  const t0 = Date.now();
  try {
    await run.run({ signal: interrupt.signal });
  } catch (err) {
    if (err instanceof NonFiniteLossError || err instanceof NonFiniteCheckpointError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  } finally {
    interrupt.release();
  }
  const mem = engine.memory();
  console.log(`train: ${peakLine(memory.totalBytes, mem.peakAllocatedBytes, mem.peakLiveBytes)}`);
  if (!run.done) {
    await run.checkpoint();
    console.log(
      `train: stopped at iteration ${run.cursor.iteration + 1}, ${run.cursor.stage} step ${run.cursor.step}; ` +
        'continue with --resume',
    );
    return 130;
  }
  const dir = await exportStudent(run, base, out);
  const last = run.state.evals[run.state.evals.length - 1];
  // No held-out question (--eval-per-hop 0): no EM to report, not 0%.
  const em = last && last.n > 0 ? `; held-out EM ${(100 * last.em).toFixed(1)}%` : '';
  console.log('train: done in ' + `${formatTime((Date.now() - t0) / 1000)}${em}; the ` + `student is in ${dir}`);
  run.dispose();
  engine.destroy();
  return 0;
}

runCommand('train', main);
