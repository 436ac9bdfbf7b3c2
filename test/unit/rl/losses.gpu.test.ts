// The loss assembly of ALGORITHM.md section 5 against float64 host references: token-mean over the masked
// tokens of the whole batch, λ scaling of the distillation term, the teacher as a stop-gradient, no
// gradient or KL for masked (tool) rows, micro-batch weights that add up to the batch's token-mean, and on
// a real tiny model: tool tokens present in the batch change nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import type { Tensor } from '../../../src/gpu/tensor.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { policyBatch, perPolicyToken, type PolicyBatch } from '../../../src/rl/batch.ts';
import { policyLogits } from '../../../src/rl/forward.ts';
import { headLogits } from '../../../src/gpu/ops/vocab_head.ts';
import { examinerLoss, studentLoss, type StudentLossSettings } from '../../../src/rl/losses.ts';
import { testEngine } from '../../helpers/engine.ts';
import { expectClose } from '../../helpers/compare.ts';
import { randn, rng } from '../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

const M = 7;
const V = 13;

function logSoftmax(row: ArrayLike<number>): number[] {
  let mx = -Infinity;
  for (let i = 0; i < row.length; i++) mx = Math.max(mx, row[i]!);
  let s = 0;
  for (let i = 0; i < row.length; i++) s += Math.exp(row[i]! - mx);
  const lse = mx + Math.log(s);
  return Array.from(row, (x) => x - lse);
}

const rowOf = (z: Float32Array, r: number) => z.subarray(r * V, (r + 1) * V);

/** Reverse KL over the student's top-K plus one tail bucket each (ALGORITHM.md section 5). */
function topkKlRef(zs: ArrayLike<number>, zt: ArrayLike<number>, K: number): number {
  const ls = logSoftmax(zs);
  const lt = logSoftmax(zt);
  const ids = [...ls.keys()].sort((a, b) => ls[b]! - ls[a]! || a - b).slice(0, K);
  let kl = 0;
  let ps = 0;
  let pt = 0;
  for (const k of ids) {
    kl += Math.exp(ls[k]!) * (ls[k]! - lt[k]!);
    ps += Math.exp(ls[k]!);
    pt += Math.exp(lt[k]!);
  }
  const ts = Math.max(1 - ps, 1e-30);
  const tt = Math.max(1 - pt, 1e-30);
  return kl + ts * (Math.log(ts) - Math.log(tt));
}

const settings = (over: Partial<StudentLossSettings> = {}): StudentLossSettings => ({
  epsLow: 0.2,
  epsHigh: 0.28,
  beta: 0,
  lambda: 0.1,
  topK: 4,
  tail: true,
  direction: 'reverse',
  ...over,
});

function fixture(seed: number) {
  const zs = randn(M * V, seed, 2);
  const zt = randn(M * V, seed + 1, 2);
  const targets = Int32Array.from({ length: M }, (_, i) => (i * 5 + seed) % V);
  // Signs chosen so that rows 1 (ratio e^-0.5, A < 0) and 5 (ratio e^-0.25, A < 0) take the clipped branch.
  const adv = Float32Array.from(randn(M, seed + 2), (x, i) => (Math.abs(x) + 0.1) * [1, -1, 1, 1, 1, -1, 1][i]!);
  // Old log-probs near the current ones, some far enough to clip.
  const lp = Array.from({ length: M }, (_, r) => logSoftmax(rowOf(zs, r))[targets[r]!]!);
  const oldLogp = Float32Array.from(lp, (x, i) => x + [0, 0.5, -0.5, 0.05, -0.3, 0.25, 0][i]!);
  const mask = Float32Array.from([1, 1, 0, 1, 0, 1, 1]); // rows 2 and 4 stand for tool tokens
  return { zs, zt, targets, adv, oldLogp, mask, lp };
}

