// Random initialisation of a tiny Llama: HF's scheme, seeded; the folder it exports loads back; and the
// untrained model predicts about uniformly (loss ~ log V).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { crossEntropy } from '../../../src/gpu/ops/log_softmax.ts';
import { parameterCount, parseConfig } from '../../../src/model/config.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { initModel, initWeights, tinyConfig } from '../../../src/model/init.ts';
import { exportModel, loadModel } from '../../../src/model/io.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randint } from '../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('tinyConfig', () => {
  it('defaults to a few hundred thousand parameters', () => {
    const cfg = tinyConfig({ vocabSize: 1024 });
    expect(cfg).toMatchObject({
      arch: 'llama',
      hidden: 96,
      layers: 3,
      heads: 4,
      kvHeads: 2,
      headDim: 24,
      intermediate: 256,
      tieEmbeddings: true,
    });
    // embedding + per layer (q, k, v, o, gate, up, down, two norms) + final norm
    const D = 96;
    const perLayer = D * D + 2 * (48 * D) + D * D + 3 * 256 * D + 2 * D;
    expect(parameterCount(cfg)).toBe(1024 * D + 3 * perLayer + D);
    expect(parameterCount(cfg)).toBeGreaterThan(200_000);
    expect(parameterCount(cfg)).toBeLessThan(500_000);
  });

  it('refuses shapes the decoder cannot run', () => {
    expect(() => tinyConfig({ vocabSize: 100, hidden: 30, heads: 4 })).toThrow(/divide/);
    expect(() => tinyConfig({ vocabSize: 100, hidden: 36, heads: 4 })).toThrow(/even/);
    expect(() => tinyConfig({ vocabSize: 100, heads: 4, kvHeads: 3 })).toThrow(/divide/);
  });
});

describe('initWeights', () => {
  const cfg = tinyConfig({ vocabSize: 300, hidden: 32, layers: 2 });

  it('draws N(0, 0.02) projections, unit norms, deterministically by seed', () => {
    const w = initWeights(cfg, { seed: 3 });
    expect(w.get('model.layers.0.input_layernorm.weight')!.data.every((v) => v === 1)).toBe(true);
    expect(w.get('model.norm.weight')!.data.every((v) => v === 1)).toBe(true);
    expect(w.has('lm_head.weight')).toBe(false); // tied
    const emb = w.get('model.embed_tokens.weight')!.data;
    let s = 0;
    let s2 = 0;
    for (const v of emb) {
      s += v;
      s2 += v * v;
    }
    const mean = s / emb.length;
    expect(Math.abs(mean)).toBeLessThan(0.002);
    expect(Math.sqrt(s2 / emb.length - mean * mean)).toBeCloseTo(0.02, 3);
    // Different tensors draw different numbers; the same seed gives the same weights, another seed not.
    expect(w.get('model.layers.0.self_attn.q_proj.weight')!.data[0]).not.toBe(
      w.get('model.layers.1.self_attn.q_proj.weight')!.data[0],
    );
    expect(initWeights(cfg, { seed: 3 }).get('model.embed_tokens.weight')!.data).toEqual(emb);
    expect(initWeights(cfg, { seed: 4 }).get('model.embed_tokens.weight')!.data[0]).not.toBe(emb[0]);
  });
});

describe('initModel', () => {
  it('exports an HF folder that loads back bit-exactly', async () => {
    const cfg = tinyConfig({ vocabSize: 300, hidden: 32, layers: 2, eosIds: [299] });
    const model = initModel(e, cfg, { seed: 1 });
    const files = await exportModel(model);
    const json = JSON.parse(new TextDecoder().decode(files.get('config.json')!));
    expect(json).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      vocab_size: 300,
      tie_word_embeddings: true,
      eos_token_id: 299,
    });
    expect(parseConfig(json)).toEqual(cfg);
    const back = await loadModel(e, filesFromMap(files));
    expect(back.numParameters()).toBe(parameterCount(cfg));
    const a = await model.toHost();
    const b = await back.toHost();
    for (const [name, t] of a) expect(b.get(name)!.data).toEqual(t.data);
    model.dispose();
    back.dispose();
  });

  it('starts near the uniform loss log(V)', async () => {
    const V = 300;
    const model = initModel(e, tinyConfig({ vocabSize: V, hidden: 32, layers: 2 }), { seed: 2 });
    const B = 2;
    const T = 16;
    const ids = randint(B * T, V, 5);
    const targets = randint(B * T, V, 6);
    const loss = e.noGrad(() =>
      e.tidy(() => {
        const logits = model.forward({ ids, batch: B, time: T }).reshape([B * T, V]);
        return e.keep(
          crossEntropy(logits, e.tensor(targets, [B * T], 'i32'), e.tensor(new Float32Array(B * T).fill(1), [B * T])),
        );
      }),
    );
    const value = (await loss.read())[0]!;
    loss.dispose();
    expect(Math.abs(value - Math.log(V))).toBeLessThan(0.05);
    model.dispose();
  });
});
