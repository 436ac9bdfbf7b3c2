// The engine: one GPU device and its buffer pool, tensor creation, upload and read-back, and the facade over
// the parts that do the rest, each in its own module:
//   device.ts  the adapter, the device and its limits (EngineInfo), device errors and loss;
//   stream.ts  the compiled kernels and the batched dispatch stream, with its uniform arena; how an op calls
//              a kernel (by the names its WGSL declares) is documented at the top of that file;
//   scopes.ts  memory scopes (`tidy`, `keep`);
//   tape.ts    the autograd tape (`record`, `backward`, `noGrad`).
// Ops (src/gpu/ops/) call `dispatch`, `record` and `tidy` here.
import { BufferPool, type PoolOptions, type PoolStats } from './buffer-pool.ts';
import {
  DeviceHealth,
  type DeviceOptions,
  GpuLimitError,
  GpuRuntimeError,
  openDevice,
  type EngineInfo,
} from './device.ts';
import { bf16ArrayToF32, f16ArrayToF32, f32ArrayToBf16, f32ArrayToF16, f32ToBf16Bits } from './half.ts';
import type { GpuHost } from './host/types.ts';
import type { Profile } from './profile.ts';
import { Scopes } from './scopes.ts';
import { DispatchStream, type DispatchSpec, type PreparedDispatch, type StreamCounters } from './stream.ts';
import { Tape, type TapeNode } from './tape.ts';
import { BYTES_PER_ELEMENT, Storage, Tensor, numel, shapeString, type DType, type HostArray } from './tensor.ts';

export { GpuLimitError, GpuRuntimeError, GpuUnavailableError, type EngineInfo } from './device.ts';
export type { BufferWindow, DispatchSpec, PreparedDispatch } from './stream.ts';

/** Workgroup size of shaders/fill.wgsl. */
const FILL_WG = 256;

export interface EngineOptions extends DeviceOptions {
  /** Dispatches recorded before an automatic submit (default 128). */
  maxDispatchesPerSubmit?: number;
  /** The buffer pool's cache cap and memory budget (src/gpu/buffer-pool.ts). */
  pool?: Omit<PoolOptions, 'maxBufferBytes'>;
}

// The Engine of src/gpu/tensor.ts (what a tensor's `engine` is) is this class.
declare module './tensor.ts' {
  interface Engine extends EngineClass {}
}
type EngineClass = Engine;

export class Engine {
  readonly pool: BufferPool;
  private readonly health: DeviceHealth;
  private readonly stream: DispatchStream;
  private readonly scopes = new Scopes();
  private readonly tape = new Tape(this);

  /** Counters for benchmarks and tests. */
  readonly counters: StreamCounters = { dispatches: 0, submits: 0, reads: 0, uploads: 0 };

  private constructor(
    readonly device: GPUDevice,
    readonly host: GpuHost,
    readonly info: EngineInfo,
    opts: EngineOptions,
  ) {
    const maxBufferBytes = Math.min(info.limits.maxStorageBufferBindingSize, info.limits.maxBufferSize);
    this.pool = new BufferPool(device, { ...opts.pool, maxBufferBytes });
    this.health = new DeviceHealth(device);
    const maxDispatches = opts.maxDispatchesPerSubmit ?? 128;
    this.stream = new DispatchStream(device, host, info, this.pool, this.health, this.counters, maxDispatches);
  }

  /** Acquires an adapter and a device with the limits piplay needs, or throws a clear error. */
  static async create(host: GpuHost, opts: EngineOptions = {}): Promise<Engine> {
    const { device, info } = await openDevice(host, opts);
    return new Engine(device, host, info, opts);
  }

  /** When set, dispatches, submissions and GPU time are charged to its current phase (see profile.ts). */
  get profile(): Profile | null {
    return this.stream.profile;
  }
  set profile(p: Profile | null) {
    this.stream.profile = p;
  }

  // ---------------------------------------------------------------- tensors

  /** A new uninitialised tensor (contents are whatever the pooled buffer held). */
  empty(shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const bytes = numel(shape) * BYTES_PER_ELEMENT[dtype];
    this.checkSize(bytes, shape, dtype);
    // UNIFORM too: a kernel may read part of a tensor as a uniform buffer (BufferWindow).
    const buf = this.pool.acquire(
      Math.max(4, Math.ceil(bytes / 4) * 4),
      GPUBufferUsage.STORAGE | GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    );
    return new Tensor(this, new Storage(buf, bytes), shape, dtype);
  }

