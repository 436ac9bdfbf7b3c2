// What the worker's services (run-service.ts, pretrain-service.ts, checkpoint-service.ts) share: the GPU engine
// (made on first use, dropped when its device is lost), the checkpoint store, the batched messages to the page,
// and the one job at a time (a run or a pretraining): its kind, phase, control and driving loop, the last
// finished run kept for the page's questions, and the queue that keeps GPU work in order.
import * as Comlink from 'comlink';
import { Engine, GpuLimitError, GpuRuntimeError, type EngineInfo } from '../gpu/engine.ts';
import type { GpuHost } from '../gpu/host/types.ts';
import type { RunEvent } from '../selfplay/events.ts';
import type { SelfPlayRun } from '../selfplay/loop.ts';
import {
  BrowserCheckpoints,
  type BrowserRunStorage,
  CheckpointSaveError,
  type CheckpointMeta,
  type KvBackend,
} from './checkpoint-store.ts';
import type { RunControl } from './control.ts';
import type { DownloadProgress } from './hub.ts';
import type { JobKind, RunPhase, WorkerMessage } from './protocol.ts';
import { storedLoraBase } from './run-host.ts';
import type { RunLock } from './run-lock.ts';
import { packEvent } from './wire.ts';

export interface InitResult {
  ok: boolean;
  info?: EngineInfo;
  /** A message for the user when WebGPU is missing or unusable. */
  error?: string;
}

export interface ActiveJob {
  job: JobKind;
  name: string;
  control: RunControl;
  run: SelfPlayRun | null;
  engine: Engine | null;
  /** Where the run's history goes (set once the run is under way, so a resume's replay is not stored twice). */
  history?: BrowserRunStorage;
  /** The run's lock across tabs (src/worker/run-lock.ts), held while this job drives it. */
  lock?: RunLock;
}

export type Subscriber = (messages: WorkerMessage[]) => void;

export type RunErrorKind = 'device-lost' | 'out-of-memory' | 'config' | 'other';

