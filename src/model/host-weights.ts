// A model's weights on the host, by HF tensor name, read as f32. The policies, the reference model and the
// before/after comparison build their GPU copies from it, one tensor at a time.
import { toFloat32, type TensorEntry } from './safetensors.ts';

export interface HostTensor {
  data: Float32Array;
  shape: number[];
}

/** What the GPU copies read: a tensor by name (f32), the names, and a way to drop them all. */
export interface HostWeights {
  get(name: string): HostTensor | undefined;
  keys(): IterableIterator<string>;
  clear(): void;
}

/**
 * A checkpoint's tensors kept as its file's bytes and widened to f32 only when one is read: an F16/BF16 file
 * is held at 2 bytes a value, and the host never holds an f32 copy of the whole model next to the file
 * (a 269 MB BF16 SmolLM2-135M is 269 MB here, not 269 + 538).
 */
export class FileWeights implements HostWeights {
  private readonly entries = new Map<string, { entry: TensorEntry; what: string }>();

  /** `what` names the tensor and its file in a message about a value that cannot be read. */
  add(name: string, entry: TensorEntry, what: string): void {
    this.entries.set(name, { entry, what });
  }

  get(name: string): HostTensor | undefined {
    const e = this.entries.get(name);
    return e && { data: toFloat32(e.entry, e.what), shape: e.entry.shape };
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  clear(): void {
    this.entries.clear();
  }

  /** Bytes of tensor data held (the file's own dtype). */
  get heldBytes(): number {
    let n = 0;
    for (const { entry } of this.entries.values()) n += entry.data.byteLength;
    return n;
  }
}
