// The training path's own numbers, checked against the formulas of ALGORITHM.md written out here (not the
// helpers the path calls), on a smoke run that samples at T = 0.6 with hops 4:3:2:1 over two iterations:
// on-policy ratios on the first minibatch at a temperature other than 1, HRPO within each hop group, the
// examiner's reward assembly, λ past iteration 0, and the examiner's KL to the reference when it is on.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/gpu/engine.ts';
import { randomTinyBase } from '../../src/selfplay/base-model.ts';
import { makeConfig, type SelfPlayConfig } from '../../src/selfplay/config.ts';
import { Environment } from '../../src/selfplay/environment.ts';
import type { QuestionRecord, RunEvent, Stage, StepMetrics } from '../../src/selfplay/events.ts';
import { SelfPlayRun } from '../../src/selfplay/loop.ts';
import { MemoryStorage } from '../../src/selfplay/storage.ts';
import { testEngine } from '../helpers/engine.ts';
import { warmUpExaminer } from '../helpers/format-warmup.ts';

/** ALGORITHM.md section 4: (r - mean) / (std + 1e-6), std unbiased; a group of one gets 0. */
function standardised(rs: number[]): number[] {
  if (rs.length < 2) return rs.map(() => 0);
  const m = rs.reduce((a, b) => a + b, 0) / rs.length;
  const sd = Math.sqrt(rs.reduce((a, r) => a + (r - m) ** 2, 0) / (rs.length - 1));
  return rs.map((r) => (r - m) / (sd + 1e-6));
}

describe('the training path at T = 0.6, hops 4:3:2:1, two iterations', () => {
  let e: Engine;
  let config: SelfPlayConfig;
  const metrics: StepMetrics[] = [];
  const examinerQuestions: QuestionRecord[] = [];

  beforeAll(async () => {
    e = await testEngine();
    config = makeConfig('smoke', {
      temperature: 0.6,
      hopWeights: [4, 3, 2, 1],
      examinerBatch: 10,
      iterations: 2,
      lambda: [0.1, 0.03],
      examinerBeta: 0.05,
      turnTokens: 40,
      evalAtStart: false,
    });
    const env = Environment.fromWorld(config);
    const base = await randomTinyBase(config, env.passages);
    let stage: Stage | null = null;
    const listener = (ev: RunEvent) => {
      if (ev.type === 'progress') stage = ev.stage;
      if (ev.type === 'metrics') metrics.push(ev.metrics);
      if (ev.type === 'question' && stage === 'examiner') examinerQuestions.push(ev.record);
    };
    const run = await SelfPlayRun.start({ engine: e, config, base, env, storage: new MemoryStorage(), listener });
    // Test scaffolding (as in selfplay.test.ts): a random examiner writes no valid question, so every reward
    // would be 0; a short warm-up teaches it the output shape, so rewards differ within hop groups (25 steps:
    // at 40 the examiner sampled at T = 0.6 writes one same-scoring question for every source of a hop count).
    await warmUpExaminer(run.ctx.policies.examiner, base, env, { steps: 25, batch: 4, lr: 1e-2 });
    await run.run();
  }, 300_000);

  it('is on-policy on the first minibatch of every student step: ppo_kl ~ 0, nothing clipped', () => {
    const students = metrics.filter((m) => m.stage === 'student' && !m.skipped);
    expect(students).toHaveLength(2);
    for (const m of students) {
      expect(m.optimizer_steps).toBe(1); // one epoch, one minibatch: the step is its first minibatch
      expect(Math.abs(m.ppo_kl as number), `iteration ${m.iteration}`).toBeLessThan(1e-4);
      expect(m.clip_fraction, `iteration ${m.iteration}`).toBe(0);
    }
  });

  it('uses λ of the schedule at each iteration', () => {
    const lambdas = metrics.filter((m) => m.stage === 'student').map((m) => [m.iteration, m.lambda]);
    expect(lambdas).toEqual([
      [0, 0.1],
      [1, 0.03],
    ]);
  });

  it('assembles each examiner reward as 0.5·f + 1[f > 0]·1[0 < k < n]·(n - k)/(n - 1)', () => {
    expect(examinerQuestions).toHaveLength(2 * config.examinerBatch);
    for (const q of examinerQuestions) {
      const n = config.rolloutsPerQuestion;
      const rd = q.formatReward > 0 && q.k > 0 && q.k < n ? (n - q.k) / (n - 1) : 0;
      expect(q.n).toBe(q.formatReward > 0 ? n : 0);
      expect(q.examinerReward).toBeCloseTo(0.5 * q.formatReward + rd, 12);
    }
  });

  it('standardises the examiner rewards within each hop group of each step (HRPO)', () => {
    const hops = new Set(examinerQuestions.map((q) => q.hops));
    expect(hops.size).toBeGreaterThan(2); // the 4:3:2:1 mix reached the examiner
    let spread = 0;
    for (const it of [0, 1]) {
      const step = examinerQuestions.filter((q) => q.iteration === it);
      for (const h of hops) {
        const group = step.filter((q) => q.hops === h);
        const want = standardised(group.map((q) => q.examinerReward));
        group.forEach((q, i) =>
          expect(q.advantage, `iteration ${it}, ${h} hops, question ${i}`).toBeCloseTo(want[i]!, 5),
        );
        if (group.length > 1 && new Set(group.map((q) => q.examinerReward)).size > 1) spread++;
      }
    }
    expect(spread, 'hop groups whose rewards differ').toBeGreaterThan(0);
  });

  it("adds the examiner's KL to the reference when examinerBeta > 0", () => {
    const ex = metrics.filter((m) => m.stage === 'examiner');
    expect(ex).toHaveLength(2);
    for (const m of ex) {
      expect(Number.isFinite(m.kl_ref as number)).toBe(true);
      expect(m.kl_ref as number).toBeGreaterThanOrEqual(0);
    }
    // The warm-up and the first step moved the examiner away from the base.
    for (const m of ex) expect(m.kl_ref as number).toBeGreaterThan(0);
    // Off by default: no reference, no KL metric.
    expect(makeConfig('smoke').examinerBeta).toBe(0);
  });
});
