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
function windowBytes(e: Engine): number {
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

/** The windows of lib/windows8.wgsl (W0 .. W7). */
const WINDOWS8 = 8;

/** rowWindows for a kernel that includes lib/windows8.wgsl (its 8 windows and its params' uniform), or null. */
export function windows8(t: Tensor, tileRows: number): RowWindows | null {
  if (WINDOWS8 + 1 > t.engine.info.limits.maxUniformBuffersPerShaderStage) return null;
  return rowWindows(t, tileRows, WINDOWS8);
}

/** Windows' lengths as a kernel's source constants `${name}0_WORDS`, `${name}1_WORDS`, ... (lib/windows8.wgsl: W). */
export function windowsSource(w: RowWindows, name = 'W'): Record<string, number> {
  return Object.fromEntries(w.words.map((words, k) => [`${name}${k}_WORDS`, words]));
}

/** Windows as a kernel's bindings `${name}0`, `${name}1`, ... (lib/windows8.wgsl: W). */
export function windowsBindings(w: RowWindows, name = 'W'): Record<string, BufferWindow> {
  return Object.fromEntries(w.windows.map((window, k) => [`${name}${k}`, window]));
}
