// A weight matrix read through uniform-buffer windows (BufferWindow) by the kernels that take them
// (decode_mlp_lanes.wgsl): on a CPU driver a lane's uniform load costs about half a storage load. A window binds at
// most maxUniformBufferBindingSize bytes (64 KiB by default), so a matrix of a small model takes two: rows
// [0, split), then [split, rows), split a multiple of the kernel's tile of rows so that a tile reads one window.
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

/** A matrix's two windows: the rows in the first, and each window's vec4 words (the kernel's array lengths). */
export interface RowWindows {
  split: number;
  windows: [BufferWindow, BufferWindow];
  words: [number, number];
}

/**
 * Windows over `t`, a row-major [rows, K] matrix, split after a multiple of `tileRows` rows; null where two
 * windows of the device's size cannot hold it. A matrix that fits one window binds it twice (its second window
 * is never read: no row lies past the split).
 */
export function rowWindows(t: Tensor, tileRows: number): RowWindows | null {
  if ((16 * tileRows) % t.engine.info.limits.minUniformBufferOffsetAlignment !== 0) return null;
  const [rows, K] = t.shape as [number, number];
  const rowBytes = K * BYTES_PER_ELEMENT[t.dtype];
  if (rowBytes % 16 !== 0) return null;
  const max = windowBytes(t.engine);
  const whole = rows * rowBytes;
  if (whole <= max) {
    const w: BufferWindow = { tensor: t, offset: 0, size: whole };
    return { split: rows, windows: [w, w], words: [whole / 16, whole / 16] };
  }
  // The second window's offset, split * rowBytes, is a multiple of 16 * tileRows bytes, so of the device's offset
  // alignment (checked above).
  const split = Math.floor(max / rowBytes / tileRows) * tileRows;
  const rest = whole - split * rowBytes;
  if (split === 0 || rest > max) return null;
  const first = split * rowBytes;
  return {
    split,
    windows: [
      { tensor: t, offset: 0, size: first },
      { tensor: t, offset: first, size: rest },
    ],
    words: [first / 16, rest / 16],
  };
}
