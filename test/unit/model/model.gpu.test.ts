// The decoder on the fixture checkpoints: KV-cache decoding agrees with a full forward pass (also across
// appended environment tokens), export/import round-trips bit-exactly, and bad files fail clearly.
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { tokenLogprobs } from '../../../src/gpu/ops/log_softmax.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { GenerationSession } from '../../../src/model/generate.ts';
import { exportModel, loadModel } from '../../../src/model/io.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import type { HostTensor } from '../../../src/model/host-weights.ts';
import { LoraSet, mergeLoraHost } from '../../../src/model/lora.ts';
import { testEngine } from '../../helpers/engine.ts';
import { expectClose } from '../../helpers/compare.ts';
import { rng } from '../../helpers/random.ts';

const FIXTURES = new URL('../../../../shared/fixtures/', import.meta.url).pathname;
const MODELS = ['llama_tiny_bf16', 'qwen2_tiny_f16', 'qwen3_tiny_f32'].filter((m) => existsSync(FIXTURES + m));

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/** log π(ids[t] | ids[<t]) for t >= 1 from one full forward pass. */
async function fullLogprobs(model: CausalLM, ids: number[]): Promise<Float32Array> {
  const T = ids.length;
  const out = e.noGrad(() =>
    e.tidy(() => {
      const logits = model.forward({ ids: Int32Array.from(ids), batch: 1, time: T });
      const targets = Int32Array.from({ length: T }, (_, t) => ids[t + 1] ?? 0);
      return e.keep(tokenLogprobs(logits.reshape([T, model.cfg.vocabSize]), e.tensor(targets, [T], 'i32')));
    }),
  );
  const lp = (await out.read()) as Float32Array;
  out.dispose();
  return lp;
}

