// Multi-turn rollouts: the turn logic (pure), and runRollouts on a scripted model so every turn is known:
// masks (prompt and tool ids 0, sampled ids 1), sampling log-probs only on sampled ids, the tool reply
// appended as exactly the ids encodeToolReply made (never re-encoded with the trajectory), the turn limit,
// the per-turn token budget, and the examiner's `</answer>`-only-after-`<question>` rule.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import type { Passage } from '../../../src/env/corpus.ts';
import { formatInformation, parseExaminerOutput, parseExaminerTurns } from '../../../src/env/tags.ts';
import type { Tokenizer } from '../../../src/model/tokenizer.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights } from '../../../src/model/init.ts';
import { policyBatch } from '../../../src/rl/batch.ts';
import { policyLogprobs } from '../../../src/rl/forward.ts';
import { firstStop, rolloutAnswer, runRollouts, turnAction, type RolloutOptions } from '../../../src/rl/rollout.ts';
import { encodeToolReply } from '../../../src/rl/tool-reply.ts';
import { randomTinyBase, type BaseModel } from '../../../src/selfplay/base-model.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Environment } from '../../../src/selfplay/environment.ts';
import { expectClose } from '../../helpers/compare.ts';
import { testEngine } from '../../helpers/engine.ts';
import { rng } from '../../helpers/random.ts';
import { ScriptedModel } from '../../helpers/scripted-model.ts';

describe('turn logic', () => {
  it('finds the stop string that ended generation', () => {
    expect(firstStop('<search>q</search> then </answer>', ['</search>', '</answer>'])).toBe('</search>');
    expect(firstStop('<answer>a</answer><search>q</search>', ['</search>', '</answer>'])).toBe('</answer>');
    expect(firstStop('nothing', ['</search>'])).toBeNull();
  });

  it('maps a student turn to search, answer or an end', () => {
    expect(turnAction('student', '<think>x</think><search> capital of Y </search>', '', 'stop-string')).toEqual({
      kind: 'search',
      query: 'capital of Y',
    });
    expect(turnAction('student', '<answer>Z</answer>', '', 'stop-string')).toEqual({ kind: 'done', finish: 'answer' });
    expect(turnAction('student', 'junk </answer>', '', 'stop-string')).toEqual({ kind: 'done', finish: 'no-action' });
    expect(turnAction('student', 'anything', '', 'stop-id')).toEqual({ kind: 'done', finish: 'eos' });
    expect(turnAction('student', 'anything', '', 'length')).toEqual({ kind: 'done', finish: 'length' });
  });

  it('lets the examiner stop at </answer> only after a <question>', () => {
    expect(turnAction('examiner', '<answer>early</answer>', '<answer>early</answer>', 'stop-string')).toEqual({
      kind: 'continue',
    });
    const done = '<question>Q?</question><answer>A</answer>';
    expect(turnAction('examiner', done, done, 'stop-string')).toEqual({ kind: 'done', finish: 'answer' });
    // An empty search is no valid call: no tool reply, the policy writes on.
    expect(turnAction('examiner', '<search> </search>', '<search> </search>', 'stop-string')).toEqual({
      kind: 'continue',
    });
    expect(turnAction('student', '<search></search>', '', 'stop-string')).toEqual({ kind: 'continue' });
    expect(turnAction('examiner', '<search>who</search>', '<search>who</search>', 'stop-string')).toEqual({
      kind: 'search',
      query: 'who',
    });
  });
});

