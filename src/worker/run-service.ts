// The self-play run in the worker: start a new run or resume a stored one, drive it step by step (pause,
// resume, save now; a stop leaves a checkpoint), and answer the page's questions about the active or the last
// finished run (the ablation of a rollout, base vs student) between its steps.
import { latestCheckpoint } from '../selfplay/checkpoint.ts';
import { validateConfig } from '../selfplay/config.ts';
import { ablateRollout, type AblationResult, type AblationRollout } from '../lab/ablation.ts';
import { beforeAndAfter, pickQuestions, type BeforeAfterRow } from '../lab/before-after.ts';
import { type RunSetup, SelfPlayRun } from '../selfplay/loop.ts';
import { RunControl, RunStopped } from './control.ts';
import type { DownloadProgress } from './hub.ts';
import { describeSource, type ModelSource } from './model-source.ts';
import type { StartRequest } from './protocol.ts';
import { buildBase, corpusPassages, recordBase, storedBase, storedCorpus } from './run-host.ts';
import { lockedMessage, lockRun } from './run-lock.ts';
import { type ActiveJob, classifyRun, isLost, type WorkerSession } from './session.ts';
import { wireTransfer } from './wire.ts';

export class RunService {
  constructor(private readonly s: WorkerSession) {}

  /** Starts a run (or resumes one); returns once it is under way. Progress arrives as messages. */
  async start(req: StartRequest): Promise<{ ok: boolean; error?: string }> {
    // A run stopped by a lost device may still be unwinding its last step (busy waits for it).
    const busy = await this.s.busy();
    if (busy) return { ok: false, error: busy };
    const control = new RunControl();
    this.s.releaseKept();
    const active: ActiveJob = { job: 'selfplay', name: '', control, run: null, engine: null };
    this.s.active = active;
    this.s.job = 'selfplay';
    this.s.setPhase('starting');
    try {
      active.engine = await this.s.ensureEngine();
      const run = req.resumeFrom
        ? await this.resumeRun(active, req.resumeFrom)
        : await this.newRun(active, req as Extract<StartRequest, { config: unknown }>);
      if (control.stopped) {
        run.dispose();
        active.lock?.release();
        this.s.active = null;
        this.s.setPhase('stopped');
        return { ok: true };
      }
      active.run = run;
      this.s.driving = this.drive(run, control);
      return { ok: true };
    } catch (e) {
      const lost = await isLost(active.engine);
      active.lock?.release();
      this.s.active = null;
      const msg = (e as Error).message;
      this.s.setPhase('failed', msg, lost ? 'device-lost' : classifyRun(e));
      return { ok: false, error: msg };
    }
  }

  /** A 'load' progress line of the run's start: step `done` of `total`, at `iteration`. */
  private loading(iteration: number, done: number, total: number, label: string): void {
    this.s.emitRun({ type: 'progress', stage: 'load', iteration, done, total, label });
  }

  private readonly onDownload = (p: DownloadProgress) => this.s.post({ type: 'download', progress: p });

  /** The self-play run on the job's engine, its events to the page. */
  private startRun(active: ActiveJob, setup: Omit<RunSetup, 'engine' | 'listener'>): Promise<SelfPlayRun> {
    return SelfPlayRun.start({ ...setup, engine: active.engine!, listener: this.s.emitRun });
  }

  /** A stored run at its latest checkpoint, its lock taken, and the history every view shows replayed. */
  private async resumeRun(active: ActiveJob, name: string): Promise<SelfPlayRun> {
    const lock = await lockRun(name);
    if (!lock) throw new Error(lockedMessage(name));
    active.lock = lock;
    active.name = name;
    const storage = this.s.store.runStorage(name);
    const latest = await latestCheckpoint(storage);
    if (!latest) throw new Error(`run '${name}' has no complete checkpoint to resume from`);
    const { config, cursor, records } = latest.state;
    this.loading(cursor.iteration, 0, 2, 'rebuilding the corpus and the base model');
    const env = corpusPassages(config, await storedCorpus(storage));
    const base = await storedBase(
      active.engine!,
      storage,
      latest.slot,
      latest.state,
      env,
      this.s.store,
      this.onDownload,
    );
    this.loading(cursor.iteration, 1, 2, 'restoring the policies');
    const run = await this.startRun(active, { config, base, env, storage, resume: true });
    // The run's history, so every view continues where it was (a run stored before runs kept one: its metrics
    // and evaluations from the checkpoint).
    const history = await this.s.store.history(name, records);
    if (history.length > 0) {
      for (const h of history) this.s.post({ type: 'run', event: h }, wireTransfer(h));
    } else {
      for (const m of run.state.metrics) this.s.emitRun({ type: 'metrics', metrics: m });
      for (const m of run.state.evals) this.s.emitRun({ type: 'eval', metrics: m });
    }
    active.history = storage;
    return run;
  }

