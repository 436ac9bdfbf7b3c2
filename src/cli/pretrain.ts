// npm run pretrain -- [options]: trains the embedded default base model from scratch on generated text and
// writes it as an HF folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json,
// TRAINING.md), listed in public/models/index.json, plus the default world's corpus and eval set. Then checks
// greedy student rollouts on the default world's 1-hop eval questions.
import { existsSync } from 'node:fs';
import { writeFileAtomically } from './atomic-folder.ts';
import { readInputJson } from '../node/input-file.ts';
import { basename, dirname, join, resolve } from 'node:path';
import {
  parsePretrainArgs,
  PRETRAIN_OUT_RULE,
  PRETRAIN_USAGE,
  STREAM_OUT_RULE,
  WORLD_OUT_RULE,
} from './pretrain-args.ts';
import { writeStream } from './pretrain-stream.ts';
import { checkOutFolder, MAX_JSON_BYTES } from './out-folder.ts';
import { checkNotInRun } from './run-folder.ts';
import { formatTime } from './progress.ts';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import { filesFromNodeFolder } from '../gpu/host/node-files.ts';
import { generateWorld, makeEvalSet } from '../env/world.ts';
import { checkCopying, checkStudent, summarise, type CheckSummary, type CopyCheck } from '../pretrain/check.ts';
import { DEFAULT_WORLD_SEED } from '../pretrain/data.ts';
import {
  defaultWorldFiles,
  pretrain,
  pretrainMemory,
  type PretrainOptions,
  type PretrainResult,
} from '../pretrain/run.ts';
import type { StepLog } from '../pretrain/train.ts';
import { runCommand } from './command.ts';
import { deviceLimits, estimateLines } from './memory.ts';
import { refusal } from '../selfplay/memory-plan.ts';
import { ConfigError } from '../selfplay/config.ts';
import { makeFolder } from '../node/make-folder.ts';
import { withPath } from './fs-errors.ts';

function bar(log: StepLog): string {
  const width = 24;
  const done = Math.round((width * log.step) / log.steps);
  const rate = log.tokens / Math.max(log.seconds, 1e-9);
  const eta = (log.seconds / log.step) * (log.steps - log.step);
  return (
    `[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${log.step}/${log.steps} loss ${log.loss.toFixed(3)} ` +
    `lr ${log.lr.toExponential(1)} ${Math.round(rate)} tok/s ${formatTime(log.seconds)} elapsed, eta ${formatTime(eta)}`
  );
}

/** Adds the model to public/models/index.json, the list of embedded models the page offers. */
function listEmbedded(out: string): void {
  if (basename(dirname(out)) !== 'models') return;
  const index = join(dirname(out), 'index.json');
  let list: unknown = [];
  if (existsSync(index)) list = readInputJson(index, { maxBytes: MAX_JSON_BYTES });
  const names = Array.isArray(list) ? list : ((list as { models?: unknown[] }).models ?? []);
  const name = basename(out);
  if (names.some((x) => x === name || (x as { name?: string } | null)?.name === name)) return;
  names.push(name);
  writeFileAtomically(
    index,
    JSON.stringify(Array.isArray(list) ? names : { ...(list as object), models: names }, null, 2) + '\n',
    { replace: true },
  );
}

/** The command as typed, for TRAINING.md and the stream's notes (arguments with shell characters quoted). */
function commandLine(): string {
  const args = process.argv.slice(2).map((a) => (/^[\w./=:-]+$/.test(a) ? a : `'${a}'`));
  return `npm run pretrain -- ${args.join(' ')}`.trim();
}

/** --write-stream: the start model and every batch written to `dir` for an external trainer, no training. */
async function writeStreamOnly(opts: PretrainOptions, dir: string, command: string): Promise<number> {
  checkOutFolder(dir, STREAM_OUT_RULE);
  checkNotInRun(join(dir, 'spec.json'), '--write-stream');
  const e = await Engine.create(nodeHost());
  const t = Date.now();
  const every = Math.max(1, Math.floor(opts.steps / 20));
  const done = await writeStream(e, opts, dir, command, (step) => {
    if (step % every === 0) console.log(`write-stream: ${step}/${opts.steps} steps`);
  });
  console.log(
    `write-stream: ${done.tokens} tokens (${done.targets} targets) in ${formatTime((Date.now() - t) / 1000)}; ` +
      `wrote ${dir}`,
  );
  e.destroy();
  return 0;
}

