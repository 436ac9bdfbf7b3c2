// The loop's settings that change its structure, each on the smoke preset: LoRA adapters on one shared
// frozen base, Dr. Zero (no teacher), the self control (a teacher without privileged information), partial QCP with the k3 KL to a frozen reference, several PPO
// epochs and minibatches (an EMA update after every optimizer step), and a NaN loss that stops the run
// before the optimizer step and keeps the last checkpoint.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/gpu/engine.ts';
import { filesFromMap } from '../../src/model/files.ts';
import { loadModel } from '../../src/model/io.ts';
import { randomTinyBase, type BaseModel } from '../../src/selfplay/base-model.ts';
import { latestCheckpoint, restorePolicies } from '../../src/selfplay/checkpoint.ts';
import { makeConfig, type SelfPlayConfig } from '../../src/selfplay/config.ts';
import { NonFiniteLossError } from '../../src/selfplay/context.ts';
import { Environment } from '../../src/selfplay/environment.ts';
import type { RunEvent, StepMetrics } from '../../src/selfplay/events.ts';
import { SelfPlayRun } from '../../src/selfplay/loop.ts';
import { Policies } from '../../src/selfplay/policies.ts';
import { MemoryStorage, type RunStorage } from '../../src/selfplay/storage.ts';
import { BrowserCheckpoints, memoryBackend } from '../../src/worker/checkpoint-store.ts';
import { recordBase, storedLoraBase } from '../../src/worker/run-host.ts';
import { testEngine } from '../helpers/engine.ts';
import { expectStudentExport } from '../helpers/lora-export.ts';

let e: Engine;
let env: Environment;
let base: BaseModel;

beforeAll(async () => {
  e = await testEngine();
  const c = makeConfig('smoke');
  env = Environment.fromWorld(c);
  base = await randomTinyBase(c, env.passages);
});

async function runAll(config: SelfPlayConfig, storage: RunStorage = new MemoryStorage()) {
  const events: RunEvent[] = [];
  const run = await SelfPlayRun.start({ engine: e, config, base, env, storage, listener: (ev) => events.push(ev) });
  await run.run();
  const metrics = events.flatMap((ev) => (ev.type === 'metrics' ? [ev.metrics] : []));
  const stage = (s: string) => metrics.filter((m) => m.stage === s);
  return { run, storage, events, metrics, stage };
}

function finite(ms: StepMetrics[]): void {
  for (const m of ms)
    for (const [k, v] of Object.entries(m))
      if (typeof v === 'number') expect(Number.isFinite(v), `${m.stage} ${k}`).toBe(true);
}

