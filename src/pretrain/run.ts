// The whole pretraining recipe, host-agnostic: text -> tokenizer -> fresh tiny model -> training -> the
// files of an HF model folder. The CLI (src/cli/pretrain.ts) writes them to disk.
import type { Engine } from '../gpu/engine.ts';
import { corpusToJsonl } from '../env/corpus.ts';
import { evalSetToJsonl, generateWorld, makeEvalSet } from '../env/world.ts';
import { parameterCount, type ModelConfig } from '../model/config.ts';
import type { CausalLM } from '../model/decoder.ts';
import { initModel, tinyConfig } from '../model/init.ts';
import type { ReadFile } from '../model/files.ts';
import { exportModel, loadModel, readConfig } from '../model/io.ts';
import { estimatePretrain, type AdapterLimits, type MemoryReport } from '../selfplay/memory-plan.ts';
import {
  checkTokenizerFitsModel,
  loadTokenizer,
  tokenizerFileBytes,
  tokenizerFromJson,
  type Tokenizer,
} from '../model/tokenizer.ts';
import { CONTROL_TOKENS, IM_END, TOOL_TAGS, tokenizerFiles, trainTokenizer } from '../model/tokenizer-train.ts';
import { Rng } from '../env/random.ts';
import { copyTaskBatch } from './copy-task.ts';
import { DEFAULT_WORLD_SEED, docStream, worldDocs, type DataSettings } from './data.ts';
import { Packer, type Batch, type PackStats } from './pack.ts';
import { PRETRAIN_DEFAULTS } from './settings.ts';
import type { PretrainOptions } from './options.ts';
import { pretrainLoop, type StepLog } from './train.ts';
import { docText } from './transcripts.ts';

export type { PretrainOptions };

export interface PretrainResult {
  model: CausalLM;
  tokenizer: Tokenizer;
  cfg: ModelConfig;
  params: number;
  logs: StepLog[];
  stats: PretrainStats;
  /** The HF folder: config.json, model.safetensors, tokenizer.json, tokenizer_config.json. */
  files: Map<string, Uint8Array>;
}

/** Runs the recipe; the caller disposes `result.model`. */
export async function pretrain(
  engine: Engine,
  o: PretrainOptions,
  onLog?: (log: StepLog) => void,
): Promise<PretrainResult> {
  const start = await pretrainStart(engine, o);
  const { model, tokenizer, tokenizerFiles: tokFiles } = start;
  const cfg = model.cfg;
  try {
    const source = batchSource(tokenizer, o);
    const logs = await pretrainLoop(
      model,
      source.next,
      { steps: o.steps, lr: o.lr, logEvery: o.logEvery ?? PRETRAIN_DEFAULTS.logEvery, ...o.train },
      onLog,
    );
    const files = await exportModel(model, { extraFiles: tokFiles });
    return { model, tokenizer, cfg, params: parameterCount(cfg), logs, stats: source.stats(), files };
  } catch (err) {
    model.dispose();
    throw err;
  }
}

/**
 * The memory plan of one training step, from the model's config alone (`o.from`'s, or the new model's at the
 * vocabulary asked for): checked before any text is generated.
 */
export async function pretrainMemory(o: PretrainOptions, limits: AdapterLimits): Promise<MemoryReport> {
  const cfg = o.from
    ? await readConfig(o.from.files, o.from.source)
    : tinyConfig({
        vocabSize: o.vocab ?? PRETRAIN_DEFAULTS.vocab,
        hidden: o.hidden,
        layers: o.layers,
        maxPositions: Math.max(2048, o.seq),
      });
  return estimatePretrain(cfg, o.batch, o.seq, limits);
}

/** The model a run starts from: `o.from` continued, or a fresh tokenizer and initialisation. */
export function pretrainStart(engine: Engine, o: PretrainOptions): Promise<Start> {
  return o.from ? continued(engine, o.from) : fresh(engine, o, { ...o.data, seed: o.seed });
}

/**
 * The run's batches, one per step, in order: packed text rows, with copy-task steps where `isCopyStep` says.
 * Training in the engine and the stream written for an external trainer (`--write-stream`) read the same.
 */