  /** Uploads host data as a new tensor. f16 and bf16 tensors take float data and round it (nearest even). */
  tensor(data: ArrayLike<number>, shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const n = numel(shape);
    if (data.length !== n) {
      throw new Error(`piplay: ${data.length} values do not fill a tensor of shape ${shapeString(shape)} (${n})`);
    }
    const t = this.empty(shape, dtype);
    this.writeTo(t, data);
    return t;
  }

  zeros(shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const t = this.empty(shape, dtype);
    this.fill(t, 0);
    return t;
  }

  /** Fills a tensor with a constant on the GPU. */
  fill(t: Tensor, value: number): void {
    const words = Math.ceil(t.byteLength / 4);
    let bits: number;
    if (t.dtype === 'f32') bits = new Uint32Array(new Float32Array([value]).buffer)[0]!;
    else if (t.dtype === 'f16') {
      const h = f32ArrayToF16([value])[0]!;
      bits = h | (h << 16);
    } else if (t.dtype === 'bf16') {
      const h = f32ToBf16Bits(value);
      bits = (h | (h << 16)) >>> 0;
    } else bits = value >>> 0;
    this.dispatch({
      shader: 'fill',
      constants: { WG: FILL_WG },
      params: { words, bits },
      bindings: { out: t.buffer },
      workgroups: this.grid(words, FILL_WG),
    });
  }

  /** Overwrites a tensor's contents from the host (after all earlier GPU work on it). */
  write(t: Tensor, data: ArrayLike<number>): void {
    if (data.length !== t.size) throw new Error(`piplay: write of ${data.length} values into ${t.describe()}`);
    this.flush(); // queue.writeBuffer runs before commands still in the open batch
    this.writeTo(t, data);
  }

  private writeTo(t: Tensor, data: ArrayLike<number>): void {
    let bytes: ArrayBufferView;
    if (t.dtype === 'f16') bytes = f32ArrayToF16(data);
    else if (t.dtype === 'bf16') bytes = f32ArrayToBf16(data);
    else if (t.dtype === 'f32') bytes = data instanceof Float32Array ? data : Float32Array.from(data);
    else if (t.dtype === 'i32') bytes = data instanceof Int32Array ? data : Int32Array.from(data);
    else bytes = data instanceof Uint32Array ? data : Uint32Array.from(data);
    let byteLength = bytes.byteLength;
    if (byteLength % 4 !== 0) {
      const padded = new Uint8Array(byteLength + (4 - (byteLength % 4)));
      padded.set(new Uint8Array(bytes.buffer, bytes.byteOffset, byteLength));
      bytes = padded;
      byteLength = padded.byteLength;
    }
    this.device.queue.writeBuffer(t.storage.buffer, 0, bytes.buffer, bytes.byteOffset, byteLength);
    this.counters.uploads++;
  }

  /** Copies host data into a tensor's raw bytes (e.g. f16 or bf16 weights straight from a file). */
  writeRaw(t: Tensor, bytes: Uint8Array): void {
    this.flush();
    const padded = bytes.byteLength % 4 === 0 ? bytes : padTo4(bytes);
    this.device.queue.writeBuffer(t.storage.buffer, 0, padded.buffer, padded.byteOffset, padded.byteLength);
    this.counters.uploads++;
  }

  /** Overwrites 32-bit words of a tensor from `at` (a word index) on, after all earlier GPU work on it. */
  writeWords(t: Tensor, at: number, words: Uint32Array): void {
    if (at < 0 || 4 * (at + words.length) > t.byteLength) {
      throw new Error(`piplay: ${words.length} words at ${at} do not fit ${t.describe()}`);
    }
    this.flush();
    this.device.queue.writeBuffer(t.storage.buffer, 4 * at, words.buffer, words.byteOffset, words.byteLength);
    this.counters.uploads++;
  }

