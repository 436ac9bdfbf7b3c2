// The experiment's runner (npm run experiment, src/cli/experiment.ts): the probes of the base model, then every
// job of the plan (src/lab/experiment/plan.ts) in order, each a run folder as `npm run train` writes it plus its
// result.json, and after each the report rewritten from every finished run (src/lab/experiment/). Resumable: a
// finished run is kept, a stopped one continues from its checkpoint.
import { existsSync } from 'node:fs';
import { writeFileAtomically } from './atomic-folder.ts';
import { readInputJson } from '../node/input-file.ts';
import { join } from 'node:path';
import type { Engine } from '../gpu/engine.ts';
import { CausalLM } from '../model/decoder.ts';
import {
  signalOf,
  codeVersions,
  type DriftPoint,
  type GenerationPoint,
  type SeedResult,
} from '../lab/experiment/aggregate.ts';
import { examinerProbeTable, probeTable, type ResultsMeta } from '../lab/experiment/markdown.ts';
import { configDiff, type ArmSettings, type ExperimentJob } from '../lab/experiment/plan.ts';
import type { BaseModel } from '../selfplay/base-model.ts';
import { latestCheckpoint, NonFiniteCheckpointError } from '../selfplay/checkpoint.ts';
import { ConfigError, flagValue, SETTINGS, type PresetName, type SelfPlayConfig } from '../selfplay/config.ts';
import { NonFiniteLossError } from '../selfplay/context.ts';
import type { Environment } from '../selfplay/environment.ts';
import { evaluate } from '../selfplay/evaluate.ts';
import type { QuestionRecord, RunEvent } from '../selfplay/events.ts';
import { isPrivileged } from '../env/prompts.ts';
import { SelfPlayRun } from '../selfplay/loop.ts';
import { probeQuestions, probeTeacher, type ProbeResult } from '../lab/probe.ts';
import { probeExaminer, type ExaminerProbeResult } from '../lab/examiner-probe.ts';
import { DirStorage } from './fs-storage.ts';
import { LOCK_NAME } from './folder-lock.ts';
import { checkOutFolder, readJson, type OutRule } from './out-folder.ts';
import { codeVersion, type CodeVersion } from '../node/code-version.ts';
import { ConsoleReporter, evalLine } from './progress.ts';
import { keptResult, writeExperimentReport, type StoredResult } from './experiment-report.ts';
import { LOGS, RUN_NAMES, RunFolder, readLog } from './run-folder.ts';
import { buildBase, buildEnvironment } from './setup.ts';
import { exportStudent } from './export-student.ts';

/** The settings given on the command line, as `--flag value`. */
function settingsText(settings: Partial<SelfPlayConfig>): string[] {
  return (Object.keys(settings) as (keyof SelfPlayConfig)[]).map(
    (k) => `--${SETTINGS[k].flag} ${flagValue(settings[k])}`,
  );
}

/** The code that started a run (its config.json's), where it differs from the code finishing it now. */
function codeAtStart(dir: string): { codeAtStart?: CodeVersion } {
  const started = (readJson(join(dir, 'config.json')) as { code?: CodeVersion } | null)?.code;
  const now = codeVersion();
  return started && (started.commit !== now.commit || started.dirty !== now.dirty) ? { codeAtStart: started } : {};
}

/** The experiment folder: its results, the base-model probes and runs/ (one folder per arm and seed). */
export function experimentOutRule(resume: boolean): OutRule {
  const names = [
    'results.md',
    'results.json',
    'per-question.jsonl',
    'per-question-search.jsonl',
    'em_by_iteration.svg',
    'drift.svg',
    'probe.json',
    'examiner-probe.json',
  ];
  names.push('runs', LOCK_NAME);
  return { flag: '--out', command: 'npm run experiment', own: 'an experiment (to --resume)', names, resume };
}

/** A run of the experiment: what `npm run train` writes, plus the run's result.json and drift.jsonl. */
const JOB_RULE: OutRule = {
  flag: '--out',
  command: 'npm run experiment',
  own: 'a run of an experiment',
  names: [...RUN_NAMES, 'result.json', 'drift.jsonl'],
};

export class Experiment {
  private envs = new Map<string, Environment>();
  private bases = new Map<string, { base: BaseModel; model: CausalLM | null }>();
  readonly reporter = new ConsoleReporter();
  readonly results: SeedResult[] = [];

  constructor(
    readonly engine: Engine,
    readonly out: string,
    readonly jobs: ExperimentJob[],
    readonly opts: {
      resume: boolean;
      driftQuestions: number;
      probeQuestions: number;
      preset: PresetName;
      settings: Partial<SelfPlayConfig>;
      arms: string[];
      seeds: number[];
      armSettings?: ArmSettings;
    },
  ) {}