function studentRef(f: ReturnType<typeof fixture>, s: StudentLossSettings): { pg: number; d: number; clip: number } {
  let pg = 0;
  let d = 0;
  let clip = 0;
  let n = 0;
  for (let r = 0; r < M; r++) {
    if (!f.mask[r]) continue;
    const ratio = Math.exp(Math.max(-20, Math.min(20, f.lp[r]! - f.oldLogp[r]!)));
    const A = f.adv[r]!;
    const clipped = Math.min(Math.max(ratio, 1 - s.epsLow), 1 + s.epsHigh);
    pg += -Math.min(ratio * A, clipped * A);
    // A token is clipped when the clipped branch is the smaller one (its gradient is 0).
    if (clipped * A < ratio * A) clip++;
    d += topkKlRef(rowOf(f.zs, r), rowOf(f.zt, r), s.topK);
    n++;
  }
  return { pg: pg / n, d: d / n, clip: clip / n };
}

async function grads(fn: (student: Tensor, teacher: Tensor) => Tensor, zs: Float32Array, zt: Float32Array) {
  const student = e.tensor(zs, [M, V]);
  const teacher = e.tensor(zt, [M, V]);
  student.requiresGrad = true;
  teacher.requiresGrad = true; // a leaf that asks for a gradient: the loss must not give it one
  const loss = e.tidy(() => fn(student, teacher));
  const value = await e.item(loss);
  e.backward(loss);
  const gs = student.grad ? ((await student.grad.read()) as Float32Array) : null;
  const gt = teacher.grad ? ((await teacher.grad.read()) as Float32Array) : null;
  for (const t of [loss, student, teacher]) t.dispose();
  return { value, gs, gt };
}

