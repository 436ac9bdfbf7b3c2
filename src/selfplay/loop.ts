// The π-Play run (ALGORITHM.md section 1): an optional first evaluation, then per iteration W examiner
// steps, data generation, W student steps and an evaluation. The run is a cursor over these units of
// work; after a unit it may checkpoint, and a run started from a checkpoint continues at its cursor with
// the same weights, optimizer state, training set and random streams, so its next unit computes what the
// uninterrupted run computed. Everything it reports goes out as events (events.ts).
import type { Engine } from '../gpu/engine.ts';
import type { BaseModel } from './base-model.ts';
import {
  latestCheckpoint,
  type LatestCheckpoint,
  otherBase,
  otherRun,
  restorePolicies,
  saveCheckpoint,
  type Cursor,
  type RunState,
} from './checkpoint.ts';
import { SETTINGS, type SelfPlayConfig } from './config.ts';
import { now, type RunContext } from './context.ts';
import { generateTrainingSet } from './data.ts';
import type { Environment } from './environment.ts';
import { evaluate } from './evaluate.ts';
import type { RunEvent, RunListener, StepMetrics } from './events.ts';
import { examinerStep } from './examiner.ts';
import { Policies } from './policies.ts';
import type { RunStorage } from './storage.ts';
import { studentStep } from './student.ts';
import { firstCursor, nextCursor } from './cursor.ts';
import { secondsLeft, secondsPerWork, unitsFrom } from './run-estimate.ts';

export interface RunSetup {
  engine: Engine;
  config: SelfPlayConfig;
  base: BaseModel;
  env: Environment;
  /** Where checkpoints go (none: no checkpoints). */
  storage?: RunStorage;
  listener?: RunListener;
  /** Continue from the storage's latest checkpoint when there is one (its config must equal `config`). */
  resume?: boolean;
  /** The storage's latest checkpoint, when the host read it already (it is not read again). */
  checkpoint?: LatestCheckpoint | null;
  /** The identity of the run (its folder's run.json): a checkpoint of another run is not resumed. */
  runId?: string;
}

export interface RunControl {
  /** Stop (between units) when aborted. */
  signal?: AbortSignal;
  /** Stop after this many units of work. */
  maxUnits?: number;
}

export class SelfPlayRun {
  private unitSeconds = new Map<Cursor['stage'], number[]>();
  /** The slot of the latest checkpoint this run restored or saved: the next save goes to the other. */
  private slot: string | undefined;

  private constructor(
    readonly ctx: RunContext,
    readonly state: RunState,
    private readonly storage: RunStorage | null,
  ) {}

  /** Builds the policies and, with `resume`, restores the latest checkpoint. */
  static async start(setup: RunSetup): Promise<SelfPlayRun> {
    const listeners = setup.listener ? [setup.listener] : [];
    const policies = Policies.create(setup.engine, setup.base, setup.config);
    let state: RunState = {
      version: 1,
      config: setup.config,
      cursor: firstCursor(setup.config),
      rng: { seed: setup.config.seed, scheme: 'labels-v1' },
      dataset: [],
      metrics: [],
      evals: [],
      records: { metrics: 0, questions: 0, rollouts: 0, eval: 0 },
      base: setup.base.name,
      ...(setup.base.files ? { baseFiles: setup.base.files } : {}),
      ...(setup.runId ? { runId: setup.runId } : {}),
    };
    const run = new SelfPlayRun(
      {
        engine: setup.engine,
        config: setup.config,
        base: setup.base,
        env: setup.env,
        policies,
        emit: (ev) => run.emit(ev, listeners),
      },
      state,
      setup.storage ?? null,
    );
    if (setup.resume && setup.storage) {
      const cp = setup.checkpoint !== undefined ? setup.checkpoint : await latestCheckpoint(setup.storage);
      if (cp) {
        const differs = (Object.keys(SETTINGS) as (keyof SelfPlayConfig)[]).filter(
          (k) => JSON.stringify(cp.state.config[k]) !== JSON.stringify(setup.config[k]),
        );
        const refused = differs.length
          ? 'piplay: the checkpoint was made with other settings ' +
            `(${differs.map((k) => `--${SETTINGS[k].flag}`).join(', ')}); ` +
            'resume with the configuration stored in it'
          : (otherRun(cp.state, setup.runId) ?? otherBase(cp.state, setup.base));
        if (refused) {
          policies.dispose();
          throw new Error(refused);
        }
        if (cp.warning) run.emit({ type: 'log', level: 'warn', message: cp.warning }, listeners);
        await restorePolicies(setup.storage, cp.slot, policies, cp.state.files);
        run.slot = cp.slot;
        state = cp.state;
        Object.assign(run.state, state);
        run.emit(
          {
            type: 'log',
            level: 'info',
            message:
              `resumed at iteration ${state.cursor.iteration + 1}, ${state.cursor.stage} step ` +
              `${state.cursor.step}`,
          },
          listeners,
        );
      }
    }
    return run;
  }

