// The student's loss on prefix trees (src/rl/tree.ts, treeBatch) against the same rollouts one per row
// (policyBatch): a question's rollouts share a prompt and often their first turns, and a tree computes each shared
// prefix once, so the loss, D, every metric and every parameter gradient must come out the same, at every
// setting that changes the pass: the tempered policy, a teacher whose prompt is longer than the student's,
// per-rollout advantages and copies, LoRA, the CPU-driver and GPU attention kernels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { setAttentionVariant } from '../../../src/gpu/ops/attention.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { LoraSet } from '../../../src/model/lora.ts';
import {
  assertAligned,
  perPolicyToken,
  policyBatch,
  teacherSequence,
  treeBatch,
  type MaskedSequence,
  type PolicyBatch,
} from '../../../src/rl/batch.ts';
import { policyLogits } from '../../../src/rl/forward.ts';
import { studentLoss } from '../../../src/rl/losses.ts';
import { Rng } from '../../../src/env/random.ts';
import { testEngine } from '../../helpers/engine.ts';
import { expectClose } from '../../helpers/compare.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});
afterAll(() => setAttentionVariant(null));

const V = 48;
const cfg = tinyConfig({ vocabSize: V, hidden: 32, layers: 2, heads: 4, kvHeads: 2, maxPositions: 128 });
const model = (seed: number, range = 0.2) => {
  const w = initWeights(cfg, { seed, initializerRange: range });
  return CausalLM.fromHost(e, cfg, (n) => w.get(n));
};

/** A question's n rollouts: one prompt, then turns that rollouts share for a while (sampled, tool, sampled). */
function question(rng: Rng, n: number, promptLength: number): (MaskedSequence & { promptLength: number })[] {
  const prompt = Array.from({ length: promptLength }, () => rng.int(V));
  const out: (MaskedSequence & { promptLength: number })[] = [];
  for (let k = 0; k < n; k++) {
    // Continue an earlier rollout's response for a while, then go its own way.
    const from = k > 0 && rng.next() < 0.8 ? out[rng.int(k)]! : null;
    const ids = [...prompt];
    const mask = prompt.map(() => 0);
    if (from) {
      const keep = promptLength + rng.int(from.ids.length - promptLength + 1);
      ids.push(...from.ids.slice(promptLength, keep));
      mask.push(...from.mask.slice(promptLength, keep));
    }
    const more = 2 + rng.int(10);
    for (let t = 0; t < more; t++) {
      ids.push(rng.int(V));
      // A tool reply (mask 0) now and then.
      mask.push(ids.length > promptLength + 1 && rng.next() < 0.2 ? 0 : 1);
    }
    mask[promptLength] = 1;
    out.push({ ids, mask, promptLength });
  }
  return out;
}

interface Case {
  temperature: number;
  lora: boolean;
  variant: 'rows' | 'tiled';
}

async function compare(c: Case): Promise<void> {
  setAttentionVariant(c.variant);
  const student = model(11);
  const teacher = model(12, 0.3);
  if (c.lora) student.lora = new LoraSet(e, cfg, { rank: 4, alpha: 8, seed: 3 });
  student.setTrainable(true);
  const rng = new Rng(`tree-loss/${c.temperature}/${c.lora}/${c.variant}`);
  const groups = [question(rng, 5, 9), question(rng, 3, 7), question(rng, 1, 8)];
  const teacherPrompts = groups.map((g) => [...g[0]!.ids.slice(0, g[0]!.promptLength), 3, 1, 4, 1, 5]);
  const flat = groups.flat();
  const advantages = flat.map(() => rng.next() * 2 - 1);
  const copies = flat.map(() => 1 + rng.int(3));
  const oldShift = flat.map(() => rng.next() * 0.2);
  const settings = {
    epsLow: 0.2,
    epsHigh: 0.28,
    beta: 0,
    lambda: 0.3,
    topK: 8,
    tail: true,
    direction: 'reverse' as const,
  };

  const run = async (sb: PolicyBatch, tb: PolicyBatch) => {
    assertAligned(sb, tb);
    const mask = perPolicyToken(sb, (b) => copies[b]!);
    const out = e.tidy(() => {
      const logits = policyLogits(student, sb, c.temperature);
      const r = studentLoss(
        {
          logits,
          teacherLogits: e.noGrad(() => policyLogits(teacher, tb, c.temperature)),
          targets: sb.targets,
          // Old log-probs off the current ones, so ratios differ from 1 and some clip.
          oldLogp: perPolicyToken(sb, (b, t) => -3 + oldShift[b]! * (t % 5)),
          advantages: perPolicyToken(sb, (b) => advantages[b]!),
          mask,
        },
        settings,
      );
      return {
        loss: r.loss,
        m: [r.policyLoss, r.distill!, r.clipFraction, r.entropy, r.ppoKl].map((t) => e.keep(t)),
      };
    });
    const values = [await e.item(out.loss)];
    for (const t of out.m) {
      values.push(await e.item(t));
      t.dispose();
    }
    e.backward(out.loss);
    out.loss.dispose();
    const grads: number[] = [];
    for (const p of student.trainable()) {
      grads.push(...((await p.grad!.read()) as Float32Array));
      p.grad!.dispose();
      p.grad = null;
    }
    return { values, grads };
  };
  const plain = await run(
    policyBatch(flat),
    policyBatch(flat.map((s, k) => teacherSequence(s, teacherPrompts[groupOf(groups, k)]!))),
  );
  const tree = await run(
    treeBatch(groups),
    treeBatch(groups.map((g, q) => g.map((s) => teacherSequence(s, teacherPrompts[q]!)))),
  );
  expect(plain.values[2]).toBeGreaterThan(1e-3); // D is not 0
  expect(plain.values[3]).toBeGreaterThan(0); // some ratios clip
  expectClose(tree.values, plain.values, 2e-5, 1e-7, 'loss, policy loss, D, clip fraction, entropy, PPO KL');
  // Each shared prefix's gradient is one sum in the tree and several added together in the rows: the same terms in
  // another order, so elements that cancel to near 0 differ by rounding relative to the gradients' scale.
  const scale = Math.max(...plain.grads.map(Math.abs));
  expectClose(tree.grads, plain.grads, 2e-4, 1e-5 * scale, 'parameter gradients');
  expect(plain.grads.some((g) => g !== 0)).toBe(true);
  student.dispose();
  teacher.dispose();
}

function groupOf(groups: readonly unknown[][], k: number): number {
  let q = 0;
  while (k >= groups[q]!.length) k -= groups[q++]!.length;
  return q;
}

describe('the student loss on prefix trees', () => {
  it('packs fewer tokens than one row per rollout', () => {
    const groups = [question(new Rng('count'), 5, 9)];
    const tokens = groups.flat().reduce((a, s) => a + s.ids.length, 0);
    expect(treeBatch(groups).time).toBeLessThan(tokens);
  });

  for (const c of [
    { temperature: 1, lora: false, variant: 'rows' },
    { temperature: 0.6, lora: false, variant: 'rows' },
    { temperature: 0.6, lora: true, variant: 'rows' },
    { temperature: 0.6, lora: false, variant: 'tiled' },
  ] as Case[])
    it(`gives the loss, metrics and gradients of one row per rollout (T ${c.temperature}, ${c.lora ? 'LoRA' : 'full'}, ${c.variant})`, () =>
      compare(c));
});
