// The teacher probe (src/lab/probe.ts) at smoke size: it draws training-side questions with their
// construction paths (never held-out ones), scores the student's prompt and each privileged prompt, and
// its numbers keep their meaning (the student against itself has no distillation term and no gain).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/gpu/engine.ts';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { CausalLM } from '../../src/model/decoder.ts';
import { randomTinyBase, type BaseModel } from '../../src/selfplay/base-model.ts';
import { makeConfig } from '../../src/selfplay/config.ts';
import { Environment } from '../../src/selfplay/environment.ts';
import { answerSpan, coverageKs, decisionIndex, probeQuestions, probeTeacher, score } from '../../src/lab/probe.ts';
import { probeExaminer } from '../../src/lab/examiner-probe.ts';
import { expectClose } from '../helpers/compare.ts';
import { testEngine } from '../helpers/engine.ts';

let e: Engine;
let env: Environment;
let base: BaseModel;
const config = makeConfig('smoke', { evalPerHop: 3, turnTokens: 12 });

beforeAll(async () => {
  e = await testEngine();
  env = Environment.fromWorld(config);
  base = await randomTinyBase(config, env.passages);
});

describe('where a response decides and answers', () => {
  const THINK_CLOSE = 9;
  const blank = (id: number) => id === 0;
  it('the first decision is the first token after the first </think> that is not white space', () => {
    expect(decisionIndex([5, 6, THINK_CLOSE, 0, 0, 7, 8], THINK_CLOSE, blank)).toBe(5);
    expect(decisionIndex([THINK_CLOSE, 7, THINK_CLOSE, 8], THINK_CLOSE, blank)).toBe(1);
    expect(decisionIndex([5, 6, 7], THINK_CLOSE, blank)).toBe(0); // no </think>: the first token
    expect(decisionIndex([5, THINK_CLOSE, 0], THINK_CLOSE, blank)).toBe(0);
  });
  it('the answer span runs from after the last <answer> through </answer>', () => {
    expect(answerSpan([1, 20, 3, 21, 1, 20, 4, 5, 21, 6], 20, 21)).toEqual([6, 7, 8]);
    expect(answerSpan([1, 20, 4, 5], 20, 21)).toEqual([2, 3]); // cut off before </answer>
    expect(answerSpan([1, 2, 3], 20, 21)).toEqual([]);
  });
});

describe('the teacher probe', () => {
  it('compares a few K around the configured one, within the vocabulary and the kernel', () => {
    expect(coverageKs(50, 1024)).toEqual([5, 50, 256]);
    expect(coverageKs(8, 64)).toEqual([5, 8, 64]);
    expect(coverageKs(5, 3)).toEqual([3]);
  });

  it('draws world questions with construction paths, none of them held out', () => {
    const ctx = { config, base, env, engine: e };
    const qs = probeQuestions(ctx, 6, 3);
    expect(qs).toHaveLength(6);
    const held = new Set(env.evalSet.map((q) => q.question));
    for (const q of qs) {
      expect(held.has(q.question)).toBe(false);
      expect(q.qcp.question).toBe(q.question);
      expect(q.qcp.searches).toHaveLength(q.hops - 1);
    }
    expect(probeQuestions(ctx, 6, 3).map((q) => q.question)).toEqual(qs.map((q) => q.question));
  });

  it("scores the student's prompt and each privileged prompt on the student's rollouts", async () => {
    const ctx = { config, base, env, engine: e };
    const model = CausalLM.fromHost(e, base.cfg, (name) => base.weights.get(name));
    try {
      const qs = probeQuestions(ctx, 4, 3);
      const r = await probeTeacher(ctx, model, model, qs, ['full', 'gt'], 3);
      expect(r.questions).toBe(4);
      expect(r.rows.map((x) => x.prompt)).toEqual(['student', 'full', 'gt']);
      const [student, full, gt] = r.rows;
      // The student against itself: no distillation term, no gain on its own answers.
      expect(student!.distill).toBeCloseTo(0, 5);
      expect(student!.distillDecision).toBeCloseTo(0, 5);
      for (const g of [student!.answerGainRight, student!.answerGainWrong]) if (g !== null) expect(g).toBe(0);
      // Another prompt gives other log-probs, so a positive top-K KL on every token on average.
      for (const x of [full!, gt!]) {
        expect(x.distill).toBeGreaterThan(0);
        expect(Number.isFinite(x.distill)).toBe(true);
      }
      // Top-K coverage: D at the configured K is one of the columns; D grows with K up to the full KL.
      expect(r.coverageKs).toEqual(coverageKs(config.topK, base.cfg.vocabSize));
      expect(r.coverageKs).toContain(Math.min(config.topK, base.cfg.vocabSize));
      expect(student!.distillAtK.every((x) => x === 0) && student!.klFull === 0).toBe(true);
      for (const x of [full!, gt!]) {
        expect(x.distillAtK[r.coverageKs.indexOf(config.topK)]).toBeCloseTo(x.distill, 5);
        x.distillAtK.forEach((d, j) => expect(d).toBeGreaterThanOrEqual((x.distillAtK[j - 1] ?? 0) - 1e-5));
        expect(x.distillAtK.at(-1)!).toBeLessThanOrEqual(x.klFull + 1e-5);
        // D on the answer tokens: a part of D, as a mean and as a share of its sum.
        if (x.distillAnswer !== null) expect(x.distillAnswer).toBeGreaterThanOrEqual(0);
        expect(x.distillAnswerShare === null || (x.distillAnswerShare >= 0 && x.distillAnswerShare <= 1 + 1e-9)).toBe(
          true,
        );
      }
      for (const x of r.rows) {
        expect(x.decision.search + x.decision.answer).toBeLessThanOrEqual(1 + 1e-6);
        expect(x.decision.search).toBeGreaterThanOrEqual(0);
        for (const v of [x.em, x.answeredShare]) expect(v >= 0 && v <= 1).toBe(true);
      }
      // Seeded: the same numbers again.
      expect(await probeTeacher(ctx, model, model, qs, ['full', 'gt'], 3)).toEqual(r);
    } finally {
      model.dispose();
    }
  });
});