  probe: ProbeResult | undefined;
  examinerProbe: ExaminerProbeResult | undefined;

  /**
   * The probes of the base model before the runs, on training-side questions: the teacher probe with the
   * privileged context of every arm that has a teacher (DIR/probe.json), and the examiner probe
   * (DIR/examiner-probe.json: are the questions it writes true of the world, does the student answer
   * them). Each is reused by --resume when its settings are unchanged.
   */
  async runProbe(): Promise<void> {
    const modes = this.jobs.flatMap((j) => (j.train && isPrivileged(j.config.privileged) ? [j.config.privileged] : []));
    const unique = [...new Set(modes)];
    const c = this.jobs.find((j) => j.train)?.config;
    if (!c || this.opts.probeQuestions === 0 || c.corpus !== 'world') return;
    const seed = this.opts.seeds[0]!;
    const opened = async () => {
      const { base, model } = await this.base(c);
      return { ctx: { config: c, base, env: this.env(c), engine: this.engine }, m: model() };
    };
    if (unique.length) {
      // format 2: rows carry the distillation table (D at several K, the full KL, D on answer tokens); an older
      // probe.json is computed again.
      this.probe = await this.cached(
        'probe.json',
        { format: 2, questions: this.opts.probeQuestions, seed, modes: unique, model: c.model },
        async () => {
          console.log(
            `experiment: the teacher probe of the base model (${unique.join(', ')}) on ${this.opts.probeQuestions} ` +
              'training questions',
          );
          const { ctx, m } = await opened();
          const r = await probeTeacher(ctx, m, m, probeQuestions(ctx, this.opts.probeQuestions, seed), unique, seed);
          console.log(probeTable(r));
          return r;
        },
      );
    }
    this.examinerProbe = await this.cached(
      'examiner-probe.json',
      { questions: this.opts.probeQuestions, seed, model: c.model, turnTokens: c.turnTokens },
      async () => {
        console.log(`experiment: the examiner probe of the base model: ${this.opts.probeQuestions} questions`);
        const { ctx, m } = await opened();
        const r = await probeExaminer(ctx, m, m, this.opts.probeQuestions, seed);
        console.log(examinerProbeTable(r));
        return r;
      },
    );
  }

  /** A result kept in DIR/`file` with the settings that made it: read back on --resume when they match. */
  private async cached<T>(file: string, settings: object, compute: () => Promise<T>): Promise<T> {
    const path = join(this.out, file);
    if (this.opts.resume && existsSync(path)) {
      const stored = readInputJson(path) as { settings: object; result: T };
      if (JSON.stringify(stored.settings) === JSON.stringify(settings)) return stored.result;
    }
    const result = await compute();
    writeFileAtomically(path, JSON.stringify({ settings, result }, null, 2) + '\n', { replace: true });
    return result;
  }

  env(c: SelfPlayConfig): Environment {
    const key = JSON.stringify([
      c.corpus,
      c.evalSet,
      c.worldSeed,
      c.worldSize,
      c.retrievalTopK,
      c.evalPerHop,
      c.evalHops,
    ]);
    let env = this.envs.get(key);
    if (!env) {
      env = buildEnvironment(c);
      this.envs.set(key, env);
    }
    return env;
  }

  /** The base model of a run (random-tiny depends on the seed), and its weights on the device for evaluation. */
  async base(c: SelfPlayConfig): Promise<{ base: BaseModel; model: () => CausalLM }> {
    const key =
      c.model === 'random-tiny'
        ? JSON.stringify([
            c.model,
            c.seed,
            c.tinyHidden,
            c.tinyLayers,
            c.tinyHeads,
            c.tinyKvHeads,
            c.tinyMaxPositions,
            c.tinyVocab,
          ])
        : c.model;
    let entry = this.bases.get(key);
    if (!entry) {
      entry = { base: await buildBase(this.engine, c, this.env(c)), model: null };
      this.bases.set(key, entry);
    }
    const e = entry;
    return {
      base: e.base,
      model: () => (e.model ??= CausalLM.fromHost(this.engine, e.base.cfg, (name) => e.base.weights.get(name))),
    };
  }