describe('studentLoss', () => {
  it('is the clipped-ratio token-mean plus λ times the top-K KL token-mean, over masked rows only', async () => {
    const f = fixture(11);
    const s = settings();
    const ref = studentRef(f, s);
    const r = e.noGrad(() =>
      e.tidy(() => {
        const out = studentLoss(
          {
            logits: e.tensor(f.zs, [M, V]),
            teacherLogits: e.tensor(f.zt, [M, V]),
            targets: f.targets,
            oldLogp: f.oldLogp,
            advantages: f.adv,
            mask: f.mask,
          },
          s,
        );
        return {
          loss: out.loss,
          pg: out.policyLoss,
          d: out.distill!,
          clip: out.clipFraction,
          per: out.distillPerToken!,
        };
      }),
    );
    expectClose([await e.item(r.pg)], [ref.pg], 1e-4, 1e-5, 'L_GRPO');
    expectClose([await e.item(r.d)], [ref.d], 1e-4, 1e-5, 'D');
    expectClose([await e.item(r.loss)], [ref.pg + s.lambda * ref.d], 1e-4, 1e-5, 'L_S');
    // The clip fraction is the reference's count of clipped tokens over the masked rows only.
    expect(ref.clip).toBeGreaterThan(0);
    expect(ref.clip).toBeLessThan(1);
    expect(await e.item(r.clip)).toBeCloseTo(ref.clip, 6);
    for (const t of Object.values(r)) t.dispose();
  });

  it('scales the distillation term by λ exactly and leaves L_GRPO alone', async () => {
    const f = fixture(12);
    const value = async (lambda: number) => {
      const out = e.noGrad(() =>
        e.tidy(() => {
          const o = studentLoss(
            {
              logits: e.tensor(f.zs, [M, V]),
              teacherLogits: e.tensor(f.zt, [M, V]),
              targets: f.targets,
              oldLogp: f.oldLogp,
              advantages: f.adv,
              mask: f.mask,
            },
            settings({ lambda }),
          );
          return { loss: o.loss, d: o.distill! };
        }),
      );
      const v = { loss: await e.item(out.loss), d: await e.item(out.d) };
      out.loss.dispose();
      out.d.dispose();
      return v;
    };
    const v0 = await value(0);
    const v1 = await value(0.1);
    const v2 = await value(0.03);
    expect(v0.d).toBeGreaterThan(0); // λ = 0 still reports D as a metric
    expectClose([v1.loss - v0.loss, v2.loss - v0.loss], [0.1 * v0.d, 0.03 * v0.d], 1e-4, 1e-6, 'λ·D');
  });

  it('sends no gradient to the teacher and none to masked (tool) rows', async () => {
    const f = fixture(13);
    const { gs, gt } = await grads(
      (student, teacher) =>
        studentLoss(
          {
            logits: student,
            teacherLogits: teacher,
            targets: f.targets,
            oldLogp: f.oldLogp,
            advantages: f.adv,
            mask: f.mask,
          },
          settings(),
        ).loss,
      f.zs,
      f.zt,
    );
    expect(gt).toBeNull();
    expect(gs).not.toBeNull();
    for (let r = 0; r < M; r++) {
      const g = rowOf(gs!, r);
      const nonzero = g.some((x) => x !== 0);
      expect(nonzero, `row ${r}`).toBe(f.mask[r] === 1);
    }
  });

  it('adds up micro-batches weighted by their token share to the gradient of the whole batch', async () => {
    const f = fixture(14);
    const s = settings();
    const inputs = (rows: number[], student: Tensor, teacher: Tensor, weight: number) => {
      const pick = (a: ArrayLike<number>) => Float32Array.from(rows, (r) => a[r]!);
      return studentLoss(
        {
          logits: student,
          teacherLogits: teacher,
          targets: Int32Array.from(rows, (r) => f.targets[r]!),
          oldLogp: pick(f.oldLogp),
          advantages: pick(f.adv),
          weight,
        },
        s,
      ).loss;
    };
    const keep = [0, 1, 3, 5, 6]; // the masked rows of the fixture
    const zsK = Float32Array.from(keep.flatMap((r) => Array.from(rowOf(f.zs, r))));
    const ztK = Float32Array.from(keep.flatMap((r) => Array.from(rowOf(f.zt, r))));
    const whole = await (async () => {
      const st = e.tensor(zsK, [keep.length, V]);
      st.requiresGrad = true;
      const loss = e.tidy(() => inputs(keep, st, e.tensor(ztK, [keep.length, V]), 1));
      e.backward(loss);
      const g = (await st.grad!.read()) as Float32Array;
      loss.dispose();
      st.dispose();
      return g;
    })();
    // Two micro-batches: rows {0, 1} and {3, 5, 6}, weights 2/5 and 3/5, gradients accumulated on one leaf each.
    const parts = [keep.slice(0, 2), keep.slice(2)];
    const got: number[] = [];
    for (const rows of parts) {
      const idx = rows.map((r) => keep.indexOf(r));
      const st = e.tensor(Float32Array.from(idx.flatMap((i) => Array.from(zsK.subarray(i * V, (i + 1) * V)))), [
        rows.length,
        V,
      ]);
      const tt = e.tensor(Float32Array.from(idx.flatMap((i) => Array.from(ztK.subarray(i * V, (i + 1) * V)))), [
        rows.length,
        V,
      ]);
      st.requiresGrad = true;
      const loss = e.tidy(() => inputs(rows, st, tt, rows.length / keep.length));
      e.backward(loss);
      got.push(...((await st.grad!.read()) as Float32Array));
      for (const t of [loss, st, tt]) t.dispose();
    }
    expectClose(got, whole, 1e-4, 1e-7, 'micro-batch gradients');
    // And the masked full batch gives the same gradient on its masked rows as the unmasked subset.
    const { gs } = await grads(
      (student, teacher) =>
        studentLoss(
          {
            logits: student,
            teacherLogits: teacher,
            targets: f.targets,
            oldLogp: f.oldLogp,
            advantages: f.adv,
            mask: f.mask,
          },
          s,
        ).loss,
      f.zs,
      f.zt,
    );
    expectClose(
      keep.flatMap((r) => Array.from(rowOf(gs!, r))),
      whole,
      1e-4,
      1e-7,
      'masked vs subset',
    );
  });

  // src/selfplay/student.ts passes a rollout with k identical copies once, its tokens weighted k by the mask.
  it('weights a token k by its mask exactly as k copies of it: loss, metrics and summed gradients', async () => {
    const f = fixture(21);
    const s = settings();
    const rows = [0, 1, 3, 5, 6]; // the fixture's policy tokens
    const copies = [2, 1, 3, 1, 2];
    const repeated = rows.flatMap((r, k) => Array.from({ length: copies[k]! }, () => r));
    const run = async (which: number[], mask?: Float32Array) => {
      const pick = (a: ArrayLike<number>) => Float32Array.from(which, (r) => a[r]!);
      const zs = Float32Array.from(which.flatMap((r) => Array.from(rowOf(f.zs, r))));
      const zt = Float32Array.from(which.flatMap((r) => Array.from(rowOf(f.zt, r))));
      const student = e.tensor(zs, [which.length, V]);
      student.requiresGrad = true;
      const out = e.tidy(() => {
        const o = studentLoss(
          {
            logits: student,
            teacherLogits: e.tensor(zt, [which.length, V]),
            targets: Int32Array.from(which, (r) => f.targets[r]!),
            oldLogp: pick(f.oldLogp),
            advantages: pick(f.adv),
            mask,
          },
          s,
        );
        return {
          loss: e.keep(o.loss),
          metrics: [o.policyLoss, o.distill!, o.clipFraction, o.entropy, o.ppoKl].map((t) => e.keep(t)),
        };
      });
      const values = [await e.item(out.loss), ...(await Promise.all(out.metrics.map((t) => e.item(t))))];
      e.backward(out.loss);
      const g = (await student.grad!.read()) as Float32Array;
      for (const t of [student, ...out.metrics]) t.dispose();
      return { values, g };
    };
    const each = await run(repeated);
    const weighted = await run(rows, Float32Array.from(copies));
    expectClose(weighted.values, each.values, 1e-5, 1e-7, 'loss and metrics');
    // A row's gradient is the sum over its copies' (in a model they are one set of parameters).
    const summed = rows.flatMap((r) => {
      const sum = new Float32Array(V);
      repeated.forEach((q, k) => {
        if (q === r) for (let v = 0; v < V; v++) sum[v]! += each.g[k * V + v]!;
      });
      return Array.from(sum);
    });
    expectClose(weighted.g, summed, 1e-4, 1e-7, 'gradients');
  });

  it('adds β·k3 to the reference and refuses λ > 0 without a teacher', async () => {
    const f = fixture(15);
    const ref = Float32Array.from(f.lp, (x, i) => x + 0.1 * (i - 3));
    const out = e.noGrad(() =>
      e.tidy(() => {
        const o = studentLoss(
          {
            logits: e.tensor(f.zs, [M, V]),
            teacherLogits: null,
            targets: f.targets,
            oldLogp: f.oldLogp,
            refLogp: ref,
            advantages: f.adv,
            mask: f.mask,
          },
          settings({ beta: 0.5, lambda: 0 }),
        );
        return { loss: o.loss, kl: o.klRef };
      }),
    );
    let k3 = 0;
    let n = 0;
    for (let r = 0; r < M; r++) {
      if (!f.mask[r]) continue;
      const d = ref[r]! - f.lp[r]!;
      k3 += Math.exp(d) - d - 1;
      n++;
    }
    const pg = studentRef(f, settings()).pg;
    expectClose([await e.item(out.kl), await e.item(out.loss)], [k3 / n, pg + 0.5 * (k3 / n)], 1e-4, 1e-6, 'k3');
    out.loss.dispose();
    out.kl.dispose();
    expect(() =>
      e.noGrad(() =>
        e.tidy(() =>
          studentLoss(
            {
              logits: e.tensor(f.zs, [M, V]),
              teacherLogits: null,
              targets: f.targets,
              oldLogp: f.oldLogp,
              advantages: f.adv,
            },
            settings(),
          ),
        ),
      ),
    ).toThrow(/lambda > 0 needs teacher/);
  });
});

