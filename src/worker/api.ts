// The API the page calls in the engine worker (through comlink). All GPU work happens behind it: model
// inspection, the self-play run (start, pause, resume, stop, save), pretraining a base model (start, stop;
// src/worker/pretrain-job.ts), and the checkpoints in IndexedDB. One job (a run or a pretraining) at a time.
// Everything the run reports goes to the page as batched messages; rollouts' token arrays cross as
// transferables (wire.ts).
import * as Comlink from 'comlink';
import { Engine, GpuLimitError, GpuRuntimeError, type EngineInfo } from '../gpu/engine.ts';
import type { GpuHost } from '../gpu/host/types.ts';
import { matmul } from '../gpu/ops/matmul.ts';
import { JsonlParseError, parseCorpusJsonl } from '../env/corpus.ts';
import { parseConfig, type ModelConfig } from '../model/config.ts';
import { MissingFileError, isMissingFile, parseJsonFile } from '../model/files.ts';
import { tinyConfig } from '../model/init.ts';
import { readConfig } from '../model/io.ts';
import { ablateRollout, type AblationResult, type AblationRollout } from '../selfplay/ablation.ts';
import { beforeAndAfter, pickQuestions, type BeforeAfterRow } from '../selfplay/before-after.ts';
import { latestCheckpoint } from '../selfplay/checkpoint.ts';
import { validateConfig, type SelfPlayConfig } from '../selfplay/config.ts';
import type { RunEvent } from '../selfplay/events.ts';
import { SelfPlayRun } from '../selfplay/loop.ts';
import {
  BrowserCheckpoints,
  type BrowserRunStorage,
  CheckpointSaveError,
  idbBackend,
  type CheckpointMeta,
  type KvBackend,
} from './checkpoint-store.ts';
import { RunControl, RunStopped } from './control.ts';
import { estimateRun, type AdapterLimits } from './estimate.ts';
import { HubError, hubIdProblem, hubPlan, type DownloadProgress } from './hub.ts';
import {
  describeSource,
  embeddedBase,
  isHfModelFile,
  relativeNames,
  resolveSource,
  type ModelSource,
} from './model-source.ts';
import { checkPretrainRequest, pretrainedName, runPretrainJob } from './pretrain-job.ts';
import type {
  CorpusReport,
  JobKind,
  ModelReport,
  PretrainRequest,
  RunPhase,
  StartRequest,
  WorkerMessage,
} from './protocol.ts';
import { buildBase, corpusPassages, recordBase, storedBase, storedCorpus, storedLoraBase } from './run-host.ts';
import { packEvent, wireTransfer, type WireEvent } from './wire.ts';
import { isPlainFileName, safeName } from './names.ts';
import { readZip, writeZip } from './zip.ts';

export interface InitResult {
  ok: boolean;
  info?: EngineInfo;
  /** A message for the user when WebGPU is missing or unusable. */
  error?: string;
}

/** Browsers' default limits, for estimates before the engine exists. */
const DEFAULT_LIMITS: AdapterLimits = { maxStorageBufferBindingSize: 128 * 2 ** 20, maxBufferSize: 256 * 2 ** 20 };

interface ActiveRun {
  job: JobKind;
  name: string;
  control: RunControl;
  run: SelfPlayRun | null;
  engine: Engine | null;
  /** Where the run's history goes (set once the run is under way, so a resume's replay is not stored twice). */
  history?: BrowserRunStorage;
}

/**
 * Whether a device is lost. A loss surfaces first as a failed read-back or dispatch; the device's lost
 * promise can settle a second or two later, so this waits that long (only ever on an error path).
 */
async function isLost(e: Engine | null, waitMs = 3000): Promise<boolean> {
  if (!e) return false;
  return Promise.race([
    e.device.lost.then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), waitMs)),
  ]);
}

export type Subscriber = (messages: WorkerMessage[]) => void;

