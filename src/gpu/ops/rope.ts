// Rotary position embedding with autograd (shaders/rope.wgsl, rope_vec4.wgsl), HF rotate_half convention.
import type { Engine } from '../engine.ts';
import type { Tensor } from '../tensor.ts';
import { expect } from './util.ts';

/** Workgroup size of shaders/rope.wgsl. */
const WG = 256;

// Per engine, the (hi, lo) frequency table of each (head dim, theta): a few hundred bytes, uploaded once.
const tables = new WeakMap<Engine, Map<string, Tensor>>();

/**
 * freq[i] = theta^(-2i/Dh) / 2π turns per position, in float64, split as hi + lo with hi holding 12
 * significant bits (so the shader can multiply it by 12-bit halves of a position exactly).
 */
export function ropeFrequencies(Dh: number, theta: number): Float32Array {
  const half = Dh / 2;
  const out = new Float32Array(2 * half);
  for (let i = 0; i < half; i++) {
    const f = Math.pow(theta, (-2 * i) / Dh) / (2 * Math.PI);
    const scale = 2 ** (11 - Math.floor(Math.log2(f)));
    const hi = Math.round(f * scale) / scale;
    out[2 * i] = hi;
    out[2 * i + 1] = f - hi;
  }
  return out;
}

function frequencyTable(e: Engine, Dh: number, theta: number): Tensor {
  let byKey = tables.get(e);
  if (!byKey) tables.set(e, (byKey = new Map()));
  const key = `${Dh}:${theta}`;
  let t = byKey.get(key);
  if (!t || t.isDisposed) {
    t = e.keep(e.tensor(ropeFrequencies(Dh, theta), [Dh / 2, 2]));
    t.name = `rope freq (Dh ${Dh}, theta ${theta})`;
    byKey.set(key, t);
  }
  return t;
}

/**
 * Rotates x [B, T, H, Dh] by position: pairs (i, i + Dh/2) turn by positions * theta^(-2i/Dh).
 * positions: i32 [T] (the same for every batch row) or [B, T] (per row, e.g. left-padded batches),
 * |position| < 2^24. Gradients flow to x only.
 */
export function rope(x: Tensor, positions: Tensor, theta = 10000): Tensor {
  const e = x.engine;
  expect(x, 'rope x', { dtype: 'f32', rank: 4 });
  expect(positions, 'rope positions', { dtype: 'i32' });
  const [B, T, H, Dh] = x.shape as [number, number, number, number];
  if (Dh % 2 !== 0) throw new Error(`piplay: rope needs an even head dim, got x ${x.describe()}`);
  const shared = positions.rank === 1 && positions.shape[0] === T;
  const perRow = positions.rank === 2 && positions.shape[0] === B && positions.shape[1] === T;
  if (!shared && !perRow) {
    throw new Error(
      `piplay: rope positions ${positions.describe()} must be [T] = [${T}] or [B, T] = [${B}, ${T}] for x ` +
        `${x.describe()}`,
    );
  }
  if (!(theta > 0)) throw new Error(`piplay: rope theta must be > 0, got ${theta}`);
  const run = (src: Tensor, inverse: boolean): Tensor => {
    const out = e.empty(x.shape);
    const n = src.size / 2;
    // Four pairs a thread where a head's half allows (shaders/rope_vec4.wgsl), else one.
    const vec4 = (Dh / 2) % 4 === 0;
    if (n > 0) {
      e.dispatch({
        shader: vec4 ? 'rope_vec4' : 'rope',
        constants: { WG, PER_ROW: perRow, INVERSE: inverse },
        params: { n, T, H, half: Dh / 2 },
        bindings: { x: src, pos: positions, freq: frequencyTable(e, Dh, theta), out },
        workgroups: e.grid(vec4 ? n / 4 : n, WG),
      });
    }
    return out;
  };
  const y = run(x, false);
  e.record([x, positions], [y], ([g]) => [run(g!, true), null]);
  return y;
}