describe('examinerLoss', () => {
  it('is -mean A·log π over masked rows, unclipped, with no gradient on masked-out rows', async () => {
    const f = fixture(21);
    let want = 0;
    let n = 0;
    for (let r = 0; r < M; r++) {
      if (!f.mask[r]) continue;
      want += -f.adv[r]! * f.lp[r]!;
      n++;
    }
    const { value, gs, gt } = await grads(
      (student) => examinerLoss({ logits: student, targets: f.targets, advantages: f.adv, mask: f.mask }).loss,
      f.zs,
      f.zt,
    );
    expectClose([value], [want / n], 1e-4, 1e-6, 'L_E');
    expect(gt).toBeNull();
    // d L / d z_r = -(A_r / n) (onehot - softmax) on masked rows, 0 elsewhere.
    const expected: number[] = [];
    for (let r = 0; r < M; r++) {
      const p = logSoftmax(rowOf(f.zs, r)).map(Math.exp);
      for (let v = 0; v < V; v++)
        expected.push(f.mask[r] ? (-f.adv[r]! / n) * ((v === f.targets[r] ? 1 : 0) - p[v]!) : 0);
    }
    expectClose(gs!, expected, 1e-3, 1e-6, 'dL_E/dz');
  });
});

describe('examinerLoss with the KL to the reference', () => {
  it('adds β·k3 to -mean A·log π (Dr. Zero eq. 2) and refuses β > 0 without a reference', async () => {
    const f = fixture(23);
    const ref = Float32Array.from(f.lp, (x, i) => x + 0.15 * (i - 2));
    const out = e.noGrad(() =>
      e.tidy(() => {
        const o = examinerLoss({
          logits: e.tensor(f.zs, [M, V]),
          targets: f.targets,
          advantages: f.adv,
          mask: f.mask,
          refLogp: ref,
          beta: 0.5,
        });
        return { loss: o.loss, kl: o.klRef };
      }),
    );
    let pg = 0;
    let k3 = 0;
    let n = 0;
    for (let r = 0; r < M; r++) {
      if (!f.mask[r]) continue;
      const q = ref[r]! - f.lp[r]!;
      pg += -f.adv[r]! * f.lp[r]!;
      k3 += Math.exp(q) - q - 1;
      n++;
    }
    expectClose(
      [await e.item(out.kl), await e.item(out.loss)],
      [k3 / n, pg / n + 0.5 * (k3 / n)],
      1e-4,
      1e-6,
      'L_E with k3',
    );
    out.loss.dispose();
    out.kl.dispose();
    expect(() =>
      e.noGrad(() =>
        e.tidy(
          () => examinerLoss({ logits: e.tensor(f.zs, [M, V]), targets: f.targets, advantages: f.adv, beta: 0.1 }).loss,
        ),
      ),
    ).toThrow(/beta > 0 needs the reference/);
  });
});

