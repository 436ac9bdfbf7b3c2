// The global L2 norm of a list of tensors, computed on the GPU (shaders/grad_norm.wgsl): what
// torch.nn.utils.clip_grad_norm_ returns, and what AdamW reads to clip without a read-back.
import type { Tensor } from '../tensor.ts';
import { CPU_REDUCE_THREADS } from './util.ts';

/** Workgroup size of shaders/grad_norm.wgsl: 256 on a GPU, CPU_REDUCE_THREADS on a CPU driver. */
function workgroupSize(isCpu: boolean): number {
  return isCpu ? CPU_REDUCE_THREADS : 256;
}
/** Workgroups (partial-sum slots) per tensor at most. */
const MAX_SLOTS = 256;

function slots(n: number, WG: number): number {
  return Math.min(Math.max(1, Math.ceil(n / WG)), MAX_SLOTS);
}

/** sqrt(sum over tensors of sum of squares), as a scalar f32 tensor. Not recorded on the tape. */
export function gradNorm(tensors: Tensor[]): Tensor {
  if (tensors.length === 0) throw new Error('piplay: gradNorm needs at least one tensor');
  const e = tensors[0]!.engine;
  for (const t of tensors) {
    if (t.dtype !== 'f32') throw new Error(`piplay: gradNorm needs f32 tensors, got ${t.describe()}`);
  }
  const WG = workgroupSize(e.info.isCpu);
  const total = tensors.reduce((s, t) => s + slots(t.size, WG), 0);
  const partials = e.empty([total]);
  let offset = 0;
  for (const t of tensors) {
    const k = slots(t.size, WG);
    e.dispatch({
      shader: 'grad_norm',
      entry: 'partial',
      constants: { WG },
      params: { n: t.size, offset },
      bindings: { src: t, dst: partials },
      workgroups: [k],
    });
    offset += k;
  }
  const norm = e.empty([]);
  e.dispatch({
    shader: 'grad_norm',
    entry: 'finish',
    constants: { WG },
    params: { n: total, offset: 0 },
    bindings: { src: partials, dst: norm },
    workgroups: [1],
  });
  partials.dispose(); // the pool keeps it until the GPU is done with it
  return norm;
}
