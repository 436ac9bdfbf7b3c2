// A run's checkpoint does not depend on the GPU's binding limit: a vocabulary matrix kept as row shards
// (src/model/vocab.ts) is saved whole under its HF name, weights and AdamW moments alike, and cut into the
// current adapter's shards on load. A run saved under one limit resumes under another, or unsharded, with the
// same weights and moments bit for bit, and its next optimizer step gives what the uninterrupted run gives.
// Older checkpoints that hold the shards under their names still load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/gpu/engine.ts';
import { nodeHost } from '../../../src/gpu/host/node.ts';
import { maskedMean } from '../../../src/gpu/ops/masked_mean.ts';
import { rowLogprobs } from '../../../src/gpu/ops/vocab_head.ts';
import type { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { parseSafetensors, writeSafetensors } from '../../../src/model/safetensors.ts';
import { joinShardFile, parseShardName } from '../../../src/model/vocab.ts';
import type { BaseModel } from '../../../src/selfplay/base-model.ts';
import { restorePolicies, saveCheckpoint, type RunState } from '../../../src/selfplay/checkpoint.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { optimizerStateToBytes, Policies, type PolicyName } from '../../../src/selfplay/policies.ts';
import { bytesText, MemoryStorage } from '../../../src/selfplay/storage.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randint, randn } from '../../helpers/random.ts';

// 200 x 8 f32 = 6,400 bytes per vocabulary matrix: 4 shards of 50 rows under a 2 KiB binding, 2 of 100 under
// 4 KiB, one tensor on the uncapped engine.
const V = 200;
const cfg = tinyConfig({
  vocabSize: V,
  hidden: 8,
  layers: 1,
  heads: 2,
  kvHeads: 1,
  intermediate: 16,
  tieEmbeddings: false,
});
const base = { name: 'tiny', cfg, weights: initWeights(cfg, { seed: 1 }) } as unknown as BaseModel;
// No gradient clipping: the global norm's sum runs over the shards, so its rounding would depend on them.
const config = makeConfig('smoke', { policies: 'separate', gradClip: 0, beta: 0 });
const POLICIES: PolicyName[] = ['examiner', 'student', 'teacher'];
const TRAINED = ['examiner', 'student'] as const;

let engines: { four: Engine; two: Engine; whole: Engine };
beforeAll(async () => {
  engines = {
    four: await Engine.create(nodeHost(), { maxBindingBytes: 2048 }),
    two: await Engine.create(nodeHost(), { maxBindingBytes: 4096 }),
    whole: await testEngine(),
  };
});
afterAll(() => {
  engines?.four.destroy();
  engines?.two.destroy();
});

/** One real training step of both trained policies (LM loss on a fixed batch), then the teacher's EMA. */
function trainStep(p: Policies): void {
  const [B, T] = [2, 6];
  const ids = randint(B * T, V, 7);
  const targets = Int32Array.from(ids, (_, i) => ids[(i + 1) % ids.length]!);
  for (const [m, opt] of [
    [p.examiner, p.examinerOpt],
    [p.student, p.studentOpt],
  ] as const) {
    const e = m.engine;
    e.tidy(() => {
      const lp = rowLogprobs(m.head(m.hidden({ ids, batch: B, time: T })), e.tensor(targets, [B * T], 'i32'));
      e.backward(maskedMean(lp, e.tensor(new Float32Array(B * T).fill(1), [B * T]), -1));
      opt.step().dispose();
      opt.zeroGrad();
    });
  }
  p.emaTeacher(0.5);
}

/**
 * An optimizer step on a gradient given whole per HF name (a seeded function of the name) and cut into each
 * parameter's rows: the same step on every shard layout, so weights can be compared bit for bit.
 */
function givenStep(p: Policies): void {
  for (const [m, opt] of [
    [p.examiner, p.examinerOpt],
    [p.student, p.studentOpt],
  ] as const) {
    const e = m.engine;
    for (const t of m.trainable()) {
      const shard = parseShardName(t.name!);
      const key = shard?.base ?? t.name!;
      const seed = [...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 17);
      const D = t.shape[1] ?? 1;
      const rows = shard ? V * D : t.size;
      const g = randn(rows, seed, 0.1).subarray(shard ? shard.first * D : 0, shard ? shard.end * D : rows);
      t.grad = e.tensor(g, t.shape);
    }
    opt.step().dispose();
    opt.zeroGrad();
  }
}

const state: RunState = {
  version: 1,
  config,
  cursor: { iteration: 0, stage: 'student', step: 1 },
  rng: { seed: 1, scheme: 'labels-v1' },
  dataset: [],
  metrics: [],
  evals: [],
  records: { metrics: 1, questions: 0, rollouts: 0, eval: 0 },
  base: 'tiny',
};

async function weightsOf(m: CausalLM): Promise<Map<string, Float32Array>> {
  return new Map([...(await m.toHost())].map(([n, t]) => [n, Float32Array.from(t.data)]));
}

function expectSameWeights(got: Map<string, Float32Array>, want: Map<string, Float32Array>, what: string): void {
  expect([...got.keys()].sort(), what).toEqual([...want.keys()].sort());
  for (const [n, w] of want) {
    expect(Buffer.from(got.get(n)!.buffer).equals(Buffer.from(w.buffer)), `${what}: tensor '${n}'`).toBe(true);
  }
}

const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('a checkpoint saved under one binding limit', () => {
  let storage: MemoryStorage;
  let oldStorage: MemoryStorage;
  const saved = new Map<PolicyName, Map<string, Float32Array>>();
  const moments = new Map<string, Awaited<ReturnType<Policies['optimizerState']>>>();
  const next = new Map<PolicyName, Map<string, Float32Array>>();

  beforeAll(async () => {
    const p = Policies.create(engines.four, base, config);
    try {
      expect([...p.student.params.keys()].filter((n) => n.startsWith('lm_head'))).toHaveLength(4);
      trainStep(p);
      storage = new MemoryStorage();
      expect(await saveCheckpoint(storage, p, state)).toBe('a');
      for (const name of POLICIES) saved.set(name, await weightsOf(p.policy(name)!));
      for (const name of TRAINED) moments.set(name, await p.optimizerState(name));
      // The same checkpoint as the code before whole-tensor checkpoints wrote it: the shards under their names.
      oldStorage = new MemoryStorage();
      for (const [f, b] of storage.files) oldStorage.files.set(f, b);
      for (const name of POLICIES) {
        const tensors = [];
        for (const t of p.policy(name)!.trainable()) {
          const data = new Uint8Array((await t.readF32()).slice().buffer);
          tensors.push({ name: t.name!, dtype: 'F32' as const, shape: [...t.shape], data });
        }
        oldStorage.files.set(`checkpoints/a/${name}.safetensors`, writeSafetensors(tensors, { format: 'pt' }));
      }
      for (const name of TRAINED) {
        const opt = name === 'examiner' ? p.examinerOpt : p.studentOpt;
        oldStorage.files.set(`checkpoints/a/${name}.optim.safetensors`, optimizerStateToBytes(await opt.state()));
      }
      givenStep(p);
      for (const name of POLICIES) next.set(name, await weightsOf(p.policy(name)!));
    } finally {
      p.dispose();
    }
  });

  it('holds every vocabulary matrix whole under its HF name, weights and moments', () => {
    for (const name of POLICIES) {
      const names = [...parseSafetensors(storage.files.get(`checkpoints/a/${name}.safetensors`)!, name).tensors.keys()];
      expect(names).toContain('model.embed_tokens.weight');
      expect(names).toContain('lm_head.weight');
      expect(names.filter((n) => n.includes('['))).toEqual([]);
    }
    for (const name of TRAINED) {
      const f = parseSafetensors(storage.files.get(`checkpoints/a/${name}.optim.safetensors`)!, name);
      const names = JSON.parse(f.metadata['names']!) as string[];
      expect(names).toContain('model.embed_tokens.weight');
      expect(names.filter((n) => n.includes('['))).toEqual([]);
      const k = names.indexOf('lm_head.weight');
      expect(f.tensors.get(`${k}.m`)!.shape).toEqual([V, 8]);
    }
    expect(bytesText(storage.files.get('checkpoints/a/state.json')!)).toContain('"stage":"student"');
  });

  describe.each([
    ['two shards', 'two', 'a new checkpoint'],
    ['no shards', 'whole', 'a new checkpoint'],
    ['two shards', 'two', 'an older checkpoint with shard names'],
    ['no shards', 'whole', 'an older checkpoint with shard names'],
  ] as const)('resumed under %s from %s', (_, which, kind) => {
    let p: Policies;
    beforeAll(async () => {
      p = Policies.create(engines[which], base, config);
      await restorePolicies(kind === 'a new checkpoint' ? storage : oldStorage, 'a', p);
    });
    afterAll(() => p?.dispose());

    it('cuts the matrices into this adapter’s shards, with the same weights and moments bit for bit', async () => {
      const shards = [...p.student.params.keys()].filter((n) => n.startsWith('lm_head'));
      expect(shards).toEqual(
        which === 'two' ? ['lm_head.weight[0:100]', 'lm_head.weight[100:200]'] : ['lm_head.weight'],
      );
      for (const name of POLICIES) expectSameWeights(await weightsOf(p.policy(name)!), saved.get(name)!, name);
      for (const name of TRAINED) {
        const got = await p.optimizerState(name);
        const want = moments.get(name)!;
        expect(got.step).toBe(want.step);
        expect(got.params.map((q) => [q.name, q.shape, q.step])).toEqual(
          want.params.map((q) => [q.name, q.shape, q.step]),
        );
        got.params.forEach((q, k) => {
          expect(bits(q.m).equals(bits(want.params[k]!.m)), `${name} m of '${q.name}'`).toBe(true);
          expect(bits(q.v).equals(bits(want.params[k]!.v)), `${name} v of '${q.name}'`).toBe(true);
        });
      }
    });

    it('takes the next optimizer step to the weights of the uninterrupted run', async () => {
      givenStep(p);
      for (const name of POLICIES) expectSameWeights(await weightsOf(p.policy(name)!), next.get(name)!, name);
    });
  });

  it('exports an older checkpoint’s student joined, as the new checkpoint holds it', () => {
    const joined = parseSafetensors(
      joinShardFile(oldStorage.files.get('checkpoints/a/student.safetensors')!, 's'),
      's',
    );
    const now = parseSafetensors(storage.files.get('checkpoints/a/student.safetensors')!, 's');
    expect([...joined.tensors.keys()].sort()).toEqual([...now.tensors.keys()].sort());
    for (const [n, t] of now.tensors)
      expect(Buffer.from(joined.tensors.get(n)!.data).equals(Buffer.from(t.data))).toBe(true);
  });

  it('refuses an older checkpoint whose shards do not cover the matrix, naming the file', async () => {
    const file = 'checkpoints/a/student.safetensors';
    const st = parseSafetensors(oldStorage.files.get(file)!, 'student');
    const kept = [...st.tensors].filter(([n]) => n !== 'lm_head.weight[50:100]');
    const broken = new MemoryStorage();
    for (const [f, b] of oldStorage.files) broken.files.set(f, b);
    broken.files.set(file, writeSafetensors(kept.map(([name, t]) => ({ name, ...t }))));
    const p = Policies.create(engines.whole, base, config);
    try {
      await expect(restorePolicies(broken, 'a', p)).rejects.toThrow(
        /student\.safetensors: the row shards of 'lm_head\.weight' \(.*\) do not cover its rows in order from 0 \(at row 50\)/,
      );
    } finally {
      p.dispose();
    }
  });
});
