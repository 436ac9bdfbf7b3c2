// The fused decoding step (src/model/decode-step.ts) against the general ops (CausalLM.hidden + logits, each
// tested against float64 references and the PyTorch fixtures): the same logits and the same keys and values
// appended to the cache, step after step, for every layer shape the product loads (Llama, Qwen2's biases,
// Qwen3's q/k norms and head dim apart from hidden / heads, grouped queries of 1 to 4 heads, a head dim of
// 128), with LoRA adapters on all or some projections, with f16 and bf16 weights, untied heads, left-padded
// rows, and rows stopped on the GPU; the lanes kernels with a layer's MLP half in one dispatch (its weights in one
// uniform window a matrix or split across two) and in three. And its dispatch count: 4 per layer plus 2 (2 per
// layer with the MLP half in one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import type { DType } from '../../../src/gpu/tensor.ts';
import type { ModelConfig } from '../../../src/model/config.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { DecodeState, stateWords } from '../../../src/model/decode-state.ts';
import { loraParams } from '../../../src/selfplay/memory-plan.ts';
import {
  type DecodeKernels,
  decodeKernels,
  decodeSample,
  decodeStep,
  fusedDecodeMisfit,
  type LanesMlp,
  setDecodeKernels,
  setDecodePath,
  setLanesMlp,
} from '../../../src/model/decode-step.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { LoraSet } from '../../../src/model/lora.ts';
import { subgroupsOf8 } from '../../../src/gpu/ops/util.ts';
import { rowWindows, setWindowBytes } from '../../../src/gpu/uniform-windows.ts';
import { sample } from '../../../src/gpu/ops/sample.ts';
import { scale } from '../../../src/gpu/ops/elementwise.ts';
import { expectClose } from '../../helpers/compare.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randint, randn } from '../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
  setDecodePath('fused'); // on a CPU driver too, where generation takes the general ops by default
});
afterAll(() => {
  setDecodePath(null);
  setDecodeKernels(null);
  setLanesMlp(null);
  setWindowBytes(null);
});

const V = 40;

interface Case {
  name: string;
  cfg: Partial<ModelConfig>;
  lora?: { rank: number; targets?: string[] };
  dtype?: DType;
  /** A cap on a uniform window (setWindowBytes): each MLP matrix then splits across two. */
  windowBytes?: number;
}

const llama = tinyConfig({ vocabSize: V, hidden: 32, layers: 2, heads: 4, kvHeads: 2, intermediate: 48 });
const CASES: Case[] = [
  { name: 'Llama, groups of 2', cfg: {} },
  { name: 'Qwen2: q/k/v biases, one kv head for 4 query heads', cfg: { attentionBias: true, kvHeads: 1 } },
  { name: 'Qwen3: q/k norms, head dim 16 of hidden 32 with 4 heads', cfg: { qkNorm: true, headDim: 16 } },
  { name: 'multi-head (groups of 1), untied head', cfg: { kvHeads: 4, tieEmbeddings: false } },
  { name: 'head dim 128 (128 threads)', cfg: { hidden: 128, heads: 1, kvHeads: 1, headDim: 128, intermediate: 32 } },
  { name: 'LoRA on every projection', cfg: { attentionBias: true }, lora: { rank: 4 } },
  {
    name: 'hidden 96 (12 groups of eight over 8 lanes), head dim 24, LoRA',
    cfg: { hidden: 96, headDim: 24, intermediate: 64 },
    lora: { rank: 4 },
  },
  {
    name: 'LoRA on some projections',
    cfg: { qkNorm: true },
    lora: { rank: 3, targets: ['q_proj', 'v_proj', 'down_proj'] },
  },
  { name: 'f16 weights', cfg: { attentionBias: true }, dtype: 'f16' },
  { name: 'bf16 weights with LoRA', cfg: {}, dtype: 'bf16', lora: { rank: 2 } },
  // 36 (adapter, rank) pairs: more than one pass of decode_attention_lanes (8 lanes x 4 columns) takes.
  { name: 'LoRA of rank 12 on every projection', cfg: {}, lora: { rank: 12 } },
];

