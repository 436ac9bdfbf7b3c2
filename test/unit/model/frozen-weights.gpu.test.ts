// Frozen weights in the checkpoint's dtype (src/model/weight-storage.ts): the shared base of LoRA policies
// and an evaluated model keep an F16/BF16 folder's matrices as f16/bf16 on the GPU (half the bytes), trained
// weights stay f32, a LoRA step on the 16-bit base matches one on an f32 copy of it, and an export still
// writes the checkpoint's dtype. On the host, the base is held as the file's bytes.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { mul, sum } from '../../../src/gpu/ops/elementwise.ts';
import type { Tensor } from '../../../src/gpu/tensor.ts';
import { configToJson } from '../../../src/model/config.ts';
import type { CausalLM } from '../../../src/model/decoder.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { exportModel, loadModel } from '../../../src/model/io.ts';
import type { FileWeights } from '../../../src/model/host-weights.ts';
import { fromFloat32, parseSafetensors, toFloat32, writeSafetensors } from '../../../src/model/safetensors.ts';
import { tokenizerFiles, trainTokenizer } from '../../../src/model/tokenizer-train.ts';
import { weightBytes } from '../../../src/model/weight-storage.ts';
import { folderBase, type BaseModel } from '../../../src/selfplay/base-model.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Policies } from '../../../src/selfplay/policies.ts';
import { testEngine } from '../../helpers/engine.ts';
import { expectClose } from '../../helpers/compare.ts';
import { randn } from '../../helpers/random.ts';

const enc = new TextEncoder();
const LORA_CONFIG = { policies: 'lora' as const, loraRank: 4, privileged: 'full' as const };

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

type Half = 'F16' | 'BF16';

/** An HF folder in memory: a tiny Llama (untied head, so both matrices at the ends are checked) in `dtype`. */
function folder(dtype: Half): Map<string, Uint8Array> {
  const tok = trainTokenizer(['hello world, the tiny model says hello'], { vocabSize: 300 });
  const cfg = {
    ...tinyConfig({ vocabSize: tok.vocabSize, hidden: 32, layers: 2, heads: 2, kvHeads: 1, tieEmbeddings: false }),
    torchDtype: dtype === 'F16' ? ('float16' as const) : ('bfloat16' as const),
  };
  const tensors = [...initWeights(cfg, { seed: 5 })].map(([name, t]) => ({
    name,
    dtype,
    shape: t.shape,
    data: fromFloat32(t.data, dtype),
  }));
  return new Map<string, Uint8Array>([
    ['config.json', enc.encode(JSON.stringify(configToJson(cfg)))],
    ['model.safetensors', writeSafetensors(tensors)],
    ...Object.entries(tokenizerFiles(tok)),
  ]);
}

/** The same base with no file dtypes: every weight goes to the GPU as f32 (the path before this change). */
const asF32 = (b: BaseModel): BaseModel => ({ ...b, fileDtypes: undefined });

const ids = Int32Array.from([1, 5, 9, 3, 7, 2, 11, 4]);

/** One LoRA training step of the student: loss = Σ logits·u, backward, AdamW. Returns what it produced. */
async function loraStep(p: Policies) {
  // B starts at zero (no gradient reaches A then): give every adapter the same nonzero B in both runs.
  let seed = 1;
  for (const ad of p.student.lora!.adapters.values()) e.write(ad.B, randn(ad.B.size, seed++, 0.05));
  const V = p.student.cfg.vocabSize;
  const upstream = randn(ids.length * V, 99);
  const loss = e.tidy(() => {
    const logits = p.student.forward({ ids, batch: 1, time: ids.length });
    const l = e.keep(sum(mul(logits, e.tensor(upstream, logits.shape))));
    e.backward(l);
    return l;
  });
  const grads = await Promise.all(p.studentOpt.params.map((t: Tensor) => t.grad!.readF32()));
  p.studentOpt.step().dispose();
  const after = await Promise.all(p.studentOpt.params.map((t: Tensor) => t.readF32()));
  const value = await e.item(loss);
  loss.dispose();
  return { loss: value, grads, after };
}

const logitsOf = async (m: CausalLM) => {
  const t = e.noGrad(() => e.tidy(() => e.keep(m.forward({ ids, batch: 1, time: ids.length }))));
  const out = await t.readF32();
  t.dispose();
  return out;
};

