// Node side of a run's set-up: the corpus and held-out files, and the base model, read from disk as the
// config names them. Shared by `npm run train` and `npm run eval`.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Engine } from '../gpu/engine.ts';
import { CausalLM } from '../model/decoder.ts';
import { readConfig } from '../model/io.ts';
import { frozenDtypes } from '../model/weight-storage.ts';
import { loadTokenizer } from '../model/tokenizer.ts';
import { parseCorpusJsonl, parseEvalSetJsonl } from '../env/index.ts';
import { filesFromNodeFolder } from '../gpu/host/node-files.ts';
import { folderBase, randomTinyBase, type BaseModel } from '../selfplay/base-model.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import { checkContext, checkPromptsFit, ConfigError, contextSource, type PromptRole } from '../selfplay/config.ts';
import { Environment, type EvalQuestion } from '../selfplay/environment.ts';
import { CheckpointChangedError, latestCheckpoint, otherBase, restorePolicies } from '../selfplay/checkpoint.ts';
import { Policies } from '../selfplay/policies.ts';
import { readInputFile } from '../node/input-file.ts';
import { DirStorage } from './fs-storage.ts';
import { measurePrompts } from '../selfplay/prompt-lengths.ts';
import { estimateInference } from '../selfplay/memory-plan.ts';
import { hubModelFolder, hubModelRef } from '../hub/hub-folder.ts';
import { deviceLimits, estimateLines } from './memory.ts';
import { refusal } from '../selfplay/memory-plan.ts';

/** The most bytes a corpus or held-out file may have (a JavaScript string holds about 2^29 characters). */
const MAX_TEXT_BYTES = 512 * 2 ** 20;

