// npm run train -- --out DIR [--preset smoke|demo|paper] [--resume] [--<setting> value ...]
// Runs π-Play self-play headless (Dawn in Node), printing a progress bar and one line per step, and writes
// the run folder: config.json, metrics.jsonl, questions.jsonl, rollouts.jsonl, eval.jsonl, checkpoints/,
// and at the end student/ (the trained student as an HF model folder; LoRA adapters merged into the weights).
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import { exportModel } from '../model/io.ts';
import { latestCheckpoint, NonFiniteCheckpointError } from '../selfplay/checkpoint.ts';
import {
  ConfigError,
  makeConfig,
  optionHelp,
  PRESETS,
  PRESET_HELP,
  type PresetName,
  type SelfPlayConfig,
} from '../selfplay/config.ts';
import { NonFiniteLossError } from '../selfplay/context.ts';
import { SelfPlayRun } from '../selfplay/loop.ts';
import { measurePrompts } from '../selfplay/prompt-lengths.ts';
import { estimateRun } from '../selfplay/memory-plan.ts';
import { parseArgs } from './args.ts';
import { stopOnInterrupt } from './interrupt.ts';
import { DirStorage } from './fs-storage.ts';
import { ConsoleReporter, formatTime } from './progress.ts';
import { plural } from '../env/prompts.ts';
import { modelCard } from '../selfplay/model-card.ts';
import { writeFolderAtomically } from './atomic-folder.ts';
import { deviceLimits, estimateLines, peakLine, refusal } from './memory.ts';
import { checkFolderLock, lockFolder } from './folder-lock.ts';
import { checkOutFolder } from './out-folder.ts';
import { RunFolder, trainOutRule } from './run-folder.ts';
import { buildBase, buildEnvironment, previewBase } from './setup.ts';
import { runCommand } from './command.ts';

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
  // One process per run folder: a second train on it stops here, before reading or writing anything of it.
  lockFolder(out, resume ? 'npm run train --resume' : 'npm run train');
  const storage = new DirStorage(out);
  const cp = kind === 'own' ? await latestCheckpoint(storage) : null;

  let config: SelfPlayConfig;
  if (resume) {
    if (!cp) throw new ConfigError(`--resume: ${out} holds no checkpoint to resume`);
    const given = Object.keys(args.settings);
    if (given.length || args.own['preset']) {
      throw new ConfigError(
        '--resume continues with the settings stored in the checkpoint; drop ' +
          `${given.length ? given.join(', ') : '--preset'}`,
      );
    }
    config = cp.state.config;
  } else {
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
    config = makeConfig((args.own['preset'] ?? 'demo') as PresetName, args.settings);
  }
  // The corpus, the held-out files and the base model are read (and checked) before the folder is touched.
  const env = buildEnvironment(config);
  const engine = await Engine.create(nodeHost());
  // The estimate, from config.json, the tokenizer and the run's prompts, before any weight is on the GPU.
  const preview = await previewBase(config, env);
  const memory = estimateRun(preview.cfg, config, deviceLimits(engine), measurePrompts(config, preview, env));
  for (const line of estimateLines(memory)) console.log(line);
  const refused = refusal(memory);
  if (refused) throw new ConfigError(refused);
  const base = await buildBase(engine, config, env);
  const folder = new RunFolder(out);
  for (const f of await storage.removeLeftovers()) {
    console.error(`train: removed ${f}, left behind by a run that was killed while saving`);
  }
  if (cp && resume) folder.truncateLogs(cp.state.records);
  else {
    folder.resetLogs();
    folder.writeJson('config.json', config);
  }
  const reporter = new ConsoleReporter();
  const run = await SelfPlayRun.start({
    engine,
    config,
    base,
    env,
    storage,
    resume,
    listener: (ev) => {
      folder.log(ev);
      reporter.handle(ev);
    },
  });
  // The policies are on the GPU now and nothing in this command reads the base's host weights again (the
  // page's before/after comparison does, in the worker): the checkpoint's bytes they hold go back instead
  // of sitting beside the run for its whole length.
  base.weights.clear();
  const params = run.ctx.policies.student.trainable().reduce((n, t) => n + t.size, 0);
  console.log(
    `train: ${engine.info.description} (${engine.info.host}); model ${base.name} (${base.cfg.layers} layers, width ` +
      `${base.cfg.hidden}, vocab ${base.cfg.vocabSize}, ${params} trained parameters per policy, ` +
      `${config.policies}); corpus ${env.passages.length} passages, ${env.evalSet.length} held-out questions; ` +
      `${plural(config.iterations, 'iteration')} x (${config.examinerSteps} examiner + ${config.studentSteps} student ` +
      'steps); ' +
      `out ${out}`,
  );

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
  // Under LoRA the student is the shared base with the student's adapters: the export merges those in.
  const files = await exportModel(run.ctx.policies.student, {
    extraFiles: base.tokenizerFiles,
    config: base.configJson,
  });
  const dir = join(out, 'student');
  files.set(
    'README.md',
    new TextEncoder().encode(modelCard({ config: run.state.config, evals: run.state.evals, license: base.license })),
  );
  writeFolderAtomically(dir, files);
  const last = run.state.evals[run.state.evals.length - 1];
  // No held-out question (--eval-per-hop 0): no EM to report, not 0%.
  const em = last && last.n > 0 ? `; held-out EM ${(100 * last.em).toFixed(1)}%` : '';
  console.log('train: done in ' + `${formatTime((Date.now() - t0) / 1000)}${em}; the ` + `student is in ${dir}`);
  run.dispose();
  engine.destroy();
  return 0;
}

runCommand('train', main);
