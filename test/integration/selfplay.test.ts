// One full π-Play iteration on a tiny random model and a tiny world, unit by unit: the examiner stage (HRPO,
// with a non-zero gradient), data generation, two student steps (GRPO + λ·top-K distillation) with the
// teacher following the student by exactly the EMA rule, and the held-out evaluation. A run resumed from
// the checkpoint before the second student step computes the same metrics, records and weights as the
// run that went on.
import { beforeAll, describe, expect, it } from 'vitest';
import { PRIVILEGED_HEADER } from '../../src/env/prompts.ts';
import type { Engine } from '../../src/gpu/engine.ts';
import type { CausalLM } from '../../src/model/decoder.ts';
import { groupAdvantages } from '../../src/rl/advantages.ts';
import { lambdaAt } from '../../src/rl/schedule.ts';
import { difficultyReward } from '../../src/rl/rewards.ts';
import { randomTinyBase, type BaseModel } from '../../src/selfplay/base-model.ts';
import { latestCheckpoint } from '../../src/selfplay/checkpoint.ts';
import { makeConfig, type SelfPlayConfig } from '../../src/selfplay/config.ts';
import { trainingSetSize } from '../../src/selfplay/data.ts';
import { Environment } from '../../src/selfplay/environment.ts';
import type { RunEvent, StepMetrics } from '../../src/selfplay/events.ts';
import { SelfPlayRun } from '../../src/selfplay/loop.ts';
import { MemoryStorage } from '../../src/selfplay/storage.ts';
import { testEngine } from '../helpers/engine.ts';
import { warmUpExaminer } from '../helpers/format-warmup.ts';

const TIMING = new Set(['step_seconds', 'tokens_per_s']);

function lastMetrics(events: RunEvent[]): StepMetrics {
  const m = events.filter((e) => e.type === 'metrics').pop();
  if (m?.type !== 'metrics') throw new Error('no metrics event');
  return m.metrics;
}

function finiteNumbers(m: StepMetrics): void {
  for (const [k, v] of Object.entries(m))
    if (typeof v === 'number') expect(Number.isFinite(v), `${m.stage} ${k} = ${v}`).toBe(true);
}

async function host(model: CausalLM): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const [name, t] of await model.toHost()) out.set(name, t.data);
  return out;
}

