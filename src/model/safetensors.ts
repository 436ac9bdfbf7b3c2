// safetensors: piplay's own reader and writer of the format HF checkpoints use.
//
//   [8 bytes: header length N, little-endian u64][N bytes: JSON header][data]
//
// The header maps each tensor name to {dtype, shape, data_offsets: [begin, end]} (offsets relative to the
// start of the data section) and may hold a "__metadata__" map of strings. The tensors tile the data
// section exactly: sorted by offset, each begins where the previous one ends, and the last ends at the end
// of the file. Large checkpoints are split into shards listed by model.safetensors.index.json.

import { f16BitsToF32, f32ToBf16Bits, f32ToF16Bits } from '../gpu/half.ts';
import { expectedTensors, type ModelConfig, type TensorSpec } from './config.ts';
import { isMissingFile, parseJsonFile, type ReadFile } from './files.ts';

/** Byte sizes of the dtypes piplay can read (weights are F32, F16 or BF16; the rest are carried through). */
export const DTYPE_BYTES = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
} as const;
export type Dtype = keyof typeof DTYPE_BYTES;

export interface TensorEntry {
  dtype: Dtype;
  shape: number[];
  /** A view into the file's bytes (not a copy, not necessarily aligned). */
  data: Uint8Array;
}

export interface Safetensors {
  metadata: Record<string, string>;
  tensors: Map<string, TensorEntry>;
}

/** Header size limit, as in HF's reader (100 MB), against reading garbage as a length. */
const MAX_HEADER = 100_000_000;

function isDtype(d: unknown): d is Dtype {
  return typeof d === 'string' && Object.hasOwn(DTYPE_BYTES, d);
}