/**
 * The memory plan of one training step, printed, and a step no device holds refused, before any text is generated
 * (`--batch 1000000 --seq 512` was minutes of silence).
 */
async function checkMemory(e: Engine, o: PretrainOptions): Promise<void> {
  const m = await pretrainMemory(o, deviceLimits(e));
  for (const line of estimateLines(m, false)) console.log(line);
  const refused = refusal(m, 'this pretraining');
  if (refused) throw new ConfigError(refused);
}

/** The format and copying checks on greedy rollouts of `n` 1-hop questions of the default world. */
async function runChecks(result: PretrainResult, n: number): Promise<{ check: CheckSummary; copy: CopyCheck }> {
  const t = Date.now();
  const world = generateWorld({ seed: DEFAULT_WORLD_SEED });
  const questions = makeEvalSet(world)
    .filter((q) => q.hops === 1)
    .slice(0, n);
  const results = await checkStudent(result.model, result.tokenizer, world.passages, questions);
  const check = summarise(results);
  const copy = await checkCopying(result.model, result.tokenizer, world, questions);
  for (const r of results.slice(0, 3)) console.log(`--- ${r.question} (gold ${r.gold[0]})\n${r.text}`);
  console.log(
    `check: ${JSON.stringify(check)}; copying ${JSON.stringify(copy)} in ${formatTime((Date.now() - t) / 1000)}`,
  );
  return { check, copy };
}

/** The model's TRAINING.md: how it was made, what it saw, how it did, its loss curve. */
function trainingMd(r: {
  out: string;
  command: string;
  opts: PretrainOptions;
  from?: string;
  result: PretrainResult;
  wall: number;
  engine: Engine;
  check: CheckSummary | null;
  copy: CopyCheck | null;
  last: StepLog;
  tail: StepLog[];
  tailLoss: number;
}): string {
  const { out, command, opts, result, wall, check, copy, last, tail, tailLoss } = r;
  const args = { from: r.from };
  const e = r.engine;
  const s = result.stats;
  const md = [
    `# ${out.split('/').pop()}: piplay's embedded tiny base model`,
    '',
    'A LlamaForCausalLM trained from scratch by `npm run pretrain` (src/pretrain/) on generated text only:',
    'encyclopedia passages of generated worlds other than the default one (seed 1), plus tool-format',
    'transcripts of a scripted student (mostly 1-hop questions) and a scripted examiner on those worlds.',
    'The tokenizer is a byte-level BPE trained on the same text, with the tool tags as single tokens.',
    '',
    '| | |',
    '|---|---|',
    `| command | \`${command}\` |`,
    `| seed | ${opts.seed} |`,
    ...(args.from
      ? [`| started from | the weights and tokenizer of \`${args.from}\` (TRAINING.md there says how it was made) |`]
      : []),
    `| steps | ${opts.steps} (batch ${opts.batch} x seq ${opts.seq}, peak lr ${opts.lr}, warm-up + cosine) |`,
    `| model | hidden ${result.cfg.hidden}, layers ${result.cfg.layers}, heads ` +
      `${result.cfg.heads}/${result.cfg.kvHeads} kv, MLP ${result.cfg.intermediate}, vocab ${result.cfg.vocabSize}, ` +
      'tied embeddings |',
    `| parameters | ${result.params} |`,
    `| tokens seen | ${s.tokens} (${s.targets} loss targets; ${s.passageTokens} passage, ${s.transcriptTokens} ` +
      `transcript${s.copyTokens ? `, ${s.copyTokens} copy-task` : ''} tokens; ${s.dropped} transcripts longer than a ` +
      'row left out) |',
    `| wall time | ${formatTime(wall)} (${Math.round(s.tokens / wall)} tokens/s) on ${e.info.description} |`,
    `| final loss | ${last.loss.toFixed(3)} (last logged step); mean of the last ${tail.length} logs ` +
      `${tailLoss.toFixed(3)}; first ${result.logs[0]!.loss.toFixed(3)} |`,
    ...(check
      ? [
          `| check | greedy student rollouts on ${check.n} 1-hop eval questions of the default world (BM25 top ` +
            `${3}): well-formed ${(100 * check.wellFormed).toFixed(0)}%, searched ` +
            `${(100 * check.searched).toFixed(0)}%, answered ${(100 * check.answered).toFixed(0)}%, EM ` +
            `${(100 * check.em).toFixed(0)}% |`,
        ]
      : []),
    ...(copy
      ? [
          "| copying | the question's entity in the scripted first turn, teacher-forced: " +
            `${(100 * copy.fromQuestion).toFixed(0)}% of its ${copy.tokens} tokens predicted right where they come ` +
            `from the question, ${(100 * copy.fromNote).toFixed(0)}% where the query repeats the note |`,
        ]
      : []),
    '',
    '## Loss curve (logged steps)',
    '',
    '| step | loss | lr |',
    '|---|---|---|',
    ...result.logs
      .filter((_, i, a) => i % Math.max(1, Math.floor(a.length / 20)) === 0 || i === a.length - 1)
      .map((l) => `| ${l.step} | ${l.loss.toFixed(3)} | ${l.lr.toExponential(2)} |`),
    '',
  ].join('\n');
  return md;
}

