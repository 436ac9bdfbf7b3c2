// The engine: one GPU device, its buffer pool and pipeline cache, a batched command stream, tensor
// creation and read-back, memory scopes, and the autograd tape. Ops (src/gpu/ops/) call `dispatch`.
import { BufferPool, type PoolOptions, type PoolStats } from './buffer-pool.ts';
import { f16ArrayToF32, f32ArrayToF16 } from './half.ts';
import type { GpuHost } from './host/types.ts';
import type { Profile } from './profile.ts';
import { expandIncludes } from './shader-source.ts';
import { BYTES_PER_ELEMENT, Storage, Tensor, numel, shapeString, type DType, type HostArray } from './tensor.ts';

/** A uniform field: a plain number is a u32, `{ f }` an f32, `{ i }` an i32. */
export type Param = number | { f: number } | { i: number };
export const f = (x: number): Param => ({ f: x });
export const i = (x: number): Param => ({ i: x });

export interface DispatchSpec {
  /** File name in shaders/ without `.wgsl`. */
  shader: string;
  /** Entry point (default `main`). */
  entry?: string;
  /** WGSL `override` constants; each distinct set compiles its own pipeline. */
  constants?: Record<string, number | boolean>;
  /** Fields of the shader's `var<uniform> p` at @binding(0), 4 bytes each, in declaration order. */
  params?: Param[];
  /** Storage buffers at @binding(1), @binding(2), ... in order. */
  bindings: (Tensor | GPUBuffer)[];
  /** Workgroup counts; see `grid()` for large 1-D launches. */
  workgroups: readonly [number, number?, number?];
}

export class GpuUnavailableError extends Error {
  override name = 'GpuUnavailableError';
}
export class GpuLimitError extends Error {
  override name = 'GpuLimitError';
}
export class GpuRuntimeError extends Error {
  override name = 'GpuRuntimeError';
}

export interface EngineInfo {
  host: string;
  vendor: string;
  architecture: string;
  description: string;
  /** A software rasteriser (lavapipe, SwiftShader): kernels pick CPU-friendly variants. */
  isCpu: boolean;
  f16: boolean;
  subgroups: boolean;
  /** The adapter's subgroup sizes (0 when unknown or without subgroups). */
  subgroupMinSize: number;
  subgroupMaxSize: number;
  timestamps: boolean;
  limits: {
    maxStorageBufferBindingSize: number;
    maxBufferSize: number;
    maxStorageBuffersPerShaderStage: number;
    maxComputeWorkgroupStorageSize: number;
    maxComputeInvocationsPerWorkgroup: number;
    maxComputeWorkgroupsPerDimension: number;
  };
}

/** Limits the kernels are written against; an adapter below these cannot run piplay. */
const REQUIRED = {
  maxStorageBuffersPerShaderStage: 8,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupStorageSize: 16384,
};

export interface EngineOptions {
  powerPreference?: GPUPowerPreference;
  /** Use f16 storage where the device has `shader-f16` (default true). */
  allowF16?: boolean;
  /** Dispatches recorded before an automatic submit (default 128). */
  maxDispatchesPerSubmit?: number;
  /** The buffer pool's cache cap and memory budget (src/gpu/buffer-pool.ts). */
  pool?: Omit<PoolOptions, 'maxBufferBytes'>;
  /**
   * Caps the largest storage binding below the adapter's (tests: runs the paths that split tensors larger
   * than a binding, e.g. the vocabulary shards, at tiny sizes; or a large GPU acting as a browser's 128 MiB).
   */
  maxBindingBytes?: number;
}

interface TapeNode {
  inputs: Tensor[];
  outputs: Tensor[];
  /** Given the gradients of the outputs (null where none flowed), returns those of the inputs. */
  backward: (gradOutputs: (Tensor | null)[]) => (Tensor | null)[];
  /** Tensors held alive for the backward pass. */
  saved: Tensor[];
}

export class Engine {
  readonly pool: BufferPool;
  private pipelines = new Map<string, GPUComputePipeline>();
  private modules = new Map<string, GPUShaderModule>();

  // The open batch: one command encoder with one compute pass, and its uniform arena.
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private arena: GPUBuffer | null = null;
  private arenaData: ArrayBuffer;
  private arenaView: DataView;
  private dispatches = 0;
  private readonly maxDispatches: number;
  private readonly uniformStride: number;

