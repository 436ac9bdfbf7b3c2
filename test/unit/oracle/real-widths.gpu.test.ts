// PyTorch float64 parity at real widths: random-weight checkpoints with the configs, tensor names, BF16
// dtype and full vocabularies of SmolLM2-135M, Qwen2.5-0.5B (q/k/v biases) and Qwen3-0.6B (per-head q/k
// norms, head_dim 128, rope_theta 1e6), cut to two layers (scripts/real-shapes/make-checkpoint.ts, rebuilt
// here from its seed), against test/assets/real-widths/*.json (scripts/real-shapes/make-reference.py). The
// 151,936-row embeddings are larger than a binding, so the Qwen cases run the sharded gather and LM head.
// SmolLM2 runs in CI; the Qwen cases (a 360 MB checkpoint each) run with PIPLAY_REAL_WIDTHS=all. And the fused
// decoding step at these widths (the lanes kernels on a CPU driver) against the general ops, token by token.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { rowLogprobs, vocabHead } from '../../../src/gpu/ops/vocab_head.ts';
import { setDecodePath } from '../../../src/model/decode-step.ts';
import { generate } from '../../../src/model/generate.ts';
import { loadModel } from '../../../src/model/io.ts';
import { testEngine } from '../../helpers/engine.ts';

interface Reference {
  model: string;
  layers: number;
  seed: number;
  vocab_size: number;
  ids: number[];
  probe_ids: number[];
  logsumexp: number[];
  argmax: number[];
  max_logit: number[];
  logits: number[][];
}

/** The engine sums in f32 over 576-4,864 terms (measured: about 3e-6 off float64 on SmolLM2-135M). */
const TOL = 5e-5;
const ALL = process.env.PIPLAY_REAL_WIDTHS === 'all';
const root = new URL('../../../', import.meta.url).pathname;
const reference = (model: string): Reference =>
  JSON.parse(readFileSync(join(root, `test/assets/real-widths/${model}.json`), 'utf8')) as Reference;

let e: Engine;
let dir: string;
beforeAll(async () => {
  e = await testEngine();
  dir = mkdtempSync(join(tmpdir(), 'piplay-real-widths-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const folders = new Map<string, string>();
/** The reference's checkpoint, written once (make-checkpoint.ts, from its seed) for both of its cases. */
function checkpoint(ref: Reference): string {
  let folder = folders.get(ref.model);
  if (!folder) {
    folder = join(dir, ref.model);
    execFileSync(process.execPath, [
      '--import',
      'tsx',
      join(root, 'scripts/real-shapes/make-checkpoint.ts'),
      ...['--model', ref.model, '--layers', String(ref.layers), '--seed', String(ref.seed), '--out', folder],
    ]);
    folders.set(ref.model, folder);
  }
  return folder;
}

function largest(row: Float32Array): number {
  let m = -Infinity;
  for (const v of row) m = Math.max(m, v);
  return m;
}

function logsumexp(row: Float32Array): number {
  const m = largest(row);
  let s = 0;
  for (const v of row) s += Math.exp(v - m);
  return m + Math.log(s);
}

describe.each([
  ['smollm2-135m', true],
  ['qwen2.5-0.5b', ALL],
  ['qwen3-0.6b', ALL],
])('%s with two layers and its full vocabulary', (model, run) => {
  it.runIf(run).each([
    ['bf16 on the GPU (a frozen base)', true],
    ['f32 on the GPU (a trained policy)', false],
  ])(
    'logits, log-sum-exp and chunked token log-probs match PyTorch float64: %s',
    async (_what, frozen) => {
      const ref = reference(model);
      const folder = checkpoint(ref);
      const m = await loadModel(e, filesFromNodeFolder(folder), { source: folder, frozen });
      const V = ref.vocab_size;
      expect(m.cfg.vocabSize).toBe(V);
      const T = ref.ids.length;
      const ids = Int32Array.from(ref.ids);
      const logits = await e.noGrad(() => e.tidy(() => e.keep(m.forward({ ids, batch: 1, time: T })))).readF32();
      // Token log-probs through the chunked LM head (3 rows a chunk), as the losses read them.
      const lp = await e
        .noGrad(() =>
          e.tidy(() => {
            const head = vocabHead(
              m.hidden({ ids, batch: 1, time: T }).reshape([T, m.cfg.hidden]),
              m.lmHeadShards,
              1,
              3,
            );
            return e.keep(rowLogprobs(head, e.tensor(Int32Array.from(ref.argmax), [T], 'i32')));
          }),
        )
        .readF32();
      m.dispose();
      for (let t = 0; t < T; t++) {
        const row = logits.subarray(t * V, (t + 1) * V);
        const at = `position ${t} (id ${ref.ids[t]})`;
        ref.probe_ids.forEach((id, k) =>
          expect(Math.abs(row[id]! - ref.logits[t]![k]!), `${at}, logit of id ${id}`).toBeLessThan(TOL),
        );
        expect(Math.abs(logsumexp(row) - ref.logsumexp[t]!), `${at}, log-sum-exp`).toBeLessThan(TOL);
        expect(Math.abs(row[ref.argmax[t]!]! - ref.max_logit[t]!), `${at}, the largest logit`).toBeLessThan(TOL);
        expect(largest(row), `${at}, no logit above PyTorch's largest`).toBeLessThan(ref.max_logit[t]! + TOL);
        const want = ref.max_logit[t]! - ref.logsumexp[t]!;
        expect(Math.abs(lp[t]! - want), `${at}, chunked log-prob of the argmax`).toBeLessThan(TOL);
      }
    },
    600_000,
  );

  it.runIf(run)(
    "the fused decoding step gives the general ops' greedy tokens and log-probs",
    async () => {
      const ref = reference(model);
      const folder = checkpoint(ref);
      const m = await loadModel(e, filesFromNodeFolder(folder), { source: folder, frozen: true });
      // Rows of different lengths (left-padded in the cache), from the reference's ids.
      const prompts = [ref.ids.slice(0, 9), ref.ids.slice(2, 5), ref.ids.slice(1, 12)];
      const decode = async (path: 'fused' | 'general') => {
        setDecodePath(path);
        try {
          return await generate(m, prompts, { maxNewTokens: 5, temperature: 0, random: () => 0.5 });
        } finally {
          setDecodePath(null);
        }
      };
      const general = await decode('general');
      const fused = await decode('fused');
      m.dispose();
      for (let r = 0; r < prompts.length; r++) {
        expect(fused[r]!.ids, `row ${r} ids`).toEqual(general[r]!.ids);
        fused[r]!.logprobs.forEach((lp, t) =>
          expect(Math.abs(lp - general[r]!.logprobs[t]!), `row ${r} log-prob ${t}`).toBeLessThan(TOL),
        );
      }
    },
    600_000,
  );
});
