// A model whose vocabulary matrices exceed the GPU's largest storage binding (a tiny model on an engine whose
// binding is capped, as Qwen's 151,936 x 1,024 embedding on a 128 MiB browser GPU): it loads as row shards,
// computes what the same model computes on an uncapped engine (log-probs chunk by chunk, greedy decoding),
// and exports its weights joined back bit-exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/gpu/engine.ts';
import { nodeHost } from '../../../src/gpu/host/node.ts';
import { tokenLogprobs } from '../../../src/gpu/ops/log_softmax.ts';
import { rowLogprobs } from '../../../src/gpu/ops/vocab_head.ts';
import type { CausalLM } from '../../../src/model/decoder.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { GenerationSession } from '../../../src/model/generate.ts';
import { initModel, tinyConfig } from '../../../src/model/init.ts';
import { exportModel, loadModel } from '../../../src/model/io.ts';
import { expectClose } from '../../helpers/compare.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randint, rng } from '../../helpers/random.ts';

// 300 x 16 f32 = 19,200 bytes per vocabulary matrix; the capped engine binds at most 8 KiB (3 shards, and
// 6 rows of logits per chunk).
const V = 300;
const CAP = 8192;
let big: Engine;
let small: Engine;
beforeAll(async () => {
  big = await testEngine();
  small = await Engine.create(nodeHost(), { maxBindingBytes: CAP });
});
afterAll(() => small?.destroy());

/** log p(ids[t+1] | ids[<=t]) at every position of a [B, T] batch, through the chunked LM head. */
async function logprobs(model: CausalLM, ids: Int32Array, B: number, T: number): Promise<Float32Array> {
  const e = model.engine;
  const targets = Int32Array.from(ids, (_, i) => (i % T < T - 1 ? ids[i + 1]! : 0));
  const lp = e.noGrad(() =>
    e.tidy(() =>
      e.keep(rowLogprobs(model.head(model.hidden({ ids, batch: B, time: T })), e.tensor(targets, [B * T], 'i32'))),
    ),
  );
  const out = Float32Array.from(await lp.readF32());
  lp.dispose();
  return out;
}

describe.each([true, false])('vocabulary shards (tied embeddings: %s)', (tied) => {
  const cfg = tinyConfig({
    vocabSize: V,
    hidden: 16,
    layers: 2,
    heads: 2,
    kvHeads: 1,
    intermediate: 32,
    tieEmbeddings: tied,
  });
  let ref: CausalLM;
  let sharded: CausalLM;
  beforeAll(async () => {
    ref = initModel(big, cfg, { seed: 3 });
    sharded = await loadModel(small, filesFromMap(await exportModel(ref, { dtype: 'F32' })), { source: 'test' });
  });
  afterAll(() => {
    ref?.dispose();
    sharded?.dispose();
  });

  it('loads the vocabulary matrices as row shards that each fit one binding', () => {
    const names = [...sharded.params.keys()].filter((n) => n.includes('['));
    const want = [
      'model.embed_tokens.weight[0:100]',
      'model.embed_tokens.weight[100:200]',
      'model.embed_tokens.weight[200:300]',
    ];
    if (!tied) want.push('lm_head.weight[0:100]', 'lm_head.weight[100:200]', 'lm_head.weight[200:300]');
    expect(names).toEqual(want);
    for (const n of names) expect(sharded.param(n).byteLength).toBeLessThanOrEqual(CAP);
    expect(sharded.numParameters()).toBe(ref.numParameters());
  });

  it('log-probs at every position equal the unsharded model (chunked over rows)', async () => {
    const [B, T] = [3, 9];
    const ids = randint(B * T, V, 5);
    const got = await logprobs(sharded, ids, B, T);
    const want = await (async () => {
      const lp = big.noGrad(() =>
        big.tidy(() => {
          const z = ref.forward({ ids, batch: B, time: T }).reshape([B * T, V]);
          const targets = Int32Array.from(ids, (_, i) => (i % T < T - 1 ? ids[i + 1]! : 0));
          return big.keep(tokenLogprobs(z, big.tensor(targets, [B * T], 'i32')));
        }),
      );
      const out = Float32Array.from(await lp.readF32());
      lp.dispose();
      return out;
    })();
    expectClose(got, want, 1e-4, 1e-5, 'log-probs');
  });

  it('greedy decoding gives the same tokens and log-probs', async () => {
    const prompts = [[1, 5, 9, 3], [250, 120], [299]];
    const a = new GenerationSession(ref, prompts);
    const b = new GenerationSession(sharded, prompts);
    await a.run({ maxNewTokens: 5, temperature: 0, random: rng(1) });
    await b.run({ maxNewTokens: 5, temperature: 0, random: rng(1) });
    a.sequences.forEach((s, k) => {
      expect(b.sequences[k]!.ids).toEqual(s.ids);
      expectClose(b.sequences[k]!.logprobs, s.logprobs, 1e-4, 1e-5, `sequence ${k} log-probs`);
    });
  });

  it('exports the shards joined back into the HF tensors, bit-exactly', async () => {
    const a = await ref.toHost();
    const b = await sharded.toHost();
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [name, t] of a) {
      expect(b.get(name)!.shape).toEqual(t.shape);
      expect(Buffer.from(b.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
    }
  });
});