/** A model whose every weight, norm and bias is random (norms about 1), its matrices stored as `dtype`. */
function randomModel(c: Case): CausalLM {
  const cfg = { ...llama, ...c.cfg };
  const host = initWeights(cfg, { seed: 7, initializerRange: 0.3 });
  let k = 0;
  for (const [name, t] of host) {
    if (name.endsWith('norm.weight')) t.data.set(randn(t.data.length, 50 + k++, 0.3).map((v) => 1 + v));
    if (name.endsWith('.bias')) t.data.set(randn(t.data.length, 80 + k++, 0.3));
  }
  const dtype = c.dtype ?? 'f32';
  const model = CausalLM.fromHost(
    e,
    cfg,
    (n) => host.get(n),
    (n, shape) => (shape.length === 2 && !n.includes('embed_tokens') && !n.startsWith('lm_head') ? dtype : 'f32'),
  );
  if (c.lora) {
    model.lora = new LoraSet(e, cfg, { rank: c.lora.rank, alpha: 2 * c.lora.rank, targets: c.lora.targets, seed: 3 });
    // B starts at zero; random B makes the adapters count.
    let s = 0;
    for (const ad of model.lora.adapters.values()) e.write(ad.B, randn(ad.B.size, 300 + s++, 0.2));
  }
  return model;
}

// More rows than a tile of either kernel set (4 and 8 rows), the last tile partial.
const LENS = [5, 1, 3, 5, 2, 4, 5, 3, 1, 4];
const STEPS = 3;

// The lanes kernels both ways: a layer's MLP half in one decode_mlp_lanes, or in three decode_matvec_lanes.
// The three matvecs for the cases that change an MLP half (LoRA, storage formats, a width of 12 groups); the
// attention's variants (biases, q/k norms, groupings) are the same kernel either way.
const MLP_CASES = new Set(CASES.filter((c) => c.lora || c.dtype || c.cfg.hidden === 96));
const KERNELS: { kernels: DecodeKernels; mlp?: LanesMlp }[] = [
  { kernels: 'workgroup' },
  { kernels: 'lanes', mlp: 'one' },
  { kernels: 'lanes', mlp: 'three' },
];

// decode_mlp_lanes with each of a layer's MLP matrices split across two uniform windows (the embedded model's gate,
// up and down split at the device's 64 KiB; here a test cap on a window splits every matrix at 32 rows), the LM
// head across two in decode_head_lanes (f32; the bf16 case's cap is too small for its tiles: decode_matvec_lanes),
// and decode_attention_lanes reading its projections from storage (past the cap).
const WINDOW_CASES: Case[] = [
  { name: 'MLP weights in two uniform windows each', cfg: { hidden: 64, intermediate: 64 }, windowBytes: 8192 },
  {
    name: 'bf16 MLP weights in two uniform windows each, LoRA',
    cfg: { hidden: 64, intermediate: 64 },
    dtype: 'bf16',
    lora: { rank: 2 },
    windowBytes: 4096,
  },
];

describe.each(WINDOW_CASES)('the fused decoding step (lanes kernels, MLP half in one): $name', (c) => {
  it('gives the logits and cache of the general ops, step after step, for left-padded rows', async (ctx) => {
    if (!subgroupsOf8(e)) ctx.skip();
    await expectSameAsGeneral({ ...c, kernels: 'lanes', mlp: 'one' }, LENS);
  });
});

describe.each(
  KERNELS.flatMap((k) => CASES.filter((c) => k.mlp !== 'three' || MLP_CASES.has(c)).map((c) => ({ ...c, ...k }))),
)('the fused decoding step ($kernels kernels, MLP half in $mlp): $name', (c) => {
  it('gives the logits and cache of the general ops, step after step, for left-padded rows', async (ctx) => {
    // The lanes kernels run where subgroups are 8 lanes wide (lavapipe's default; not at the widths CI also tries).
    if (c.kernels === 'lanes' && !subgroupsOf8(e)) ctx.skip();
    await expectSameAsGeneral(c, LENS);
  });
});

