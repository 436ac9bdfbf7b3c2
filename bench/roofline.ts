// The roofline a benchmark's tokens/s is read against: the adapter's memory bandwidth, measured here (a large
// buffer copied on the GPU), and its compute peak, the best matmul GFLOP/s the matmul suite measured. A decoding
// step reads every weight once for all its rows (memory bound: rows x bandwidth / weight bytes tokens/s); a
// token costs 2 FLOPs per parameter forward and 6 forward and backward (compute bound: peak / FLOPs per token).
import type { Engine } from '../src/gpu/engine.ts';
import { timeGpu } from './timing.ts';

export interface Roofline {
  /** Bytes per second a device-local copy moves (read plus write). */
  bytesPerS: number;
  /** The best matmul FLOP/s measured (0: not measured). */
  flopsPerS: number;
}

/** Device-local bandwidth: a `mib` MiB buffer copied into another, read plus written bytes per second. */
export async function measureBandwidth(e: Engine, mib = 64): Promise<number> {
  const words = (mib * 2 ** 20) / 4;
  const src = e.empty([words]);
  const dst = e.empty([words]);
  const t = await timeGpu(e, () => e.copyInto(dst, [{ src, at: 0 }]), 300, 2);
  src.dispose();
  dst.dispose();
  return (2 * 4 * words) / (t.msPerCall / 1000);
}

/** Tokens/s bounds for a model of `params` f32 parameters: decoding `rows` rows, and training. */
export function tokenBounds(r: Roofline, params: number, rows: number): { decode: number; train: number } {
  const memory = (rows * r.bytesPerS) / (4 * params);
  const compute = r.flopsPerS > 0 ? r.flopsPerS / (2 * params) : Number.POSITIVE_INFINITY;
  return {
    decode: Math.min(memory, compute),
    train: r.flopsPerS > 0 ? r.flopsPerS / (6 * params) : Number.NaN,
  };
}

export function describeRoofline(r: Roofline): string {
  const peak = r.flopsPerS > 0 ? `, ${(r.flopsPerS / 1e9).toFixed(0)} GFLOP/s (best matmul)` : '';
  return `roofline: ${(r.bytesPerS / 1e9).toFixed(1)} GB/s (device copy)${peak}`;
}
