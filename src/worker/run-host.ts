// What the browser host does around the self-play loop: builds the base model and the environment from the
// page's choices, records what a later resume needs next to the run's checkpoints (the base model's
// config and tokenizer, where it came from, an uploaded corpus), and rebuilds them on resume.
import type { Engine } from '../gpu/engine.ts';
import { parseCorpusJsonl, type Passage } from '../env/index.ts';
import { configToJson, parseConfig } from '../model/config.ts';
import { parseJsonFile } from '../model/files.ts';
import { FileWeights } from '../model/host-weights.ts';
import { parseSafetensors } from '../model/safetensors.ts';
import {
  CHAT_TEMPLATE_FILE,
  checkTokenizerFitsModel,
  tokenizerFromJson,
  withChatTemplate,
} from '../model/tokenizer.ts';
import { joinShardEntries } from '../model/vocab.ts';
import { folderBase, randomTinyBase, type BaseModel, type HostWeights } from '../selfplay/base-model.ts';
import { latestCheckpoint, type RunState } from '../selfplay/checkpoint.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import { Environment } from '../selfplay/environment.ts';
import type { BrowserCheckpoints, BrowserRunStorage } from './checkpoint-store.ts';
import { resolveSource, type ModelSource } from './model-source.ts';
import type { CorpusSource } from './protocol.ts';
import type { DownloadProgress } from './hub.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The corpus's passages (the world's, or an uploaded file's; errors name the file and line). */
export function corpusPassages(c: SelfPlayConfig, corpus: CorpusSource): Environment {
  if (corpus.kind === 'world') return Environment.fromWorld(c);
  const passages: Passage[] = parseCorpusJsonl(corpus.text, corpus.name);
  return new Environment(passages, [], c.retrievalTopK);
}

/** The base model the policies start from. */
export async function buildBase(
  e: Engine,
  c: SelfPlayConfig,
  model: ModelSource,
  env: Environment,
  store: BrowserCheckpoints,
  onProgress?: (p: DownloadProgress) => void,
): Promise<BaseModel> {
  if (model.kind === 'random-tiny') return randomTinyBase(c, env.passages);
  const src = resolveSource(model, store, onProgress);
  return folderBase(e, src.readFile, src.where);
}

/** A description of the source that can be stored (a picked folder is remembered by name only). */
function storableSource(model: ModelSource): Record<string, unknown> {
  if (model.kind === 'files') {
    const p = (model.files[0] as (File & { webkitRelativePath?: string }) | undefined)?.webkitRelativePath ?? '';
    return { kind: 'files', folder: p.split('/')[0] ?? '' };
  }
  return { ...model };
}

/** Records the base model's config and tokenizer, its source and an uploaded corpus in the run's storage. */
export async function recordBase(
  storage: BrowserRunStorage,
  base: BaseModel,
  model: ModelSource,
  corpus: CorpusSource,
): Promise<void> {
  await storage.put(
    'base/config.json',
    enc.encode(JSON.stringify(configToJson(base.cfg, base.configJson), null, 2) + '\n'),
  );
  for (const [name, bytes] of Object.entries(base.tokenizerFiles)) await storage.put(`base/${name}`, bytes);
  const source = { model: storableSource(model), name: base.name, ...(base.license ? { license: base.license } : {}) };
  await storage.put('base/source.json', enc.encode(JSON.stringify(source)));
  if (corpus.kind === 'jsonl') await storage.put('base/corpus.jsonl', enc.encode(corpus.text));
}

/** The corpus of a stored run. */
export async function storedCorpus(storage: BrowserRunStorage): Promise<CorpusSource> {
  const text = await storage.get('base/corpus.jsonl');
  return text ? { kind: 'jsonl', name: 'the run’s corpus', text: dec.decode(text) } : { kind: 'world' };
}

/**
 * The base model of a stored run. With separate policies and no reference model, the policies' own
 * weights in the checkpoint replace the base entirely, so the stored config, tokenizer and the student's
 * weights suffice (the original folder need not be at hand). Otherwise the base is rebuilt from its source.
 */
export async function storedBase(
  e: Engine,
  storage: BrowserRunStorage,
  slot: string,
  state: RunState,
  env: Environment,
  store: BrowserCheckpoints,
  onProgress?: (p: DownloadProgress) => void,
): Promise<BaseModel> {
  const c = state.config;
  const need = async (name: string) => {
    const b = await storage.get(name);
    if (!b) throw new Error(`the stored run lacks ${name}`);
    return b;
  };
  const source = JSON.parse(dec.decode(await need('base/source.json'))) as {
    model: ModelSource | { kind: 'files'; folder: string };
    name: string;
  };
  if (c.policies === 'separate' && c.beta === 0) {
    const cfg = parseConfig(parseJsonFile(await need('base/config.json'), 'config.json') as object);
    const files: Record<string, Uint8Array> = {};
    for (const f of await storage.list()) {
      if (f.startsWith('base/tokenizer') || f === `base/${CHAT_TEMPLATE_FILE}` || f === 'base/generation_config.json')
        files[f.slice(5)] = (await storage.get(f))!;
    }
    const tj = files['tokenizer.json'];
    const tc = files['tokenizer_config.json'];
    if (!tj || !tc) throw new Error('the stored run lacks its tokenizer files');
    const tokenizer = await tokenizerFromJson(
      parseJsonFile(tj, 'tokenizer.json'),
      withChatTemplate(parseJsonFile(tc, 'tokenizer_config.json'), files[CHAT_TEMPLATE_FILE] ?? null),
      { eosIds: cfg.eosIds },
    );
    checkTokenizerFitsModel(tokenizer, cfg.vocabSize, `run '${storage.runName}'`);
    const st = parseSafetensors(await need(`checkpoints/${slot}/student.safetensors`), 'student.safetensors');
    const weights = new FileWeights();
    // An older checkpoint may hold a vocabulary matrix as row shards; the base needs it whole.
    for (const [name, t] of joinShardEntries(st.tensors, `checkpoints/${slot}/student.safetensors`))
      weights.add(name, t, `run '${storage.runName}': tensor "${name}" in checkpoints/${slot}/student.safetensors`);
    return { name: source.name, cfg, weights, tokenizer, tokenizerFiles: files };
  }
  const m = source.model;
  if (m.kind === 'files') {
    throw new Error(
      'this run (LoRA policies or a reference model) needs its base model again, the folder ' +
        `'${(m as { folder: string }).folder}' picked from disk; browsers cannot reopen it after a reload. Import ` +
        'that folder on the Checkpoints panel and start a new run from it.',
    );
  }
  return buildBase(e, c, m as ModelSource, env, store, onProgress);
}

/**
 * The frozen base of a stored LoRA run, rebuilt from its source as a resume does: its checkpoints hold only
 * adapters, so an export merges the student's into these weights.
 */
export async function storedLoraBase(
  e: Engine,
  storage: BrowserRunStorage,
  store: BrowserCheckpoints,
  onProgress?: (p: DownloadProgress) => void,
): Promise<HostWeights> {
  const latest = await latestCheckpoint(storage);
  if (!latest) throw new Error(`run '${storage.runName}' has no complete checkpoint yet`);
  if (latest.state.config.policies !== 'lora')
    throw new Error(`run '${storage.runName}' does not use LoRA policies; its checkpoint holds whole models`);
  const env = corpusPassages(latest.state.config, await storedCorpus(storage));
  return (await storedBase(e, storage, latest.slot, latest.state, env, store, onProgress)).weights;
}