/**
 * Decodes STEPS steps of rows of prompt lengths `lens` with the fused step of `c.kernels` and with the general ops,
 * and expects the same logits at each step and the same caches after.
 */
async function expectSameAsGeneral(
  c: (typeof CASES)[number] & { kernels: DecodeKernels; mlp?: LanesMlp },
  lens: number[],
) {
  const B = lens.length;
  const L = Math.max(...lens);
  setDecodeKernels(c.kernels);
  setLanesMlp(c.mlp ?? null);
  setWindowBytes(c.windowBytes ?? null);
  const model = randomModel(c);
  if (c.windowBytes) {
    const gate = model.param('model.layers.0.mlp.gate_proj.weight');
    expect(rowWindows(gate, 32, 2)?.perWindow, 'gate splits across two windows').toBe(32);
  }
  const misfit = fusedDecodeMisfit(model, B);
  if (c.kernels === 'lanes' && c.cfg.headDim === 128) {
    expect(misfit).toMatch(/head dim a multiple of 4 up to 64/);
    model.dispose();
    setDecodeKernels(null);
    return;
  }
  expect(misfit).toBeNull();
  const keyStart = Int32Array.from(lens, (n) => L - n);
  const ids = randint(B * L, V, 1);
  const positions = Int32Array.from({ length: B * L }, (_, i) => Math.max(0, (i % L) - keyStart[Math.floor(i / L)]!));
  const general = model.newCache(B, L + STEPS);
  const fused = model.newCache(B, L + STEPS);
  e.noGrad(() =>
    e.tidy(() => {
      for (const cache of [general, fused]) model.hidden({ ids, batch: B, time: L, positions, keyStart }, cache);
    }),
  );
  const st = new DecodeState(model, B, [], decodeKernels(model));
  for (let step = 1; step <= STEPS; step++) {
    // The step comes from the state (decode_sample advances it; here the host sets it).
    st.setRows(
      keyStart,
      Array.from(keyStart, (s) => L - s - 1),
      lens.map(() => false),
      step,
    );
    const next = randint(B, V, 10 + step);
    const [want, got] = e.noGrad(() =>
      e.tidy(() => {
        const pos = Int32Array.from(keyStart, (s) => L - s + step - 1);
        const w = model.logits(model.hidden({ ids: next, batch: B, time: 1, positions: pos, keyStart }, general));
        // The fused head's logits are the state's (valid until the next step): a copy is kept.
        const before = e.counters.dispatches;
        const g = decodeStep(st, e.tensor(next, [B], 'i32'), B, fused, step);
        // With windows, the MLP half in one dispatch (not the three matvecs a misfit falls back to).
        if (c.windowBytes) expect(e.counters.dispatches - before).toBe(2 * model.cfg.layers + 2);
        return [e.keep(w), e.keep(scale(g, 1))];
      }),
    );
    const [wl, gl] = await e.readAll([want, got]);
    expectClose(gl!, wl!, 2e-4, 2e-5, `${c.name}: logits at step ${step}`);
    want.dispose();
    got.dispose();
  }
  expect(fused.length).toBe(general.length);
  for (let l = 0; l < model.cfg.layers; l++) {
    const [gk, gv, fk, fv] = await e.readAll([general.keys[l]!, general.values[l]!, fused.keys[l]!, fused.values[l]!]);
    expectClose(fk!, gk!, 2e-4, 2e-5, `layer ${l} keys`);
    expectClose(fv!, gv!, 2e-4, 2e-5, `layer ${l} values`);
  }
  st.dispose();
  general.dispose();
  fused.dispose();
  model.dispose();
  setDecodeKernels(null);
  setLanesMlp(null);
  setWindowBytes(null);
}

