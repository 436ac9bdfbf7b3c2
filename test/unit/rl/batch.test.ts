// From rollouts to loss inputs (host only): the positions a loss reads are exactly the policy tokens, tool
// and prompt tokens never appear; the teacher's sequence is its own prompt followed by the student's very
// response ids, so the two batches' policy tokens line up one for one.
import { beforeAll, describe, expect, it } from 'vitest';
import { studentPrompt, teacherPrompt, type Qcp } from '../../../src/env/prompts.ts';
import { lastAnswer } from '../../../src/env/tags.ts';
import { assertAligned, perPolicyToken, policyBatch, teacherSequence } from '../../../src/rl/batch.ts';
import { studentReward } from '../../../src/rl/rewards.ts';
import { encodeToolReply } from '../../../src/rl/tool-reply.ts';
import { encodePrompt, randomTinyBase, type BaseModel } from '../../../src/selfplay/base-model.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Environment } from '../../../src/selfplay/environment.ts';

describe('policyBatch', () => {
  // Two rollouts: prompt (mask 0), sampled (1), tool reply (0), sampled (1).
  const a = { ids: [1, 2, 3, 10, 11, 50, 51, 52, 12], mask: [0, 0, 0, 1, 1, 0, 0, 0, 1] };
  const b = { ids: [4, 5, 20, 60, 21, 22], mask: [0, 0, 1, 0, 1, 1] };

  it('lists the policy tokens only, left-padded, with the positions that predict them', () => {
    const pb = policyBatch([a, b], 99);
    expect(pb.batch).toBe(2);
    expect(pb.time).toBe(9);
    expect(Array.from(pb.ids.slice(9))).toEqual([99, 99, 99, 4, 5, 20, 60, 21, 22]);
    expect(Array.from(pb.keyStart)).toEqual([0, 3]);
    expect(Array.from(pb.positions.slice(9))).toEqual([0, 0, 0, 0, 1, 2, 3, 4, 5]);
    expect(Array.from(pb.positions.slice(0, 9))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Array.from(pb.targets)).toEqual([10, 11, 12, 20, 21, 22]);
    expect(Array.from(pb.rows)).toEqual([2, 3, 7, 9 + 3 + 1, 9 + 3 + 3, 9 + 3 + 4]);
    expect(Array.from(pb.owner)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(Array.from(pb.index)).toEqual([3, 4, 8, 2, 4, 5]);
    // No listed token is a tool or prompt token, and every row predicts the token right after it.
    for (let i = 0; i < pb.targets.length; i++) {
      const o = pb.owner[i]!;
      const seq = [a, b][o]!;
      expect(seq.mask[pb.index[i]!]).toBe(1);
      expect((pb.rows[i]! % pb.time) - pb.keyStart[o]!).toBe(pb.index[i]! - 1);
      expect(pb.ids[pb.rows[i]! + 1]).toBe(pb.targets[i]);
    }
    const tools = new Set([50, 51, 52, 60]);
    expect(Array.from(pb.targets).some((t) => tools.has(t))).toBe(false);
  });

  it('gathers per-token values by rollout and position', () => {
    const pb = policyBatch([a, b]);
    const adv = [0.5, -2];
    expect(Array.from(perPolicyToken(pb, (o) => adv[o]!))).toEqual([0.5, 0.5, 0.5, -2, -2, -2]);
    expect(Array.from(perPolicyToken(pb, (o, t) => o * 100 + t))).toEqual([3, 4, 8, 102, 104, 105]);
  });

  it('refuses a sampled first token and a mask of the wrong length', () => {
    expect(() => policyBatch([{ ids: [1, 2], mask: [1, 0] }])).toThrow(/first token/);
    expect(() => policyBatch([{ ids: [1, 2], mask: [0] }])).toThrow(/mask of 1/);
  });
});

describe('teacher alignment', () => {
  let base: BaseModel;
  beforeAll(async () => {
    const cfg = makeConfig('smoke');
    base = await randomTinyBase(cfg, Environment.fromWorld(cfg).passages);
  });

  it('ends the teacher sequence with exactly the student response ids, policy tokens one for one', () => {
    const tok = base.tokenizer;
    const question = 'Who founded Alpha?';
    const qcp: Qcp = {
      source: { title: 'Alpha', text: 'Alpha was founded by Beta.' },
      hops: 2,
      searches: [{ query: 'Beta', information: 'Doc 1 (Title: Beta) Beta was born in Gamma.' }],
      question,
      answer: 'Beta',
    };
    const sp = encodePrompt(tok, studentPrompt({ question }));
    const enc = (s: string) => tok.encode(s, { addSpecialTokens: false });
    const s1 = enc('<think>look</think><search>Alpha</search>');
    const tool = encodeToolReply(tok, [qcp.source], 200).ids;
    const s2 = enc('<answer>Beta</answer>');
    const response = [...s1, ...tool, ...s2];
    const rollout = {
      ids: [...sp, ...response],
      mask: [...sp.map(() => 0), ...s1.map(() => 1), ...tool.map(() => 0), ...s2.map(() => 1)],
      promptLength: sp.length,
    };
    for (const mode of ['full', 'partial', 'gt', 'gt-hop', 'none'] as const) {
      const tp = encodePrompt(tok, teacherPrompt({ question, qcp, mode, options: { seed: 3 } }));
      const t = teacherSequence(rollout, tp);
      expect(t.ids.slice(0, tp.length)).toEqual(tp);
      expect(t.ids.slice(t.ids.length - response.length)).toEqual(response);
      expect(t.mask.slice(t.mask.length - response.length)).toEqual(rollout.mask.slice(sp.length));
      expect(t.mask.slice(0, tp.length).every((m) => m === 0)).toBe(true);
      const sb = policyBatch([rollout]);
      const tb = policyBatch([t]);
      assertAligned(sb, tb);
      expect(Array.from(tb.targets)).toEqual([...s1, ...s2]);
      if (mode === 'full') expect(tp.length).toBeGreaterThan(sp.length);
    }
    // Misaligned batches are refused.
    const shifted = { ids: [...rollout.ids, 7], mask: [...rollout.mask, 1] };
    expect(() => assertAligned(policyBatch([rollout]), policyBatch([shifted]))).toThrow(/policy tokens/);
  });

  it('gives no reward for an answer that only appears inside a tool reply', () => {
    const fromTool = '<search>q</search>\n<information>Doc 1 (Title: T) <answer>Beta</answer></information>\n';
    expect(studentReward(lastAnswer(fromTool), 'Beta')).toBe(0);
    expect(studentReward(lastAnswer(fromTool + '<answer>Beta</answer>'), 'Beta')).toBe(1);
  });
});
