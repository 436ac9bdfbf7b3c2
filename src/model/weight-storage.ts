// The dtype each weight is kept in on the GPU. Trained weights are f32 (full fine-tuning keeps f32 master
// weights). A frozen weight (the shared base of LoRA policies, a k3 reference copy, an evaluated model) keeps
// its checkpoint's dtype when that is F16 or BF16 and it is a matrix (projections, embedding, LM head: what
// matmul and the embedding gather read, widening each value to f32 as they load it, shaders/lib/packed16.wgsl);
// vectors (norms, biases) stay f32, they are a rounding error of the size. BF16 stays bf16 rather than
// becoming f16: both take 2 bytes, bf16 -> f32 is exact, the checkpoint's own bits are kept (an export writes
// them back unchanged), and f16's narrower range would flush or overflow values a BF16 checkpoint may hold.
import type { DType } from '../gpu/tensor.ts';
import { expectedTensors, type ModelConfig, type TorchDtype } from './config.ts';
import type { Dtype } from './safetensors.ts';

/** The GPU dtype of a frozen weight of `shape` stored as `fileDtype` in its checkpoint. */
export function frozenDtype(fileDtype: Dtype | TorchDtype | undefined, shape: readonly number[]): DType {
  if (shape.length !== 2) return 'f32';
  if (fileDtype === 'F16' || fileDtype === 'float16') return 'f16';
  if (fileDtype === 'BF16' || fileDtype === 'bfloat16') return 'bf16';
  return 'f32';
}

/** For CausalLM.fromHost: each weight's frozen dtype from the checkpoint's dtypes by tensor name. */
export function frozenDtypes(fileDtypes: ReadonlyMap<string, Dtype>): (name: string, shape: number[]) => DType {
  return (name, shape) => frozenDtype(fileDtypes.get(name), shape);
}

/** GPU bytes of one copy of the weights: all f32 when `frozen` is false, else each in its frozen dtype. */
export function weightBytes(cfg: ModelConfig, frozen: boolean): number {
  let bytes = 0;
  for (const t of expectedTensors(cfg)) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    bytes += n * (frozen && frozenDtype(cfg.torchDtype, t.shape) !== 'f32' ? 2 : 4);
  }
  return bytes;
}