  private errors: string[] = [];
  private lostReason: string | null = null;

  private scopes: Set<Tensor>[] = [];
  private kept = new WeakSet<Tensor>();

  private tape: TapeNode[] = [];
  private gradEnabled = true;

  /** Counters for benchmarks and tests. */
  readonly counters = { dispatches: 0, submits: 0, reads: 0, uploads: 0 };

  /** When set, dispatches, submissions and GPU time are charged to its current phase (see profile.ts). */
  profile: Profile | null = null;
  /** The phase whose work the open batch holds (profiling only). */
  private batchPhase = '';

  private constructor(
    readonly device: GPUDevice,
    readonly host: GpuHost,
    readonly info: EngineInfo,
    opts: EngineOptions,
  ) {
    const maxBufferBytes = Math.min(info.limits.maxStorageBufferBindingSize, info.limits.maxBufferSize);
    this.pool = new BufferPool(device, { ...opts.pool, maxBufferBytes });
    this.maxDispatches = opts.maxDispatchesPerSubmit ?? 128;
    this.uniformStride = Math.max(256, device.limits.minUniformBufferOffsetAlignment);
    this.arenaData = new ArrayBuffer(this.uniformStride * this.maxDispatches);
    this.arenaView = new DataView(this.arenaData);
    const onError = (ev: Event) => {
      const err = (ev as GPUUncapturedErrorEvent).error;
      this.errors.push(err?.message ?? String(ev));
    };
    device.addEventListener?.('uncapturederror', onError);
    void device.lost.then((info) => {
      this.lostReason = `${info.reason}: ${info.message}`;
    });
  }

  /** Acquires an adapter and a device with the limits piplay needs, or throws a clear error. */
  static async create(host: GpuHost, opts: EngineOptions = {}): Promise<Engine> {
    if (!host.gpu)
      throw new GpuUnavailableError(`piplay: WebGPU is not available (${host.name}). ${host.missingGpuHelp}`);
    const adapter = await host.gpu.requestAdapter({ powerPreference: opts.powerPreference ?? 'high-performance' });
    if (!adapter) throw new GpuUnavailableError(`piplay: no WebGPU adapter (${host.name}). ${host.missingGpuHelp}`);
    const al = adapter.limits;
    for (const [name, min] of Object.entries(REQUIRED)) {
      const have = al[name as keyof GPUSupportedLimits] as number;
      if (have < min) {
        throw new GpuLimitError(
          `piplay: this GPU adapter (${adapter.info.description || adapter.info.vendor}) has ${name} = ${have}, ` +
            `but piplay's kernels need at least ${min}. Try another browser or GPU.`,
        );
      }
    }
    const requiredLimits: Record<string, number> = {
      maxStorageBufferBindingSize: al.maxStorageBufferBindingSize,
      maxBufferSize: al.maxBufferSize,
      maxStorageBuffersPerShaderStage: al.maxStorageBuffersPerShaderStage,
      maxComputeWorkgroupStorageSize: al.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: al.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: al.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupSizeY: al.maxComputeWorkgroupSizeY,
      maxComputeWorkgroupsPerDimension: al.maxComputeWorkgroupsPerDimension,
    };
    const features: GPUFeatureName[] = [];
    const f16 = (opts.allowF16 ?? true) && adapter.features.has('shader-f16');
    if (f16) features.push('shader-f16');
    if (adapter.features.has('timestamp-query')) features.push('timestamp-query');
    const subgroups = adapter.features.has('subgroups');
    if (subgroups) features.push('subgroups' as GPUFeatureName);
    const device = await adapter.requestDevice({ requiredLimits, requiredFeatures: features, label: 'piplay' });
    const ai = adapter.info;
    const text = `${ai.vendor} ${ai.architecture} ${ai.device} ${ai.description}`.toLowerCase();
    const info: EngineInfo = {
      host: host.name,
      vendor: ai.vendor,
      architecture: ai.architecture,
      description: ai.description || ai.device,
      isCpu:
        Boolean((ai as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter) ||
        /llvmpipe|lavapipe|swiftshader|software/.test(text),
      f16,
      subgroups,
      subgroupMinSize: subgroups ? ((ai as GPUAdapterInfo & { subgroupMinSize?: number }).subgroupMinSize ?? 0) : 0,
      subgroupMaxSize: subgroups ? ((ai as GPUAdapterInfo & { subgroupMaxSize?: number }).subgroupMaxSize ?? 0) : 0,
      timestamps: features.includes('timestamp-query'),
      limits: {
        maxStorageBufferBindingSize: Math.min(
          device.limits.maxStorageBufferBindingSize,
          opts.maxBindingBytes ?? Number.POSITIVE_INFINITY,
        ),
        maxBufferSize: device.limits.maxBufferSize,
        maxStorageBuffersPerShaderStage: device.limits.maxStorageBuffersPerShaderStage,
        maxComputeWorkgroupStorageSize: device.limits.maxComputeWorkgroupStorageSize,
        maxComputeInvocationsPerWorkgroup: device.limits.maxComputeInvocationsPerWorkgroup,
        maxComputeWorkgroupsPerDimension: device.limits.maxComputeWorkgroupsPerDimension,
      },
    };
    return new Engine(device, host, info, opts);
  }

  // ---------------------------------------------------------------- tensors

  /** A new uninitialised tensor (contents are whatever the pooled buffer held). */
  empty(shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const bytes = numel(shape) * BYTES_PER_ELEMENT[dtype];
    this.checkSize(bytes, shape, dtype);
    const buf = this.pool.acquire(
      Math.max(4, Math.ceil(bytes / 4) * 4),
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    );
    return new Tensor(this, new Storage(buf, bytes), shape, dtype);
  }

  /** Uploads host data as a new tensor. f16 tensors take float data and convert it. */
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
    } else bits = value >>> 0;
    this.dispatch({
      shader: 'fill',
      params: [words, bits],
      bindings: [t.buffer],
      workgroups: this.grid(words, 256),
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
      await staging.mapAsync(GPUMapMode.READ, 0, bytes);
    } catch (e) {
      this.throwIfFailed();
      const what = ts.map((t) => t.describe()).join(', ');
      throw new GpuRuntimeError(`piplay: reading ${what} back from the GPU failed: ${(e as Error).message}`);
    }
    const copy = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    this.pool.release(staging);
    this.pool.afterSubmit();
    this.throwIfFailed();
    return ts.map((t, k) => hostArray(t, copy, offsets[k]!));
  }

