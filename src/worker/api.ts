// The API the page calls in the engine worker (through comlink): a facade over the services that do the work,
// all GPU work behind it, one job (a run or a pretraining) at a time:
//   session.ts             the engine, the checkpoint store, the batched messages to the page, the active job;
//   inspect.ts             checks before a run (a model's memory needs, an uploaded corpus, a device self-test);
//   run-service.ts         the self-play run (start, pause, resume, stop, save) and questions about it;
//   pretrain-service.ts    pretraining a base model (src/worker/pretrain-job.ts);
//   checkpoint-service.ts  the checkpoints in IndexedDB (list, history, delete, export, import).
// Everything a job reports goes to the page as batched messages; rollouts' token arrays cross as transferables
// (wire.ts).
import type { PoolStats } from '../gpu/buffer-pool.ts';
import type { GpuHost } from '../gpu/host/types.ts';
import type { AblationResult, AblationRollout } from '../lab/ablation.ts';
import type { BeforeAfterRow } from '../lab/before-after.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import { CheckpointService } from './checkpoint-service.ts';
import { type CheckpointMeta, idbBackend, type KvBackend } from './checkpoint-store.ts';
import { checkCorpus, inspectModel, listEmbedded, selfTest } from './inspect.ts';
import type { ModelSource } from './model-source.ts';
import { PretrainService } from './pretrain-service.ts';
import type { CorpusReport, ModelReport, PretrainRequest, StartRequest } from './protocol.ts';
import { RunService } from './run-service.ts';
import { type InitResult, type Subscriber, WorkerSession } from './session.ts';
import type { WireEvent } from './wire.ts';

export type { InitResult, Subscriber } from './session.ts';

export class WorkerApi {
  private readonly session: WorkerSession;
  private readonly runs: RunService;
  private readonly pretraining: PretrainService;
  private readonly checkpoints: CheckpointService;

  constructor(host: GpuHost, kv: KvBackend = idbBackend()) {
    this.session = new WorkerSession(host, kv);
    this.runs = new RunService(this.session);
    this.pretraining = new PretrainService(this.session);
    this.checkpoints = new CheckpointService(this.session);
  }

  // ---------------------------------------------------------------------------------------- engine

  init(): Promise<InitResult> {
    return this.session.init();
  }

  /** A small matmul checked on the CPU: proves the device computes, and shows its speed. */
  async selfTest(n = 64): Promise<{ maxError: number; ms: number }> {
    return selfTest(this.session.need(), n);
  }

  /** Test hook: destroys the GPU device as a driver reset would (the page then offers to resume). */
  loseDevice(): void {
    this.session.engine?.device.destroy();
  }

  /**
   * The GPU buffer pool's counts (allocated, live, free bytes): what a long run's memory does, for the tests. Each
   * call starts a new span for `lowAllocatedBytes`, so it is the least allocated since the previous call.
   */
  poolStats(): PoolStats | null {
    const engine = this.session.engine;
    if (!engine) return null;
    const stats = engine.memory();
    engine.resetMemoryLow();
    return stats;
  }

  subscribe(fn: Subscriber): void {
    this.session.subscribe(fn);
  }

  // ---------------------------------------------------------------------------------------- setup

  /** Names of the models under public/models/ (from its index.json). */
  listEmbedded(): Promise<string[]> {
    return listEmbedded();
  }

  /** The model's size and memory needs against this GPU's limits, from config.json alone. */
  inspectModel(src: ModelSource, config: SelfPlayConfig): Promise<ModelReport> {
    return inspectModel(src, config, this.session.store, this.session.engine?.info.limits);
  }

  /** Checks an uploaded corpus; errors name the line. */
  checkCorpus(name: string, text: string): Promise<CorpusReport> {
    return checkCorpus(name, text);
  }

  // ---------------------------------------------------------------------------------------- the run

  /** Starts a run (or resumes one); returns once it is under way. Progress arrives as messages. */
  start(req: StartRequest): Promise<{ ok: boolean; error?: string }> {
    return this.runs.start(req);
  }

  pause(): void {
    this.runs.pause();
  }

  resume(): void {
    this.runs.resume();
  }

  /** Stops the active job: a run after its current step (with a checkpoint), a pretraining at once. */
  stop(): void {
    this.session.stop();
  }

  /** Saves a checkpoint at the next step boundary (or now, when paused between steps). */
  saveNow(): Promise<{ ok: boolean; error?: string }> {
    return this.runs.saveNow();
  }

  /** The active or last finished run's teacher scores a student rollout under every privileged context. */
  ablate(
    rollout: AblationRollout,
  ): Promise<{ ok: true; result: AblationResult; scorer: 'teacher' | 'student' } | { ok: false; error: string }> {
    return this.runs.ablate(rollout);
  }

  /** Up to `perHop` held-out questions of each hop count answered greedily by the base model and the student now. */
  compareBaseAndStudent(perHop = 2): Promise<{ ok: true; rows: BeforeAfterRow[] } | { ok: false; error: string }> {
    return this.runs.compareBaseAndStudent(perHop);
  }

  // ---------------------------------------------------------------------------------------- pretraining

  /** Starts pretraining a base model; returns once it is under way, or with the reason it cannot start. */
  pretrain(req: PretrainRequest): Promise<{ ok: boolean; error?: string; name?: string }> {
    return this.pretraining.pretrain(req);
  }

  /** The last pretrained model that could not be stored, as a zip (null when there is none). */
  exportUnsavedModel(): { fileName: string; blob: Blob } | null {
    return this.pretraining.exportUnsavedModel();
  }

  // ---------------------------------------------------------------------------------------- checkpoints

  /** What the page showed of a stored run, to view it again (its events up to its latest checkpoint). */
  runHistory(name: string): Promise<{ meta: CheckpointMeta; events: WireEvent[] }> {
    return this.checkpoints.runHistory(name);
  }

  listCheckpoints(): Promise<CheckpointMeta[]> {
    return this.checkpoints.listCheckpoints();
  }

  /** The settings a stored run was made with (the page shows them when resuming). */
  checkpointConfig(name: string): Promise<SelfPlayConfig | null> {
    return this.checkpoints.checkpointConfig(name);
  }

  deleteCheckpoint(name: string): Promise<boolean> {
    return this.checkpoints.deleteCheckpoint(name);
  }

  /** An HF-format model folder of the checkpoint (a run: its student) as a store-only zip. */
  exportCheckpoint(name: string): Promise<{ fileName: string; blob: Blob }> {
    return this.checkpoints.exportCheckpoint(name);
  }

  /** Stores a model folder (a zip, or a picked folder) so runs can start from it. */
  importCheckpoint(
    input: { kind: 'zip'; name: string; bytes: Uint8Array } | { kind: 'files'; files: File[] },
  ): Promise<CheckpointMeta> {
    return this.checkpoints.importCheckpoint(input);
  }
}
