// The dispatch stream: the compiled kernels (one module and interface per shader, one pipeline per entry and
// constants), and the open batch: dispatches recorded into one compute pass, their uniforms in one arena
// buffer written once per submission, submitted every `maxDispatches` or when a read needs the results.
//
// Calling a kernel: values are bound by the names the WGSL declares (read once per module by
// kernel-interface.ts), never by position:
//   e.dispatch({
//     shader: 'clipped_ratio', entry: 'tokens',      // shaders/clipped_ratio.wgsl, fn tokens
//     constants: { WG, MODE: 0, HAS_REF: true },      // its `override`s: every one without a default that
//                                                     // the entry uses is required
//     params: { R, clip_lo: 0.8, clip_hi: 1.2, beta }, // every field of its uniform struct, plain numbers
//     bindings: { logp, old_logp: oldLogp, ... },     // every var<storage> the entry point uses, no others
//     workgroups: e.grid(R, WG),
//   });
// Each param is written as the struct declares it (u32, i32 or f32). A missing or extra field, binding or
// constant throws an error naming the kernel and the name. Workgroup sizes are `override WG: u32;` (no
// default) set from the host's constant, the same one its `grid(n, WG)` uses.
import type { BufferPool } from './buffer-pool.ts';
import type { DeviceHealth, EngineInfo } from './device.ts';
import type { GpuHost } from './host/types.ts';
import { type EntryInterface, type KernelInterface, parseKernelInterface } from './kernel-interface.ts';
import type { Profile } from './profile.ts';
import { expandIncludes, setSourceConst } from './shader-source.ts';
import { Tensor } from './tensor.ts';

export interface DispatchSpec {
  /** File name in shaders/ without `.wgsl`. */
  shader: string;
  /** Entry point (default `main`). */
  entry?: string;
  /** WGSL `override` constants by name; each distinct set compiles its own pipeline. */
  constants?: Record<string, number | boolean>;
  /**
   * Values for the shader's own `const NAME = ...u;` declarations, set in its text: for what WGSL needs as a
   * constant expression, such as the length of a private array (an `override` cannot size one). Each distinct set
   * compiles its own module.
   */
  source?: Record<string, number>;
  /** The fields of the shader's uniform struct by name, each written as the struct declares it. */
  params?: Record<string, number>;
  /**
   * The buffers the entry point uses, by their `var<storage>` names, and its windows (`var<uniform>` arrays) by
   * theirs: each a BufferWindow, its size at least the array's.
   */
  bindings: Record<string, Tensor | GPUBuffer | BufferWindow>;
  /** Workgroup counts; see `grid()` for large 1-D launches. */
  workgroups: readonly [number, number?, number?];
}

/**
 * Bytes [offset, offset + size) of a tensor bound as a uniform buffer (a kernel's `var<uniform>` array): on a CPU
 * driver a uniform load is cheaper than a storage load (decode_mlp_lanes.wgsl). offset is a multiple of the
 * device's minUniformBufferOffsetAlignment; size at most its maxUniformBufferBindingSize.
 */
export interface BufferWindow {
  tensor: Tensor;
  offset: number;
  size: number;
}

/** A dispatch prepared once and recorded many times unchanged (DispatchStream.prepare). */
export interface PreparedDispatch {
  /** `shader.entry`, for the profile. */
  readonly kernel: string;
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly workgroups: readonly [number, number, number];
  /** Its own uniform buffer with its params (null where the entry has none), freed by `release`. */
  readonly uniform: GPUBuffer | null;
}

/** Counters for benchmarks and tests. */
export interface StreamCounters {
  dispatches: number;
  submits: number;
  reads: number;
  uploads: number;
}

export class DispatchStream {
  /** Per shader, a tree of its source constants', entry's and constants' values: the made pipelines. */
  private pipelines = new Map<string, PipelineNode>();
  private modules = new Map<string, { module: GPUShaderModule; iface: KernelInterface }>();

  // The open batch: one command encoder with one compute pass, and its uniform arena.
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private arena: GPUBuffer | null = null;
  private arenaData: ArrayBuffer;
  private arenaView: DataView;
  private dispatches = 0;
  private readonly uniformStride: number;