describe('loop variants on the smoke preset', () => {
  it('LoRA: three adapter sets on one frozen base; EMA after each of several PPO optimizer steps; checkpoints of adapters, exported merged', async () => {
    const config = makeConfig('smoke', {
      policies: 'lora',
      loraRank: 4,
      evalAtStart: false,
      ppoEpochs: 2,
      miniBatches: 2,
      microBatch: 1,
    });
    // In the browser's checkpoint store, which rebuilds a LoRA run's base (not stored with it) to export it.
    const store: BrowserCheckpoints = new BrowserCheckpoints(memoryBackend(), {
      runBase: (name) => storedLoraBase(e, store.runStorage(name), store),
    });
    const runStorage = await store.createRun({ name: 'lora', base: base.name, config });
    await recordBase(runStorage, base, { kind: 'random-tiny' }, { kind: 'world' });
    const { run, storage, stage, metrics } = await runAll(config, runStorage);
    finite(metrics);
    const p = run.ctx.policies;
    expect(p.isLora).toBe(true);
    for (const name of base.weights.keys()) {
      expect(p.student.params.get(name)).toBe(p.examiner.params.get(name));
      expect(p.teacher!.params.get(name)).toBe(p.student.params.get(name));
    }
    expect(p.student.trainable().every((t) => /lora_[AB]/.test(t.name ?? ''))).toBe(true);
    // The base never moves.
    for (const [name, t] of await p.student.toHost())
      expect(Array.from(t.data)).toEqual(Array.from(base.weights.get(name)!.data));
    const s = stage('student');
    expect(s).toHaveLength(config.studentSteps);
    expect(s[0]!.optimizer_steps).toBe(4);
    // Teacher adapters followed the student's (B starts at 0 in both; the student's moved).
    const tB = await p
      .teacher!.trainable()
      .find((t) => t.name!.endsWith('lora_B.weight'))!
      .readF32();
    expect(tB.some((x) => x !== 0)).toBe(true);
    // A checkpoint restores the adapters into fresh policies.
    const cp = (await latestCheckpoint(storage))!;
    const fresh = Policies.create(e, base, config);
    await restorePolicies(storage, cp.slot, fresh);
    for (const name of ['examiner', 'student', 'teacher'] as const) {
      const a = p.policy(name)!.trainable();
      const b = fresh.policy(name)!.trainable();
      for (let i = 0; i < a.length; i++)
        expect(Array.from(await b[i]!.readF32())).toEqual(Array.from(await a[i]!.readF32()));
    }
    fresh.dispose();
    // The exported folder is a plain model: the student's adapters (not the examiner's or the teacher's)
    // merged into the base, with the adapted student's logits.
    const exported = await loadModel(e, filesFromMap(await store.modelFiles('lora')), { source: 'the export' });
    expect(exported.lora).toBeNull();
    await expectStudentExport(exported, p, 1e-5);
    exported.dispose();
    run.dispose();
  }, 120_000);

  it('Dr. Zero (privileged none): no teacher, λ = 0, no distillation, no teacher in the checkpoint', async () => {
    const config = makeConfig('smoke', { privileged: 'none', evalAtStart: false });
    const { run, storage, stage, metrics } = await runAll(config);
    finite(metrics);
    expect(run.ctx.policies.teacher).toBeNull();
    const s = stage('student')[0]!;
    expect(s.lambda).toBe(0);
    expect(s.distill).toBe(0);
    const names = await storage.list();
    expect(names.some((n) => n.includes('teacher'))).toBe(false);
    const rec = run.state.records;
    expect(rec.rollouts).toBe(config.rolloutSamples);
    run.dispose();
  }, 120_000);

  it("self (the control): the same EMA teacher reading the student's own prompt; D is 0 until they differ", async () => {
    const common = { evalAtStart: false, examinerSteps: 0, evalPerHop: 0, lambda: 0.1, emptyUpdates: 'apply' } as const;
    const self = await runAll(makeConfig('smoke', { ...common, privileged: 'self' }));
    finite(self.metrics);
    const p = self.run.ctx.policies;
    expect(p.teacher).not.toBeNull();
    const records = self.events.flatMap((ev) => (ev.type === 'rollout' ? [ev.record] : []));
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r.privilegedMode).toBe('self');
      expect(r.privilegedBlock).toBe('');
    }
    // Teacher and student start equal and read the same prompt: D of the first step is 0 (up to rounding).
    const s = self.stage('student')[0]!;
    expect(s.lambda).toBe(0.1);
    expect(s.distill).toBe(0);
    // After the step the teacher followed the student by EMA: teacher = (1 − τ)·base + τ·student.
    const tau = self.run.ctx.config.tau;
    const student = await p.student.toHost();
    let checked = 0;
    for (const [name, t] of await p.teacher!.toHost()) {
      const b = base.weights.get(name)!.data;
      const st = student.get(name)!.data;
      for (let i = 0; i < t.data.length; i += 97) {
        expect(t.data[i]!, name).toBeCloseTo((1 - tau) * b[i]! + tau * st[i]!, 6);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
    self.run.dispose();
  }, 120_000);

  it('an update without evidence (every advantage 0): skipped leaves weights, moments and teacher; applied moves them', async () => {
    // A random model answers nothing: every GRPO group scores all 0, so no rollout has an advantage.
    const common = { evalAtStart: false, examinerSteps: 0, lambda: 0.1, evalPerHop: 0 } as const;
    const skipped = await runAll(makeConfig('smoke', { ...common, emptyUpdates: 'skip' }));
    const s = skipped.stage('student')[0]!;
    expect(s.learnable_share).toBe(0);
    expect(s.skipped_updates).toBe(1);
    expect(s.optimizer_steps).toBe(0);
    expect(s.lr).toBe(0);
    const p = skipped.run.ctx.policies;
    expect((await p.studentOpt.state()).step).toBe(0);
    for (const [name, t] of await p.student.toHost())
      expect(Array.from(t.data), name).toEqual(Array.from(base.weights.get(name)!.data));
    for (const [name, t] of await p.teacher!.toHost())
      expect(Array.from(t.data), name).toEqual(Array.from(base.weights.get(name)!.data));
    skipped.run.dispose();

    // Applied (verl's way): λ·D alone, scaled by Adam to a full step, moves the student.
    const applied = await runAll(makeConfig('smoke', { ...common, emptyUpdates: 'apply' }));
    const a = applied.stage('student')[0]!;
    expect(a.learnable_share).toBe(0);
    expect(a.skipped_updates).toBe(0);
    expect(a.optimizer_steps).toBe(1);
    let moved = 0;
    for (const [name, t] of await applied.run.ctx.policies.student.toHost())
      if (Array.from(t.data).some((v, i) => v !== base.weights.get(name)!.data[i])) moved++;
    expect(moved).toBeGreaterThan(0);
    applied.run.dispose();
  }, 120_000);

  it('data generation samples each source document --examiner-samples times and keeps one question of each', async () => {
    const config = makeConfig('smoke', {
      evalAtStart: false,
      evalPerHop: 0,
      examinerSamples: 3,
      fallbackQuestions: 'none',
      examinerSteps: 0,
    });
    const { stage, run } = await runAll(config);
    const g = stage('generate')[0]!;
    // One batch of examinerBatch documents (generation-rounds 1), three rollouts each.
    expect(g.examiner_rollouts).toBe(3 * config.examinerBatch);
    expect(g.questions as number).toBeLessThanOrEqual(config.examinerBatch);
    run.dispose();
  }, 120_000);

  it('warms the learning rate up over the --lr-warmup share of the run, step by step', async () => {
    const config = makeConfig('smoke', {
      evalAtStart: false,
      examinerSteps: 0,
      evalPerHop: 0,
      studentSteps: 2,
      miniBatches: 2,
      lrWarmup: 1,
      emptyUpdates: 'apply',
    });
    const { stage, run } = await runAll(config);
    // 4 optimizer steps, all warming up: the last of each step's two is logged, at lr·2/4 and lr·4/4.
    expect(stage('student').map((m) => m.lr)).toEqual([config.lr / 2, config.lr]);
    run.dispose();
  }, 120_000);

  it('partial QCP with the k3 KL to a frozen reference (beta > 0)', async () => {
    const config = makeConfig('smoke', {
      privileged: 'partial',
      beta: 0.05,
      lambda: [0.03],
      evalAtStart: false,
      examinerSteps: 0,
    });
    const { run, stage, metrics } = await runAll(config);
    finite(metrics);
    expect(run.ctx.policies.reference).not.toBeNull();
    const s = stage('student')[0]!;
    expect(s.lambda).toBe(0.03);
    expect(s.kl_ref as number).toBeGreaterThanOrEqual(0);
    expect(stage('examiner')).toHaveLength(0);
    run.dispose();
  }, 120_000);

  it('stops on a NaN loss before the optimizer step, naming the stage and step, and keeps the last checkpoint', async () => {
    const config = makeConfig('smoke', { evalAtStart: false });
    const storage = new MemoryStorage();
    const events: RunEvent[] = [];
    const run = await SelfPlayRun.start({ engine: e, config, base, env, storage, listener: (ev) => events.push(ev) });
    await run.run({ maxUnits: 2 }); // examiner step, data generation (checkpointed)
    expect(run.cursor).toEqual({ iteration: 0, stage: 'student', step: 0 });
    const before = await latestCheckpoint(storage);
    const studentBefore = await run.ctx.policies.student.toHost();
    // Poison the teacher: its logits, and so the distillation term and the loss, become NaN.
    const t = run.ctx.policies.teacher!.param('model.norm.weight');
    e.write(t, new Float32Array(t.size).fill(NaN));
    const err = await run.step().catch((x: unknown) => x);
    expect(err).toBeInstanceOf(NonFiniteLossError);
    expect((err as NonFiniteLossError).message).toMatch(/student stage, iteration 1, step 0/);
    expect(events.some((ev) => ev.type === 'log' && ev.level === 'error')).toBe(true);
    const after = await latestCheckpoint(storage);
    expect(after).toEqual(before);
    for (const [name, w] of await run.ctx.policies.student.toHost())
      expect(Array.from(w.data)).toEqual(Array.from(studentBefore.get(name)!.data));
    expect(e.tapeLength).toBe(0);
    run.dispose();
  }, 120_000);
});
