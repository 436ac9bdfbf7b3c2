// A weight matrix read through uniform-buffer windows (BufferWindow) by the kernels that take them
// (decode_mlp_lanes.wgsl, and lib/windows8.wgsl's): on a CPU driver a lane's uniform load costs about half a storage
// load. A window binds at most maxUniformBufferBindingSize bytes (64 KiB by default), so a matrix of a small model
// takes a few, each of the same whole number of the kernel's tiles of rows (the last fewer) so that a tile reads one.
import type { BufferWindow, Engine } from './engine.ts';
import type { Tensor } from './tensor.ts';
import { BYTES_PER_ELEMENT } from './tensor.ts';

let forcedWindowBytes: number | null = null;

/** Caps a window below the device's limit (tests: matrices split in two at small widths); null: the device's. */
export function setWindowBytes(bytes: number | null): void {
  forcedWindowBytes = bytes;
}

/** The most bytes a window binds on this engine's device. */
export function windowBytes(e: Engine): number {
  return Math.min(e.info.limits.maxUniformBufferBindingSize, forcedWindowBytes ?? Number.POSITIVE_INFINITY);
}

/** A matrix's windows: the rows each holds (the last may hold fewer), and each one's vec4 words. */
export interface RowWindows {
  perWindow: number;
  windows: BufferWindow[];
  words: number[];
}

/**
 * `count` windows over `t`, a row-major [rows, K] matrix, each of the same whole number of `tileRows` row tiles
 * but the last; null where `count` windows of the device's size cannot hold it. Windows past the matrix's repeat
 * the first (never read: no row lies there).
 */
export function rowWindows(t: Tensor, tileRows: number, count: number): RowWindows | null {
  if (t.rank !== 2) return null;
  const [rows, K] = t.shape as [number, number];
  const rowBytes = K * BYTES_PER_ELEMENT[t.dtype];
  if (rowBytes % 16 !== 0) return null;
  const max = windowBytes(t.engine);
  let perWindow = rows;
  if (rows * rowBytes > max) {
    // Each window's offset, a multiple of perWindow * rowBytes, is one of 16 * tileRows bytes: of the device's
    // offset alignment where that is.
    if ((16 * tileRows) % t.engine.info.limits.minUniformBufferOffsetAlignment !== 0) return null;
    perWindow = Math.floor(max / rowBytes / tileRows) * tileRows;
  }
  if (perWindow === 0 || Math.ceil(rows / perWindow) > count) return null;
  const windows: BufferWindow[] = [];
  for (let r = 0; r < rows; r += perWindow) {
    windows.push({ tensor: t, offset: r * rowBytes, size: Math.min(perWindow, rows - r) * rowBytes });
  }
  while (windows.length < count) windows.push(windows[0]!);
  return { perWindow, windows, words: windows.map((w) => w.size / 16) };
}

/** Windows' lengths as lib/windows8.wgsl's source constants W0_WORDS .. W7_WORDS. */
export function windowsSource(w: RowWindows): Record<string, number> {
  return Object.fromEntries(w.words.map((words, k) => [`W${k}_WORDS`, words]));
}

/** Windows as lib/windows8.wgsl's bindings W0 .. W7. */
export function windowsBindings(w: RowWindows): Record<string, BufferWindow> {
  return Object.fromEntries(w.windows.map((window, k) => [`W${k}`, window]));
}