describe('assembly on a tiny model', () => {
  it('gives the same loss, D and parameter gradients whether or not masked tool positions are in the batch', async () => {
    const cfg = tinyConfig({ vocabSize: 40, hidden: 16, layers: 1, heads: 2, kvHeads: 1, maxPositions: 64 });
    const student = CausalLM.fromHost(
      e,
      cfg,
      (
        (w) => (n: string) =>
          w.get(n)
      )(initWeights(cfg, { seed: 5 })),
    );
    const teacher = CausalLM.fromHost(
      e,
      cfg,
      (
        (w) => (n: string) =>
          w.get(n)
      )(initWeights(cfg, { seed: 6, initializerRange: 0.2 })),
    );
    student.setTrainable(true);
    const r = rng(3);
    const ids = Array.from({ length: 14 }, () => Math.floor(r() * 40));
    // prompt 4 | sampled 3 | tool 4 | sampled 3
    const mask = [0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1];
    const s = settings({ lambda: 0.2, topK: 8 });
    const run = async (pb: PolicyBatch, m: Float32Array | undefined) => {
      // Old log-probs: the current ones shifted per position, so the ratio is not 1 and some rows clip.
      const old = perPolicyToken(pb, (_, t) => -3 + 0.1 * t);
      const out = e.tidy(() => {
        const o = studentLoss(
          {
            logits: policyLogits(student, pb, 1),
            teacherLogits: e.noGrad(() => policyLogits(teacher, pb, 1)),
            targets: pb.targets,
            oldLogp: old,
            advantages: perPolicyToken(pb, () => 0.7),
            mask: m,
          },
          s,
        );
        return { loss: o.loss, d: o.distill! };
      });
      const value = await e.item(out.loss);
      const d = await e.item(out.d);
      e.backward(out.loss);
      const g: number[] = [];
      for (const name of ['model.layers.0.mlp.up_proj.weight', 'model.embed_tokens.weight'])
        g.push(...((await student.param(name).grad!.read()) as Float32Array));
      for (const p of student.params.values()) {
        p.grad?.dispose();
        p.grad = null;
      }
      out.loss.dispose();
      out.d.dispose();
      return { value, d, g };
    };
    // The trainer's batch: policy positions only.
    const a = await run(policyBatch([{ ids, mask }]), undefined);
    // Every response position (tool tokens too), with the policy mask as the loss mask.
    const pbAll = policyBatch([{ ids, mask: mask.map((m, t) => (t >= 4 ? 1 : m)) }]);
    const maskAll = Float32Array.from(pbAll.index, (t) => mask[t]!);
    expect(Array.from(maskAll)).toEqual([1, 1, 1, 0, 0, 0, 0, 1, 1, 1]);
    const b = await run(pbAll, maskAll);
    expect(a.d).toBeGreaterThan(1e-3);
    expectClose([b.value, b.d], [a.value, a.d], 1e-4, 1e-7, 'loss and D');
    expectClose(b.g, a.g, 1e-3, 1e-7, 'parameter gradients');
    expect(a.g.some((x) => x !== 0)).toBe(true);
    student.dispose();
    teacher.dispose();
  });
});