  /**
   * Copies whole tensors into `dst` at word offsets, after all earlier GPU work (one submission, no
   * dispatch): e.g. small parameters packed into one buffer that a kernel binds once.
   */
  copyInto(dst: Tensor, parts: readonly { src: Tensor; at: number }[]): void {
    for (const { src, at } of parts) {
      if (src.byteLength % 4 !== 0 || 4 * at + src.byteLength > dst.byteLength) {
        throw new Error(`piplay: ${src.describe()} does not fit ${dst.describe()} at word ${at}`);
      }
    }
    this.flush((enc) => {
      for (const { src, at } of parts) enc.copyBufferToBuffer(src.buffer, 0, dst.buffer, 4 * at, src.byteLength);
    });
  }

  private checkSize(bytes: number, shape: readonly number[], dtype: DType): void {
    const max = Math.min(this.info.limits.maxStorageBufferBindingSize, this.info.limits.maxBufferSize);
    if (bytes > max) {
      throw new GpuLimitError(
        `piplay: a ${dtype} tensor of shape ${shapeString(shape)} needs ${mib(bytes)} MiB, more than this GPU's ` +
          `largest storage binding (maxStorageBufferBindingSize ${mib(max)} MiB). Use a smaller model, batch or ` +
          `sequence length, or a GPU/browser with larger limits.`,
      );
    }
  }

  /** A view of `t` with another shape, sharing storage; records a tape node so gradients flow. */
  reshape(t: Tensor, shape: readonly number[]): Tensor {
    t.storage.refs++;
    const out = new Tensor(this, t.storage, shape, t.dtype);
    this.record([t], [out], ([g]) => [g ? g.reshape(t.shape) : null]);
    return out;
  }

  /** Reads a tensor back to the host. Flushes the open batch. */
  async read(t: Tensor): Promise<HostArray> {
    return (await this.readAll([t]))[0]!;
  }