describe('one π-Play iteration on a tiny random model', () => {
  let e: Engine;
  let config: SelfPlayConfig;
  let env: Environment;
  let base: BaseModel;
  let run: SelfPlayRun;
  const storage = new MemoryStorage();
  const events: RunEvent[] = [];

  beforeAll(async () => {
    e = await testEngine();
    // 1-hop questions only (one HRPO group), a few more source documents, two student steps.
    config = makeConfig('smoke', {
      hopWeights: [1],
      examinerBatch: 6,
      turnTokens: 40,
      evalAtStart: false,
      studentSteps: 2,
      checkpointEvery: 1,
    });
    env = Environment.fromWorld(config);
    base = await randomTinyBase(config, env.passages);
    run = await SelfPlayRun.start({ engine: e, config, base, env, storage, listener: (ev) => events.push(ev) });
    // Test scaffolding: a random examiner never writes a valid question, so all its rewards would be 0 and
    // HRPO would have nothing to standardise. A short warm-up teaches it the output shape.
    const losses = await warmUpExaminer(run.ctx.policies.examiner, base, env, { steps: 40, batch: 4, lr: 1e-2 });
    expect(losses[losses.length - 1]!).toBeLessThan(losses[0]! / 2);
  }, 180_000);

  it('examiner stage: finite loss, HRPO advantages that differ, a non-zero gradient that moves the examiner', async () => {
    expect(run.cursor).toEqual({ iteration: 0, stage: 'examiner', step: 0 });
    const before = await host(run.ctx.policies.examiner);
    await run.step();
    const m = lastMetrics(events);
    expect(m.stage).toBe('examiner');
    finiteNumbers(m);
    const qs = events.flatMap((ev) => (ev.type === 'question' ? [ev.record] : []));
    expect(qs).toHaveLength(config.examinerBatch);
    expect(qs.some((q) => q.formatReward > 0)).toBe(true);
    expect(qs.some((q) => q.advantage !== 0)).toBe(true);
    // Assembly of section 3-4: r = 0.5·f + r_d (r_d only when f > 0, from k of n), HRPO within hop groups.
    for (const q of qs) {
      expect(q.n).toBe(q.formatReward > 0 ? config.rolloutsPerQuestion : 0);
      expect(q.difficultyReward).toBe(q.formatReward > 0 ? difficultyReward(q.k, q.n) : 0);
      expect(q.examinerReward).toBeCloseTo(0.5 * q.formatReward + q.difficultyReward, 12);
    }
    const adv = groupAdvantages(
      qs.map((q) => q.examinerReward),
      qs.map((q) => q.hops),
    );
    qs.forEach((q, i) => expect(q.advantage).toBeCloseTo(adv[i]!, 12));
    expect(m.grad_norm as number).toBeGreaterThan(0);
    const after = await host(run.ctx.policies.examiner);
    let moved = 0;
    for (const [name, w] of before) moved += after.get(name)!.reduce((s, x, i) => s + Math.abs(x - w[i]!), 0);
    expect(moved).toBeGreaterThan(0);
  }, 120_000);

  it('data generation: a full training set of valid or fallback questions', async () => {
    await run.step();
    const m = lastMetrics(events);
    expect(m.stage).toBe('generate');
    finiteNumbers(m);
    expect(run.state.dataset).toHaveLength(trainingSetSize(run.ctx));
    for (const q of run.state.dataset) {
      expect(q.question.length).toBeGreaterThan(0);
      expect(q.answer.length).toBeGreaterThan(0);
    }
  }, 120_000);

  it('student step: finite losses and a teacher that moved to (1 - tau)·teacher + tau·student exactly', async () => {
    const teacher = run.ctx.policies.teacher!;
    const student = run.ctx.policies.student;
    const tBefore = await host(teacher);
    const sBefore = await host(student);
    await run.step();
    const m = lastMetrics(events);
    expect(m.stage).toBe('student');
    finiteNumbers(m);
    expect(m.optimizer_steps).toBe(1);
    expect(m.lambda).toBe(lambdaAt(config.lambda, 0)); // the preset's first iteration
    expect(m.learnable_share as number).toBeGreaterThanOrEqual(0);
    expect(m.learnable_share as number).toBeLessThanOrEqual(1);
    expect(m.distill as number).toBeGreaterThanOrEqual(0);
    expect(m.grad_norm as number).toBeGreaterThan(0);
    // The rollout's sampling log-probs (KV cache, left padding) match the training forward (right padding).
    expect(Math.abs(m.ppo_kl as number)).toBeLessThan(1e-4);
    expect(m.clip_fraction).toBe(0);
    const tAfter = await host(teacher);
    const sAfter = await host(student);
    const tau = config.tau;
    let studentMoved = 0;
    let teacherMoved = 0;
    for (const [name, tb] of tBefore) {
      const ta = tAfter.get(name)!;
      const sa = sAfter.get(name)!;
      const sb = sBefore.get(name)!;
      for (let i = 0; i < tb.length; i++) {
        const want = Math.fround(Math.fround((1 - tau) * tb[i]!) + Math.fround(tau * sa[i]!));
        // f32 arithmetic on the GPU (possibly fused): within an ulp or two of the host's rounding.
        expect(Math.abs(ta[i]! - want), `${name}[${i}]`).toBeLessThanOrEqual(1e-7 + 2e-7 * Math.abs(want));
        studentMoved += Math.abs(sa[i]! - sb[i]!);
        teacherMoved += Math.abs(ta[i]! - tb[i]!);
      }
    }
    expect(studentMoved).toBeGreaterThan(0);
    expect(teacherMoved).toBeGreaterThan(0);
    const recs = events.flatMap((ev) => (ev.type === 'rollout' ? [ev.record] : []));
    expect(recs.length).toBe(config.rolloutSamples);
    const policyTokens = recs[0]!.tokens.filter((t) => t.policy === 1);
    expect(policyTokens.length).toBeGreaterThan(0);
    // What the teacher saw besides the student's prompt, for the page's side-by-side view.
    expect(recs[0]!.privilegedMode).toBe(config.privileged);
    expect(recs[0]!.privilegedBlock).toContain(PRIVILEGED_HEADER);
    for (const t of recs[0]!.tokens) {
      if (t.policy) expect(t.studentLogp).toBeLessThan(0);
      else expect([t.studentLogp, t.teacherLogp, t.kl]).toEqual([0, 0, 0]);
    }
  }, 120_000);

  it('resumes from the checkpoint to identical next-step metrics, records and weights', async () => {
    const cp = await latestCheckpoint(storage);
    expect(cp!.state.cursor).toEqual({ iteration: 0, stage: 'student', step: 1 });
    const names = await storage.list();
    for (const f of ['examiner', 'student', 'teacher', 'examiner.optim', 'student.optim']) {
      expect(names).toContain(`checkpoints/${cp!.slot}/${f}.safetensors`);
    }
    const snapshot = storage.clone();
    const mark = events.length;
    await run.step();
    const m1 = lastMetrics(events);
    const r1 = events.slice(mark).filter((ev) => ev.type === 'rollout');

    const resumedEvents: RunEvent[] = [];
    const resumed = await SelfPlayRun.start({
      engine: e,
      config,
      base,
      env,
      storage: snapshot,
      resume: true,
      listener: (ev) => resumedEvents.push(ev),
    });
    try {
      expect(resumed.cursor).toEqual({ iteration: 0, stage: 'student', step: 1 });
      expect(resumed.state.dataset).toEqual(run.state.dataset);
      await resumed.step();
      const m2 = lastMetrics(resumedEvents);
      const strip = (m: StepMetrics) => Object.fromEntries(Object.entries(m).filter(([k]) => !TIMING.has(k)));
      expect(strip(m2)).toEqual(strip(m1));
      expect(resumedEvents.filter((ev) => ev.type === 'rollout')).toEqual(r1);
      expect(resumed.cursor).toEqual(run.cursor);
      // The optimizer step itself (AdamW moments restored) gives bit-identical weights.
      for (const name of ['student', 'teacher', 'examiner'] as const) {
        const a = await host(run.ctx.policies.policy(name)!);
        const b = await host(resumed.ctx.policies.policy(name)!);
        for (const [k, w] of a)
          expect(Buffer.from(b.get(k)!.buffer).equals(Buffer.from(w.buffer)), `${name} ${k}`).toBe(true);
      }
    } finally {
      resumed.dispose();
    }
  }, 120_000);

  it('evaluation: greedy EM per hop count and overall on the held-out set', async () => {
    await run.step();
    const ev = events.filter((x) => x.type === 'eval').pop();
    expect(ev?.type).toBe('eval');
    if (ev?.type !== 'eval') return;
    expect(ev.metrics.n).toBe(env.evalSet.length);
    expect(Object.keys(ev.metrics.emByHop).sort()).toEqual(config.evalHops.map(String));
    for (const v of [ev.metrics.em, ev.metrics.searchesPerRollout, ev.metrics.redundancy])
      expect(Number.isFinite(v)).toBe(true);
    expect(run.done).toBe(true);
    run.dispose();
  }, 120_000);
});