describe.each<Half>(['BF16', 'F16'])('frozen weights of a %s folder', (dtype) => {
  const gpu = dtype === 'F16' ? 'f16' : 'bf16';

  it("the host holds the file's bytes (2 per value) and widens a tensor to f32 when it is read", async () => {
    const files = folder(dtype);
    const base = await folderBase(e, filesFromMap(files), dtype);
    let values = 0;
    for (const [name, t] of parseSafetensors(files.get('model.safetensors')!, 'model.safetensors').tensors) {
      values += t.data.byteLength / 2;
      const read = base.weights.get(name)!;
      expect(Array.from(read.data), name).toEqual(Array.from(toFloat32(t)));
      // Each read is its own copy: a policy that writes into it leaves the next one untouched.
      read.data.fill(7);
      expect(base.weights.get(name)!.data[0], name).toBe(toFloat32(t)[0]);
    }
    expect((base.weights as FileWeights).heldBytes).toBe(2 * values);
  });

  it('LoRA policies share one base in the checkpoint dtype: matrices 16-bit, vectors and adapters f32', async () => {
    const base = await folderBase(e, filesFromMap(folder(dtype)), dtype);
    const p = Policies.create(e, base, makeConfig('smoke', LORA_CONFIG));
    let bytes = 0;
    for (const [name, t] of p.student.params) {
      expect(t.dtype, name).toBe(t.rank === 2 ? gpu : 'f32');
      expect(p.examiner.params.get(name), `${name} is shared`).toBe(t);
      bytes += t.byteLength;
    }
    for (const t of p.student.trainable()) expect(t.dtype).toBe('f32');
    expect(bytes).toBe(weightBytes(base.cfg, true));
    // The matrices are nearly all of it: about half the f32 bytes.
    expect(bytes / weightBytes(base.cfg, false)).toBeGreaterThan(0.5);
    expect(bytes / weightBytes(base.cfg, false)).toBeLessThan(0.52);
    p.dispose();
  });

  it('separate policies train f32 copies; only the k3 reference keeps the checkpoint dtype', async () => {
    const base = await folderBase(e, filesFromMap(folder(dtype)), dtype);
    const p = Policies.create(e, base, makeConfig('smoke', { policies: 'separate', beta: 0.01 }));
    for (const m of [p.examiner, p.student, p.teacher!]) for (const t of m.params.values()) expect(t.dtype).toBe('f32');
    expect(p.reference!.param('model.embed_tokens.weight').dtype).toBe(gpu);
    expect(p.reference!.param('model.norm.weight').dtype).toBe('f32');
    p.dispose();
  });

  it('a LoRA step on the 16-bit base matches the same step on an f32 copy of it', async () => {
    const base = await folderBase(e, filesFromMap(folder(dtype)), dtype);
    const half = Policies.create(e, base, makeConfig('smoke', LORA_CONFIG));
    const full = Policies.create(e, asF32(base), makeConfig('smoke', LORA_CONFIG));
    expect(full.student.param('model.embed_tokens.weight').dtype).toBe('f32');
    const a = await loraStep(half);
    const b = await loraStep(full);
    // The 16-bit values widen exactly to the f32 copy's and every sum is f32 in the same order: the
    // tolerance is f32 rounding only.
    expect(a.loss).toBeCloseTo(b.loss, 4);
    expect(Math.abs(a.loss - b.loss)).toBeLessThanOrEqual(1e-5 * Math.abs(b.loss) + 1e-5);
    a.grads.forEach((g, k) =>
      expectClose(g, b.grads[k]!, 1e-5, 1e-6, `gradient of ${half.studentOpt.params[k]!.name}`),
    );
    a.after.forEach((w, k) =>
      expectClose(w, b.after[k]!, 1e-6, 1e-7, `${half.studentOpt.params[k]!.name} after the step`),
    );
    half.dispose();
    full.dispose();
  });

  it(`exports the LoRA student in ${dtype}: unadapted tensors byte for byte, merged ones as from an f32 base`, async () => {
    const files = folder(dtype);
    const base = await folderBase(e, filesFromMap(files), dtype);
    const half = Policies.create(e, base, makeConfig('smoke', LORA_CONFIG));
    const full = Policies.create(e, asF32(base), makeConfig('smoke', LORA_CONFIG));
    for (const p of [half, full]) {
      let seed = 7;
      for (const ad of p.student.lora!.adapters.values()) e.write(ad.B, randn(ad.B.size, seed++, 0.05));
    }
    const got = parseSafetensors((await exportModel(half.student))!.get('model.safetensors')!, 'export');
    const want = parseSafetensors((await exportModel(full.student))!.get('model.safetensors')!, 'f32 export');
    const source = parseSafetensors(files.get('model.safetensors')!, 'input');
    for (const [name, t] of got.tensors) {
      expect(t.dtype, name).toBe(dtype);
      const bytes = Buffer.from(t.data);
      expect(bytes.equals(Buffer.from(want.tensors.get(name)!.data)), `${name} as from the f32 base`).toBe(true);
      if (!name.includes('_proj.')) expect(bytes.equals(Buffer.from(source.tensors.get(name)!.data)), name).toBe(true);
    }
    half.dispose();
    full.dispose();
  });

  it("loadModel({ frozen: true }) keeps the matrices 16-bit and gives the f32 model's logits", async () => {
    const files = filesFromMap(folder(dtype));
    const frozen = await loadModel(e, files, { frozen: true });
    const f32 = await loadModel(e, files);
    expect(frozen.param('lm_head.weight').dtype).toBe(gpu);
    expect(f32.param('lm_head.weight').dtype).toBe('f32');
    expectClose(await logitsOf(frozen), await logitsOf(f32), 1e-6, 1e-7, 'logits');
    // Read back to the host they are the file's values.
    const host = await frozen.toHost();
    const source = parseSafetensors(folder(dtype).get('model.safetensors')!, 'input');
    const embed = source.tensors.get('model.embed_tokens.weight')!;
    expect(
      Buffer.from(fromFloat32(host.get('model.embed_tokens.weight')!.data, dtype)).equals(Buffer.from(embed.data)),
    ).toBe(true);
    frozen.dispose();
    f32.dispose();
  });
});