// Calls of fewer rows than a tile: the lanes matvec's tile shrinks to the call's rows rounded up to a power of two
// (1, 2, 4), decode_mlp_lanes' to half of them (two workgroups), and the lanes attention's group of 4 rows has
// slots past the call's rows.
describe.each([
  ...[1, 2, 3].map((rows) => ({ rows, mlp: 'three' as const })),
  ...[1, 2, 3, 4, 8].map((rows) => ({ rows, mlp: 'one' as const })),
])('the fused decoding step (lanes kernels, MLP half in $mlp) of $rows rows', ({ rows, mlp }) => {
  const c = CASES.find((k) => k.lora && k.cfg.hidden === 96)!;
  it(`gives the logits and cache of the general ops: ${c.name}`, async (ctx) => {
    if (!subgroupsOf8(e)) ctx.skip();
    await expectSameAsGeneral({ ...c, kernels: 'lanes', mlp }, LENS.slice(0, rows));
  });
});

describe('the fused decoding step', () => {
  it('a row whose token is a stop id is flagged and left alone: its cache slot stays unwritten', async () => {
    const model = randomModel(CASES[0]!);
    const cache = model.newCache(2, 4);
    for (const t of [...cache.keys, ...cache.values]) e.fill(t, 0);
    const stop = 7;
    const st = new DecodeState(model, 2, [3, stop], decodeKernels(model));
    st.setRows([0, 0], [-1, -1], [false, false], 1);
    e.noGrad(() => e.tidy(() => decodeStep(st, e.tensor([stop, 5], [2], 'i32'), 2, cache, 1)));
    const [flags, keys] = await e.readAll([st.buffer, cache.keys[0]!]);
    expect(Array.from(flags!.slice(4, 6))).toEqual([1, 0]);
    const slot = (b: number) => Array.from(keys!.slice(b * 2 * 4 * 8, b * 2 * 4 * 8 + 8));
    expect(slot(0).every((v) => v === 0)).toBe(true);
    expect(slot(1).some((v) => v !== 0)).toBe(true);
    st.dispose();
    cache.dispose();
    model.dispose();
  });

  it.each(['f32', 'bf16'] as DType[])(
    "decodeSample samples as sample() does and embeds each live row's token (%s table), flagging stop ids",
    async (dtype) => {
      const host = initWeights(llama, { seed: 9, initializerRange: 0.3 });
      const model = CausalLM.fromHost(
        e,
        llama,
        (n) => host.get(n),
        (_, shape) => (shape.length === 2 ? dtype : 'f32'),
      );
      const table = await model.param('model.embed_tokens.weight').readF32();
      const n = 5;
      const logits = e.tensor(randn(n * V, 21, 3), [n, V]);
      const uniforms = e.tensor(Float32Array.from([0.1, 0.5, 0.9, 0.3, 0.7]), [n]);
      for (const how of [
        { temperature: 0, topP: 1 },
        { temperature: 0.8, topP: 0.9 },
      ]) {
        const want = sample(logits, { ...how, uniforms });
        const [wantIds, wantLogprobs] = await e.readAll([want.ids, want.logprobs]);
        // Row 1's token is a stop id; row 3 stopped earlier (the host's flag).
        const stop = wantIds![1]!;
        const st = new DecodeState(model, n, [stop], decodeKernels(model));
        st.setRows([0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [false, false, false, true, false], 4);
        const got = decodeSample(st, logits, n, { ...how, uniforms });
        const [ids, logprobs, x, state] = await e.readAll([got.ids, got.logprobs, st.rowsX(n), st.buffer]);
        expect(Array.from(ids!)).toEqual(Array.from(wantIds!));
        expect(state![3 * n], 'the next step').toBe(5);
        expect(st.embedded).toBe(true);
        expect(Array.from(logprobs!)).toEqual(Array.from(wantLogprobs!));
        const D = llama.hidden;
        for (let r = 0; r < n; r++) {
          const flagged = r === 3 || ids![r] === stop;
          expect(state![2 * n + r], `row ${r} flag`).toBe(flagged ? 1 : 0);
          if (r === 3) continue;
          const id = ids![r]!;
          expect(Array.from(x!.slice(r * D, (r + 1) * D)), `row ${r}`).toEqual(
            Array.from(table.slice(id * D, (id + 1) * D)),
          );
        }
        for (const t of [want.ids, want.logprobs, got.ids, got.logprobs]) t.dispose();
        st.dispose();
      }
      for (const t of [logits, uniforms]) t.dispose();
      model.dispose();
    },
  );

  it('the memory plan counts the words the state takes', async () => {
    for (const c of [CASES[1]!, CASES[2]!, CASES[5]!]) {
      const model = randomModel(c);
      const adapters = c.lora ? loraParams(model.cfg, c.lora.rank) : 0;
      expect(DecodeState.words(model, 5, 3), c.name).toBe(stateWords(model.cfg, 5, 3, adapters));
      model.dispose();
    }
  });

  it.each([
    { kernels: 'workgroup' as const, perLayer: 4 },
    { kernels: 'lanes' as const, mlp: 'three' as const, perLayer: 4 },
    { kernels: 'lanes' as const, mlp: 'one' as const, perLayer: 2 },
  ])(
    'takes $perLayer dispatches per layer ($kernels, MLP half in $mlp), plus the embedding and the head',
    async (k) => {
      if (k.kernels === 'lanes' && !subgroupsOf8(e)) return;
      setDecodeKernels(k.kernels);
      setLanesMlp(k.mlp ?? null);
      const model = randomModel(CASES[5]!);
      const cache = model.newCache(3, 4);
      const st = new DecodeState(model, 3, [], decodeKernels(model));
      st.setRows([0, 0, 0], [-1, -1, -1], [false, false, false], 1);
      const before = e.counters.dispatches;
      e.noGrad(() => e.tidy(() => decodeStep(st, e.tensor([1, 2, 3], [3], 'i32'), 3, cache, 1)));
      expect(e.counters.dispatches - before).toBe(k.perLayer * model.cfg.layers + 2);
      st.dispose();
      cache.dispose();
      model.dispose();
      setDecodeKernels(null);
      setLanesMlp(null);
    },
  );

  // The steps' bind groups are made with the batch's first step; later steps make one each, for their embedding
  // (decode_embed binds the step's ids), and the same dispatches.
  it('makes the bind groups of a batch once, at its first step', async () => {
    const model = randomModel(CASES[5]!);
    const cache = model.newCache(3, 8);
    const st = new DecodeState(model, 3, [], decodeKernels(model));
    const made: number[] = [];
    const device = e.device as GPUDevice & { createBindGroup: GPUDevice['createBindGroup'] };
    const create = device.createBindGroup;
    let count = 0;
    device.createBindGroup = (d) => {
      count++;
      return create.call(device, d);
    };
    const dispatches: number[] = [];
    try {
      for (let step = 1; step <= 4; step++) {
        st.setRows([0, 0, 0], [-1, -1, -1], [false, false, false], step);
        count = 0;
        const before = e.counters.dispatches;
        e.noGrad(() => e.tidy(() => decodeStep(st, e.tensor([1, 2, step], [3], 'i32'), 3, cache, step)));
        made.push(count);
        dispatches.push(e.counters.dispatches - before);
      }
    } finally {
      device.createBindGroup = create;
    }
    // Every dispatch of the first step (the embedding's among them) binds a group made then.
    expect(made).toEqual([dispatches[0], 1, 1, 1]);
    expect(dispatches.every((d) => d === dispatches[0])).toBe(true);
    // A prepared step refuses to run over a freed buffer (the pool may have handed it to another tensor).
    cache.keys[1]!.dispose();
    st.setRows([0, 0, 0], [-1, -1, -1], [false, false, false], 5);
    expect(() => e.noGrad(() => e.tidy(() => decodeStep(st, e.tensor([1, 2, 3], [3], 'i32'), 3, cache, 5)))).toThrow(
      /which was freed/,
    );
    st.dispose();
    cache.dispose();
    model.dispose();
  });
});
