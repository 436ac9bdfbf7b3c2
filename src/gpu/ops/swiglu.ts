// SwiGLU with autograd (shaders/swiglu.wgsl): the gated activation of Llama/Qwen MLPs.
import type { Tensor } from '../tensor.ts';
import { expect } from './util.ts';

/** Workgroup size of shaders/swiglu.wgsl. */
const WG = 256;

/** y = silu(gate) * up for two f32 tensors of the same shape. */
export function swiglu(gate: Tensor, up: Tensor): Tensor {
  const e = gate.engine;
  expect(gate, 'swiglu gate', { dtype: 'f32' });
  expect(up, 'swiglu up', { dtype: 'f32', shape: gate.shape });
  const n = gate.size;
  const y = e.empty(gate.shape);
  if (n > 0) {
    e.dispatch({
      shader: 'swiglu',
      entry: 'forward',
      constants: { WG },
      params: { n },
      bindings: { gate, up, out: y },
      workgroups: e.grid(n, WG),
    });
  }
  e.record([gate, up], [y], ([g]) => {
    // One kernel writes both gradients; one that is not wanted is freed at once.
    const dgate = e.empty(gate.shape);
    const dup = e.empty(up.shape);
    if (n > 0) {
      e.dispatch({
        shader: 'swiglu',
        entry: 'backward',
        constants: { WG },
        params: { n },
        bindings: { gate, up, out: dgate, gy: g!, dup },
        workgroups: e.grid(n, WG),
      });
    }
    if (!gate.requiresGrad) dgate.dispose();
    if (!up.requiresGrad) dup.dispose();
    return [gate.requiresGrad ? dgate : null, up.requiresGrad ? dup : null];
  });
  return y;
}