  /** A new run from the page's settings, model and corpus, stored (and locked) under a fresh name. */
  private async newRun(active: ActiveJob, req: Extract<StartRequest, { config: unknown }>): Promise<SelfPlayRun> {
    if (!('config' in req)) throw new Error('piplay: a new run needs its settings, model and corpus');
    // The browser has no file paths: the model and corpus come from the pickers, held-out questions from the world.
    const config = validateConfig({
      ...req.config,
      model: modelName(req.model),
      corpus: req.corpus.kind === 'world' ? 'world' : req.corpus.name,
      evalSet: '',
    });
    this.loading(0, 0, 3, 'building the corpus');
    const env = corpusPassages(config, req.corpus);
    this.loading(0, 1, 3, `loading ${describeSource(req.model)}`);
    const base = await buildBase(active.engine!, config, req.model, env, this.s.store, this.onDownload);
    this.loading(0, 2, 3, 'creating the examiner, student and teacher');
    const storage = await this.s.store.createRun({ base: base.name, config });
    active.name = storage.runName;
    active.lock = (await lockRun(active.name)) ?? undefined;
    await recordBase(storage, base, req.model, req.corpus);
    active.history = storage;
    const run = await this.startRun(active, { config, base, env, storage });
    this.s.emitRun({
      type: 'log',
      level: 'info',
      message: `run '${active.name}' started from ${describeSource(req.model)}`,
    });
    return run;
  }

  private async drive(run: SelfPlayRun, control: RunControl): Promise<void> {
    if (!control.paused) this.s.setPhase('running');
    try {
      while (!run.done) {
        if (control.paused) this.s.setPhase('paused');
        await control.gate();
        if (this.s.phase !== 'running' && this.s.phase !== 'stopping') this.s.setPhase('running');
        await this.s.exclusive(() => run.step());
        if (control.takeSaveRequest()) await this.s.exclusive(() => run.checkpoint());
      }
      this.s.setPhase('finished');
    } catch (e) {
      if (e instanceof RunStopped) {
        // A checkpoint of where it stopped, so a stop is resumable like a pause across reloads.
        try {
          if (this.s.engine) await this.s.exclusive(() => run.checkpoint());
        } catch {
          /* a failed save leaves the previous checkpoint; the stop still stands */
        }
        this.s.setPhase('stopped');
      } else {
        // Any error after a device loss is that loss (a failed read-back, a destroyed buffer...).
        const lost = await isLost(this.s.active?.engine ?? null);
        this.s.setPhase('failed', (e as Error).message, lost ? 'device-lost' : classifyRun(e));
      }
    } finally {
      if (this.s.phase === 'finished' || this.s.phase === 'stopped') this.s.kept = run;
      else
        try {
          run.dispose();
        } catch {
          /* a lost device cannot free its buffers */
        }
      this.s.active?.lock?.release();
      this.s.active = null;
      void this.s.postCheckpoints();
    }
  }

  pause(): void {
    // The pretraining loop has no step boundary to wait at; it only stops.
    if (this.s.active?.job !== 'selfplay' || this.s.phase !== 'running') return;
    this.s.active.control.pause();
    this.s.setPhase('paused');
    this.s.post({ type: 'notice', level: 'info', message: 'Pausing after the current step.' });
  }

  resume(): void {
    if (this.s.active?.job !== 'selfplay' || this.s.phase !== 'paused') return;
    this.s.active.control.resume();
    this.s.setPhase('running');
  }

  /** Saves a checkpoint at the next step boundary (or now, when paused between steps). */
  async saveNow(): Promise<{ ok: boolean; error?: string }> {
    const a = this.s.active;
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

  /** The active run (between its steps), else the last one that finished or stopped. */
  private runToInspect(): SelfPlayRun {
    const run = this.s.active?.run ?? this.s.kept;
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
      const result = await this.s.exclusive(() => ablateRollout(run.ctx, student, teacher ?? student, rollout));
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
      const rows = await this.s.exclusive(() => beforeAndAfter(run.ctx, run.ctx.policies.student, questions));
      return { ok: true, rows };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }
}

/** The config's `model` string for a source (informational; the host resolves the source itself). */
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
