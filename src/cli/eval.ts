// npm run eval -- --run DIR [--policy student|teacher|examiner]
// npm run eval -- --model FOLDER [--preset demo] [--<setting> value ...]
// Greedy held-out exact match (per hop count and overall), searches per rollout and query redundancy of a
// run's latest checkpoint or of a model folder. Prints one summary line and the metrics as JSON.
import { resolve } from 'node:path';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import type { CausalLM } from '../model/decoder.ts';
import { ConfigError, makeConfig, optionHelp, type PresetName, type SelfPlayConfig } from '../selfplay/config.ts';
import { evaluate } from '../selfplay/evaluate.ts';
import type { PolicyName } from '../selfplay/policies.ts';
import { countOption, MAX_QUESTIONS, parseArgs, runOrModel } from './args.ts';
import { ConsoleReporter, evalLine } from './progress.ts';
import { openModel, openRun } from './setup.ts';
import { hubModelRef } from '../hub/hub-folder.ts';
import { runCommand } from './command.ts';

const USAGE = [
  'usage: npm run eval -- --run DIR [--policy student|teacher|examiner]',
  '       npm run eval -- --model FOLDER [--preset demo] [--<setting> value ...]',
  "  --run DIR      a run folder of npm run train: its latest checkpoint, with the run's settings",
  '  --policy NAME  which policy of the run (default student)',
  '  --model DIR    an HF model folder (config.json, model.safetensors, tokenizer files)',
  '  --show N       print the first N questions with the answers given (default 0)',
  "  --transcripts  with --show: print each shown question's whole rollout (searches, tool replies, answer)",
  'settings for --model (the held-out set comes from --corpus/--eval-set/--world-* and --eval-per-hop):',
  ...optionHelp(),
].join('\n');

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['run', 'policy', 'model', 'preset', 'show'], ['help', 'transcripts']);
  if (args.own['help']) {
    console.log(USAGE);
    return 0;
  }
  const { runDir, modelDir } = runOrModel(args.own);
  const show = countOption(args.own, 'show', 0, MAX_QUESTIONS);
  const engine = await Engine.create(nodeHost());
  const reporter = new ConsoleReporter();
  const emit = (ev: Parameters<ConsoleReporter['handle']>[0]) => reporter.handle(ev);

  let config: SelfPlayConfig;
  let model: CausalLM;
  let iteration = -1;
  let dispose: () => void;
  if (runDir) {
    if (Object.keys(args.settings).length)
      throw new ConfigError("--run evaluates with the run's own settings; drop the other settings");
    const policy = (args.own['policy'] ?? 'student') as PolicyName;
    if (!['student', 'teacher', 'examiner'].includes(policy))
      throw new ConfigError(`--policy: '${policy}' is not allowed; use student, teacher or examiner`);
    const { config: runConfig, env, base, policies, iteration: at, at: where } = await openRun(engine, runDir);
    config = runConfig;
    const m = policies.policy(policy);
    if (!m) throw new ConfigError(`--policy: this run has no ${policy} (privileged 'none')`);
    model = m;
    iteration = at;
    console.log(`eval: the ${policy} of ${resolve(runDir)} at ${where}`);
    const r = await evaluate({ config, base, env, emit }, iteration, model);
    report(r, show, `of the ${policy}`, Boolean(args.own['transcripts']));
    dispose = () => policies.dispose();
  } else {
    config = makeConfig((args.own['preset'] ?? 'demo') as PresetName, { ...args.settings, model: modelDir! });
    const opened = await openModel(engine, config);
    const { env, base } = opened;
    model = opened.model;
    const shown = hubModelRef(modelDir!) ? modelDir : resolve(modelDir!);
    console.log(`eval: ${shown} on ${env.evalSet.length} held-out questions`);
    const r = await evaluate({ config, base, env, emit }, iteration, model);
    report(r, show, 'of the model', Boolean(args.own['transcripts']));
    dispose = () => model.dispose();
  }
  dispose();
  engine.destroy();
  return 0;
}

function report(r: Awaited<ReturnType<typeof evaluate>>, show: number, label: string, transcripts: boolean): void {
  for (const a of r.answers.slice(0, show)) {
    console.log(`${a.correct ? 'ok ' : 'no '} [${a.hops}-hop] ${a.question} -> ${JSON.stringify(a.answer)}`);
    if (transcripts) console.log(`${a.text}\n`);
  }
  console.log(evalLine(r.metrics, label));
  console.log(JSON.stringify(r.metrics));
}

runCommand('eval', main);