describe('the tempered policy (src/rl/forward.ts)', () => {
  // Rollouts sample from softmax(z / T): the log-probs of the ratio, the top-K term on both sides and the
  // entropy are those of z / T, so a rollout's own sampling log-probs give ratio 1 and no clipping.
  it.each([0.6, 1.3])('computes L_GRPO, D, entropy and the PPO KL from logits / T at T = %s', async (T) => {
    const cfg = tinyConfig({ vocabSize: 40, hidden: 16, layers: 1, heads: 2, kvHeads: 1, maxPositions: 64 });
    const student = CausalLM.fromHost(
      e,
      cfg,
      (
        (w) => (n: string) =>
          w.get(n)
      )(initWeights(cfg, { seed: 7, initializerRange: 0.3 })),
    );
    const teacher = CausalLM.fromHost(
      e,
      cfg,
      (
        (w) => (n: string) =>
          w.get(n)
      )(initWeights(cfg, { seed: 8, initializerRange: 0.3 })),
    );
    const r = rng(5);
    const ids = Array.from({ length: 12 }, () => Math.floor(r() * 40));
    const pb = policyBatch([{ ids, mask: ids.map((_, t) => (t >= 4 ? 1 : 0)) }]);
    const Mp = pb.targets.length;
    const Vp = cfg.vocabSize;
    const raw = async (m: CausalLM) =>
      (await e.noGrad(() => e.tidy(() => headLogits(policyLogits(m, pb, 1)))).read()) as Float32Array;
    const zs = await raw(student);
    const zt = await raw(teacher);
    const row = (z: Float32Array, i: number) => Array.from(z.subarray(i * Vp, (i + 1) * Vp), (x) => x / T);
    // On-policy old log-probs: log softmax(z / T) at the targets, in float64.
    const old = Float32Array.from({ length: Mp }, (_, i) => logSoftmax(row(zs, i))[pb.targets[i]!]!);
    const adv = Float32Array.from({ length: Mp }, (_, i) => (i % 2 ? 0.8 : -0.6));
    let d = 0;
    let ent = 0;
    let pg = 0;
    for (let i = 0; i < Mp; i++) {
      d += topkKlRef(row(zs, i), row(zt, i), 5);
      const ls = logSoftmax(row(zs, i));
      ent += -ls.reduce((s2, x) => s2 + Math.exp(x) * x, 0);
      pg += -adv[i]!; // ratio 1
    }
    const s = settings({ lambda: 0.3, topK: 5 });
    const out = e.noGrad(() =>
      e.tidy(() => {
        const o = studentLoss(
          {
            logits: policyLogits(student, pb, T),
            teacherLogits: policyLogits(teacher, pb, T),
            targets: pb.targets,
            oldLogp: old,
            advantages: adv,
          },
          s,
        );
        return { pg: o.policyLoss, d: o.distill!, ent: o.entropy, kl: o.ppoKl, clip: o.clipFraction };
      }),
    );
    expectClose([await e.item(out.d)], [d / Mp], 1e-4, 1e-6, `D at T = ${T}`);
    expectClose([await e.item(out.ent)], [ent / Mp], 1e-4, 1e-6, `entropy at T = ${T}`);
    expectClose([await e.item(out.pg)], [pg / Mp], 1e-4, 1e-6, `L_GRPO at T = ${T}`);
    expect(Math.abs(await e.item(out.kl))).toBeLessThan(1e-5);
    expect(await e.item(out.clip)).toBe(0);
    for (const t of Object.values(out)) t.dispose();
    student.dispose();
    teacher.dispose();
  });
});