  /** When set, dispatches, submissions and GPU time are charged to its current phase (see profile.ts). */
  profile: Profile | null = null;
  /** The phase whose work the open batch holds (profiling only). */
  private batchPhase = '';
  /**
   * Timing by kernel with GPU timestamps (a profile by kernel, on a device that has them): each dispatch of the open
   * batch in a compute pass of its own whose start and end `querySet` records, its phase in `timed`; and the reads
   * of those of submitted batches, not yet charged to the profile.
   */
  private timed: string[] = [];
  private querySet: GPUQuerySet | null = null;
  private timedProfile: Profile | null = null;
  private timeReads: Promise<void>[] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly host: GpuHost,
    private readonly info: EngineInfo,
    private readonly pool: BufferPool,
    private readonly health: DeviceHealth,
    readonly counters: StreamCounters,
    private readonly maxDispatches: number,
  ) {
    this.uniformStride = Math.max(256, device.limits.minUniformBufferOffsetAlignment);
    this.arenaData = new ArrayBuffer(this.uniformStride * this.maxDispatches);
    this.arenaView = new DataView(this.arenaData);
  }

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
    this.health.assertNotLost();
    const phase = this.open(spec);
    const entry = spec.entry ?? 'main';
    const { pipeline, layout, iface } = this.pipeline(spec.shader, entry, spec.constants, spec.source);
    const offset = this.dispatches * this.uniformStride;
    if (iface.entries.get(entry)!.uniform) writeParams(this.arenaView, offset, spec, iface);
    const entries = this.bindGroupEntries(spec, iface, this.arena!, offset);
    this.recordInto(pipeline, this.device.createBindGroup({ layout, entries }), spec.workgroups, phase);
  }

  /**
   * Prepares a dispatch that is recorded many times unchanged (the steps of a decoding call): its pipeline, a
   * uniform buffer of its own holding its params, and its bind group are made here once, so that recording it
   * (`record`) makes nothing. What it binds must stay allocated until `release`.
   */
  prepare(spec: DispatchSpec): PreparedDispatch {
    const entry = spec.entry ?? 'main';
    const { pipeline, layout, iface } = this.pipeline(spec.shader, entry, spec.constants, spec.source);
    let uniform: GPUBuffer | null = null;
    try {
      if (iface.entries.get(entry)!.uniform) {
        const data = new ArrayBuffer(uniformSize(iface));
        writeParams(new DataView(data), 0, spec, iface);
        uniform = this.pool.acquire(data.byteLength, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
        this.device.queue.writeBuffer(uniform, 0, data);
      }
      const entries = this.bindGroupEntries(spec, iface, uniform, 0);
      const [x, y = 1, z = 1] = spec.workgroups;
      return {
        kernel: `${spec.shader}.${entry}`,
        pipeline,
        bindGroup: this.device.createBindGroup({ layout, entries }),
        workgroups: [x, y, z],
        uniform,
      };
    } catch (err) {
      if (uniform) this.pool.release(uniform);
      throw err;
    }
  }

  /** Records a prepared dispatch into the open batch. */
  record(d: PreparedDispatch): void {
    this.health.assertNotLost();
    this.recordInto(d.pipeline, d.bindGroup, d.workgroups, this.open(d));
  }

  /** Frees a prepared dispatch's uniform buffer (reusable once the work recorded so far completes). */
  release(d: PreparedDispatch): void {
    if (d.uniform) this.pool.release(d.uniform);
  }

  /** Opens a batch if none is open (submitting a full one first); returns the dispatch's profile phase. */
  private open(d: DispatchSpec | PreparedDispatch): string | undefined {
    if (this.dispatches >= this.maxDispatches) this.flush();
    const profile = this.profile;
    const phase = profile?.dispatchPhase('kernel' in d ? d.kernel : `${d.shader}.${d.entry ?? 'main'}`);
    // Without timestamps a phase's GPU time is its submissions' (from submit to done): one batch per phase.
    if (profile && this.encoder && phase !== this.batchPhase && !this.timesKernels()) this.flush();
    if (!this.encoder) {
      this.encoder = this.device.createCommandEncoder();
      this.pass = this.encoder.beginComputePass();
      this.arena = this.pool.acquire(this.arenaData.byteLength, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
      if (phase) this.batchPhase = phase;
    }
    return phase;
  }

  private recordInto(
    pipeline: GPUComputePipeline,
    bindGroup: GPUBindGroup,
    workgroups: readonly [number, number?, number?],
    phase: string | undefined,
  ): void {
    if (phase !== undefined && this.timesKernels()) {
      // A pass of its own, whose start and end the query set records.
      this.querySet ??= this.device.createQuerySet({ type: 'timestamp', count: 2 * this.maxDispatches });
      this.timedProfile = this.profile;
      const at = 2 * this.timed.length;
      this.timed.push(phase);
      this.pass!.end();
      this.pass = this.encoder!.beginComputePass({
        timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: at, endOfPassWriteIndex: at + 1 },
      });
    }
    const pass = this.pass!;
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    const [x, y = 1, z = 1] = workgroups;
    pass.dispatchWorkgroups(x, y, z);
    this.dispatches++;
    this.counters.dispatches++;
    this.profile?.count('dispatches', 1, phase);
  }

  /**
   * The bind group entries of a dispatch, its buffers ordered by binding number (the uniform at `offset` of
   * `uniform`, where its params were written); throws on a missing or extra name.
   */
  private bindGroupEntries(
    spec: DispatchSpec,
    iface: KernelInterface,
    uniform: GPUBuffer | null,
    offset: number,
  ): GPUBindGroupEntry[] {
    const entry = spec.entry ?? 'main';
    const io = iface.entries.get(entry)!;
    const entries: GPUBindGroupEntry[] = [];
    const params = spec.params ?? {};
    if (io.uniform) {
      entries.push({ binding: io.uniform.binding, resource: { buffer: uniform!, offset, size: uniformSize(iface) } });
    } else if (spec.params && Object.keys(params).length > 0) {
      throw contractError(iface, entry, 'takes no params (it does not use the uniform)', '');
    }
    const given = spec.bindings;
    for (const r of io.buffers) {
      const b = given[r.name];
      if (b === undefined) throw contractError(iface, entry, `no buffer for binding '${r.name}'`, bindingList(io));
      const window = !(b instanceof Tensor) && 'tensor' in b;
      if (window !== (r.kind === 'window')) {
        const want = r.kind === 'window' ? 'a window of a tensor' : 'a tensor or buffer';
        throw contractError(iface, entry, `binding '${r.name}' takes ${want}`, bindingList(io));
      }
      const resource = window
        ? { buffer: b.tensor.buffer, offset: b.offset, size: b.size }
        : { buffer: b instanceof Tensor ? b.buffer : (b as GPUBuffer) };
      entries.push({ binding: r.binding, resource });
    }
    if (Object.keys(given).length !== io.buffers.length) {
      const extra = Object.keys(given).find((k) => !io.buffers.some((r) => r.name === k))!;
      const why = iface.resources.some((r) => r.name === extra) ? 'which this entry point does not use' : 'unknown';
      throw contractError(iface, entry, `binding '${extra}' given, ${why}`, bindingList(io));
    }
    return entries;
  }

  /**
   * Submits the open batch (if any). Buffers released so far become reusable once it completes. `tail`
   * records more commands (a read-back's copies) into the same submission, or into one of their own.
   */
  flush(tail?: (enc: GPUCommandEncoder) => void): void {
    if (this.encoder) {
      this.pass!.end();
      const times = this.resolveTimes(this.encoder);
      tail?.(this.encoder);
      this.device.queue.writeBuffer(this.arena!, 0, this.arenaData, 0, this.dispatches * this.uniformStride);
      this.device.queue.submit([this.encoder.finish()]);
      times?.();
      this.pool.release(this.arena!);
      this.encoder = null;
      this.pass = null;
      this.arena = null;
      this.dispatches = 0;
      this.counters.submits++;
      if (this.profile) {
        this.profile.count('submits', 1, this.batchPhase);
        if (!this.timesKernels()) this.timeSubmission(this.batchPhase);
      }
    } else if (tail) {
      const enc = this.device.createCommandEncoder();
      tail(enc);
      this.device.queue.submit([enc.finish()]);
      if (this.profile && !this.timesKernels()) this.timeSubmission(this.profile.phase);
    }
    this.pool.afterSubmit();
  }

  /** Whether the profile times each kernel by GPU timestamps (else by submissions). */
  private timesKernels(): boolean {
    return this.profile?.byKernel === true && this.info.timestamps;
  }

  /**
   * Copies the open batch's timestamps out (into `enc`), if it has timed dispatches; the returned function, called
   * once the batch is submitted, reads them and charges each dispatch's time to its phase.
   */
  private resolveTimes(enc: GPUCommandEncoder): (() => void) | null {
    const phases = this.timed;
    const querySet = this.querySet;
    const profile = this.timedProfile;
    this.timed = [];
    this.querySet = null;
    this.timedProfile = null;
    if (phases.length === 0 || !querySet || !profile) return null;
    const bytes = 16 * phases.length;
    const resolved = this.device.createBuffer({
      size: bytes,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    const read = this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    enc.resolveQuerySet(querySet, 0, 2 * phases.length, resolved, 0);
    enc.copyBufferToBuffer(resolved, 0, read, 0, bytes);
    return () => {
      querySet.destroy();
      resolved.destroy();
      this.timeReads.push(
        read.mapAsync(GPUMapMode.READ).then(() => {
          const ns = new BigUint64Array(read.getMappedRange());
          phases.forEach((phase, i) => profile.kernelTime(phase, Number(ns[2 * i + 1]! - ns[2 * i]!) / 1e9));
          read.destroy();
        }),
      );
    };
  }

  /** Waits for the timestamps of the batches submitted so far to be charged to the profile. */
  async timesCharged(wait: <T>(p: Promise<T>) => Promise<T>): Promise<void> {
    const reads = this.timeReads;
    this.timeReads = [];
    await wait(Promise.all(reads));
  }

  /** Charges the GPU time of the submission just made to `phase`. */
  private timeSubmission(phase: string): void {
    const profile = this.profile!;
    const submitted = performance.now();
    void this.device.queue.onSubmittedWorkDone().then(() => profile.gpuDone(phase, submitted, performance.now()));
  }

  private pipeline(
    shader: string,
    entry: string,
    constants?: Record<string, number | boolean>,
    source?: Record<string, number>,
  ): { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout; iface: KernelInterface } {
    // The values walk a tree (source constants, the entry, then constants, each in the order given), so that finding
    // a made pipeline builds no string.
    let node = this.pipelines.get(shader);
    if (!node) this.pipelines.set(shader, (node = pipelineNode()));
    for (const k in source) node = childOf(node, k, source[k]!);
    let byEntry = node.entries.get(entry);
    if (!byEntry) node.entries.set(entry, (byEntry = pipelineNode()));
    node = byEntry;
    for (const k in constants) node = childOf(node, k, constants[k]!);
    if (node.made) return node.made;
    const moduleKey = source ? `${shader}|${constantsKey(source)}` : shader;
    const key = `${moduleKey}:${entry}:${constantsKey(constants)}`;
    const kernel = this.kernel(shader, moduleKey, source);
    const { module, iface } = kernel;
    if (!iface.entries.has(entry)) {
      throw contractError(
        iface,
        entry,
        'no such @compute entry point',
        `it has ${[...iface.entries.keys()].join(', ')}`,
      );
    }
    const numeric: Record<string, number> = {};
    for (const [k, v] of Object.entries(constants ?? {})) {
      if (!iface.overrides.some((o) => o.name === k))
        throw contractError(iface, entry, `unknown constant '${k}'`, overrideList(iface));
      numeric[k] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    }
    const used = iface.entries.get(entry)!.overrides;
    for (const o of iface.overrides) {
      if (!o.hasDefault && used.has(o.name) && !(o.name in numeric)) {
        throw contractError(iface, entry, `no value for constant '${o.name}' (it has no default)`, overrideList(iface));
      }
    }
    const pipeline = this.device.createComputePipeline({
      label: key,
      layout: 'auto',
      compute: { module, entryPoint: entry, constants: numeric },
    });
    node.made = { pipeline, layout: pipeline.getBindGroupLayout(0), iface };
    return node.made;
  }

  /** The compiled module of a shader (with `source` set in its text) and its interface, made once per device. */
  private kernel(
    shader: string,
    moduleKey: string,
    source?: Record<string, number>,
  ): { module: GPUShaderModule; iface: KernelInterface } {
    let k = this.modules.get(moduleKey);
    if (!k) {
      let code = expandIncludes(shader, (name) => this.host.shaderSource(name));
      if (!this.info.f16) code = code.replace(/^enable f16;.*$/m, '');
      for (const [name, value] of Object.entries(source ?? {})) code = setSourceConst(shader, code, name, value);
      const iface = parseKernelInterface(shader, code);
      k = { module: this.device.createShaderModule({ code, label: moduleKey }), iface };
      this.modules.set(moduleKey, k);
    }
    return k;
  }
}

/** Bytes of a kernel's uniform struct (its fields are 4 bytes each, the struct a multiple of 16). */
function uniformSize(iface: KernelInterface): number {
  return Math.max(16, Math.ceil((iface.params.length * 4) / 16) * 16);
}

/** Writes a dispatch's params at `offset` of `view` as its uniform struct lays them out; throws on a missing or extra one. */
function writeParams(view: DataView, offset: number, spec: DispatchSpec, iface: KernelInterface): void {
  const entry = spec.entry ?? 'main';
  const params = spec.params ?? {};
  iface.params.forEach((field, k) => {
    const v = params[field.name];
    if (v === undefined) throw contractError(iface, entry, `no value for param '${field.name}'`, paramList(iface));
    const at = offset + 4 * k;
    if (field.type === 'f32') view.setFloat32(at, v, true);
    else if (!Number.isInteger(v)) {
      throw contractError(iface, entry, `param '${field.name}' is ${field.type} but got ${v}`, paramList(iface));
    } else if (field.type === 'u32') view.setUint32(at, v >>> 0, true);
    else view.setInt32(at, v, true);
  });
  if (Object.keys(params).length !== iface.params.length) {
    const extra = Object.keys(params).find((k) => !iface.params.some((fd) => fd.name === k));
    throw contractError(iface, entry, `unknown param '${extra}'`, paramList(iface));
  }
}

/** A node of a shader's pipeline tree: one more source constant's, entry's or constant's value per level. */
interface PipelineNode {
  /** By a constant's name, then its value. */
  next: Map<string, Map<number | boolean, PipelineNode>>;
  /** By entry point (below a shader's source constants). */
  entries: Map<string, PipelineNode>;
  made: { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout; iface: KernelInterface } | null;
}

function pipelineNode(): PipelineNode {
  return { next: new Map(), entries: new Map(), made: null };
}

/** The node below `node` for constant `name` = `value`, made where missing. */
function childOf(node: PipelineNode, name: string, value: number | boolean): PipelineNode {
  let byValue = node.next.get(name);
  if (!byValue) node.next.set(name, (byValue = new Map()));
  let child = byValue.get(value);
  if (!child) byValue.set(value, (child = pipelineNode()));
  return child;
}

/** A set of constants as a pipeline's label, `A=1,B=true` in the order given. */
function constantsKey(constants?: Record<string, number | boolean>): string {
  let key = '';
  if (constants) for (const k in constants) key += `${k}=${constants[k]},`;
  return key;
}

function contractError(iface: KernelInterface, entry: string, what: string, has: string): Error {
  return new Error(`piplay: kernel '${iface.shader}' (entry '${entry}'): ${what}${has ? `; ${has}` : ''}`);
}
function paramList(iface: KernelInterface): string {
  return `its params are ${iface.params.map((p) => p.name).join(', ')}`;
}
function bindingList(io: EntryInterface): string {
  return `it binds ${io.buffers.map((r) => r.name).join(', ') || 'no buffers'}`;
}
function overrideList(iface: KernelInterface): string {
  return `its constants are ${iface.overrides.map((o) => o.name).join(', ') || 'none'}`;
}
