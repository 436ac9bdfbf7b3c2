// Loading a model folder (config.json + safetensors) onto the GPU, and exporting trained weights back to an
// HF-format folder that Hugging Face transformers loads.
import type { Engine } from '../gpu/engine.ts';
import { configToJson, expectedTensors, parameterCount, parseConfig, type ModelConfig } from './config.ts';
import { CausalLM } from './decoder.ts';
import { parseJsonFile, type ReadFile } from './files.ts';
import {
  assertMatchesConfig,
  fromFloat32,
  loadSafetensorsWeights,
  writeSafetensors,
  type Dtype,
} from './safetensors.ts';
import { FLOAT_DTYPES, nonFiniteValues, notFloatMessage, type LoadedCheckpoint } from './safetensors.ts';
import { FileWeights } from './host-weights.ts';
import { frozenDtypes } from './weight-storage.ts';

export interface LoadOptions {
  /** Called per weight file read (for progress bars). */
  onFile?: (name: string, index: number, count: number) => void;
  /** Where the folder came from, for messages ("public/models/tiny", a hub id, ...). */
  source?: string;
  /**
   * The model is never trained (evaluation, a frozen base): its matrices stay in the checkpoint's dtype
   * on the GPU (F16, BF16; weight-storage.ts) instead of f32.
   */
  frozen?: boolean;
}

/** A model folder's weights on the host (its files' bytes, read as f32 by HF name), with each one's file dtype. */
export interface HostCheckpoint {
  cfg: ModelConfig;
  weights: FileWeights;
  fileDtypes: Map<string, Dtype>;
}

export async function readConfig(readFile: ReadFile, source = 'the model folder'): Promise<ModelConfig> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile('config.json');
  } catch (e) {
    throw new Error(
      `${source}: cannot read config.json (${(e as Error).message}). A model folder needs config.json and ` +
        'model.safetensors.',
    );
  }
  try {
    return parseConfig(parseJsonFile(bytes, 'config.json') as object);
  } catch (e) {
    throw new Error(`${source}: ${(e as Error).message}`);
  }
}

/**
 * Bytes the model's f32 parameters take on the GPU, and the largest single tensor that must fit one storage
 * binding; checked against the device before anything is allocated. The vocabulary matrices do not count:
 * where they exceed a binding they are kept as row shards (src/model/vocab.ts).
 */
export function memoryEstimate(cfg: ModelConfig): { paramBytes: number; largestTensorBytes: number } {
  const mlp = cfg.intermediate * cfg.hidden * 4;
  const attention = Math.max(cfg.heads, cfg.kvHeads) * cfg.headDim * cfg.hidden * 4;
  return { paramBytes: parameterCount(cfg) * 4, largestTensorBytes: Math.max(mlp, attention) };
}

export function checkFits(e: Engine, cfg: ModelConfig, source: string): void {
  const est = memoryEstimate(cfg);
  const maxBinding = Math.min(e.info.limits.maxStorageBufferBindingSize, e.info.limits.maxBufferSize);
  if (est.largestTensorBytes > maxBinding) {
    throw new Error(
      `${source}: the model's largest weight (${(est.largestTensorBytes / 2 ** 20).toFixed(0)} MiB in f32) exceeds ` +
        `this GPU's largest storage binding (${(maxBinding / 2 ** 20).toFixed(0)} MiB). Pick a smaller model or a ` +
        'GPU/browser with larger limits.',
    );
  }
}

/**
 * Refuses weights the model cannot use, before anything goes to the GPU: a tensor stored in a dtype that
 * is not a float, and NaN or infinite values (a damaged file, or one saved from a run that diverged, would
 * otherwise load and train or evaluate on garbage). Errors name the tensor and its file.
 */