function readText(path: string, flag: string): string {
  const p = resolve(path);
  if (!existsSync(p)) throw new ConfigError(`--${flag}: ${p} does not exist`);
  let bytes: Uint8Array;
  try {
    bytes = readInputFile(p, { maxBytes: MAX_TEXT_BYTES, what: `a --${flag} file` });
  } catch (e) {
    throw new ConfigError(`--${flag}: ${(e as Error).message.replace(/^piplay: /, '')}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Name the first line that is not UTF-8 (the lenient decoding marks it with U+FFFD).
    const text = new TextDecoder().decode(bytes);
    const line = text.slice(0, text.indexOf('\uFFFD')).split('\n').length;
    throw new ConfigError(`--${flag}: ${p} is not UTF-8 text (line ${line} is not); save it as UTF-8`);
  }
}

/** The corpus ('world' or a JSONL file; errors name the file and line) and the held-out questions. */
export function buildEnvironment(c: SelfPlayConfig): Environment {
  let evalSet: EvalQuestion[] | null = null;
  if (c.evalSet) {
    evalSet = parseEvalSetJsonl(readText(c.evalSet, 'eval-set'), c.evalSet).map((q, i) => ({
      id: `q${i}`,
      question: q.question,
      answers: q.answers,
      hops: q.hops,
    }));
    // An evaluation of no question is no measurement ("EM 0.0% n 0"), not a score of 0.
    if (evalSet.length === 0)
      throw new ConfigError(
        `--eval-set: ${resolve(c.evalSet)} holds no questions; give a JSONL file with one {question, answers, ` +
          "hops} per line, or '' for the world's own held-out set",
      );
  }
  if (c.corpus === 'world') {
    const env = Environment.fromWorld(c);
    return evalSet ? env.withEvalSet(evalSet) : env;
  }
  const passages = parseCorpusJsonl(readText(c.corpus, 'corpus'), c.corpus);
  if (passages.length === 0) {
    throw new ConfigError(
      `--corpus: ${resolve(c.corpus)} holds no passages (the corpus is empty); give a JSONL file with one {id, ` +
        'title, text} per line',
    );
  }
  return new Environment(passages, evalSet ?? [], c.retrievalTopK);
}

/**
 * Makes the run's search tool ready: with --retriever dense, the embedding model is loaded and the corpus embedded
 * now, so a model that cannot be had (offline, a wrong id) is refused before a run folder is touched, not at the
 * first search of a run that then can neither start nor resume.
 */
export async function readyRetriever(c: SelfPlayConfig, env: Environment): Promise<void> {
  if (c.retriever !== 'dense') return;
  try {
    await env.denseIndex(c.denseModel);
  } catch (e) {
    throw new ConfigError(
      `--retriever dense: the embedding model '${c.denseModel}' (--dense-model) could not be loaded ` +
        `(${(e as Error).message}); it comes from the Hugging Face hub, so it needs the network once (or its files ` +
        'in the cache); or search with --retriever bm25, which needs no download',
    );
  }
}

/** The base model: 'random-tiny', an HF model folder on disk, or hf:owner/name from the hub (cached on disk). */
export async function buildBase(e: Engine, c: SelfPlayConfig, env: Environment): Promise<BaseModel> {
  if (c.model === 'random-tiny') return randomTinyBase(c, env.passages);
  const dir = await modelFolder(c);
  const base = await folderBase(e, filesFromNodeFolder(dir), c.model);
  checkContext(c, base.cfg.maxPositions, `max_position_embeddings in ${dir}/config.json`);
  return base;
}

/** Each hf: model's folder, resolved once per process: the estimate's preview and the load ask the hub once. */
const hubFolders = new Map<string, Promise<string>>();

/** The folder of the config's model: downloaded first for an hf: id (nothing when the disk cache holds it). */
async function modelFolder(c: SelfPlayConfig): Promise<string> {
  const repo = hubModelRef(c.model);
  if (!repo) return modelDir(c);
  let folder = hubFolders.get(c.model);
  if (!folder) {
    folder = hubModelFolder(repo);
    hubFolders.set(c.model, folder);
    folder.catch(() => hubFolders.delete(c.model)); // a failure is tried again by the next caller
  }
  return folder;
}

function modelDir(c: SelfPlayConfig): string {
  const dir = resolve(c.model);
  if (!existsSync(`${dir}/config.json`)) {
    throw new ConfigError(
      `--model: ${dir} is not a model folder (no config.json). Give an HF model folder, hf:owner/name, ` +
        "'random-tiny', or build the embedded base with `npm run pretrain` (it writes public/models/piplay-tiny).",
    );
  }
  return dir;
}

/**
 * What the memory estimate needs of the base model, read without touching the GPU: config.json and the
 * tokenizer of a folder; the whole (host-only) random-tiny base.
 */
export async function previewBase(c: SelfPlayConfig, env: Environment): Promise<Pick<BaseModel, 'cfg' | 'tokenizer'>> {
  if (c.model === 'random-tiny') return randomTinyBase(c, env.passages);
  const dir = await modelFolder(c);
  const files = filesFromNodeFolder(dir);
  const cfg = await readConfig(files, c.model);
  return { cfg, tokenizer: await loadTokenizer(files, { where: c.model, eosIds: cfg.eosIds }) };
}

/**
 * A model folder (or 'random-tiny') as the config names it, with its corpus, on the device, for evaluation
 * (never trained: its matrices stay in the checkpoint's dtype, weight-storage.ts).
 */
export async function openModel(
  e: Engine,
  config: SelfPlayConfig,
  roles: readonly PromptRole[] = ['student'],
): Promise<{ env: Environment; base: BaseModel; model: CausalLM }> {
  const env = buildEnvironment(config);
  await readyRetriever(config, env);
  await checkInference(e, config, env, { copies: 1, trained: false }, roles);
  const base = await buildBase(e, config, env);
  const frozen = base.fileDtypes ? frozenDtypes(base.fileDtypes) : undefined;
  return { env, base, model: CausalLM.fromHost(e, base.cfg, (name) => base.weights.get(name), frozen) };
}

/**
 * The memory estimate of evaluating or probing (estimateInference), printed before any weight is on the GPU; a
 * model that cannot fit the device, or whose context cannot hold the prompts of `roles`, is refused with what to
 * change.
 */
async function checkInference(
  e: Engine,
  config: SelfPlayConfig,
  env: Environment,
  opts: { copies: number; trained: boolean },
  roles: readonly PromptRole[],
): Promise<void> {
  const preview = await previewBase(config, env);
  const prompts = measurePrompts(config, preview, env);
  checkPromptsFit(config, prompts, roles, preview.cfg.maxPositions, contextSource(config));
  const memory = estimateInference(preview.cfg, config, deviceLimits(e), { ...opts, prompts });
  for (const line of estimateLines(memory)) console.log(line);
  const refused = refusal(memory);
  if (refused) throw new ConfigError(refused.replace('this run cannot fit', 'this model cannot be evaluated on'));
}

/** A run folder's latest checkpoint restored: its settings, corpus, base model and policies. */
export interface OpenedRun {
  config: SelfPlayConfig;
  env: Environment;
  base: BaseModel;
  policies: Policies;
  /** Where the checkpoint stands, for messages. */
  at: string;
  iteration: number;
}

/**
 * Opens `dir` (a folder of npm run train) at its latest checkpoint; `flag` names the option in errors, `roles` the
 * prompts the command will run.
 */
export async function openRun(
  e: Engine,
  dir: string,
  flag = 'run',
  roles: readonly PromptRole[] = ['student'],
): Promise<OpenedRun> {
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new ConfigError(`--${flag}: ${resolve(dir)} is not a folder; give the folder of a run of npm run train`);
  const storage = new DirStorage(resolve(dir));
  const latest = async () => {
    const cp = await latestCheckpoint(storage);
    if (!cp) throw new ConfigError(`--${flag}: ${resolve(dir)} holds no checkpoint`);
    if (cp.warning) console.error(`warn: ${cp.warning}`);
    return cp;
  };
  let cp = await latest();
  const config = cp.state.config;
  const env = buildEnvironment(config);
  await readyRetriever(config, env);
  // The run's policies: trained f32 copies (examiner, student and teacher when there is one), or under LoRA
  // the one frozen base with small adapters.
  const lora = config.policies === 'lora';
  const copies = lora ? 1 : config.privileged === 'none' ? 2 : 3;
  await checkInference(e, config, env, { copies, trained: !lora }, roles);
  const base = await buildBase(e, config, env);
  const changed = otherBase(cp.state, base);
  if (changed)
    throw new ConfigError(`--${flag}: ${changed.replace(/^piplay: /, '').replace('to resume', 'to use it')}`);
  const policies = Policies.create(e, base, config);
  // A run may be saving into the checkpoint while it is read: what is loaded is what was verified, or it is read
  // again from the latest checkpoint (the run's settings, so its policies, stay the same).
  for (let attempt = 1; ; attempt++) {
    try {
      await restorePolicies(storage, cp.slot, policies, cp.state.files);
      break;
    } catch (err) {
      if (!(err instanceof CheckpointChangedError)) throw err;
      if (attempt === 3) {
        policies.dispose();
        throw new Error(
          `piplay: could not read one consistent checkpoint of ${resolve(dir)}: it changed while being read, ` +
            `${attempt} times (a run is saving into it); try again, or wait for the run's next checkpoint`,
        );
      }
      console.error(`warn: ${err.message.replace(/^piplay: /, '')}; reading the latest checkpoint again`);
      cp = await latest();
    }
  }
  const { iteration, stage, step } = cp.state.cursor;
  return { config, env, base, policies, iteration, at: `iteration ${iteration + 1}, ${stage} step ${step}` };
}