  /** Reads a scalar (or the first element). */
  async item(t: Tensor): Promise<number> {
    return (await this.read(t))[0]!;
  }

  // ---------------------------------------------------------------- dispatch

  /** 1-D launch of `n` threads in workgroups of `wg`, folded into 2-D when it exceeds the per-dimension cap. */
  grid(n: number, wg: number): [number, number] {
    const groups = Math.max(1, Math.ceil(n / wg));
    const cap = this.info.limits.maxComputeWorkgroupsPerDimension;
    if (groups <= cap) return [groups, 1];
    const y = Math.ceil(groups / cap);
    return [Math.ceil(groups / y), y];
  }

  /** Records one compute dispatch into the open batch; submits automatically when the batch is full. */
  dispatch(spec: DispatchSpec): void {
    if (this.lostReason) {
      throw new GpuRuntimeError(
        `piplay: the GPU device was lost (${this.lostReason}); reload or resume from a checkpoint.`,
      );
    }
    if (this.dispatches >= this.maxDispatches) this.flush();
    const profile = this.profile;
    const phase = profile?.dispatchPhase(`${spec.shader}.${spec.entry ?? 'main'}`);
    if (profile && this.encoder && phase !== this.batchPhase) this.flush();
    const pipeline = this.pipeline(spec.shader, spec.entry ?? 'main', spec.constants);
    if (!this.encoder) {
      this.encoder = this.device.createCommandEncoder();
      this.pass = this.encoder.beginComputePass();
      this.arena = this.pool.acquire(this.arenaData.byteLength, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
      if (phase) this.batchPhase = phase;
    }
    const entries: GPUBindGroupEntry[] = [];
    if (spec.params && spec.params.length > 0) {
      const offset = this.dispatches * this.uniformStride;
      spec.params.forEach((p, k) => {
        const at = offset + 4 * k;
        if (typeof p === 'number') this.arenaView.setUint32(at, p >>> 0, true);
        else if ('f' in p) this.arenaView.setFloat32(at, p.f, true);
        else this.arenaView.setInt32(at, p.i, true);
      });
      const size = Math.max(16, Math.ceil((spec.params.length * 4) / 16) * 16);
      entries.push({ binding: 0, resource: { buffer: this.arena!, offset, size } });
    }
    spec.bindings.forEach((b, k) => {
      const buffer = b instanceof Tensor ? b.buffer : b;
      entries.push({ binding: k + 1, resource: { buffer } });
    });
    const bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const pass = this.pass!;
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    const [x, y = 1, z = 1] = spec.workgroups;
    pass.dispatchWorkgroups(x, y, z);
    this.dispatches++;
    this.counters.dispatches++;
    profile?.count('dispatches', 1, phase);
  }

  /**
   * Submits the open batch (if any). Buffers released so far become reusable once it completes. `tail`
   * records more commands (a read-back's copies) into the same submission, or into one of their own.
   */
  flush(tail?: (enc: GPUCommandEncoder) => void): void {
    if (this.encoder) {
      this.pass!.end();
      tail?.(this.encoder);
      this.device.queue.writeBuffer(this.arena!, 0, this.arenaData, 0, this.dispatches * this.uniformStride);
      this.device.queue.submit([this.encoder.finish()]);
      this.pool.release(this.arena!);
      this.encoder = null;
      this.pass = null;
      this.arena = null;
      this.dispatches = 0;
      this.counters.submits++;
      if (this.profile) {
        this.profile.count('submits', 1, this.batchPhase);
        this.timeSubmission(this.batchPhase);
      }
    } else if (tail) {
      const enc = this.device.createCommandEncoder();
      tail(enc);
      this.device.queue.submit([enc.finish()]);
      if (this.profile) this.timeSubmission(this.profile.phase);
    }
    this.pool.afterSubmit();
  }

  /** Charges the GPU time of the submission just made to `phase`. */
  private timeSubmission(phase: string): void {
    const profile = this.profile!;
    const submitted = performance.now();
    void this.device.queue.onSubmittedWorkDone().then(() => profile.gpuDone(phase, submitted, performance.now()));
  }

  /** Waits until the GPU has finished everything submitted so far. */
  async sync(): Promise<void> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.lostReason) throw new GpuRuntimeError(`piplay: the GPU device was lost (${this.lostReason}).`);
    if (this.errors.length > 0) {
      const errs = this.errors.splice(0);
      throw new GpuRuntimeError(
        `piplay: GPU error: ${errs[0]}${errs.length > 1 ? ` (and ${errs.length - 1} more)` : ''}`,
      );
    }
  }

  private pipeline(shader: string, entry: string, constants?: Record<string, number | boolean>): GPUComputePipeline {
    const key = `${shader}:${entry}:${constants ? JSON.stringify(constants) : ''}`;
    let p = this.pipelines.get(key);
    if (p) return p;
    let module = this.modules.get(shader);
    if (!module) {
      let code = expandIncludes(shader, (name) => this.host.shaderSource(name));
      if (!this.info.f16) code = code.replace(/^enable f16;.*$/m, '');
      module = this.device.createShaderModule({ code, label: shader });
      this.modules.set(shader, module);
    }
    const numeric: Record<string, number> = {};
    for (const [k, v] of Object.entries(constants ?? {})) numeric[k] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    p = this.device.createComputePipeline({
      label: key,
      layout: 'auto',
      compute: { module, entryPoint: entry, constants: numeric },
    });
    this.pipelines.set(key, p);
    return p;
  }

  // ---------------------------------------------------------------- memory scopes

  /** Registers a new tensor with the innermost open scope. */
  track(t: Tensor): void {
    this.scopes[this.scopes.length - 1]?.add(t);
  }

  untrack(t: Tensor): void {
    for (const s of this.scopes) s.delete(t);
  }

  /** Runs `fn`; disposes every tensor it created except those it returns (found in arrays/objects) or `keep`s. */
  tidy<T>(fn: () => T): T {
    const scope = new Set<Tensor>();
    this.scopes.push(scope);
    let result: T;
    try {
      result = fn();
    } finally {
      this.scopes.pop();
    }
    const out = new Set<Tensor>();
    collectTensors(result, out);
    for (const t of scope) {
      if (out.has(t)) this.track(t);
      else if (!this.kept.has(t)) t.dispose();
    }
    return result;
  }

  /** Exempts a tensor from the enclosing `tidy` scopes. */
  keep<T extends Tensor>(t: T): T {
    this.kept.add(t);
    this.untrack(t);
    return t;
  }

  /** Called by Tensor.dispose. */
  releaseStorage(s: Storage): void {
    s.refs--;
    if (s.refs === 0) this.pool.release(s.buffer);
  }

  memory(): PoolStats {
    return this.pool.getStats();
  }

  // ---------------------------------------------------------------- autograd

  get recording(): boolean {
    return this.gradEnabled;
  }

  /** Runs `fn` without recording gradients. */
  noGrad<T>(fn: () => T): T {
    const prev = this.gradEnabled;
    this.gradEnabled = false;
    try {
      return fn();
    } finally {
      this.gradEnabled = prev;
    }
  }

  /**
   * Called by ops after computing `outputs` from `inputs`. When recording and some input needs a gradient,
   * marks the outputs and pushes a tape node. The node holds its inputs, outputs and `save`d tensors alive
   * until the tape is cleared, even if the caller disposes them.
   */
  record(inputs: Tensor[], outputs: Tensor[], backward: TapeNode['backward'], save: Tensor[] = []): void {
    if (!this.gradEnabled || !inputs.some((t) => t.requiresGrad)) return;
    for (const o of outputs) o.requiresGrad = true;
    const saved = [...inputs, ...outputs, ...save];
    for (const t of saved) t.hold();
    this.tape.push({ inputs, outputs, backward, saved });
  }

  /**
   * Back-propagates from `loss` (a scalar unless `grad` is given) through the tape, accumulating into
   * `.grad` of every leaf tensor with `requiresGrad` (one that no recorded op produced). Clears the tape.
   */
  backward(loss: Tensor, grad?: Tensor): void {
    const grads = new Map<Tensor, Tensor>();
    const produced = new Set<Tensor>();
    for (const node of this.tape) for (const o of node.outputs) produced.add(o);
    const leaves = new Set<Tensor>();
    const leave = this.profile?.enterOuter('backward');
    try {
      this.noGrad(() =>
        this.tidy(() => {
          grads.set(loss, grad ?? this.tensor(new Float32Array(loss.size).fill(1), loss.shape));
          for (let n = this.tape.length - 1; n >= 0; n--) {
            const node = this.tape[n]!;
            const gOut = node.outputs.map((o) => grads.get(o) ?? null);
            if (gOut.every((g) => g === null)) continue;
            const gIn = node.backward(gOut);
            node.inputs.forEach((input, k) => {
              const g = gIn[k];
              if (!g || !input.requiresGrad) return;
              const prev = grads.get(input);
              grads.set(input, prev ? addInto(this, prev, g) : g);
              if (!produced.has(input)) leaves.add(input);
            });
          }
          for (const leaf of leaves) {
            const g = grads.get(leaf)!;
            const shaped = sameShape(g.shape, leaf.shape) ? g : g.reshape(leaf.shape);
            if (leaf.grad) {
              const old = leaf.grad;
              leaf.grad = this.keep(addInto(this, old, shaped));
              old.dispose();
            } else {
              leaf.grad = this.keep(shaped);
            }
          }
        }),
      );
    } finally {
      leave?.();
      this.clearTape();
    }
  }

  /** Drops the tape and releases what it held (e.g. after a forward pass used only for inference). */
  clearTape(): void {
    for (const node of this.tape) for (const t of node.saved) t.unhold();
    this.tape = [];
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

/** a + b, allocating the result (the elementwise op lives in ops/, imported lazily to avoid a cycle). */
let addImpl: ((e: Engine, a: Tensor, b: Tensor) => Tensor) | null = null;
export function setGradAdd(fn: (e: Engine, a: Tensor, b: Tensor) => Tensor): void {
  addImpl = fn;
}
function addInto(e: Engine, a: Tensor, b: Tensor): Tensor {
  if (!addImpl) throw new Error('piplay: gradient accumulation needs ops/elementwise to be loaded');
  return addImpl(e, a, sameShape(a.shape, b.shape) ? b : b.reshape(a.shape));
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, k) => d === b[k]);
}

function collectTensors(x: unknown, out: Set<Tensor>, depth = 0): void {
  if (x instanceof Tensor) out.add(x);
  else if (depth < 4 && Array.isArray(x)) for (const v of x) collectTensors(v, out, depth + 1);
  else if (depth < 4 && x && typeof x === 'object' && !ArrayBuffer.isView(x)) {
    for (const v of Object.values(x)) collectTensors(v, out, depth + 1);
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
