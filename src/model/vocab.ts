// Vocabulary matrices (the embedding and an untied LM head, [V, D]) larger than one storage binding are kept as
// row shards, each a parameter of its own named `<HF name>[first:end]` (rows first..end-1), so that training,
// optimizer state and shared LoRA bases treat them as ordinary tensors. The shard ranges depend on the adapter's
// binding limit, so what leaves the GPU (an export, a run's checkpoint) holds each matrix whole under its HF name,
// and a checkpoint is cut into the current adapter's shards when it is loaded.
import type { Engine } from '../gpu/engine.ts';
import { DTYPE_BYTES, parseSafetensors, type TensorEntry, writeSafetensors } from './safetensors.ts';

/** The largest tensor this engine can bind, in bytes. */
export function maxBindingBytes(e: Engine): number {
  return Math.min(e.info.limits.maxStorageBufferBindingSize, e.info.limits.maxBufferSize);
}

/**
 * Row ranges [first, end) splitting a [V, D] f32 matrix into shards that each fit `maxBytes` (one range when
 * the whole matrix fits). Throws when not even one row fits.
 */
export function shardRanges(V: number, D: number, maxBytes: number, what: string): [number, number][] {
  const rowBytes = 4 * D;
  if (V * rowBytes <= maxBytes) return [[0, V]];
  const rows = Math.floor(maxBytes / rowBytes);
  if (rows < 1) {
    throw new Error(
      `piplay: one row of ${what} (${rowBytes} bytes) exceeds this GPU's largest storage binding (${maxBytes} bytes)`,
    );
  }
  const count = Math.ceil(V / rows);
  const per = Math.ceil(V / count); // even shards
  const out: [number, number][] = [];
  for (let first = 0; first < V; first += per) out.push([first, Math.min(V, first + per)]);
  return out;
}

/** The parameter name of rows [first, end) of `name`. */
export function shardName(name: string, first: number, end: number): string {
  return `${name}[${first}:${end}]`;
}

/** The HF name and row range of a shard's parameter name, or null for an ordinary parameter. */
export function parseShardName(name: string): { base: string; first: number; end: number } | null {
  const m = /^(.*)\[(\d+):(\d+)\]$/.exec(name);
  return m ? { base: m[1]!, first: Number(m[2]), end: Number(m[3]) } : null;
}

/** A shard's name and row range. */
export interface ShardPart {
  name: string;
  first: number;
  end: number;
}

/**
 * The names among `names` that are row shards, grouped by HF name, each group in row order. Throws naming
 * `what` (a file) when a matrix's shards do not cover its rows from 0 without a gap or an overlap.
 */
export function shardGroups(names: Iterable<string>, what: string): Map<string, ShardPart[]> {
  const groups = new Map<string, ShardPart[]>();
  for (const name of names) {
    const s = parseShardName(name);
    if (!s) continue;
    const g = groups.get(s.base) ?? [];
    g.push({ name, first: s.first, end: s.end });
    groups.set(s.base, g);
  }
  for (const [base, g] of groups) {
    g.sort((a, b) => a.first - b.first);
    let at = 0;
    for (const part of g) {
      if (part.first !== at || part.end <= part.first) {
        throw new Error(
          `piplay: ${what}: the row shards of '${base}' (${g.map((p) => p.name).join(', ')}) do not cover its ` +
            `rows in order from 0 (at row ${at}); the file is damaged or from a different model`,
        );
      }
      at = part.end;
    }
  }
  return groups;
}

/**
 * A checkpoint file's tensors with row shards (`<name>[first:end]`, as saved under some binding limit) joined on
 * the host into whole tensors under their HF name, in place of the first shard; other tensors are kept as they
 * are. The same map when no name is a shard. `what` names the file in errors.
 */
export function joinShardEntries(tensors: Map<string, TensorEntry>, what: string): Map<string, TensorEntry> {
  const groups = shardGroups(tensors.keys(), what);
  if (groups.size === 0) return tensors;
  const out = new Map<string, TensorEntry>();
  for (const [name, entry] of tensors) {
    const s = parseShardName(name);
    if (!s) {
      out.set(name, entry);
      continue;
    }
    if (out.has(s.base)) continue;
    const parts = groups.get(s.base)!.map((p) => ({ ...p, entry: tensors.get(p.name)! }));
    const { dtype, shape } = parts[0]!.entry;
    for (const p of parts) {
      const e = p.entry;
      if (e.dtype !== dtype || e.shape.length !== 2 || e.shape[1] !== shape[1] || e.shape[0] !== p.end - p.first) {
        throw new Error(
          `piplay: ${what}: the row shard '${p.name}' is ${e.dtype} [${e.shape}], not ${p.end - p.first} rows of ` +
            `${dtype} [${shape}]; the file is damaged`,
        );
      }
    }
    const data = new Uint8Array(parts.reduce((n, p) => n + p.entry.data.byteLength, 0));
    let at = 0;
    for (const p of parts) {
      data.set(p.entry.data, at);
      at += p.entry.data.byteLength;
    }
    out.set(s.base, { dtype, shape: [parts[parts.length - 1]!.end, shape[1]!], data });
  }
  return out;
}

/**
 * A safetensors file with any row shards joined into whole tensors under their HF names (the same bytes when it
 * holds none): an older run checkpoint exported as a model folder. `what` names the file in errors.
 */
export function joinShardFile(bytes: Uint8Array, what: string): Uint8Array {
  const file = parseSafetensors(bytes, what);
  const tensors = joinShardEntries(file.tensors, what);
  if (tensors === file.tensors) return bytes;
  return writeSafetensors(
    [...tensors].map(([name, t]) => ({ name, ...t })),
    file.metadata,
  );
}

/** Rows [first, end) of a [V, D] tensor entry (a view, not a copy). */
export function entryRows(entry: TensorEntry, first: number, end: number): TensorEntry {
  const row = entry.shape[1]! * DTYPE_BYTES[entry.dtype];
  return {
    dtype: entry.dtype,
    shape: [end - first, entry.shape[1]!],
    data: entry.data.subarray(first * row, end * row),
  };
}

/** Float arrays of rows in order joined into one (a shard group's values on the host). */
export function joinRows(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
