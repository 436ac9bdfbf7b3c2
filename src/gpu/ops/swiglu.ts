// SwiGLU with autograd (shaders/swiglu.wgsl, swiglu_vec4.wgsl): the gated activation of Llama/Qwen MLPs.
import type { DispatchSpec } from '../stream.ts';
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
  // Four elements a thread where the length allows, else one; nothing to run for empty tensors.
  const vec4 = n % 4 === 0;
  const run = (entry: string, bindings: DispatchSpec['bindings']) => {
    if (n > 0) {
      const shader = vec4 ? 'swiglu_vec4' : 'swiglu';
      e.dispatch({
        shader,
        entry,
        constants: { WG },
        params: { n },
        bindings,
        workgroups: e.grid(vec4 ? n / 4 : n, WG),
      });
    }
  };
  const y = e.empty(gate.shape);
  run('forward', { gate, up, out: y });
  e.record([gate, up], [y], ([g]) => {
    // One kernel writes both gradients; one that is not wanted is freed at once.
    const dgate = e.empty(gate.shape);
    const dup = e.empty(up.shape);
    run('backward', { gate, up, out: dgate, gy: g!, dup });
    if (!gate.requiresGrad) dgate.dispose();
    if (!up.requiresGrad) dup.dispose();
    return [gate.requiresGrad ? dgate : null, up.requiresGrad ? dup : null];
  });
  return y;
}
