// The live ablation of one rollout (src/lab/ablation.ts): the teacher scores the same response tokens after
// each privileged context. 'none' is the student's own prompt (D = 0 on every token when the weights are the
// student's); every mode's prompt is the student's with only its privileged block inserted; D and the teacher's
// log-probs match a float64 host reference of ALGORITHM.md section 5 computed from separately run forwards.
import { beforeAll, describe, expect, it } from 'vitest';
import { STUDENT_INSTRUCTIONS, studentPrompt, type PrivilegedMode } from '../../../src/env/prompts.ts';
import {
  ANSWER_CLOSE,
  ANSWER_OPEN,
  INFORMATION_CLOSE,
  INFORMATION_OPEN,
  THINK_CLOSE,
  THINK_OPEN,
} from '../../../src/env/tags.ts';
import type { Engine } from '../../../src/gpu/engine.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights } from '../../../src/model/init.ts';
import { policyBatch } from '../../../src/rl/batch.ts';
import { policyLogits } from '../../../src/rl/forward.ts';
import { headLogits } from '../../../src/gpu/ops/vocab_head.ts';
import { logSoftmaxRow } from '../../../src/rl/full-kl.ts';
import { ABLATION_MODES, ablateRollout, type AblationRollout } from '../../../src/lab/ablation.ts';
import { encodePrompt, randomTinyBase, type BaseModel } from '../../../src/selfplay/base-model.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Environment } from '../../../src/selfplay/environment.ts';
import { probeQuestions } from '../../../src/lab/probe.ts';
import { privilegedOptions, teacherPromptIds } from '../../../src/selfplay/prompt-ids.ts';
import { privilegedBlock } from '../../../src/env/prompts.ts';
import { testEngine } from '../../helpers/engine.ts';

const config = makeConfig('smoke', { tinyMaxPositions: 4096 });
let e: Engine;
let base: BaseModel;
let rollout: AblationRollout;

/** A response: a thought, a tool reply (masked) and the answer, as the record lists it. */
function response(b: BaseModel, answer: string): AblationRollout['tokens'] {
  const piece = (text: string, policy: 0 | 1) => b.tokenizer.encode(text).map((id) => ({ id, policy }));
  return [
    ...piece(`${THINK_OPEN} I should look it up ${THINK_CLOSE}`, 1),
    ...piece(`${INFORMATION_OPEN} some passage ${INFORMATION_CLOSE}`, 0),
    ...piece(`${ANSWER_OPEN} ${answer} ${ANSWER_CLOSE}`, 1),
  ];
}

/** ALGORITHM.md section 5's D at one row, in float64: top-K of the student, one tail bucket per side, reverse. */
function topkReverseKl(ls: Float64Array, lt: Float64Array, k: number): number {
  const idx = [...ls.keys()].sort((a, b) => ls[b]! - ls[a]!).slice(0, k);
  const ps = idx.map((i) => Math.exp(ls[i]!));
  const pt = idx.map((i) => Math.exp(lt[i]!));
  const tail = (p: number[]) => Math.max(1e-30, 1 - p.reduce((a, b) => a + b, 0));
  const [ts, tt] = [tail(ps), tail(pt)];
  let d = ts * (Math.log(ts) - Math.log(tt));
  idx.forEach((_, j) => (d += ps[j]! * (Math.log(ps[j]!) - Math.log(pt[j]!))));
  return d;
}

beforeAll(async () => {
  e = await testEngine();
  const env = Environment.fromWorld(config);
  base = await randomTinyBase(config, env.passages);
  const q =
    probeQuestions({ config, base, env, engine: e }, 1, 7).find((x) => x.hops === 2) ??
    probeQuestions({ config, base, env, engine: e }, 1, 7)[0]!;
  rollout = { questionId: q.id, question: q.question, qcp: q.qcp, tokens: response(base, q.answer) };
});

