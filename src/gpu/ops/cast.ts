// f32 <-> f16 conversion with autograd (shaders/cast.wgsl); needs the device's shader-f16 feature.
import type { DType, Tensor } from '../tensor.ts';
import { expect } from './util.ts';

/**
 * x converted to `dtype` ('f16' or 'f32'). f32 -> f16 rounds to the nearest half and saturates at
 * ±65504; f16 -> f32 is exact. Casting to x's own dtype returns a view. The gradient is cast back to
 * x's dtype.
 */
export function cast(x: Tensor, dtype: 'f16' | 'f32'): Tensor {
  const e = x.engine;
  expect(x, 'cast', { dtype: ['f32', 'f16'] });
  if (dtype !== 'f16' && dtype !== 'f32')
    throw new Error(`piplay: cast converts to 'f16' or 'f32', not '${dtype as string}'`);
  if (x.dtype === dtype) return x.reshape(x.shape);
  if (!e.info.f16) {
    throw new Error(
      `piplay: cast ${x.describe()} to ${dtype} needs f16 support, which this GPU/browser lacks ` +
        `(WebGPU feature 'shader-f16', host ${e.info.host}); keep tensors in f32.`,
    );
  }
  const out = convert(x, dtype);
  e.record([x], [out], ([g]) => [g!.dtype === x.dtype ? g : convert(g!, x.dtype)]);
  return out;
}

/** Workgroup size of shaders/cast.wgsl. */
const WG = 256;

function convert(x: Tensor, dtype: DType): Tensor {
  const e = x.engine;
  const out = e.empty(x.shape, dtype);
  const n = x.size;
  if (n > 0) {
    const toF16 = dtype === 'f16';
    e.dispatch({
      shader: 'cast',
      entry: toF16 ? 'to_f16' : 'to_f32',
      constants: { WG },
      params: { n },
      bindings: { src: x, dst: out },
      workgroups: e.grid(toF16 ? Math.ceil(n / 2) : n, WG),
    });
  }
  return out;
}