  /** Reads several tensors back with one copy submission and one map (one round trip instead of several). */
  async readAll(ts: readonly Tensor[]): Promise<HostArray[]> {
    const offsets: number[] = [];
    let bytes = 0;
    for (const t of ts) {
      offsets.push(bytes);
      bytes += Math.max(4, Math.ceil(t.byteLength / 4) * 4);
    }
    const staging = this.pool.acquire(bytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    // The copies ride in the open batch's submission: one wake-up of the driver per read-back, not two.
    this.flush((enc) =>
      ts.forEach((t, k) => enc.copyBufferToBuffer(t.buffer, 0, staging, offsets[k]!, Math.ceil(t.byteLength / 4) * 4)),
    );
    this.counters.reads++;
    this.profile?.count('reads');
    try {
      await this.wait(staging.mapAsync(GPUMapMode.READ, 0, bytes));
    } catch (e) {
      this.health.throwIfFailed();
      const what = ts.map((t) => t.describe()).join(', ');
      throw new GpuRuntimeError(`piplay: reading ${what} back from the GPU failed: ${(e as Error).message}`);
    }
    const copy = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    this.pool.release(staging);
    this.pool.afterSubmit();
    this.health.throwIfFailed();
    return ts.map((t, k) => hostArray(t, copy, offsets[k]!));
  }

  /** Reads a scalar (or the first element). */
  async item(t: Tensor): Promise<number> {
    return (await this.read(t))[0]!;
  }

  // ---------------------------------------------------------------- dispatch (stream.ts)

  /** 1-D launch of `n` threads in workgroups of `wg`, folded into 2-D when it exceeds the per-dimension cap. */
  grid(n: number, wg: number): [number, number] {
    return this.stream.grid(n, wg);
  }

  /** Records one compute dispatch into the open batch; submits automatically when the batch is full. */
  dispatch(spec: DispatchSpec): void {
    this.stream.dispatch(spec);
  }

  /**
   * Prepares a dispatch to record many times unchanged: its pipeline, uniform and bind group are made once
   * (stream.ts). The tensors it binds must stay alive until `release`.
   */
  prepare(spec: DispatchSpec): PreparedDispatch {
    return this.stream.prepare(spec);
  }

  /** Records a prepared dispatch into the open batch. */
  dispatchPrepared(d: PreparedDispatch): void {
    this.stream.record(d);
  }

  /** Frees what a prepared dispatch holds (its uniform buffer). */
  release(d: PreparedDispatch): void {
    this.stream.release(d);
  }

  /**
   * Submits the open batch (if any). Buffers released so far become reusable once it completes. `tail`
   * records more commands (a read-back's copies) into the same submission, or into one of their own.
   */
  flush(tail?: (enc: GPUCommandEncoder) => void): void {
    this.stream.flush(tail);
  }

  /** Waits until the GPU has finished everything submitted so far. */
  async sync(): Promise<void> {
    this.flush();
    await this.wait(this.device.queue.onSubmittedWorkDone());
    // A profile's kernel times (GPU timestamps) are charged once read.
    await this.stream.timesCharged((p) => this.wait(p));
    this.health.throwIfFailed();
  }

  /** Waits for a GPU promise the way the host polls best. */
  private wait<T>(p: Promise<T>): Promise<T> {
    return this.host.waitFor ? this.host.waitFor(p, this.info.isCpu) : p;
  }

  // ---------------------------------------------------------------- memory scopes (scopes.ts)

  /** Registers a new tensor with the innermost open scope. */
  track(t: Tensor): void {
    this.scopes.track(t);
  }

  untrack(t: Tensor): void {
    this.scopes.untrack(t);
  }

  /** Runs `fn`; disposes every tensor it created except those it returns (found in arrays/objects) or `keep`s. */
  tidy<T>(fn: () => T): T {
    return this.scopes.tidy(fn);
  }

  /** Exempts a tensor from the enclosing `tidy` scopes. */
  keep<T extends Tensor>(t: T): T {
    return this.scopes.keep(t);
  }

  /** Undoes `keep`: the tensor belongs to the innermost open `tidy` scope again. */
  unkeep<T extends Tensor>(t: T): T {
    return this.scopes.unkeep(t);
  }

  /** Called by Tensor.dispose. */
  releaseStorage(s: Storage): void {
    s.refs--;
    if (s.refs === 0) this.pool.release(s.buffer);
  }

  memory(): PoolStats {
    return this.pool.getStats();
  }

  /** Starts a new span for the pool's `lowAllocatedBytes`. */
  resetMemoryLow(): void {
    this.pool.resetLow();
  }

  // ---------------------------------------------------------------- autograd (tape.ts)

  get recording(): boolean {
    return this.tape.recording;
  }

  /** Runs `fn` without recording gradients. */
  noGrad<T>(fn: () => T): T {
    return this.tape.noGrad(fn);
  }

  /**
   * Called by ops after computing `outputs` from `inputs`. When recording and some input needs a gradient,
   * marks the outputs and pushes a tape node. The node holds its inputs, outputs and `save`d tensors alive
   * until the tape is cleared, even if the caller disposes them.
   */
  record(inputs: Tensor[], outputs: Tensor[], backward: TapeNode['backward'], save: Tensor[] = []): void {
    this.tape.record(inputs, outputs, backward, save);
  }

  /**
   * Back-propagates from `loss` (a scalar unless `grad` is given) through the tape, accumulating into
   * `.grad` of every leaf tensor with `requiresGrad` (one that no recorded op produced). Clears the tape.
   */
  backward(loss: Tensor, grad?: Tensor): void {
    this.tape.backward(loss, grad);
  }

  /** Runs `fn` on a fresh tape that records, then returns to the current one as it was (see tape.ts). */
  nestedTape<T>(fn: () => T): T {
    return this.tape.nested(fn);
  }

  /** Drops the tape and releases what it held (e.g. after a forward pass used only for inference). */
  clearTape(): void {
    this.tape.clear();
  }

  get tapeLength(): number {
    return this.tape.length;
  }

  destroy(): void {
    this.clearTape();
    this.pool.trim();
    this.device.destroy();
  }
}

/** A tensor's values from its bytes at `offset` of a read-back copy. */
function hostArray(t: Tensor, copy: ArrayBuffer, offset: number): HostArray {
  switch (t.dtype) {
    case 'f32':
      return new Float32Array(copy, offset, t.size);
    case 'i32':
      return new Int32Array(copy, offset, t.size);
    case 'u32':
      return new Uint32Array(copy, offset, t.size);
    case 'f16':
      return f16ArrayToF32(new Uint16Array(copy, offset, t.size));
    case 'bf16':
      return bf16ArrayToF32(new Uint16Array(copy, offset, t.size));
  }
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

function padTo4(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
  out.set(bytes);
  return out;
}