  get cursor(): Cursor {
    return this.state.cursor;
  }

  get done(): boolean {
    return this.state.cursor.stage === 'done';
  }

  private emit(ev: RunEvent, listeners: RunListener[]): void {
    const r = this.state.records;
    if (ev.type === 'metrics') r.metrics++;
    else if (ev.type === 'question') r.questions++;
    else if (ev.type === 'rollout') r.rollouts++;
    else if (ev.type === 'eval') r.eval++;
    for (const l of listeners) l(ev);
  }

  /** Runs units until the end, an abort or `maxUnits`. Returns the state. */
  async run(ctrl: RunControl = {}): Promise<RunState> {
    let units = 0;
    while (!this.done) {
      if (ctrl.signal?.aborted) break;
      if (ctrl.maxUnits !== undefined && units >= ctrl.maxUnits) break;
      await this.step();
      units++;
    }
    return this.state;
  }

  /** Does the unit at the cursor, advances it, and checkpoints when due. */
  async step(): Promise<void> {
    const ctx = this.ctx;
    const c = this.state.cursor;
    const cfg = ctx.config;
    const t0 = now();
    try {
      switch (c.stage) {
        case 'eval-start':
        case 'eval': {
          const r = await evaluate(ctx, c.stage === 'eval-start' ? -1 : c.iteration, ctx.policies.student);
          this.state.evals.push(r.metrics);
          ctx.emit({ type: 'eval', metrics: r.metrics });
          break;
        }
        case 'examiner': {
          const r = await examinerStep(ctx, c.iteration, c.step);
          for (const q of r.questions) ctx.emit({ type: 'question', record: q });
          this.record(r.metrics);
          break;
        }
        case 'generate': {
          const r = await generateTrainingSet(ctx, c.iteration);
          this.state.dataset = r.questions;
          for (const q of r.records) ctx.emit({ type: 'question', record: q });
          this.record(r.metrics);
          break;
        }
        case 'student': {
          const r = await studentStep(ctx, c.iteration, c.step, this.state.dataset);
          for (const rec of r.records) ctx.emit({ type: 'rollout', record: rec });
          this.record(r.metrics);
          break;
        }
        case 'done':
          return;
      }
    } catch (err) {
      ctx.emit({ type: 'log', level: 'error', message: (err as Error).message });
      throw err;
    }
    const next = nextCursor(c, cfg);
    this.progress(c, (now() - t0) / 1000, next);
    this.state.cursor = next;
    const stageEnded = next.stage !== c.stage || next.iteration !== c.iteration;
    // The next stage runs other shapes (generation vs training, other batch sizes): give the cached free
    // buffers of this one back to the driver rather than keep them beside the next stage's.
    if (stageEnded) ctx.engine.pool.trim();
    const due =
      cfg.checkpointEvery > 0 &&
      (c.stage === 'examiner' || c.stage === 'student') &&
      (c.step + 1) % cfg.checkpointEvery === 0;
    if (this.storage && (stageEnded || due)) await this.checkpoint();
  }

  private record(m: StepMetrics): void {
    this.state.metrics.push(m);
    this.ctx.emit({ type: 'metrics', metrics: m });
  }

  private progress(c: Cursor, seconds: number, next: Cursor): void {
    const cfg = this.ctx.config;
    const total = c.stage === 'examiner' ? cfg.examinerSteps : c.stage === 'student' ? cfg.studentSteps : 1;
    const times = this.unitSeconds.get(c.stage) ?? [];
    times.push(seconds);
    this.unitSeconds.set(c.stage, times);
    const avg = times.reduce((a, b) => a + b, 0) / times.length;
    const stage = c.stage === 'eval-start' ? 'eval' : c.stage === 'done' ? 'eval' : c.stage;
    this.ctx.emit({
      type: 'progress',
      stage,
      iteration: c.iteration,
      done: c.step + 1,
      total,
      etaSeconds: avg * (total - c.step - 1),
      runEtaSeconds: secondsLeft(cfg, unitsFrom(cfg, next), this.unitSeconds),
      secondsPerWork: secondsPerWork(cfg, this.unitSeconds),
    });
  }

  /** Saves a checkpoint now (needs storage). */
  async checkpoint(): Promise<void> {
    if (!this.storage) throw new Error('piplay: this run has no storage for checkpoints');
    const slot = await saveCheckpoint(this.storage, this.ctx.policies, this.state, this.slot);
    this.slot = slot;
    this.ctx.emit({
      type: 'checkpoint',
      name: slot,
      iteration: this.state.cursor.iteration,
      step: this.state.cursor.step,
    });
  }

  dispose(): void {
    this.ctx.policies.dispose();
  }
}