  /** Refuses, before any work, runs that already exist (without --resume) or were made with other settings. */
  async check(): Promise<void> {
    for (const job of this.jobs) {
      const dir = join(this.out, job.dir);
      const stored = join(dir, 'result.json');
      checkOutFolder(dir, JOB_RULE);
      const hasCheckpoint = existsSync(join(dir, 'checkpoints', 'latest.json'));
      if (!this.opts.resume && (existsSync(stored) || hasCheckpoint || existsSync(join(dir, 'eval.jsonl')))) {
        throw new ConfigError(
          `--out: ${dir} already holds a run; pass --resume to keep finished runs and continue the others, or choose ` +
            'another --out',
        );
      }
      if (this.opts.resume && existsSync(stored)) {
        const r = readInputJson(stored) as StoredResult;
        const differs = configDiff(r.config, job.config);
        if (differs.length)
          throw new ConfigError(
            `--resume: ${dir} was run with other settings (${differs.join(', ')}); use the same settings or another ` +
              '--out',
          );
      } else if (this.opts.resume && hasCheckpoint) {
        const cp = await latestCheckpoint(new DirStorage(dir));
        const differs = cp ? configDiff(cp.state.config, job.config) : [];
        if (differs.length)
          throw new ConfigError(
            `--resume: ${dir} was started with other settings (${differs.join(', ')}); use the same settings or ` +
              'another --out',
          );
      }
    }
  }

  /** Runs (or, with --resume, loads) every job in order; returns false when stopped by Ctrl-C. */
  async runAll(signal: AbortSignal): Promise<boolean> {
    let k = 0;
    for (const job of this.jobs) {
      if (signal.aborted) return false;
      k++;
      const dir = join(this.out, job.dir);
      const stored = join(dir, 'result.json');
      if (this.opts.resume && existsSync(stored)) {
        console.log(
          `experiment: [${k}/${this.jobs.length}] ${job.arm} seed ${job.seed}: finished before, kept (${dir})`,
        );
        this.results.push(keptResult(dir));
        this.write();
        continue;
      }
      console.log(`experiment: [${k}/${this.jobs.length}] ${job.arm} seed ${job.seed} -> ${dir}`);
      const r = job.train ? await this.trainRun(job, dir, signal) : await this.baseRun(job, dir);
      if (!r) return false;
      // What a run keeps is what is read back on --resume, so a report is the same whichever way it was made.
      const kept: StoredResult = { ...r, config: job.config };
      writeFileAtomically(stored, JSON.stringify(kept, null, 2) + '\n', { replace: true });
      this.results.push(kept);
      this.write();
    }
    return true;
  }

  private async baseRun(job: ExperimentJob, dir: string): Promise<SeedResult> {
    const t0 = Date.now();
    const c = job.config;
    const folder = new RunFolder(dir);
    const env = this.env(c);
    folder.resetLogs();
    folder.writeConfig(c);
    const { base, model } = await this.base(c);
    const r = await evaluate({ config: c, base, env, emit: (ev) => this.reporter.handle(ev) }, -1, model());
    const ev: RunEvent = { type: 'eval', metrics: r.metrics };
    folder.log(ev);
    console.log(evalLine(r.metrics, 'of the base model'));
    return {
      arm: job.arm,
      seed: job.seed,
      trained: false,
      iterations: c.iterations,
      evals: [r.metrics],
      drift: [],
      generation: [],
      seconds: (Date.now() - t0) / 1000,
      code: codeVersion(),
    };
  }

  /** One self-play run, as `npm run train` makes it; null when stopped by Ctrl-C (checkpointed). */
  private async trainRun(job: ExperimentJob, dir: string, signal: AbortSignal): Promise<SeedResult | null> {
    const t0 = Date.now();
    const c = job.config;
    const storage = new DirStorage(dir);
    const folder = new RunFolder(dir);
    const cp = this.opts.resume ? await latestCheckpoint(storage) : null;
    const env = this.env(c);
    const { base, model } = await this.base(c);
    if (cp) {
      const differs = configDiff(cp.state.config, c);
      if (differs.length)
        throw new ConfigError(
          `--resume: ${dir} was started with other settings (${differs.join(', ')}); use the same settings or ` +
            'another --out',
        );
    }
    const runId = await folder.prepare(storage, cp, c, base, (l) => console.error(`experiment: ${l}`));
    const run = await SelfPlayRun.start({
      engine: this.engine,
      config: c,
      base,
      env,
      storage,
      resume: Boolean(cp),
      checkpoint: cp,
      ...(runId ? { runId } : {}),
      listener: (ev) => {
        folder.log(ev);
        this.reporter.handle(ev);
      },
    });
    let error: string | undefined;
    try {
      await run.run({ signal });
    } catch (err) {
      if (!(err instanceof NonFiniteLossError || err instanceof NonFiniteCheckpointError)) {
        run.dispose();
        throw err;
      }
      error = err.message;
      console.error(`experiment: ${job.arm} seed ${job.seed} stopped: ${err.message}`);
    }
    if (!error && !run.done) {
      await run.checkpoint();
      run.dispose();
      return null;
    }
    if (!error) await exportStudent(run, base, dir);
    const evals = run.state.evals.slice();
    const metrics = run.state.metrics.slice();
    const generation: GenerationPoint[] = metrics
      .filter((m) => m.stage === 'generate')
      .map((m) => ({
        iteration: m.iteration,
        questions: Number(m['questions'] ?? 0),
        validShare: Number(m['valid_share'] ?? 0),
        fallbackShare: Number(m['fallback_share'] ?? 0),
      }));
    run.dispose();
    const drift = await this.drift(job, dir, base, model, env);
    const trainingSignal = signalOf(metrics, c.iterations);
    return {
      arm: job.arm,
      seed: job.seed,
      trained: true,
      iterations: c.iterations,
      evals,
      drift,
      generation,
      signal: trainingSignal,
      seconds: (Date.now() - t0) / 1000,
      ...(error ? { error } : {}),
      code: codeVersion(),
      ...codeAtStart(dir),
    };
  }

