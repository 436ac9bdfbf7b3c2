// The whole pretraining recipe, host-agnostic: text -> tokenizer -> fresh tiny model -> training -> the
// files of an HF model folder. The CLI (src/cli/pretrain.ts) writes them to disk.
import type { Engine } from '../gpu/engine.ts';
import { corpusToJsonl } from '../env/corpus.ts';
import { evalSetToJsonl, generateWorld, makeEvalSet } from '../env/world.ts';
import { parameterCount, type ModelConfig } from '../model/config.ts';
import type { CausalLM } from '../model/decoder.ts';
import { initModel, tinyConfig } from '../model/init.ts';
import { exportModel } from '../model/io.ts';
import { tokenizerFromJson, type Tokenizer } from '../model/tokenizer.ts';
import { IM_END, TOOL_TAGS, tokenizerFiles, trainTokenizer } from '../model/tokenizer-train.ts';
import { DEFAULT_WORLD_SEED, docStream, worldDocs, type DataSettings } from './data.ts';
import { Packer, type PackStats } from './pack.ts';
import { pretrainLoop, type StepLog, type TrainSettings } from './train.ts';
import { docText } from './transcripts.ts';

export interface PretrainOptions {
  seed: number;
  steps: number;
  /** Rows per step. */
  batch: number;
  /** Tokens per row. */
  seq: number;
  lr: number;
  hidden: number;
  layers: number;
  /** Tokenizer vocabulary (default 1024). */
  vocab?: number;
  /** Worlds whose text trains the tokenizer (default 2). */
  tokenizerWorlds?: number;
  /** Share of training tokens that are passage text (default 0.3). */
  passageShare?: number;
  logEvery?: number;
  data?: Partial<DataSettings>;
  train?: Partial<TrainSettings>;
}

export interface PretrainResult {
  model: CausalLM;
  tokenizer: Tokenizer;
  cfg: ModelConfig;
  params: number;
  logs: StepLog[];
  stats: PackStats;
  /** The HF folder: config.json, model.safetensors, tokenizer.json, tokenizer_config.json. */
  files: Map<string, Uint8Array>;
}

/** Runs the recipe; the caller disposes `result.model`. */
export async function pretrain(engine: Engine, o: PretrainOptions, onLog?: (log: StepLog) => void): Promise<PretrainResult> {
  const data: DataSettings = { ...o.data, seed: o.seed };
  const texts: string[] = [];
  for (let k = 0; k < (o.tokenizerWorlds ?? 2); k++) for (const d of worldDocs(data, k)) texts.push(docText(d));
  const trained = trainTokenizer(texts, { vocabSize: o.vocab ?? 1024, addedTokens: TOOL_TAGS });
  const tokenizer = await tokenizerFromJson(trained.tokenizerJson, trained.tokenizerConfig);
  const eos = tokenizer.tokenToId(IM_END)!;
  const cfg = tinyConfig({
    vocabSize: trained.vocabSize,
    hidden: o.hidden,
    layers: o.layers,
    maxPositions: Math.max(2048, o.seq),
    eosIds: [eos],
  });
  const model = initModel(engine, cfg, { seed: o.seed });
  try {
    const packer = new Packer(tokenizer, docStream(data), o.seq, o.passageShare ?? 0.3);
    const logs = await pretrainLoop(
      model,
      () => packer.next(o.batch),
      { steps: o.steps, lr: o.lr, logEvery: o.logEvery, ...o.train },
      onLog,
    );
    const files = await exportModel(model, { extraFiles: tokenizerFiles(trained) });
    return { model, tokenizer, cfg, params: parameterCount(cfg), logs, stats: packer.stats, files };
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
