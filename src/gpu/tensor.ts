/**
 * The engine a tensor lives on: src/gpu/engine.ts's Engine, which merges itself into this interface (a
 * `declare module` there), so tensors, ops and the tape know the whole engine while this module imports nothing
 * of it and the engine's modules import each other one way only.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by engine.ts's declaration merging
export interface Engine {}

/** Element types; bf16 holds frozen weights of BF16 checkpoints (read by matmul and embedding only). */
export type DType = 'f32' | 'f16' | 'bf16' | 'i32' | 'u32';

export const BYTES_PER_ELEMENT: Record<DType, number> = { f32: 4, f16: 2, bf16: 2, i32: 4, u32: 4 };

/** Host-side arrays for each dtype (f16 and bf16 read back widened to f32). */
export type HostArray = Float32Array | Int32Array | Uint32Array;

/** One GPU buffer shared by a tensor and its views; freed when the last of them is disposed. */
export class Storage {
  refs = 1;
  constructor(
    readonly buffer: GPUBuffer,
    readonly byteLength: number,
  ) {}
}

export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function shapeString(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/**
 * A dense, row-major tensor on the GPU. Tensors are immutable from the caller's side except through the
 * in-place optimizer ops; `reshape` makes a view over the same storage. Free them with `dispose()` or
 * let an enclosing `engine.tidy()` do it.
 */
export class Tensor {
  readonly size: number;
  /** Whether gradients flow to this tensor (set on parameters; propagated by ops while recording). */
  requiresGrad = false;
  /** Accumulated gradient of a leaf tensor after `backward()`. */
  grad: Tensor | null = null;
  /** A name for messages and checkpoints (parameters carry their HF names). */
  name?: string;
  private disposed = false;
  private freed = false;
  private holds = 0;

  constructor(
    readonly engine: Engine,
    readonly storage: Storage,
    readonly shape: readonly number[],
    readonly dtype: DType,
  ) {
    this.size = numel(shape);
    engine.track(this);
  }

  get buffer(): GPUBuffer {
    if (this.freed) throw new Error(`piplay: use of a disposed tensor ${this.describe()}`);
    return this.storage.buffer;
  }

  get byteLength(): number {
    return this.size * BYTES_PER_ELEMENT[this.dtype];
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  get rank(): number {
    return this.shape.length;
  }

  describe(): string {
    return `${this.name ? `'${this.name}' ` : ''}${this.dtype}${shapeString(this.shape)}`;
  }

  /** A view with another shape over the same storage (same element count). Gradients flow through it. */
  reshape(shape: readonly number[]): Tensor {
    const resolved = resolveShape(shape, this.size);
    return this.engine.reshape(this, resolved);
  }

  /** Reads the tensor back to the CPU (flushes pending GPU work). */
  read(): Promise<HostArray> {
    return this.engine.read(this);
  }

  /** Reads back as a plain float array whatever the dtype. */
  async readF32(): Promise<Float32Array> {
    const data = await this.read();
    return data instanceof Float32Array ? data : Float32Array.from(data);
  }

  /** Frees this handle; the storage is released when no other view uses it and the tape holds it no more. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.engine.untrack(this);
    if (this.grad) {
      this.grad.dispose();
      this.grad = null;
    }
    if (this.holds === 0) this.free();
  }

  /** Keeps the storage alive past `dispose()` until `unhold()` (the autograd tape uses this). */
  hold(): void {
    this.holds++;
  }

  unhold(): void {
    this.holds--;
    if (this.holds === 0 && this.disposed) this.free();
  }

  private free(): void {
    if (this.freed) return;
    this.freed = true;
    this.engine.releaseStorage(this.storage);
  }
}

function resolveShape(shape: readonly number[], size: number): number[] {
  const out = [...shape];
  const inferred = out.indexOf(-1);
  if (inferred >= 0) {
    const rest = numel(out.filter((_, i) => i !== inferred));
    out[inferred] = size / rest;
  }
  if (numel(out) !== size || out.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new Error(`piplay: cannot reshape ${size} elements to ${shapeString(shape)}`);
  }
  return out;
}