export function batchSource(
  tokenizer: Tokenizer,
  o: PretrainOptions,
): { next: () => Batch; stats: () => PretrainStats } {
  const data: DataSettings = { ...o.data, seed: o.seed };
  const packer = new Packer(tokenizer, docStream(data), o.seq, o.passageShare ?? PRETRAIN_DEFAULTS.passageShare);
  const copy = {
    rng: new Rng(`copy-task-${o.seed}`),
    ids: ordinaryIds(tokenizer),
    rows: o.copyRows ?? ([16, 32] as const),
  };
  let step = 0;
  let copyTokens = 0;
  let copyTargets = 0;
  const next = () => {
    if (!isCopyStep(step++, o)) return packer.next(o.batch);
    const b = copyTaskBatch(copy.rng, ...copy.rows, { ids: copy.ids });
    copyTokens += b.ids.length;
    for (const m of b.mask) copyTargets += m;
    return b;
  };
  const stats = () => {
    const p = packer.stats;
    return { ...p, tokens: p.tokens + copyTokens, targets: p.targets + copyTargets, copyTokens, copyTargets };
  };
  return { next, stats };
}

/** Whether step `step` (from 0) trains on the copy task: the warm-up, then every `copyEvery`-th step. */
export function isCopyStep(step: number, o: Pick<PretrainOptions, 'copyWarmup' | 'copyEvery'>): boolean {
  const warm = o.copyWarmup ?? PRETRAIN_DEFAULTS.copyWarmup;
  if (step < warm) return true;
  const every = o.copyEvery ?? PRETRAIN_DEFAULTS.copyEvery;
  return every > 0 && (step - warm) % every === every - 1;
}

/** Ids of ordinary text tokens: the vocabulary without the control tokens and tool tags. */
function ordinaryIds(tok: Tokenizer): number[] {
  const special = new Set([...CONTROL_TOKENS, ...TOOL_TAGS].map((t) => tok.tokenToId(t)));
  return Array.from({ length: tok.vocabSize }, (_, i) => i).filter((i) => !special.has(i));
}

/** What training read: the packer's text rows plus the copy-task rows (counted in `tokens`/`targets` too). */
export interface PretrainStats extends PackStats {
  copyTokens: number;
  copyTargets: number;
}

export interface Start {
  model: CausalLM;
  tokenizer: Tokenizer;
  /** tokenizer.json and tokenizer_config.json, written next to the weights. */
  tokenizerFiles: Record<string, Uint8Array>;
}

/** A tokenizer trained on the first worlds' text and a freshly initialised model. */
async function fresh(engine: Engine, o: PretrainOptions, data: DataSettings): Promise<Start> {
  const texts: string[] = [];
  for (let k = 0; k < (o.tokenizerWorlds ?? PRETRAIN_DEFAULTS.tokenizerWorlds); k++)
    for (const d of worldDocs(data, k)) texts.push(docText(d));
  const trained = trainTokenizer(texts, { vocabSize: o.vocab ?? PRETRAIN_DEFAULTS.vocab, addedTokens: TOOL_TAGS });
  const tokenizer = await tokenizerFromJson(trained.tokenizerJson, trained.tokenizerConfig);
  const eos = tokenizer.tokenToId(IM_END)!;
  const cfg = tinyConfig({
    vocabSize: trained.vocabSize,
    hidden: o.hidden,
    layers: o.layers,
    maxPositions: Math.max(2048, o.seq),
    eosIds: [eos],
  });
  return { model: initModel(engine, cfg, { seed: o.seed }), tokenizer, tokenizerFiles: tokenizerFiles(trained) };
}

/** An existing model folder, to train further. */
async function continued(engine: Engine, from: { files: ReadFile; source: string }): Promise<Start> {
  const model = await loadModel(engine, from.files, { source: from.source });
  try {
    const tokenizer = await loadTokenizer(from.files, { eosIds: model.cfg.eosIds, where: from.source });
    checkTokenizerFitsModel(tokenizer, model.cfg.vocabSize, from.source);
    if (tokenizer.tokenToId(IM_END) === undefined)
      throw new Error(
        `${from.source}: its tokenizer has no ${IM_END} token, so it cannot be trained on piplay's chat transcripts`,
      );
    return { model, tokenizer, tokenizerFiles: await tokenizerFileBytes(from.files) };
  } catch (err) {
    model.dispose();
    throw err;
  }
}

/** The default world (seed 1) as files: its corpus and its held-out eval set (makeEvalSet's defaults). */
export function defaultWorldFiles(): Map<string, Uint8Array> {
  const world = generateWorld({ seed: DEFAULT_WORLD_SEED });
  const enc = new TextEncoder();
  return new Map([
    ['corpus.jsonl', enc.encode(corpusToJsonl(world.passages))],
    ['eval.jsonl', enc.encode(evalSetToJsonl(makeEvalSet(world)))],
  ]);
}