describe('the live ablation of one rollout', () => {
  it("gives D = 0 and the student's own log-probs for 'none' when teacher and student are the same weights", async () => {
    const m = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
    try {
      const r = await ablateRollout({ config, base, engine: e }, m, m, rollout);
      expect(r.modes.map((x) => x.mode)).toEqual(ABLATION_MODES);
      const none = r.modes[0]!;
      expect(none.block).toBe('');
      const policy = rollout.tokens.filter((t) => t.policy).length;
      expect(none.kl).toHaveLength(policy);
      expect(none.kl.every((v) => v === 0)).toBe(true);
      expect(none.teacherLogp).toEqual(r.studentLogp);
      expect(none.distill).toBe(0);
      expect(none.answerShare).toBeNull();
      // Every other mode tells the teacher something the student was not told: other log-probs (a random tiny
      // model barely reads its context, so D itself is near 0; the reference test below checks its value).
      for (const x of r.modes.slice(1)) {
        expect(x.block.length, x.mode).toBeGreaterThan(0);
        expect(
          x.teacherLogp.some((v, j) => v !== r.studentLogp[j]),
          x.mode,
        ).toBe(true);
      }
      // The answer span: after <answer> through </answer>, all sampled tokens.
      const answerLen = base.tokenizer.encode(`${ANSWER_OPEN} ${rollout.qcp.answer} ${ANSWER_CLOSE}`).length;
      expect(r.answerTokens).toEqual(Array.from({ length: answerLen - 1 }, (_, j) => policy - answerLen + 1 + j));
    } finally {
      m.dispose();
    }
  }, 120_000);

  it('differs between modes only in the privileged block, and D matches a float64 reference', async () => {
    const student = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
    // A teacher with other weights: 'none' then has a D > 0 of its own.
    const other = initWeights(base.cfg, { seed: 99 });
    const teacher = CausalLM.fromHost(e, base.cfg, (n) => other.get(n));
    try {
      const ctx = { config, base, engine: e };
      const modes: PrivilegedMode[] = ['none', 'gt', 'partial'];
      const r = await ablateRollout(ctx, student, teacher, rollout, modes);
      expect(r.modes[0]!.distill).toBeGreaterThan(0);
      const tok = base.tokenizer;
      const resp = rollout.tokens.map((t) => t.id);
      const mask = rollout.tokens.map((t) => t.policy);
      const seqAfter = (prompt: number[]) => ({
        ids: [...prompt, ...resp],
        mask: [...new Array<number>(prompt.length).fill(0), ...mask],
      });
      const logits = async (m: CausalLM, prompt: number[]) => {
        const b = policyBatch([seqAfter(prompt)], tok.padId ?? 0);
        const t = e.noGrad(() => e.tidy(() => headLogits(policyLogits(m, b, config.temperature))));
        const v = await t.read();
        t.dispose();
        return { v, targets: b.targets };
      };
      const s = await logits(student, encodePrompt(tok, studentPrompt({ question: rollout.question })));
      const V = base.cfg.vocabSize;
      for (const [k, mode] of modes.entries()) {
        // The teacher's prompt is the student's, with only this mode's block before the question line.
        const block = privilegedBlock(rollout.qcp, mode, privilegedOptions(ctx, { id: rollout.questionId }));
        expect(r.modes[k]!.block).toBe(block);
        const text = `${STUDENT_INSTRUCTIONS}\n${block}Question: ${rollout.question}\n`;
        const prompt = encodePrompt(tok, text);
        expect(prompt).toEqual(
          teacherPromptIds(ctx, { id: rollout.questionId, question: rollout.question, qcp: rollout.qcp }, mode),
        );
        const t = await logits(teacher, prompt);
        const M = s.targets.length;
        for (let row = 0; row < M; row++) {
          const ls = logSoftmaxRow(s.v, row, V);
          const lt = logSoftmaxRow(t.v, row, V);
          expect(r.studentLogp[row]!).toBeCloseTo(ls[s.targets[row]!]!, 4);
          expect(r.modes[k]!.teacherLogp[row]!, `${mode} row ${row}`).toBeCloseTo(lt[s.targets[row]!]!, 4);
          expect(r.modes[k]!.kl[row]!, `${mode} row ${row}`).toBeCloseTo(topkReverseKl(ls, lt, config.topK), 4);
        }
        const sum = r.modes[k]!.kl.reduce((a, b) => a + b, 0);
        expect(r.modes[k]!.distill).toBeCloseTo(sum / M, 6);
        const onAnswer = r.answerTokens.reduce((a, j) => a + r.modes[k]!.kl[j]!, 0);
        expect(r.modes[k]!.answerShare).toBeCloseTo(onAnswer / sum, 6);
      }
    } finally {
      student.dispose();
      teacher.dispose();
    }
  }, 180_000);

  it('refuses a rollout with no sampled token', async () => {
    const m = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
    try {
      const bad = { ...rollout, tokens: rollout.tokens.map((t) => ({ ...t, policy: 0 as const })) };
      await expect(ablateRollout({ config, base, engine: e }, m, m, bad)).rejects.toThrow(/at least one token/);
    } finally {
      m.dispose();
    }
  });
});
