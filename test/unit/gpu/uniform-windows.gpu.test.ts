// rowWindows (src/gpu/uniform-windows.ts): where a weight matrix splits across uniform windows, the windows'
// bytes and the kernels' array lengths, and what it refuses. The kernels that read them are checked against the
// general ops in test/unit/model/decode-step.gpu.test.ts.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import type { DType } from '../../../src/gpu/tensor.ts';
import { rowWindows, setWindowBytes } from '../../../src/gpu/uniform-windows.ts';
import { testEngine } from '../../helpers/engine.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});
afterEach(() => setWindowBytes(null));

/** rowWindows of a zero [rows, K] matrix of `dtype` in at most `count` windows, as plain numbers. */
function plan(rows: number, K: number, dtype: DType = 'f32', count = 2) {
  const t = e.empty([rows, K], dtype);
  const w = rowWindows(t, 32, count);
  t.dispose();
  return w && { perWindow: w.perWindow, windows: w.windows.map((x) => [x.offset, x.size]), words: w.words };
}

describe('rowWindows', () => {
  it('splits after the most whole tiles of 32 rows that fit 64 KiB', (ctx) => {
    if (e.info.limits.maxUniformBufferBindingSize !== 65536) ctx.skip();
    // The embedded model's gate/up [256, 96] and down [96, 256], f32: 384 and 1,024 bytes a row.
    expect(plan(256, 96)).toEqual({
      perWindow: 160,
      windows: [
        [0, 61440],
        [61440, 36864],
      ],
      words: [3840, 2304],
    });
    expect(plan(96, 256)).toEqual({
      perWindow: 64,
      windows: [
        [0, 65536],
        [65536, 32768],
      ],
      words: [4096, 2048],
    });
    // o_proj [96, 96] fits one window, bound twice; bf16 gate/up too.
    expect(plan(96, 96)).toEqual({
      perWindow: 96,
      windows: [
        [0, 36864],
        [0, 36864],
      ],
      words: [2304, 2304],
    });
    expect(plan(256, 96, 'bf16')?.perWindow).toBe(256);
    // The embedded model's head [1024, 96] takes 7 windows of 160 rows (the last 64), the eighth repeating the first.
    const head = plan(1024, 96, 'f32', 8)!;
    expect(head.perWindow).toBe(160);
    expect(head.windows.map(([offset]) => offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 0].map((k) => k * 61440));
    expect(head.words).toEqual([3840, 3840, 3840, 3840, 3840, 3840, 1536, 3840]);
    // More windows' worth than asked for, or rows that are not whole vec4 words: none.
    expect(plan(1024, 96)).toBeNull();
    expect(plan(64, 2)).toBeNull();
  });

  it('takes a smaller window where a test caps it', () => {
    setWindowBytes(8192);
    expect(plan(64, 64)).toEqual({
      perWindow: 32,
      windows: [
        [0, 8192],
        [8192, 8192],
      ],
      words: [512, 512],
    });
    // f16 rows of half the bytes fit one window; a row of more than a window's 32-row tile, none.
    expect(plan(64, 64, 'f16')?.perWindow).toBe(64);
    expect(plan(64, 512)).toBeNull();
  });
});
