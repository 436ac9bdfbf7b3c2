// The base model the three policies start from, as host weights plus its tokenizer: either a model folder
// (any HF Llama/Qwen2/Qwen3 folder with tokenizer files) or 'random-tiny', a freshly initialised tiny Llama
// whose byte-level BPE tokenizer is trained on the corpus (tool tags as single tokens, ChatML template).
import { licenseOf } from './model-card.ts';
import type { Engine } from '../gpu/engine.ts';
import { STUDENT_INSTRUCTIONS, examinerPrompt, type Passage } from '../env/index.ts';
import type { ModelConfig } from '../model/config.ts';
import type { HostWeights } from '../model/host-weights.ts';
import { parseJsonFile, readOptional, type ReadFile } from '../model/files.ts';
import { initWeights, tinyConfig } from '../model/init.ts';
import { loadHostCheckpoint } from '../model/io.ts';
import type { Dtype } from '../model/safetensors.ts';
import {
  checkTokenizerFitsModel,
  loadTokenizer,
  tokenizerFileBytes,
  tokenizerFromJson,
  type Tokenizer,
} from '../model/tokenizer.ts';
import { TOOL_TAGS, tokenizerFiles, trainTokenizer } from '../model/tokenizer-train.ts';
import type { SelfPlayConfig } from './config.ts';
import { sha256Hex } from './storage.ts';

export type { HostWeights } from '../model/host-weights.ts';

export interface BaseModel {
  /** 'random-tiny' or where the folder came from. */
  name: string;
  cfg: ModelConfig;
  weights: HostWeights;
  /** Each weight's dtype in its file (absent for random-tiny: f32); frozen copies keep it on the GPU. */
  fileDtypes?: Map<string, Dtype>;
  tokenizer: Tokenizer;
  /**
   * Files written as they are next to exported weights: tokenizer.json and tokenizer_config.json, and the
   * folder's chat_template.jinja and generation_config.json when it has them.
   */
  tokenizerFiles: Record<string, Uint8Array>;
  /** The folder's config.json as read, so an export keeps the fields piplay does not use (absent for random-tiny). */
  configJson?: Record<string, unknown>;
  /** The license its model card (README.md) names, carried into the card of an exported student. */
  license?: string;
  /** The SHA-256 of every file of the folder the model was read from, by name (absent for random-tiny): a checkpoint
   *  records them, and a resume on other files is refused. */
  files?: Record<string, string>;
}

/** Texts the random-tiny tokenizer learns its merges from: the corpus and the fixed prompt wording. */
function tokenizerTexts(passages: readonly Passage[]): string[] {
  const texts = passages.map((p) => `${p.title} ${p.text}`);
  texts.push(STUDENT_INSTRUCTIONS);
  if (passages[0]) for (const hops of [1, 2]) texts.push(examinerPrompt({ source: passages[0], hops }));
  return texts;
}

/** A tiny random Llama (config `tiny*` settings) with a BPE tokenizer trained on the corpus; seeded. */
export async function randomTinyBase(c: SelfPlayConfig, passages: readonly Passage[]): Promise<BaseModel> {
  const trained = trainTokenizer(tokenizerTexts(passages), { vocabSize: c.tinyVocab, addedTokens: TOOL_TAGS });
  const tokenizer = await tokenizerFromJson(trained.tokenizerJson, trained.tokenizerConfig, { where: 'random-tiny' });
  const cfg = tinyConfig({
    vocabSize: tokenizer.vocabSize,
    hidden: c.tinyHidden,
    layers: c.tinyLayers,
    heads: c.tinyHeads,
    kvHeads: c.tinyKvHeads,
    maxPositions: c.tinyMaxPositions,
    eosIds: tokenizer.eosIds,
  });
  return {
    name: 'random-tiny',
    cfg,
    weights: initWeights(cfg, { seed: c.seed }),
    tokenizer,
    tokenizerFiles: tokenizerFiles(trained),
  };
}

/**
 * A model folder: weights (read once, kept on the host for the copies) and its tokenizer. Nothing goes to
 * the GPU here (`e` gives its limits), so no f32 copy of the weights sets the memory's high-water mark.
 */
export async function folderBase(e: Engine, fromFolder: ReadFile, source: string): Promise<BaseModel> {
  // Every file the weights, the tokenizer and the settings come from is hashed as it is read (the model card is
  // not: its text changes nothing the run computes): the base's identity, which a checkpoint records.
  const hashes: Record<string, string> = {};
  const readFile: ReadFile = async (file) => {
    const bytes = await fromFolder(file);
    if (file !== 'README.md') hashes[file] ??= await sha256Hex(bytes);
    return bytes;
  };
  const { cfg, weights, fileDtypes } = await loadHostCheckpoint(e, readFile, { source });
  const tokenizer = await loadTokenizer(readFile, { where: source, eosIds: cfg.eosIds });
  checkTokenizerFitsModel(tokenizer, cfg.vocabSize, source);
  const files = await tokenizerFileBytes(readFile);
  const generation = await readOptional(readFile, 'generation_config.json');
  if (generation) files['generation_config.json'] = generation;
  const configJson = parseJsonFile(await readFile('config.json'), 'config.json') as Record<string, unknown>;
  const card = await readOptional(readFile, 'README.md');
  const license = card ? licenseOf(new TextDecoder().decode(card)) : null;
  return {
    name: source,
    cfg,
    weights,
    fileDtypes,
    tokenizer,
    tokenizerFiles: files,
    configJson,
    ...(license ? { license } : {}),
    files: hashes,
  };
}

/**
 * A prompt as ids: the chat template's user turn + assistant header when there is one, else plain text. The prompt's
 * text (instructions, documents, a question) is text: a special token's text in it is never that token.
 */
export function encodePrompt(tok: Tokenizer, text: string): number[] {
  if (tok.hasChatTemplate) return tok.encodeChat([{ role: 'user', content: text }], { addGenerationPrompt: true });
  return tok.encode(text, { asText: true });
}

/** Ids that end a rollout: the tokenizer's EOS ids and the config's. */
export function stopIdsOf(base: Pick<BaseModel, 'cfg' | 'tokenizer'>): number[] {
  return [...new Set([...base.tokenizer.eosIds, ...base.cfg.eosIds])];
}