  /**
   * The examiner's difficulty drift: the base model (a fixed student, greedy) on the valid questions the
   * run's examiner wrote in data generation after each iteration's examiner stage (questions.jsonl records
   * with step -1), the examiner's answer as gold. Writes the answers to drift.jsonl.
   */
  private async drift(
    job: ExperimentJob,
    dir: string,
    base: BaseModel,
    model: () => CausalLM,
    env: Environment,
  ): Promise<DriftPoint[]> {
    const c = job.config;
    const generated = readLog<QuestionRecord>(join(dir, LOGS.questions)).filter((q) => q.step === -1);
    const lines: string[] = [];
    const points: DriftPoint[] = [];
    for (let it = 0; it < c.iterations; it++) {
      let qs = generated.filter((q) => q.iteration === it);
      if (this.opts.driftQuestions > 0) qs = qs.slice(0, this.opts.driftQuestions);
      if (qs.length === 0) {
        points.push({ iteration: it, n: 0, em: 0, emByHop: {} });
        lines.push(JSON.stringify({ iteration: it, n: 0 }));
        continue;
      }
      const questions = qs.map((q, i) => ({
        id: `drift-${it}-${i}`,
        question: q.question,
        answers: [q.answer],
        hops: q.hops,
      }));
      // The examiner's questions are of the training world: searched there.
      const r = await evaluate(
        { config: c, base, env, emit: (ev) => this.reporter.handle(ev) },
        it,
        model(),
        questions,
        env,
      );
      points.push({
        iteration: it,
        n: r.metrics.n,
        em: r.metrics.em,
        emByHop: r.metrics.emByHop,
        outcomes: r.answers.map((a) => a.correct),
      });
      lines.push(JSON.stringify({ ...r.metrics, answers: r.answers.map((a, i) => ({ ...a, gold: qs[i]!.answer })) }));
      console.log(
        `drift: base model on ${r.metrics.n} examiner questions of iteration ${it + 1}: EM ` +
          `${(100 * r.metrics.em).toFixed(1)}%`,
      );
    }
    writeFileAtomically(join(dir, 'drift.jsonl'), lines.map((l) => l + '\n').join(''), { replace: true });
    return points;
  }

  /** results.md, results.json and the two plots, from the runs finished so far. */
  write(): void {
    const trained = this.jobs.find((j) => j.train) ?? this.jobs[0]!;
    const c = trained.config;
    const iterations = c.iterations;
    const env = this.env(c);
    const perHop = new Map<number, number>();
    for (const q of env.evalSet) perHop.set(q.hops, (perHop.get(q.hops) ?? 0) + 1);
    const meta: ResultsMeta = {
      preset: this.opts.preset,
      model: c.model,
      corpus:
        c.corpus === 'world'
          ? `the fictional world (seed ${c.worldSeed}, ${env.passages.length} passages, BM25 top ${c.retrievalTopK})`
          : `${c.corpus} (${env.passages.length} passages)`,
      heldOut: `${env.evalSet.length} questions (${[...perHop]
        .sort((a, b) => a[0] - b[0])
        .map(([h, n]) => `${n} × ${h}-hop`)
        .join(', ')})`,
      iterations,
      examinerSteps: c.examinerSteps,
      studentSteps: c.studentSteps,
      seeds: this.opts.seeds,
      arms: this.opts.arms,
      settings: settingsText(this.opts.settings),
      armSettings: Object.fromEntries(
        Object.entries(this.opts.armSettings ?? {}).map(([arm, s]) => [arm, settingsText(s)]),
      ),
      code: codeVersions(this.results),
      planned: this.jobs.length,
      finished: this.results.length,
      startFromBase: this.opts.arms.includes('base') && this.opts.settings.evalAtStart === undefined,
      notes: c.notes,
      ...(this.probe ? { probe: this.probe } : {}),
      ...(this.examinerProbe ? { examinerProbe: this.examinerProbe } : {}),
    };
    writeExperimentReport(this.out, meta, this.results);
  }

  dispose(): void {
    for (const e of this.bases.values()) e.model?.dispose();
  }
}