export function checkWeightValues(weights: LoadedCheckpoint, cfg: ModelConfig, source: string): void {
  const bad: string[] = [];
  for (const spec of expectedTensors(cfg)) {
    const entry = weights.tensors.get(spec.name);
    if (!entry) continue; // assertMatchesConfig reports it
    const what = `tensor "${spec.name}" in ${weights.fileOf.get(spec.name) ?? 'the weights'}`;
    if (!FLOAT_DTYPES.includes(entry.dtype)) throw new Error(`${source}: ${notFloatMessage(entry.dtype, what)}`);
    const { count, first } = nonFiniteValues(entry);
    const n = spec.shape.reduce((a, b) => a * b, 1);
    if (count > 0) bad.push(`${what} holds ${count} NaN or infinite values of ${n} (the first at index ${first})`);
  }
  if (bad.length === 0) return;
  const more = bad.length > 5 ? `; and ${bad.length - 5} more tensors` : '';
  throw new Error(
    `${source}: the weights are not finite: ${bad.slice(0, 5).join('; ')}${more}. The file is damaged or was saved ` +
      'from a training run that diverged; use an earlier checkpoint or a fresh copy of the model.',
  );
}

/**
 * Reads config.json and the weights (single file or shards) to the host, checked against the config and
 * for finite values, without touching the GPU (but for its limits).
 */
export async function loadHostCheckpoint(
  e: Engine,
  readFile: ReadFile,
  opts: LoadOptions = {},
): Promise<HostCheckpoint> {
  const source = opts.source ?? 'the model folder';
  const cfg = await readConfig(readFile, source);
  checkFits(e, cfg, source);
  const loaded = await loadSafetensorsWeights(readFile, { onFile: opts.onFile }).catch((err: Error) => {
    throw new Error(`${source}: ${err.message}`);
  });
  assertMatchesConfig(loaded.tensors, cfg, source);
  checkWeightValues(loaded, cfg, source);
  const weights = new FileWeights();
  const fileDtypes = new Map<string, Dtype>();
  for (const spec of expectedTensors(cfg)) {
    const entry = loaded.tensors.get(spec.name)!; // assertMatchesConfig checked it is there
    const what = `${source}: tensor "${spec.name}" in ${loaded.fileOf.get(spec.name)}`;
    weights.add(spec.name, entry, what);
    fileDtypes.set(spec.name, entry.dtype);
  }
  return { cfg, weights, fileDtypes };
}

/** Loads config.json and the weights (single file or shards) into a CausalLM. */
export async function loadModel(e: Engine, readFile: ReadFile, opts: LoadOptions = {}): Promise<CausalLM> {
  const { cfg, weights, fileDtypes } = await loadHostCheckpoint(e, readFile, opts);
  const dtypeOf = opts.frozen ? frozenDtypes(fileDtypes) : undefined;
  return CausalLM.fromHost(e, cfg, (name) => weights.get(name), dtypeOf);
}

export interface ExportOptions {
  /**
   * Storage dtype of the weights (default: the config's torch_dtype, as HF's save_pretrained does; F32 round-trips
   * bit-exactly).
   */
  dtype?: Extract<Dtype, 'F32' | 'F16' | 'BF16'>;
  /** The config.json the model was loaded from: its fields are kept unless piplay's normalised values replace them. */
  config?: Record<string, unknown>;
  /** Extra files to include as they are (tokenizer.json, tokenizer_config.json, ...). */
  extraFiles?: Record<string, Uint8Array>;
}

const SAFETENSORS_DTYPE = { float32: 'F32', float16: 'F16', bfloat16: 'BF16' } as const;

/** The files of an HF-format folder for the model's current weights (LoRA adapters merged in). */
export async function exportModel(model: CausalLM, opts: ExportOptions = {}): Promise<Map<string, Uint8Array>> {
  const dtype = opts.dtype ?? SAFETENSORS_DTYPE[model.cfg.torchDtype];
  // Each tensor is converted as it is read back, so no f32 copy of the whole model exists on the host.
  const tensors: { name: string; dtype: typeof dtype; shape: number[]; data: Uint8Array }[] = [];
  for await (const [name, t] of model.hostTensors({ mergeLora: true })) {
    const data =
      dtype === 'F32'
        ? new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)
        : fromFloat32(t.data, dtype);
    tensors.push({ name, dtype, shape: t.shape, data });
  }
  const files = new Map<string, Uint8Array>();
  const torchDtype = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype];
  const cfgJson = { ...configToJson(model.cfg, opts.config), torch_dtype: torchDtype };
  files.set('config.json', new TextEncoder().encode(JSON.stringify(cfgJson, null, 2) + '\n'));
  files.set('model.safetensors', writeSafetensors(tensors, { format: 'pt' }));
  for (const [name, bytes] of Object.entries(opts.extraFiles ?? {})) files.set(name, bytes);
  return files;
}