describe('runRollouts on a scripted model', () => {
  let e: Engine;
  let base: BaseModel;
  let tok: Tokenizer;
  const passages: Passage[] = [
    { id: 'p1', title: 'Alpha', text: 'Alpha was founded in 1901 by Beta.' },
    { id: 'p2', title: 'Beta', text: 'Beta was born in Gamma.' },
  ];
  const search = (q: string) => (q.includes('none') ? [] : passages);
  const prompts = [0, 1, 2].map((i) => [20 + i, 30, 31, 32]);

  beforeAll(async () => {
    e = await testEngine();
    const cfg = makeConfig('smoke');
    base = await randomTinyBase(cfg, Environment.fromWorld(cfg).passages);
    tok = base.tokenizer;
  });

  function model(): ScriptedModel {
    return new ScriptedModel(
      e,
      base.cfg,
      4,
      tok.eosIds[0]!,
      tok.tokenToId('<information>')!,
      tok.tokenToId('</information>')!,
    );
  }
  const ids = (text: string) => tok.encode(text, { addSpecialTokens: false });
  const opts = (over: Partial<RolloutOptions> = {}): RolloutOptions => ({
    role: 'student',
    search,
    maxTurns: 5,
    turnTokens: 40,
    toolTokens: 1000,
    temperature: 1,
    random: () => 0.5,
    stopIds: tok.eosIds,
    ...over,
  });

  it('appends the tool reply as the exact ids encodeToolReply made, with the mask and log-probs right', async () => {
    const m = model();
    const turn1 = ids('<think>go</think><search>alpha founder</search>');
    const turn2 = ids('<answer>Beta</answer>');
    m.script(prompts[0]!, [...turn1, ...turn2]);
    m.script(prompts[1]!, ids('<answer>Gamma</answer>'));
    const [r0, r1] = await runRollouts(m, tok, prompts.slice(0, 2), opts());
    const reply = encodeToolReply(tok, passages, 1000);
    expect(reply.truncated).toBe(false);
    expect(r0!.ids).toEqual([...prompts[0]!, ...turn1, ...reply.ids, ...turn2]);
    expect(r0!.mask).toEqual([0, 0, 0, 0, ...turn1.map(() => 1), ...reply.ids.map(() => 0), ...turn2.map(() => 1)]);
    r0!.logprobs.forEach((lp, t) => {
      if (r0!.mask[t])
        expect(lp).toBeGreaterThan(-1e-4); // the scripted id has probability ~1
      else expect(lp).toBe(0);
    });
    expect(r0!.searches.map((s) => s.query)).toEqual(['alpha founder']);
    expect(r0!.searches[0]!.tokens).toBe(reply.ids.length);
    expect(r0!.turns).toBe(2);
    expect(r0!.finish).toBe('answer');
    expect(r0!.text).toContain(formatInformation(passages));
    expect(r1!.ids).toEqual([...prompts[1]!, ...ids('<answer>Gamma</answer>')]);
    expect(r1!.turns).toBe(1);
  });

  it('awaits an asynchronous search tool (dense retrieval) and appends the same reply', async () => {
    const m = model();
    const turn1 = ids('<search>alpha founder</search>');
    const turn2 = ids('<answer>Beta</answer>');
    m.script(prompts[2]!, [...turn1, ...turn2]);
    const asked: string[] = [];
    const asyncSearch = async (q: string) => {
      asked.push(q);
      await new Promise((r) => setTimeout(r, 5));
      return passages;
    };
    const [r] = await runRollouts(m, tok, [prompts[2]!], opts({ search: asyncSearch }));
    expect(asked).toEqual(['alpha founder']);
    expect(r!.ids).toEqual([...prompts[2]!, ...turn1, ...encodeToolReply(tok, passages, 1000).ids, ...turn2]);
    expect(r!.finish).toBe('answer');
  });

  it('stops after maxTurns turns and at the per-turn token budget', async () => {
    const m = model();
    const s = ids('<search>q</search>');
    m.script(prompts[0]!, [...s, ...s, ...s, ...s]);
    m.script(prompts[1]!, ids('<think>' + 'word '.repeat(30) + '</think>'));
    const [r0, r1] = await runRollouts(m, tok, prompts.slice(0, 2), opts({ maxTurns: 3, turnTokens: 8 }));
    expect(r0!.turns).toBe(3);
    expect(r0!.finish).toBe('turns');
    expect(r0!.searches).toHaveLength(3);
    expect(r1!.finish).toBe('length');
    expect(r1!.mask.filter(Boolean)).toHaveLength(8);
  });

  it('cuts a tool reply to its budget and keeps the block closed', async () => {
    const reply = encodeToolReply(tok, passages, 30);
    expect(reply.truncated).toBe(true);
    expect(reply.ids.length).toBeLessThanOrEqual(30);
    const text = tok.decode(reply.ids);
    expect(text).toMatch(/^\n<information>[\s\S]*<\/information>\n$/);
    expect(formatInformation(passages)).toContain(reply.body);
    expect(encodeToolReply(tok, [], 100).body).toBe('No results.');
  });

  it("tells the policy's text from tool replies by the mask: an <information> block the policy wrote is its own", async () => {
    // No tool reply in this rollout: the script counts every id (its own reply detection is by id).
    const m = new ScriptedModel(e, base.cfg, 4, tok.eosIds[0]!, -1, -1);
    const own = ids(
      '<think>x</think><information>Zorblat lives in Gamma.</information><question>Who?</question><answer>Zorblat</answer>',
    );
    m.script(prompts[0]!, own);
    const [r] = await runRollouts(m, tok, [prompts[0]!], opts({ role: 'examiner' }));
    expect(r!.searches).toHaveLength(0);
    expect(r!.policyTurns).toEqual([tok.decode(own)]);
    const parsed = parseExaminerTurns({ turns: r!.policyTurns, informations: r!.searches.map((x) => x.information) });
    expect(parsed.informations).toEqual([]);
    expect(parsed.turns).toEqual([{ thinks: true }]);
    expect(parsed.answer).toBe('Zorblat');
    // Read as text alone, the same rollout looks like two turns around a tool reply.
    const byText = parseExaminerOutput(r!.text);
    expect(byText.informations).toHaveLength(1);
    expect(byText.turns).toHaveLength(2);
  });

  it('gives an empty search no tool reply and counts no search for it', async () => {
    const m = model();
    const t1 = ids('<search> </search>');
    const t2 = ids('<search>alpha</search>');
    const t3 = ids('<answer>Beta</answer>');
    m.script(prompts[0]!, [...t1, ...t2, ...t3]);
    const [r] = await runRollouts(m, tok, [prompts[0]!], opts());
    const reply = encodeToolReply(tok, passages, 1000);
    expect(r!.ids).toEqual([...prompts[0]!, ...t1, ...t2, ...reply.ids, ...t3]);
    expect(r!.turns).toBe(3);
    expect(r!.searches.map((x) => x.query)).toEqual(['alpha']);
    expect(rolloutAnswer(r!)).toBe('Beta');
    // The examiner's tool score counts the same calls the environment answered.
    const ex = model();
    ex.script(prompts[1]!, [...t1, ...t2, ...ids('<question>Who?</question><answer>Beta</answer>')]);
    const [x] = await runRollouts(ex, tok, [prompts[1]!], opts({ role: 'examiner' }));
    const parsed = parseExaminerTurns({ turns: x!.policyTurns, informations: x!.searches.map((y) => y.information) });
    expect(parsed.searches.filter((q) => q !== '')).toHaveLength(parsed.informations.length);
  });

  it('does not let a <question> inside a tool reply stop the examiner', async () => {
    const m = model();
    const t1 = ids('<search>alpha</search>');
    const early = ids('<answer>x</answer>');
    const done = ids('<question>Who?</question><answer>Beta</answer>');
    m.script(prompts[0]!, [...t1, ...early, ...done]);
    const tricky = [{ id: 'p3', title: 'Q', text: 'It says <question>Who?</question> here.' }];
    const [r] = await runRollouts(m, tok, [prompts[0]!], opts({ role: 'examiner', search: () => tricky }));
    expect(r!.finish).toBe('answer');
    expect(r!.turns).toBe(3);
  });

  it('lets the examiner write on after an early </answer> and stop after <question>…</answer>', async () => {
    const m = model();
    const early = ids('<answer>x</answer>');
    const done = ids('<question>Who?</question><answer>Beta</answer>');
    m.script(prompts[2]!, [...early, ...done, ...ids('never')]);
    const [r] = await runRollouts(m, tok, [prompts[2]!], opts({ role: 'examiner' }));
    expect(r!.turns).toBe(2);
    expect(r!.finish).toBe('answer');
    expect(r!.ids.slice(4)).toEqual([...early, ...done]);
    expect(r!.mask.slice(4).every((x) => x === 1)).toBe(true);
  });

  // The trained policy is the tempered one (src/rl/forward.ts): at every temperature the rollout's own
  // log-probs are the training forward's, so the first PPO minibatch is exactly on-policy.
  it.each([1, 0.6, 1.3])(
    'records sampling log-probs that a training forward reproduces at T = %s (ragged prompts)',
    async (T) => {
      // A random model with large weights: peaked, varied distributions, so a misaligned position shows.
      const m = CausalLM.fromHost(
        e,
        base.cfg,
        (
          (w) => (n: string) =>
            w.get(n)
        )(initWeights(base.cfg, { seed: 4, initializerRange: 0.3 })),
      );
      const r = rng(9);
      const ragged = [5, 9, 14].map((n) => Array.from({ length: n }, () => 3 + Math.floor(r() * 200)));
      const rollouts = await runRollouts(
        m,
        tok,
        ragged,
        opts({ turnTokens: 12, maxTurns: 1, stopIds: [], temperature: T }),
      );
      const pb = policyBatch(rollouts, tok.padId ?? 0);
      const lp = await policyLogprobs(m, pb, T);
      const old = Array.from(pb.owner, (o, i) => rollouts[o]!.logprobs[pb.index[i]!]!);
      expect(Math.min(...old)).toBeLessThan(-1); // not a flat distribution
      expectClose(lp, old, 1e-3, 1e-3, `rollout vs training log-probs at T = ${T}`);
      m.dispose();
    },
  );
});