describe.each(MODELS)('%s', (name) => {
  let model: CausalLM;
  beforeAll(async () => {
    model = await loadModel(e, filesFromNodeFolder(FIXTURES + name), { source: name });
  });

  it('KV-cache log-probs equal a full forward pass, across appended tool tokens and ragged batches', async () => {
    const V = model.cfg.vocabSize;
    const r = rng(7);
    const session = new GenerationSession(model, [[1, 5, 9, 3, 7], [2, 4, 6], [8]]);
    await session.run({ maxNewTokens: 4, temperature: 1, random: r });
    // The environment answers each sequence with a different number of tokens; then generation continues.
    session.append(0, [11, 12, 13]);
    session.append(1, [21]);
    await session.run({ maxNewTokens: 3, temperature: 1, random: r });
    for (const s of session.sequences) {
      expect(s.ids.every((id) => id >= 0 && id < V)).toBe(true);
      expect(s.sampled.filter(Boolean).length).toBe(7);
      const full = await fullLogprobs(model, s.ids);
      const got: number[] = [];
      const want: number[] = [];
      s.ids.forEach((_, t) => {
        if (s.sampled[t]) {
          got.push(s.logprobs[t]!);
          want.push(full[t - 1]!);
        }
      });
      expectClose(got, want, 1e-3, 1e-4, `${name} sampled log-probs`);
    }
  });

  it('export then import round-trips bit-exactly', async () => {
    const files = await exportModel(model);
    const again = await loadModel(e, filesFromMap(files), { source: 'export' });
    const a = await model.toHost();
    const b = await again.toHost();
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [k, t] of a) expect(Buffer.from(b.get(k)!.data.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
    again.dispose();
  });

  it('LoRA starts equal to the base and trains only adapters', async () => {
    const ids = [1, 2, 3, 4, 5, 6];
    const base = await fullLogprobs(model, ids);
    model.lora = new LoraSet(e, model.cfg, { rank: 4, alpha: 8, seed: 1 });
    const adapted = await fullLogprobs(model, ids);
    expectClose(adapted, base, 1e-5, 1e-6, 'LoRA at init');
    expect(model.trainable().every((p) => /lora_[AB]/.test(p.name ?? ''))).toBe(true);
    model.lora.dispose();
    model.lora = null;
  });

  it('an export of a LoRA-adapted model carries the adapters merged in', async () => {
    const ids = [1, 2, 3, 4, 5, 6];
    const base = await fullLogprobs(model, ids);
    model.lora = new LoraSet(e, model.cfg, { rank: 4, alpha: 8, seed: 1 });
    // Trained-looking adapters: B away from zero, so the adapted model differs from its base.
    const r = rng(3);
    for (const { B } of model.lora.adapters.values())
      e.write(
        B,
        Float32Array.from({ length: B.size }, () => 0.2 * (r() - 0.5)),
      );
    const adapted = await fullLogprobs(model, ids);
    // F32: this checks the merge itself, not the rounding of a BF16/F16 export (the checkpoint's dtype by default).
    const exported = await exportModel(model, { dtype: 'F32' });
    model.lora.dispose();
    model.lora = null;
    const merged = await loadModel(e, filesFromMap(exported));
    expect(merged.lora).toBeNull();
    expect(Math.max(...adapted.map((a, i) => Math.abs(a - base[i]!)))).toBeGreaterThan(1e-3);
    expectClose(await fullLogprobs(merged, ids), adapted, 1e-4, 1e-5, 'merged export');
    expectClose(await fullLogprobs(model, ids), base, 0, 0, 'the base is untouched');
    merged.dispose();
  });
});

describe('LoRA merged on the host (exporting a stored LoRA run)', () => {
  // GQA (k/v narrower than q) and a wider MLP: every projection is non-square, so a transposed merge fails.
  const cfg = tinyConfig({ vocabSize: 64, hidden: 32, layers: 2, heads: 4, kvHeads: 2 });
  const opts = { rank: 3, alpha: 6, what: 'student.safetensors' };

  async function adaptedModel() {
    const base = initWeights(cfg, { seed: 5 });
    const model = CausalLM.fromHost(e, cfg, (n) => base.get(n));
    model.lora = new LoraSet(e, cfg, { rank: opts.rank, alpha: opts.alpha, seed: 2 });
    const r = rng(4);
    for (const { B } of model.lora.adapters.values())
      e.write(
        B,
        Float32Array.from({ length: B.size }, () => r() - 0.5),
      );
    const adapters = new Map<string, HostTensor>();
    for (const t of model.lora.parameters())
      adapters.set(t.name!, { data: (await t.readF32()).slice(), shape: [...t.shape] });
    return { base, model, adapters };
  }

  it('mergeLoraHost gives the weights and logits of CausalLM.toHost({ mergeLora: true })', async () => {
    const { base, model, adapters } = await adaptedModel();
    const gpu = await model.toHost({ mergeLora: true });
    const host = mergeLoraHost(base, adapters, opts);
    expect([...host.keys()].sort()).toEqual([...gpu.keys()].sort());
    for (const [name, t] of gpu) {
      expect(host.get(name)!.shape, name).toEqual(t.shape);
      expectClose(host.get(name)!.data, t.data, 1e-5, 1e-6, name);
    }
    for (const name of ['model.layers.0.self_attn.k_proj.weight', 'model.layers.1.mlp.down_proj.weight']) {
      expect(
        Math.max(...host.get(name)!.data.map((v, i) => Math.abs(v - base.get(name)!.data[i]!))),
        name,
      ).toBeGreaterThan(1e-3);
    }
    expect(host.get('model.embed_tokens.weight')).toBe(base.get('model.embed_tokens.weight'));
    const ids = [1, 2, 3, 4, 5, 6];
    const merged = CausalLM.fromHost(e, cfg, (n) => host.get(n));
    expectClose(await fullLogprobs(merged, ids), await fullLogprobs(model, ids), 1e-4, 1e-5, 'merged on the host');
    merged.dispose();
    model.dispose();
  });

  it('refuses adapters that do not fit the base, naming the file and tensor', async () => {
    const { base, model, adapters } = await adaptedModel();
    model.dispose();
    const q = 'model.layers.0.self_attn.q_proj';
    const without = (name: string) => new Map([...adapters].filter(([n]) => n !== name));
    expect(() => mergeLoraHost(base, without(`${q}.lora_B.weight`), opts)).toThrow(
      `student.safetensors has '${q}.lora_A.weight' but not its pair '${q}.lora_B.weight'`,
    );
    expect(() => mergeLoraHost(base, adapters, { ...opts, rank: 4 })).toThrow(
      /student\.safetensors: the adapters of 'model\.layers\.0\.self_attn\.q_proj' have shapes.*rank 4/,
    );
    expect(() =>
      mergeLoraHost(base, new Map([...adapters, ['model.norm.weight', adapters.get(`${q}.lora_A.weight`)!]]), opts),
    ).toThrow(/'model\.norm\.weight' is not a LoRA adapter tensor/);
    const smaller = new Map(base);
    smaller.delete(`${q}.weight`);
    expect(() => mergeLoraHost(smaller, adapters, opts)).toThrow(
      /adapts 'model\.layers\.0\.self_attn\.q_proj', which the base model does not have/,
    );
  });
});

describe('bad model files', () => {
  it('a truncated safetensors file names the file', async () => {
    const good = await exportModel(await loadModel(e, filesFromNodeFolder(FIXTURES + MODELS[0]!)));
    const st = good.get('model.safetensors')!;
    const broken = new Map(good);
    broken.set('model.safetensors', st.subarray(0, st.length - 100));
    await expect(loadModel(e, filesFromMap(broken), { source: 'my-model' })).rejects.toThrow(
      /my-model.*model\.safetensors/s,
    );
  });

  it('weights that do not match the config are refused with names and shapes', async () => {
    const good = await exportModel(await loadModel(e, filesFromNodeFolder(FIXTURES + MODELS[0]!)));
    const cfg = JSON.parse(new TextDecoder().decode(good.get('config.json')!));
    cfg.intermediate_size += 1;
    const bad = new Map(good);
    bad.set('config.json', new TextEncoder().encode(JSON.stringify(cfg)));
    await expect(loadModel(e, filesFromMap(bad), { source: 'my-model' })).rejects.toThrow(
      /mlp\.gate_proj\.weight.*shape/s,
    );
  });

  it('a missing config.json says what a model folder needs', async () => {
    await expect(loadModel(e, filesFromMap({}), { source: 'empty-folder' })).rejects.toThrow(
      /empty-folder.*config\.json/,
    );
  });
});