async function main(): Promise<number> {
  const args = parsePretrainArgs(process.argv.slice(2));
  if (args === 'help') {
    console.log(PRETRAIN_USAGE);
    return 0;
  }
  const opts: PretrainOptions = {
    ...args.options,
    ...(args.from ? { from: { files: filesFromNodeFolder(resolve(args.from)), source: args.from } } : {}),
  };
  const { worldOut, check: checkN } = args;
  const command = commandLine();
  if (args.writeStream) return writeStreamOnly(opts, resolve(args.writeStream), command);
  const out = resolve(args.out);
  // Both folders are checked before hours of training, and before a byte is written.
  checkOutFolder(out, PRETRAIN_OUT_RULE);
  checkNotInRun(join(out, 'config.json'), '--out');
  if (worldOut) {
    checkOutFolder(resolve(worldOut), WORLD_OUT_RULE);
    checkNotInRun(join(resolve(worldOut), 'corpus.jsonl'), '--world-out');
  }

  const e = await Engine.create(nodeHost());
  console.log(`pretrain: ${e.info.description} (${e.info.host}); ${JSON.stringify(opts)}`);
  await checkMemory(e, opts);
  // The folders are made before the training, so one that cannot be made costs no work.
  withPath('create', out, () => makeFolder(out));
  if (worldOut) withPath('create', resolve(worldOut), () => makeFolder(resolve(worldOut)));
  const started = Date.now();
  const tty = process.stdout.isTTY;
  const result = await pretrain(e, opts, (log) => {
    if (tty) process.stdout.write(`\r${bar(log)}`);
    else console.log(bar(log));
  });
  if (tty) process.stdout.write('\n');
  const wall = (Date.now() - started) / 1000;

  for (const [name, bytes] of result.files) writeFileAtomically(join(out, name), bytes, { replace: true });
  listEmbedded(out);
  if (worldOut) {
    for (const [name, bytes] of defaultWorldFiles())
      writeFileAtomically(join(resolve(worldOut), name), bytes, { replace: true });
  }
  const last = result.logs[result.logs.length - 1]!;
  const tail = result.logs.slice(-5);
  const tailLoss = tail.reduce((a, l) => a + l.loss, 0) / tail.length;
  console.log(
    `pretrain: ${result.params} parameters, ${result.stats.tokens} tokens (${result.stats.targets} targets), ` +
      `${formatTime(wall)}; final loss ${last.loss.toFixed(3)} (mean of the last ${tail.length} logs ` +
      `${tailLoss.toFixed(3)}); wrote ${out}`,
  );

  const { check, copy } = checkN > 0 ? await runChecks(result, checkN) : { check: null, copy: null };

  const md = trainingMd({
    out,
    command,
    opts,
    from: args.from,
    result,
    wall,
    engine: e,
    check,
    copy,
    last,
    tail,
    tailLoss,
  });
  writeFileAtomically(join(out, 'TRAINING.md'), md, { replace: true });
  result.model.dispose();
  e.destroy();
  return 0;
}

runCommand('pretrain', main);