export class WorkerSession {
  engine: Engine | null = null;
  readonly store: BrowserCheckpoints;
  active: ActiveJob | null = null;
  /** The driving loop of the active job (settles once the job has let go of the GPU). */
  driving: Promise<void> | null = null;
  phase: RunPhase = 'idle';
  /** The job the phase belongs to (the last one started). */
  job: JobKind = 'selfplay';
  /** The last run that finished or stopped, kept with its policies for the page's questions until the next job. */
  kept: SelfPlayRun | null = null;
  private subscriber: Subscriber | null = null;
  private queue: WorkerMessage[] = [];
  private transfer: Transferable[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  /** GPU work in order: the page's questions (ablation, comparison) run between a run's steps, never inside one. */
  private gpuQueue: Promise<unknown> = Promise.resolve();

  constructor(
    private host: GpuHost,
    kv: KvBackend,
  ) {
    this.store = new BrowserCheckpoints(kv, {
      runBase: async (name) => {
        const onProgress = (p: DownloadProgress) => this.post({ type: 'download', progress: p });
        return storedLoraBase(await this.ensureEngine(), this.store.runStorage(name), this.store, onProgress);
      },
    });
  }

  // ---------------------------------------------------------------------------------------- engine

  async init(): Promise<InitResult> {
    try {
      if (!this.engine) {
        const e = await Engine.create(this.host);
        this.engine = e;
        void e.device.lost.then((info) => this.onDeviceLost(e, `${info.reason}: ${info.message || 'no details'}`));
      }
      return { ok: true, info: this.engine.info };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }

  need(): Engine {
    if (!this.engine) throw new Error('piplay: the engine is not initialised (call init first)');
    return this.engine;
  }

  async ensureEngine(): Promise<Engine> {
    if (!this.engine) {
      const r = await this.init();
      if (!r.ok) throw new Error(r.error);
    }
    return this.need();
  }

  /** Runs `fn` after the GPU work queued before it (a run's step, another question of the page). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.gpuQueue.then(fn, fn);
    this.gpuQueue = p.catch(() => undefined);
    return p;
  }

  /** Frees the kept run's policies (a new job needs the memory). */
  releaseKept(): void {
    try {
      this.kept?.dispose();
    } catch {
      /* a lost device cannot free its buffers */
    }
    this.kept = null;
  }

  private async onDeviceLost(e: Engine, reason: string): Promise<void> {
    if (this.engine === e) this.engine = null;
    // The kept run's buffers went with the device.
    this.kept = null;
    const run = this.active;
    run?.control.stop();
    const job = run?.job ?? this.job;
    const entry = run ? await this.store.entry(run.name).catch(() => undefined) : undefined;
    const resumable = (c: CheckpointMeta | undefined) =>
      Boolean(c?.kind === 'run' && c.cursor && c.cursor.stage !== 'done');
    // A pretraining keeps nothing to resume; offering some older run instead would be misleading.
    const last =
      job === 'pretrain' && run
        ? null
        : resumable(entry)
          ? entry!.name
          : ((await this.store.list().catch(() => [])).find(resumable)?.name ?? null);
    this.post({ type: 'device-lost', message: reason, lastCheckpoint: last, job });
  }

  // ---------------------------------------------------------------------------------------- jobs

  /** Stops the active job (a run after its current step, a pretraining at once). */
  stop(): void {
    if (!this.active) return;
    this.active.control.stop();
    this.setPhase('stopping');
  }

  /** Waits for a job stopped by a lost device to unwind; then why no new job can start, or null. */
  async busy(): Promise<string | null> {
    if (this.active?.control.stopped) await this.driving?.catch(() => undefined);
    return this.active ? this.busyMessage() : null;
  }

  busyMessage(): string {
    return this.active?.job === 'pretrain'
      ? 'a pretraining is under way; stop it first (one job at a time)'
      : 'a run is already active; stop it first (one job at a time)';
  }

  // ---------------------------------------------------------------------------------------- messages

  subscribe(fn: Subscriber): void {
    this.subscriber = fn;
  }

  post(m: WorkerMessage, transfer: Transferable[] = []): void {
    this.queue.push(m);
    this.transfer.push(...transfer);
    // Events come in bursts (a step's rollouts); one message per animation frame or so is plenty.
    this.flushTimer ??= setTimeout(() => this.flush(), 30);
  }

  private flush(): void {
    this.flushTimer = null;
    const batch = this.queue.splice(0);
    const transfer = this.transfer.splice(0);
    if (!batch.length || !this.subscriber) return;
    try {
      void Promise.resolve(this.subscriber(Comlink.transfer(batch, transfer))).catch(() => undefined);
    } catch {
      /* the page went away */
    }
  }

  emitRun = (ev: RunEvent): void => {
    this.active?.history?.record(ev);
    const { wire, transfer } = packEvent(ev);
    this.post({ type: 'run', event: wire }, transfer);
    if (ev.type === 'checkpoint') void this.postCheckpoints();
  };

  setPhase(phase: RunPhase, error?: string, errorKind?: RunErrorKind): void {
    this.phase = phase;
    this.post({ type: 'phase', phase, job: this.job, ...(error ? { error, errorKind } : {}) });
  }

  async postCheckpoints(): Promise<void> {
    const list = await this.store.list().catch(() => null);
    if (list) this.post({ type: 'checkpoints', list: list.map(stripConfig) });
  }
}

/**
 * Whether a device is lost. A loss surfaces first as a failed read-back or dispatch; the device's lost
 * promise can settle a second or two later, so this waits that long (only ever on an error path).
 */
export async function isLost(e: Engine | null, waitMs = 3000): Promise<boolean> {
  if (!e) return false;
  return Promise.race([
    e.device.lost.then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), waitMs)),
  ]);
}

/** A checkpoint's metadata with its own copy of the config (what crosses to the page). */
export function stripConfig(c: CheckpointMeta): CheckpointMeta {
  const { config, ...rest } = c;
  return { ...rest, ...(config ? { config: { ...config } } : {}) };
}

/** What kind of failure stopped a job, for the page's message. */
export function classifyRun(e: unknown): RunErrorKind {
  const msg = (e as Error).message ?? '';
  if (/device was lost|device lost/i.test(msg)) return 'device-lost';
  if (
    e instanceof GpuLimitError ||
    /out of memory|OutOfMemory|allocation failed|exceeds this GPU|largest storage binding/i.test(msg)
  )
    return 'out-of-memory';
  if (e instanceof GpuRuntimeError) return 'other';
  if ((e as Error).name === 'ConfigError') return 'config';
  if (e instanceof CheckpointSaveError) return 'other';
  return 'other';
}