export class WorkerApi {
  private engine: Engine | null = null;
  private readonly store: BrowserCheckpoints;
  private subscriber: Subscriber | null = null;
  private queue: WorkerMessage[] = [];
  private transfer: Transferable[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private active: ActiveRun | null = null;
  /** The driving loop of the active run (settles once the run has let go of the GPU). */
  private driving: Promise<void> | null = null;
  private phase: RunPhase = 'idle';
  /** The job the phase belongs to (the last one started). */
  private job: JobKind = 'selfplay';
  /** A pretrained model that could not be stored, kept for download until the next pretraining. */
  private unsaved: { name: string; files: Map<string, Uint8Array> } | null = null;
  /** The last run that finished or stopped, kept with its policies for the page's questions until the next job. */
  private kept: SelfPlayRun | null = null;
  /** GPU work in order: the page's questions (ablation, comparison) run between a run's steps, never inside one. */
  private gpuQueue: Promise<unknown> = Promise.resolve();

  constructor(
    private host: GpuHost,
    kv: KvBackend = idbBackend(),
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

  /** A small matmul checked on the CPU: proves the device computes, and shows its speed. */
  async selfTest(n = 64): Promise<{ maxError: number; ms: number }> {
    const e = this.need();
    const a = Float32Array.from({ length: n * n }, (_, k) => Math.sin(k));
    const b = Float32Array.from({ length: n * n }, (_, k) => Math.cos(k));
    const t0 = performance.now();
    const c = e.tidy(() => e.keep(matmul(e.tensor(a, [n, n]), e.tensor(b, [n, n]))));
    const got = await c.read();
    const ms = performance.now() - t0;
    c.dispose();
    let maxError = 0;
    for (let i = 0; i < n; i += 7)
      for (let j = 0; j < n; j += 5) {
        let s = 0;
        for (let k = 0; k < n; k++) s += a[i * n + k]! * b[k * n + j]!;
        maxError = Math.max(maxError, Math.abs(s - got[i * n + j]!));
      }
    return { maxError, ms };
  }

  private need(): Engine {
    if (!this.engine) throw new Error('piplay: the engine is not initialised (call init first)');
    return this.engine;
  }

  /** Runs `fn` after the GPU work queued before it (a run's step, another question of the page). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.gpuQueue.then(fn, fn);
    this.gpuQueue = p.catch(() => undefined);
    return p;
  }

  /** Frees the kept run's policies (a new job needs the memory). */
  private releaseKept(): void {
    try {
      this.kept?.dispose();
    } catch {
      /* a lost device cannot free its buffers */
    }
    this.kept = null;
  }

  private async ensureEngine(): Promise<Engine> {
    if (!this.engine) {
      const r = await this.init();
      if (!r.ok) throw new Error(r.error);
    }
    return this.need();
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

  /** Test hook: destroys the GPU device as a driver reset would (the page then offers to resume). */
  loseDevice(): void {
    this.engine?.device.destroy();
  }

  // ---------------------------------------------------------------------------------------- messages

  subscribe(fn: Subscriber): void {
    this.subscriber = fn;
  }

  private post(m: WorkerMessage, transfer: Transferable[] = []): void {
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

  private emitRun = (ev: RunEvent): void => {
    this.active?.history?.record(ev);
    const { wire, transfer } = packEvent(ev);
    this.post({ type: 'run', event: wire }, transfer);
    if (ev.type === 'checkpoint') void this.postCheckpoints();
  };

  private setPhase(
    phase: RunPhase,
    error?: string,
    errorKind?: 'device-lost' | 'out-of-memory' | 'config' | 'other',
  ): void {
    this.phase = phase;
    this.post({ type: 'phase', phase, job: this.job, ...(error ? { error, errorKind } : {}) });
  }

  private async postCheckpoints(): Promise<void> {
    const list = await this.store.list().catch(() => null);
    if (list) this.post({ type: 'checkpoints', list: list.map(stripConfig) });
  }

  // ---------------------------------------------------------------------------------------- setup

  /** Names of the models under public/models/ (from its index.json). */
  async listEmbedded(): Promise<string[]> {
    try {
      const res = await fetch(`${embeddedBase()}index.json`);
      if (!res.ok) return [];
      const j = (await res.json()) as unknown;
      const list = Array.isArray(j) ? j : ((j as { models?: unknown[] }).models ?? []);
      return list.map((x) => (typeof x === 'string' ? x : String((x as { name?: string }).name ?? ''))).filter(Boolean);
    } catch {
      return [];
    }
  }

  /** The model's size and memory needs against this GPU's limits, from config.json alone. */
  async inspectModel(src: ModelSource, config: SelfPlayConfig): Promise<ModelReport> {
    const where = describeSource(src);
    const limits = this.engine?.info.limits ?? DEFAULT_LIMITS;
    try {
      let cfg: ModelConfig;
      const report: ModelReport = { ok: true, where };
      if (src.kind === 'random-tiny') {
        cfg = tinyConfig({
          vocabSize: config.tinyVocab,
          hidden: config.tinyHidden,
          layers: config.tinyLayers,
          heads: config.tinyHeads,
          kvHeads: config.tinyKvHeads,
          maxPositions: config.tinyMaxPositions,
        });
      } else {
        if (src.kind === 'hub') {
          const problem = hubIdProblem(src.id);
          if (problem) return { ok: false, where, error: problem, errorKind: 'bad-id' };
          // The size first, from the hub's listing (a wrong id or a missing file is refused here, by name).
          const plan = await hubPlan(src);
          report.downloadBytes = plan.toDownload;
          report.totalBytes = plan.bytes;
          report.cached = plan.toDownload === 0;
        }
        const { readFile } = resolveSource(src, this.store);
        cfg = await readConfig(readFile, where);
        if (src.kind === 'files') {
          const names = relativeNames(src.files);
          const missing = ['tokenizer.json', 'tokenizer_config.json'].filter((f) => !names.has(f));
          if (![...names.keys()].some((n) => n.endsWith('.safetensors'))) missing.unshift('model.safetensors');
          if (missing.length)
            return {
              ok: false,
              where,
              error:
                `${where} lacks ${missing.join(', ')} (a model folder needs config.json, *.safetensors, ` +
                'tokenizer.json and tokenizer_config.json).',
              errorKind: 'missing',
            };
        }
      }
      const memory = estimateRun(cfg, config, limits);
      report.memory = memory;
      if (!memory.fits) {
        report.ok = false;
        report.error = memory.problems[0];
        report.errorKind = 'too-large';
      }
      return report;
    } catch (e) {
      return { ok: false, where, error: (e as Error).message, errorKind: classify(e) };
    }
  }

  /** Checks an uploaded corpus; errors name the line. */
  async checkCorpus(name: string, text: string): Promise<CorpusReport> {
    try {
      const passages = parseCorpusJsonl(text, name);
      if (passages.length === 0) return { ok: false, error: `${name}: the file holds no passages` };
      return { ok: true, passages: passages.length, sample: passages.slice(0, 3).map((p) => p.title) };
    } catch (e) {
      return { ok: false, error: (e as Error).message, ...(e instanceof JsonlParseError ? { line: e.line } : {}) };
    }
  }

  // ---------------------------------------------------------------------------------------- the run

  /** Starts a run (or resumes one); returns once it is under way. Progress arrives as messages. */
  async start(req: StartRequest): Promise<{ ok: boolean; error?: string }> {
    // A run stopped by a lost device may still be unwinding its last step.
    if (this.active?.control.stopped) await this.driving?.catch(() => undefined);
    if (this.active) return { ok: false, error: this.busyMessage() };
    const control = new RunControl();
    this.releaseKept();
    this.active = { job: 'selfplay', name: '', control, run: null, engine: null };
    this.job = 'selfplay';
    this.setPhase('starting');
    try {
      const e = await this.ensureEngine();
      this.active.engine = e;
      const onProgress = (p: DownloadProgress) => this.post({ type: 'download', progress: p });
      let run: SelfPlayRun;
      let name: string;
      if (req.resumeFrom) {
        name = req.resumeFrom;
        this.active.name = name;
        const storage = this.store.runStorage(name);
        const latest = await latestCheckpoint(storage);
        if (!latest) throw new Error(`run '${name}' has no complete checkpoint to resume from`);
        this.emitRun({
          type: 'progress',
          stage: 'load',
          iteration: latest.state.cursor.iteration,
          done: 0,
          total: 2,
          label: 'rebuilding the corpus and the base model',
        });
        const env = corpusPassages(latest.state.config, await storedCorpus(storage));
        const base = await storedBase(e, storage, latest.slot, latest.state, env, this.store, onProgress);
        this.emitRun({
          type: 'progress',
          stage: 'load',
          iteration: latest.state.cursor.iteration,
          done: 1,
          total: 2,
          label: 'restoring the policies',
        });
        run = await SelfPlayRun.start({
          engine: e,
          config: latest.state.config,
          base,
          env,
          storage,
          listener: this.emitRun,
          resume: true,
        });
        // The run's history, so every view continues where it was (a run stored before runs kept one: its
        // metrics and evaluations from the checkpoint).
        const history = await this.store.history(name, latest.state.records);
        if (history.length > 0) {
          for (const h of history) this.post({ type: 'run', event: h }, wireTransfer(h));
        } else {
          for (const m of run.state.metrics) this.emitRun({ type: 'metrics', metrics: m });
          for (const m of run.state.evals) this.emitRun({ type: 'eval', metrics: m });
        }
        this.active.history = storage;
      } else {
        if (!('config' in req)) throw new Error('piplay: a new run needs its settings, model and corpus');
        // The browser has no file paths: the model and corpus come from the pickers, held-out questions from the world.
        const config = validateConfig({
          ...req.config,
          model: modelName(req.model),
          corpus: req.corpus.kind === 'world' ? 'world' : req.corpus.name,
          evalSet: '',
        });
        this.emitRun({
          type: 'progress',
          stage: 'load',
          iteration: 0,
          done: 0,
          total: 3,
          label: 'building the corpus',
        });
        const env = corpusPassages(config, req.corpus);
        this.emitRun({
          type: 'progress',
          stage: 'load',
          iteration: 0,
          done: 1,
          total: 3,
          label: `loading ${describeSource(req.model)}`,
        });
        const base = await buildBase(e, config, req.model, env, this.store, onProgress);
        this.emitRun({
          type: 'progress',
          stage: 'load',
          iteration: 0,
          done: 2,
          total: 3,
          label: 'creating the examiner, student and teacher',
        });
        const storage = await this.store.createRun({ base: base.name, config });
        name = storage.runName;
        this.active.name = name;
        await recordBase(storage, base, req.model, req.corpus);
        this.active.history = storage;
        run = await SelfPlayRun.start({ engine: e, config, base, env, storage, listener: this.emitRun });
        this.emitRun({
          type: 'log',
          level: 'info',
          message: `run '${name}' started from ${describeSource(req.model)}`,
        });
      }
      if (control.stopped) {
        run.dispose();
        this.active = null;
        this.setPhase('stopped');
        return { ok: true };
      }
      this.active.run = run;
      this.driving = this.drive(run, control);
      return { ok: true };
    } catch (e) {
      const lost = await isLost(this.active?.engine ?? null);
      this.active = null;
      const msg = (e as Error).message;
      this.setPhase('failed', msg, lost ? 'device-lost' : classifyRun(e));
      return { ok: false, error: msg };
    }
  }

  private async drive(run: SelfPlayRun, control: RunControl): Promise<void> {
    if (!control.paused) this.setPhase('running');
    try {
      while (!run.done) {
        if (control.paused) this.setPhase('paused');
        await control.gate();
        if (this.phase !== 'running' && this.phase !== 'stopping') this.setPhase('running');
        await this.exclusive(() => run.step());
        if (control.takeSaveRequest()) await this.exclusive(() => run.checkpoint());
      }
      this.setPhase('finished');
    } catch (e) {
      if (e instanceof RunStopped) {
        // A checkpoint of where it stopped, so a stop is resumable like a pause across reloads.
        try {
          if (this.engine) await this.exclusive(() => run.checkpoint());
        } catch {
          /* a failed save leaves the previous checkpoint; the stop still stands */
        }
        this.setPhase('stopped');
      } else {
        // Any error after a device loss is that loss (a failed read-back, a destroyed buffer...).
        const lost = await isLost(this.active?.engine ?? null);
        this.setPhase('failed', (e as Error).message, lost ? 'device-lost' : classifyRun(e));
      }
    } finally {
      if (this.phase === 'finished' || this.phase === 'stopped') this.kept = run;
      else
        try {
          run.dispose();
        } catch {
          /* a lost device cannot free its buffers */
        }
      this.active = null;
      void this.postCheckpoints();
    }
  }

  pause(): void {
    // The pretraining loop has no step boundary to wait at; it only stops.
    if (this.active?.job !== 'selfplay' || this.phase !== 'running') return;
    this.active.control.pause();
    this.setPhase('paused');
    this.post({ type: 'notice', level: 'info', message: 'Pausing after the current step.' });
  }

  resume(): void {
    if (this.active?.job !== 'selfplay' || this.phase !== 'paused') return;
    this.active.control.resume();
    this.setPhase('running');
  }

  stop(): void {
    if (!this.active) return;
    this.active.control.stop();
    this.setPhase('stopping');
  }

  private busyMessage(): string {
    return this.active?.job === 'pretrain'
      ? 'a pretraining is under way; stop it first (one job at a time)'
      : 'a run is already active; stop it first (one job at a time)';
  }

  // ---------------------------------------------------------------------------------------- pretraining

  /**
   * Starts pretraining a base model (the recipe of `npm run pretrain`); returns once it is under way, or
   * with the reason it cannot start. Progress and the loss arrive as run events (stage 'pretrain'), the
   * outcome as a 'pretrained' message; the model is stored as a model entry, never over another entry.
   */
  async pretrain(req: PretrainRequest): Promise<{ ok: boolean; error?: string; name?: string }> {
    if (this.active?.control.stopped) await this.driving?.catch(() => undefined);
    if (this.active) return { ok: false, error: this.busyMessage() };
    let name: string;
    try {
      checkPretrainRequest(req);
      name = await pretrainedName(this.store, req.name);
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
    if (this.active) return { ok: false, error: this.busyMessage() };
    const control = new RunControl();
    this.releaseKept();
    this.active = { job: 'pretrain', name: '', control, run: null, engine: null };
    this.job = 'pretrain';
    this.unsaved = null;
    this.setPhase('starting');
    try {
      const e = await this.ensureEngine();
      this.active.engine = e;
      this.driving = this.drivePretrain(req, name, e, control);
      return { ok: true, name };
    } catch (e) {
      this.active = null;
      const msg = (e as Error).message;
      this.setPhase('failed', msg, classifyRun(e));
      return { ok: false, error: msg };
    }
  }

  private async drivePretrain(req: PretrainRequest, name: string, e: Engine, control: RunControl): Promise<void> {
    this.setPhase('running');
    try {
      const out = await runPretrainJob(req, name, {
        engine: e,
        store: this.store,
        signal: control.signal,
        emit: this.emitRun,
      });
      this.post({ type: 'pretrained', summary: out.summary, saved: out.saved?.name ?? null });
      if (out.saved) {
        this.emitRun({
          type: 'log',
          level: 'info',
          message: `pretraining finished; the model is stored as '${out.saved.name}'`,
        });
        this.setPhase('finished');
      } else {
        this.unsaved = { name: out.summary.name, files: out.files };
        this.setPhase(
          'failed',
          `The model trained, but storing it failed: ${out.saveError ?? 'unknown error'} It can still be downloaded ` +
            'as a zip.',
          'other',
        );
      }
    } catch (err) {
      if (err instanceof RunStopped) {
        this.emitRun({ type: 'log', level: 'info', message: 'pretraining stopped; nothing was stored' });
        this.setPhase('stopped');
      } else {
        const lost = await isLost(e);
        this.setPhase('failed', (err as Error).message, lost ? 'device-lost' : classifyRun(err));
      }
    } finally {
      this.active = null;
      void this.postCheckpoints();
    }
  }

  /** The last pretrained model that could not be stored, as a zip (null when there is none). */
  exportUnsavedModel(): { fileName: string; blob: Blob } | null {
    return this.unsaved ? zipFolder(this.unsaved.name, this.unsaved.files) : null;
  }

  /** Saves a checkpoint at the next step boundary (or now, when paused between steps). */
  async saveNow(): Promise<{ ok: boolean; error?: string }> {
    const a = this.active;
    if (!a?.run) return { ok: false, error: 'no run is active' };
    if (a.control.paused) {
      try {
        await a.run.checkpoint();
        return { ok: true };
      } catch (e) {
        return { ok: false, error: (e as Error).message };
      }
    }
    a.control.requestSave();
    return { ok: true };
  }

  // ---------------------------------------------------------------------------------------- questions about a run

  /** The active run (between its steps), else the last one that finished or stopped. */
  private runToInspect(): SelfPlayRun {
    const run = this.active?.run ?? this.kept;
    if (!run) throw new Error('no run is active or finished in this tab; start a run (or resume one) first');
    return run;
  }

  /**
   * Scores a student rollout under every privileged context with the run's teacher as it is now (the student
   * itself in a run without a teacher, as the teacher is at the start of a run). Teacher forwards only.
   */
  async ablate(
    rollout: AblationRollout,
  ): Promise<{ ok: true; result: AblationResult; scorer: 'teacher' | 'student' } | { ok: false; error: string }> {
    try {
      const run = this.runToInspect();
      const { student, teacher } = run.ctx.policies;
      const result = await this.exclusive(() => ablateRollout(run.ctx, student, teacher ?? student, rollout));
      return { ok: true, result, scorer: teacher ? 'teacher' : 'student' };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }

  /** Up to `perHop` held-out questions of each hop count answered greedily by the base model and the student now. */
  async compareBaseAndStudent(
    perHop = 2,
  ): Promise<{ ok: true; rows: BeforeAfterRow[] } | { ok: false; error: string }> {
    try {
      const run = this.runToInspect();
      const questions = pickQuestions(run.ctx.env.evalSet, perHop);
      const rows = await this.exclusive(() => beforeAndAfter(run.ctx, run.ctx.policies.student, questions));
      return { ok: true, rows };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }

  // ---------------------------------------------------------------------------------------- checkpoints

  /**
   * What the page showed of a stored run (finished or not), to view it again: its step metrics, evaluations,
   * questions and rollouts up to its latest checkpoint, and its settings.
   */
  async runHistory(name: string): Promise<{ meta: CheckpointMeta; events: WireEvent[] }> {
    const meta = await this.store.entry(name);
    if (meta?.kind !== 'run') throw new Error(`no stored run named '${name}'`);
    const latest = await latestCheckpoint(this.store.runStorage(name));
    const events = await this.store.history(name, latest?.state.records);
    return Comlink.transfer({ meta: stripConfig(meta), events }, events.flatMap(wireTransfer));
  }

  async listCheckpoints(): Promise<CheckpointMeta[]> {
    return (await this.store.list()).map(stripConfig);
  }

  /** The settings a stored run was made with (the page shows them when resuming). */
  async checkpointConfig(name: string): Promise<SelfPlayConfig | null> {
    return (await this.store.entry(name))?.config ?? null;
  }

  async deleteCheckpoint(name: string): Promise<boolean> {
    if (this.active?.name === name) throw new Error(`'${name}' is the active run; stop it first`);
    return this.store.delete(name);
  }

  /** An HF-format model folder of the checkpoint (a run: its student) as a store-only zip. */
  async exportCheckpoint(name: string): Promise<{ fileName: string; blob: Blob }> {
    return zipFolder(name, await this.store.modelFiles(name));
  }

  /** Stores a model folder (a zip, or a picked folder) so runs can start from it. */
  async importCheckpoint(
    input: { kind: 'zip'; name: string; bytes: Uint8Array } | { kind: 'files'; files: File[] },
  ): Promise<CheckpointMeta> {
    let files = new Map<string, Uint8Array>();
    let name: string;
    if (input.kind === 'zip') {
      const entries = await readZip(input.bytes, input.name);
      const top = entries[0]?.name.split('/')[0];
      const nested =
        entries.length > 0 && entries.every((en) => en.name.includes('/') && en.name.split('/')[0] === top);
      for (const en of entries) files.set(nested ? en.name.slice(top!.length + 1) : en.name, en.data);
      name = safeName(nested ? top! : input.name.replace(/\.zip$/i, ''), 'imported');
    } else {
      for (const [f, file] of relativeNames(input.files)) files.set(f, new Uint8Array(await file.arrayBuffer()));
      const p = (input.files[0] as (File & { webkitRelativePath?: string }) | undefined)?.webkitRelativePath ?? '';
      name = safeName(p.includes('/') ? p.split('/')[0]! : '', 'imported');
    }
    files = new Map([...files].filter(([f]) => isPlainFileName(f) && isHfModelFile(f)));
    const cfgBytes = files.get('config.json');
    if (!cfgBytes) throw new MissingFileError('config.json', `'${name}'`);
    parseConfig(parseJsonFile(cfgBytes, 'config.json') as object);
    if (![...files.keys()].some((f) => f.endsWith('.safetensors')))
      throw new Error(`'${name}' holds no .safetensors weights`);
    for (const f of ['tokenizer.json', 'tokenizer_config.json'])
      if (!files.has(f)) throw new Error(`'${name}' lacks ${f} (the tokenizer is needed to train)`);
    const existing = new Set((await this.store.list()).map((c) => c.name));
    let unique = name;
    for (let k = 2; existing.has(unique); k++) unique = `${name}-${k}`;
    const meta = await this.store.importModel(unique, files, 'imported model folder', { origin: 'imported' });
    void this.postCheckpoints();
    return stripConfig(meta);
  }
}

/** A model folder's files as a store-only zip holding one folder named after the model. */
function zipFolder(name: string, files: Map<string, Uint8Array>): { fileName: string; blob: Blob } {
  const folder = safeName(name, 'model');
  const entries = [...files]
    .filter(([f]) => isPlainFileName(f) && isHfModelFile(f))
    .map(([f, data]) => ({ name: `${folder}/${f}`, data }));
  return { fileName: `${folder}.zip`, blob: writeZip(entries) };
}

/** The config's `model` string for a source (informational; the host resolves the source itself). */
function modelName(m: ModelSource): string {
  switch (m.kind) {
    case 'random-tiny':
      return 'random-tiny';
    case 'embedded':
      return `embedded:${m.name}`;
    case 'hub':
      return `hf:${m.id.trim()}`;
    case 'checkpoint':
      return `checkpoint:${m.name}`;
    case 'files':
      return `folder:${describeSource(m)}`;
  }
}

function stripConfig(c: CheckpointMeta): CheckpointMeta {
  const { config, ...rest } = c;
  return { ...rest, ...(config ? { config: { ...config } } : {}) };
}

function classify(e: unknown): string {
  if (e instanceof HubError) return e.kind;
  const msg = (e as Error).message ?? '';
  if (
    /not a Hugging Face model id|model id may be misspelt|Give the model id|was not found \(no config\.json\)|gated or private/.test(
      msg,
    )
  )
    return 'bad-id';
  if (e instanceof HubError || /check the network connection|could not reach Hugging Face/.test(msg)) return 'network';
  if (e instanceof MissingFileError || isMissingFile(e)) return 'missing';
  if (e instanceof GpuLimitError) return 'too-large';
  return 'unsupported';
}

function classifyRun(e: unknown): 'device-lost' | 'out-of-memory' | 'config' | 'other' {
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