function numel(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

const fmtShape = (s: readonly number[]) => `[${s.join(', ')}]`;

/**
 * Parses a .safetensors file. `name` is used in error messages. Tensor data are views into `bytes`.
 * Throws on a truncated file, a malformed header, overlapping or gapped offsets, a byte size that does not
 * match shape x dtype, or a dtype piplay cannot read.
 */
export function parseSafetensors(bytes: Uint8Array, name: string): Safetensors {
  const where = `${name}: `;
  if (bytes.byteLength < 8) {
    throw new Error(
      `${where}truncated safetensors file: ${bytes.byteLength} bytes, shorter than the 8-byte header length`,
    );
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n64 = dv.getBigUint64(0, true);
  if (n64 > BigInt(bytes.byteLength - 8)) {
    throw new Error(
      `${where}truncated or not a safetensors file: the header length is ${n64} bytes but the file has only ` +
        `${bytes.byteLength - 8} bytes after it`,
    );
  }
  const n = Number(n64);
  if (n > MAX_HEADER) throw new Error(`${where}header of ${n} bytes is larger than the ${MAX_HEADER}-byte limit`);
  if (n < 2) throw new Error(`${where}malformed safetensors header: ${n} bytes`);

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n));
  } catch {
    throw new Error(`${where}malformed safetensors header: not valid UTF-8`);
  }
  if (!text.startsWith('{')) throw new Error(`${where}malformed safetensors header: it does not start with '{'`);
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (e) {
    throw new Error(`${where}malformed safetensors header: invalid JSON (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new Error(`${where}malformed safetensors header: not a JSON object`);
  }

  const dataStart = 8 + n;
  const dataLen = bytes.byteLength - dataStart;
  const metadata: Record<string, string> = {};
  const spans: { name: string; begin: number; end: number }[] = [];
  const tensors = new Map<string, TensorEntry>();

  for (const [key, value] of Object.entries(header as Record<string, unknown>)) {
    if (key === '__metadata__') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new Error(`${where}malformed safetensors header: __metadata__ must be an object of strings`);
      }
      for (const [mk, mv] of Object.entries(value)) metadata[mk] = typeof mv === 'string' ? mv : JSON.stringify(mv);
      continue;
    }
    if (typeof value !== 'object' || value === null) {
      throw new Error(`${where}malformed safetensors header: entry "${key}" is not an object`);
    }
    const info = value as Record<string, unknown>;
    const dtype = info['dtype'];
    if (!isDtype(dtype)) {
      throw new Error(
        `${where}tensor "${key}" has dtype ${JSON.stringify(dtype)}, which piplay cannot read; piplay reads ` +
          `${Object.keys(DTYPE_BYTES).join(', ')} (weights in F32, F16 or BF16; quantized checkpoints are not ` +
          'supported)',
      );
    }
    const shape = info['shape'];
    if (!Array.isArray(shape) || shape.some((s) => typeof s !== 'number' || !Number.isInteger(s) || s < 0)) {
      throw new Error(`${where}malformed safetensors header: tensor "${key}" has shape ${JSON.stringify(shape)}`);
    }
    const offs = info['data_offsets'];
    if (
      !Array.isArray(offs) ||
      offs.length !== 2 ||
      offs.some((o) => typeof o !== 'number' || !Number.isInteger(o) || o < 0) ||
      offs[1] < offs[0]
    ) {
      throw new Error(`${where}malformed safetensors header: tensor "${key}" has data_offsets ${JSON.stringify(offs)}`);
    }
    const [begin, end] = offs as [number, number];
    const want = numel(shape) * DTYPE_BYTES[dtype];
    if (end - begin !== want) {
      throw new Error(
        `${where}tensor "${key}" (${dtype} ${fmtShape(shape)}) should take ${want} bytes but its data_offsets ` +
          `[${begin}, ${end}] span ${end - begin} bytes`,
      );
    }
    if (end > dataLen) {
      throw new Error(
        `${where}truncated safetensors file: tensor "${key}" ends at byte ${end} of the data section, which has ` +
          `only ${dataLen} bytes (the file is ${bytes.byteLength} bytes, expected at least ${dataStart + end})`,
      );
    }
    spans.push({ name: key, begin, end });
    tensors.set(key, { dtype, shape: shape as number[], data: bytes.subarray(dataStart + begin, dataStart + end) });
  }

  // The tensors must tile the data section: no overlaps, no holes.
  spans.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  let prev = '(start of data)';
  for (const s of spans) {
    if (s.begin < pos) {
      throw new Error(
        `${where}tensor "${s.name}" at bytes [${s.begin}, ${s.end}] overlaps "${prev}", which ends at ${pos}`,
      );
    }
    if (s.begin > pos) {
      throw new Error(
        `${where}gap in the data section: "${s.name}" begins at byte ${s.begin} but "${prev}" ends at ${pos}`,
      );
    }
    pos = s.end;
    prev = s.name;
  }
  if (pos !== dataLen) {
    throw new Error(`${where}the tensors cover ${pos} bytes of data but the data section has ${dataLen} bytes`);
  }
  return { metadata, tensors };
}

let f16Table: Float32Array | null = null;

/** The dtypes toFloat32 converts. */
export const FLOAT_DTYPES: readonly Dtype[] = ['F32', 'F16', 'BF16', 'F64'];

/**
 * A tensor's values as a new Float32Array (F32, F16, BF16; F64 is narrowed). `what` names the tensor and
 * its file in the error for a dtype that is not a float ('tensor "x" in model.safetensors').
 */
export function toFloat32(entry: TensorEntry, what = 'toFloat32'): Float32Array {
  const n = numel(entry.shape);
  const out = new Float32Array(n);
  const src = entry.data;
  switch (entry.dtype) {
    case 'F32':
      new Uint8Array(out.buffer).set(src);
      return out;
    case 'F16': {
      if (!f16Table) {
        f16Table = new Float32Array(65536);
        for (let h = 0; h < 65536; h++) f16Table[h] = f16BitsToF32(h);
      }
      const bits = u16Of(src, n);
      for (let i = 0; i < n; i++) out[i] = f16Table[bits[i]!]!;
      return out;
    }
    case 'BF16': {
      const bits = u16Of(src, n);
      const o32 = new Uint32Array(out.buffer);
      // What half.ts's bf16BitsToF32 does, without a call per element.
      for (let i = 0; i < n; i++) o32[i] = bits[i]! << 16;
      return out;
    }
    case 'F64': {
      const f64 =
        src.byteOffset % 8 === 0
          ? new Float64Array(src.buffer, src.byteOffset, n)
          : new Float64Array(src.slice().buffer);
      out.set(f64);
      return out;
    }
    default:
      throw new Error(notFloatMessage(entry.dtype, what));
  }
}

/** The error for a weight stored in a dtype that is not a float: what is wrong and what to do. */
export function notFloatMessage(dtype: Dtype, what: string): string {
  return (
    `${what}: dtype ${dtype} is not a float type; piplay converts F32, F16, BF16 and F64 weights. ` +
    'Re-save the model with float weights (e.g. save_pretrained with torch_dtype float32, float16 or bfloat16), ' +
    'or use a checkpoint whose weights are floats'
  );
}

/** Exponent masks: a float is NaN or infinite when all its exponent bits are set. */
const ALL_EXPONENT = { F32: 0x7f800000, F16: 0x7c00, BF16: 0x7f80 } as const;

/**
 * How many of a float tensor's values are NaN or infinite, and the index of the first; read from the raw
 * bits (no copy, no conversion), so it costs one pass over bytes that are already in memory.
 */
export function nonFiniteValues(entry: TensorEntry): { count: number; first: number } {
  const n = numel(entry.shape);
  const src = entry.data;
  let count = 0;
  let first = -1;
  const hit = (i: number) => {
    if (count++ === 0) first = i;
  };
  if (entry.dtype === 'F32') {
    const aligned = src.byteOffset % 4 === 0;
    const bits = aligned ? new Uint32Array(src.buffer, src.byteOffset, n) : new Uint32Array(src.slice().buffer);
    const m = ALL_EXPONENT.F32;
    for (let i = 0; i < n; i++) if ((bits[i]! & m) === m) hit(i);
  } else if (entry.dtype === 'F16' || entry.dtype === 'BF16') {
    const bits = u16Of(src, n);
    const m = ALL_EXPONENT[entry.dtype];
    for (let i = 0; i < n; i++) if ((bits[i]! & m) === m) hit(i);
  } else if (entry.dtype === 'F64') {
    const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
    for (let i = 0; i < n; i++) if (!Number.isFinite(dv.getFloat64(i * 8, true))) hit(i);
  }
  return { count, first };
}

function u16Of(src: Uint8Array, n: number): Uint16Array {
  return src.byteOffset % 2 === 0
    ? new Uint16Array(src.buffer, src.byteOffset, n)
    : new Uint16Array(src.slice().buffer);
}

/** Encodes float values as F32, F16 or BF16 bytes (round to nearest even), for writeSafetensors. */
export function fromFloat32(values: ArrayLike<number>, dtype: 'F32' | 'F16' | 'BF16'): Uint8Array {
  if (dtype === 'F32') {
    const f = values instanceof Float32Array ? values.slice() : Float32Array.from(values);
    return new Uint8Array(f.buffer);
  }
  const out = new Uint16Array(values.length);
  const conv = dtype === 'F16' ? f32ToF16Bits : f32ToBf16Bits;
  for (let i = 0; i < values.length; i++) out[i] = conv(values[i]!);
  return new Uint8Array(out.buffer);
}

export interface TensorToWrite {
  name: string;
  dtype: Dtype;
  shape: readonly number[];
  /** The raw little-endian bytes (a typed array of the right element type is taken as its bytes). */
  data: Uint8Array | ArrayBufferView;
}

/**
 * Writes a .safetensors file as HF's writer does: tensors ordered by dtype size (largest first) then name,
 * so that each tensor stays aligned to its element size; the JSON header padded with spaces to a multiple
 * of 8 bytes; "__metadata__" first when given.
 */
export function writeSafetensors(tensors: readonly TensorToWrite[], metadata?: Record<string, string>): Uint8Array {
  const seen = new Set<string>();
  for (const t of tensors) {
    if (t.name === '__metadata__') throw new Error('writeSafetensors: "__metadata__" is not a valid tensor name');
    if (seen.has(t.name)) throw new Error(`writeSafetensors: tensor "${t.name}" is given twice`);
    seen.add(t.name);
    if (!isDtype(t.dtype)) throw new Error(`writeSafetensors: tensor "${t.name}" has unknown dtype ${String(t.dtype)}`);
    if (t.shape.some((s) => !Number.isInteger(s) || s < 0)) {
      throw new Error(`writeSafetensors: tensor "${t.name}" has shape ${fmtShape(t.shape)}`);
    }
    const want = numel(t.shape) * DTYPE_BYTES[t.dtype];
    if (t.data.byteLength !== want) {
      throw new Error(
        `writeSafetensors: tensor "${t.name}" (${t.dtype} ${fmtShape(t.shape)}) needs ${want} bytes but ` +
          `${t.data.byteLength} were given`,
      );
    }
  }
  const order = [...tensors].sort(
    (a, b) => DTYPE_BYTES[b.dtype] - DTYPE_BYTES[a.dtype] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) header['__metadata__'] = metadata;
  let offset = 0;
  for (const t of order) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.byteLength / 8) * 8;
  const out = new Uint8Array(8 + padded + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.byteLength, 8 + padded);
  let pos = 8 + padded;
  for (const t of order) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), pos);
    pos += t.data.byteLength;
  }
  return out;
}

// ---- sharded checkpoints -------------------------------------------------------------------------------

export interface ShardIndex {
  metadata: Record<string, unknown>;
  /** Tensor name -> shard file name. */
  weightMap: Map<string, string>;
  /** The shard file names, in first-mention order. */
  files: string[];
}

/** Parses model.safetensors.index.json ({"metadata": {...}, "weight_map": {tensor: file}}). */
export function parseShardIndex(json: string | object, name = 'model.safetensors.index.json'): ShardIndex {
  let raw: unknown = json;
  if (typeof json === 'string') {
    try {
      raw = JSON.parse(json);
    } catch (e) {
      throw new Error(`${name} is not valid JSON (${(e as Error).message})`);
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${name} must hold a JSON object`);
  const wm = (raw as Record<string, unknown>)['weight_map'];
  if (typeof wm !== 'object' || wm === null || Array.isArray(wm)) {
    throw new Error(`${name} has no "weight_map" object (tensor name -> shard file)`);
  }
  const weightMap = new Map<string, string>();
  // The shards in order of first mention, kept in a set: an index of a few hundred thousand names reads in linear time.
  const files = new Set<string>();
  for (const [tensor, file] of Object.entries(wm as Record<string, unknown>)) {
    if (typeof file !== 'string' || file === '' || file.startsWith('/') || file.split(/[\\/]/).includes('..')) {
      throw new Error(`${name}: weight_map["${tensor}"] = ${JSON.stringify(file)} is not a shard file name`);
    }
    weightMap.set(tensor, file);
    files.add(file);
  }
  const md = (raw as Record<string, unknown>)['metadata'];
  const metadata = typeof md === 'object' && md !== null && !Array.isArray(md) ? (md as Record<string, unknown>) : {};
  return { metadata, weightMap, files: [...files] };
}

export interface LoadedCheckpoint extends Safetensors {
  /** The files read: ["model.safetensors"] or the shards. */
  files: string[];
  /** The file each tensor was read from (for messages). */
  fileOf: Map<string, string>;
}

/**
 * Loads a model's weights: `model.safetensors` when present, else the shards listed by
 * `model.safetensors.index.json`. Each shard must hold exactly the tensors the index assigns to it.
 */
export async function loadSafetensorsWeights(
  readFile: ReadFile,
  opts: { onFile?: (name: string, index: number, count: number) => void } = {},
): Promise<LoadedCheckpoint> {
  const single = 'model.safetensors';
  const indexName = 'model.safetensors.index.json';
  let bytes: Uint8Array | null = null;
  try {
    opts.onFile?.(single, 0, 1);
    bytes = await readFile(single);
  } catch (e) {
    if (!isMissingFile(e)) throw e;
  }
  if (bytes) {
    const st = parseSafetensors(bytes, single);
    return { ...st, files: [single], fileOf: new Map([...st.tensors.keys()].map((name) => [name, single])) };
  }

  let indexBytes: Uint8Array;
  try {
    indexBytes = await readFile(indexName);
  } catch (e) {
    if (isMissingFile(e)) {
      throw new Error(
        `no weights found: neither ${single} nor ${indexName} is in the model folder; piplay loads HF checkpoints ` +
          'in safetensors format (config.json + model.safetensors, or sharded with the index)',
      );
    }
    throw e;
  }
  const index = parseShardIndex(parseJsonFile(indexBytes, indexName) as object, indexName);
  const tensors = new Map<string, TensorEntry>();
  const metadata: Record<string, string> = {};
  for (let i = 0; i < index.files.length; i++) {
    const file = index.files[i]!;
    opts.onFile?.(file, i, index.files.length);
    let shardBytes: Uint8Array;
    try {
      shardBytes = await readFile(file);
    } catch (e) {
      if (isMissingFile(e)) throw new Error(`shard ${file}, listed in ${indexName}, is missing from the model folder`);
      throw e;
    }
    const shard = parseSafetensors(shardBytes, file);
    Object.assign(metadata, shard.metadata);
    for (const [name, entry] of shard.tensors) {
      const listed = index.weightMap.get(name);
      if (listed !== file) {
        throw new Error(
          listed === undefined
            ? `${file} holds tensor "${name}", which ${indexName} does not list`
            : `${file} holds tensor "${name}", which ${indexName} places in ${listed}`,
        );
      }
      tensors.set(name, entry);
    }
  }
  for (const [name, file] of index.weightMap) {
    if (!tensors.has(name))
      throw new Error(`tensor "${name}" is listed in ${indexName} for ${file} but ${file} does not hold it`);
  }
  return { metadata, tensors, files: index.files, fileOf: new Map(index.weightMap) };
}

// ---- checking a checkpoint against its config ----------------------------------------------------------

export interface ValidationReport {
  ok: boolean;
  missing: TensorSpec[];
  unexpected: TensorSpec[];
  mismatched: { name: string; expected: number[]; got: number[] }[];
  /** Tensors present but harmless (a tied lm_head saved anyway, RoPE inv_freq buffers). */
  ignored: string[];
  /** One line per problem, with names and shapes; empty when ok. */
  errors: string[];
}

/** Buffers some exporters save that are not parameters. */
const IGNORABLE = /(^|\.)rotary_emb\.inv_freq$/;

/**
 * Compares a checkpoint's tensors with those `cfg` requires: missing ones, unexpected ones and shape
 * mismatches, with names and shapes. A tied model may omit lm_head.weight (or carry a copy of it).
 */
export function validateAgainstConfig(
  tensors: Map<string, { shape: readonly number[] }>,
  cfg: ModelConfig,
): ValidationReport {
  const expected = expectedTensors(cfg);
  const want = new Map(expected.map((t) => [t.name, t.shape]));
  const missing: TensorSpec[] = [];
  const mismatched: ValidationReport['mismatched'] = [];
  const unexpected: TensorSpec[] = [];
  const ignored: string[] = [];
  for (const spec of expected) {
    const got = tensors.get(spec.name);
    if (!got) missing.push(spec);
    else if (got.shape.length !== spec.shape.length || got.shape.some((s, i) => s !== spec.shape[i])) {
      mismatched.push({ name: spec.name, expected: spec.shape, got: [...got.shape] });
    }
  }
  for (const [name, entry] of tensors) {
    if (want.has(name)) continue;
    const lmShape = [cfg.vocabSize, cfg.hidden];
    if (name === 'lm_head.weight' && cfg.tieEmbeddings) {
      if (entry.shape.length === 2 && entry.shape[0] === lmShape[0] && entry.shape[1] === lmShape[1]) {
        ignored.push(name);
      } else {
        mismatched.push({ name, expected: lmShape, got: [...entry.shape] });
      }
      continue;
    }
    if (IGNORABLE.test(name)) {
      ignored.push(name);
      continue;
    }
    unexpected.push({ name, shape: [...entry.shape] });
  }
  const errors: string[] = [];
  for (const m of missing) errors.push(`missing tensor ${m.name} ${fmtShape(m.shape)}`);
  for (const m of mismatched)
    errors.push(`tensor ${m.name} has shape ${fmtShape(m.got)} but the config implies ${fmtShape(m.expected)}`);
  for (const u of unexpected)
    errors.push(`unexpected tensor ${u.name} ${fmtShape(u.shape)} (not part of a ${cfg.arch} model with this config)`);
  return { ok: errors.length === 0, missing, unexpected, mismatched, ignored, errors };
}

/** validateAgainstConfig, throwing one Error listing every problem (the first 20) when there is any. */
export function assertMatchesConfig(
  tensors: Map<string, { shape: readonly number[] }>,
  cfg: ModelConfig,
  where = 'checkpoint',
): void {
  const r = validateAgainstConfig(tensors, cfg);
  if (r.ok) return;
  const shown = r.errors.slice(0, 20);
  const more = r.errors.length > shown.length ? `\n  ... and ${r.errors.length - shown.length} more` : '';
  throw new Error(`${where} does not match config.json (${r.errors.length} problems):\n  ${shown.join('\n  ')}${more}`);
}
