// --student-questions world (an ablation): the world generator writes the student's whole training set,
// with no examiner rollouts; every question is true of the world and none is held out.
import { describe, expect, it } from 'vitest';
import { auditQuestion, generateWorld, WorldIndex } from '../../../src/env/world.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import type { RunContext } from '../../../src/selfplay/context.ts';
import { generateTrainingSet, trainingSetSize } from '../../../src/selfplay/data.ts';
import { Environment } from '../../../src/selfplay/environment.ts';
import type { RunEvent } from '../../../src/selfplay/events.ts';

describe("the student's questions from the world generator", () => {
  it('fills the set without the examiner, with true questions that are not held out', async () => {
    const config = makeConfig('smoke', { studentQuestions: 'world', evalPerHop: 3, studentSteps: 3, studentBatch: 4 });
    const env = Environment.fromWorld(config);
    const events: RunEvent[] = [];
    // No policies: a rollout would fail on them, so none may run.
    const ctx = { config, env, emit: (e: RunEvent) => events.push(e), policies: {} } as unknown as RunContext;
    const { questions, metrics, records } = await generateTrainingSet(ctx, 0);
    expect(questions).toHaveLength(trainingSetSize(ctx));
    const ix = new WorldIndex(generateWorld({ seed: config.worldSeed, size: config.worldSize }));
    const held = new Set(env.evalSet.map((q) => q.question));
    for (const q of questions) {
      expect(q.origin).toBe('world');
      expect(held.has(q.question)).toBe(false);
      expect(auditQuestion(ix, q.question, q.answer).verdict).toBe('right');
      expect(q.qcp.searches).toHaveLength(q.hops - 1);
    }
    expect(records).toEqual([]);
    expect(metrics).toMatchObject({ examiner_rollouts: 0, fallback_share: 1 });
    expect(events.some((e) => e.type === 'log' && e.level === 'warn')).toBe(false);
  });
});