describe('the teacher probe on an engine whose storage binding is small', () => {
  // 64 KiB holds a few dozen rows of [rows, V] logits of the tiny vocabulary (as 128 MiB holds ~220 rows of
  // Qwen's): the batch below has more policy rows than that, so the probe must read its logits chunk by chunk.
  const CAP = 65536;
  let small: Engine;
  beforeAll(async () => {
    small = await Engine.create(nodeHost(), { maxBindingBytes: CAP });
  });
  afterAll(() => small?.destroy());

  it('scores the same numbers as on an uncapped engine', async () => {
    const V = base.cfg.vocabSize;
    const ids = (n: number, seed: number) => Array.from({ length: n }, (_, j) => (seed * 131 + j * 37) % V);
    const response = [ids(14, 1), ids(9, 2), ids(17, 3)];
    const withPrompt = (prompt: number[], r: number[]) => ({
      ids: [...prompt, ...r],
      mask: [...prompt.map(() => 0), ...r.map(() => 1)],
    });
    const studentSeqs = response.map((r, i) => withPrompt(ids(5, 10 + i), r));
    const teacherSeqs = response.map((r, i) => withPrompt(ids(8, 20 + i), r));
    const rows = response.reduce((n, r) => n + r.length, 0);
    expect(rows * V * 4).toBeGreaterThan(CAP);
    const decisions = [3, 0, 16];
    const tagIds = { search: 5, answer: 7 };
    const ks = coverageKs(config.topK, V);
    const run = async (engine: Engine) => {
      const ctx = { config, base, env, engine };
      const model = CausalLM.fromHost(engine, base.cfg, (name) => base.weights.get(name));
      try {
        return {
          self: await score(ctx, model, model, studentSeqs, studentSeqs, decisions, tagIds, ks),
          teacher: await score(ctx, model, model, teacherSeqs, studentSeqs, decisions, tagIds, ks),
        };
      } finally {
        model.dispose();
      }
    };
    const want = await run(e);
    const got = await run(small);
    for (const k of ['self', 'teacher'] as const) {
      expectClose(got[k].logp.flat(), want[k].logp.flat(), 1e-4, 1e-5, `${k} log-probs`);
      expectClose(got[k].kl.flat(), want[k].kl.flat(), 1e-4, 1e-5, `${k} top-K term`);
      const tags = (s: typeof got.self) => s.decision.flatMap((d) => [d.search, d.answer]);
      expectClose(tags(got[k]), tags(want[k]), 1e-4, 1e-5, `${k} decision log-probs`);
      const coverage = (s: typeof got.self) => [...s.coverage.byK, s.coverage.full];
      expectClose(coverage(got[k]), coverage(want[k]), 1e-4, 1e-5, `${k} coverage`);
    }
    expect(want.teacher.coverage.full).toBeGreaterThan(0);
  });
});

describe('the examiner probe', () => {
  it('judges every question it writes, per hop count and in all, and is seeded', async () => {
    const ctx = { config, base, env, engine: e };
    const model = CausalLM.fromHost(e, base.cfg, (name) => base.weights.get(name));
    try {
      const r = await probeExaminer(ctx, model, model, 6, 3);
      expect(r.examples).toHaveLength(6);
      const all = r.rows.at(-1)!;
      expect(all.hops).toBe('all');
      expect(all.questions).toBe(6);
      expect(r.rows.slice(0, -1).reduce((s, x) => s + x.questions, 0)).toBe(6);
      for (const x of r.rows) {
        expect(Object.values(x.verdicts).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
        expect(x.solvable).toBeLessThanOrEqual(x.valid);
      }
      // Only valid questions go to the student, n rollouts each; each verdict is the audit's.
      for (const q of r.examples) {
        expect(q.n === 0 || q.n === config.rolloutsPerQuestion).toBe(true);
        expect(q.k).toBeLessThanOrEqual(q.n);
        expect(q.verdict).toBe(env.auditQuestion(q.question, q.answer));
      }
      expect(all.valid).toBeCloseTo(r.examples.filter((q) => q.n > 0).length / 6, 12);
      expect(await probeExaminer(ctx, model, model, 6, 3)).toEqual(r);
    } finally {
      model.dispose();
    }
  }, 120_000);
});
