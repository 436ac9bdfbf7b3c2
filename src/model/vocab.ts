// Vocabulary matrices (the embedding and an untied LM head, [V, D]) larger than one storage binding are kept as
// row shards, each a parameter of its own named `<HF name>[first:end]` (rows first..end-1), so that training,
// optimizer state, checkpoints and shared LoRA bases treat them as ordinary tensors; export joins them back.
import type { Engine } from '../gpu/engine.ts';

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
