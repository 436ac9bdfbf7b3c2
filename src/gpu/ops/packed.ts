// Tensors stored as 16-bit floats (f16, bf16) for frozen weights: the storage format a kernel reads them in
// (shaders/lib/packed16.wgsl) and their exact widening to f32 (shaders/widen.wgsl). Neither needs the
// `shader-f16` feature: 16-bit values are unpacked from 32-bit words with core WGSL.
import type { DType, Tensor } from '../tensor.ts';

/** widen's workgroup size: one thread per element. */
const WG = 256;

const FORMAT: Partial<Record<DType, number>> = { f32: 0, f16: 1, bf16: 2 };

/** Whether a tensor is stored in one of the 16-bit float formats. */
export function isPacked16(t: Tensor): boolean {
  return t.dtype === 'f16' || t.dtype === 'bf16';
}

/**
 * The FORMAT_* code of lib/packed16.wgsl for a float tensor `t` read as an op's `role` operand. A 16-bit
 * tensor is accepted only where no gradient flows into it: 16-bit storage is for frozen weights.
 */
export function storageFormat(t: Tensor, op: string, role: string): number {
  const code = FORMAT[t.dtype];
  if (code === undefined) throw new Error(`piplay: ${op} needs an f32, f16 or bf16 ${role}, got ${t.describe()}`);
  if (code !== 0 && t.requiresGrad) {
    throw new Error(
      `piplay: ${op}: the ${role} ${t.describe()} is stored as ${t.dtype} and needs a gradient; 16-bit storage is ` +
        'for frozen weights only (trained weights stay f32).',
    );
  }
  return code;
}

/** t as a new f32 tensor (exact); an f32 `t` comes back as a view. No gradient flows through it. */
export function widen(t: Tensor): Tensor {
  const e = t.engine;
  const format = storageFormat(t, 'widen', 'input');
  if (format === 0) return t.reshape(t.shape);
  const out = e.empty(t.shape);
  if (t.size > 0) {
    e.dispatch({
      shader: 'widen',
      constants: { FORMAT: format, WG },
      params: { n: t.size },
      bindings: { src: t, dst: out },
      workgroups: e.grid(t.size, WG),
    });
  }
  return out;
}
