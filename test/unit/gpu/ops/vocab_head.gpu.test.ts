// Vocabulary matrices as row shards and row ops over the LM head computed chunk by chunk (vocab_head.ts,
// embedding.ts shardedEmbedding): against float64 references, finite differences, and the plain one-tensor ops.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { shardedEmbedding } from '../../../../src/gpu/ops/embedding.ts';
import { add, mul, scale as scaleOp, sum } from '../../../../src/gpu/ops/elementwise.ts';
import {
  rowEntropy,
  rowLogprobs,
  rowTopkKl,
  shardedLinear,
  studentRowTerms,
  vocabHead,
} from '../../../../src/gpu/ops/vocab_head.ts';
import type { Tensor } from '../../../../src/gpu/tensor.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { forwardBackward } from '../../../helpers/forward-backward.ts';
import { gradCheck } from '../../../helpers/gradcheck.ts';
import { randint, randn } from '../../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/** Splits W [V, D] (host) into row shards of the given row counts. */
function split(w: Float32Array, D: number, rows: number[]): Float32Array[] {
  let at = 0;
  return rows.map((r) => {
    const s = w.slice(at * D, (at + r) * D);
    at += r;
    return s;
  });
}

describe('sharded embedding', () => {
  it('gathers rows across shards and scatters each gradient into its own shard (float64 reference)', async () => {
    const D = 5;
    const rows = [13, 13, 11];
    const V = 37;
    const N = 24;
    const table = randn(V * D, 1);
    const ids = randint(N, V, 2);
    ids[0] = 0;
    ids[1] = 12;
    ids[2] = 13;
    ids[3] = 36;
    ids[4] = 36; // a repeat in the last shard
    const up = randn(N * D, 3);
    const shards = split(table, D, rows);
    const { y, grads } = await forwardBackward(
      e,
      [
        ...shards.map((s, k) => ({ data: s, shape: [rows[k]!, D] })),
        { data: ids, shape: [4, 6], dtype: 'i32' as const },
      ],
      (ts) => shardedEmbedding(ts.slice(0, 3), ts[3]!, ids),
      up,
    );
    const yRef = new Float64Array(N * D);
    const dRef = new Float64Array(V * D);
    ids.forEach((id, n) => {
      for (let c = 0; c < D; c++) {
        yRef[n * D + c] = table[id * D + c]!;
        dRef[id * D + c] += up[n * D + c]!;
      }
    });
    expectClose(y, yRef, 0, 0, 'rows');
    const joined = new Float32Array(V * D);
    let at = 0;
    for (const g of grads.slice(0, 3)) {
      joined.set(g!, at);
      at += g!.length;
    }
    expectClose(joined, dRef, 1e-6, 1e-6, 'd table');
  });

  it('refuses an id outside the whole vocabulary, naming it', () => {
    const s = [e.tensor(new Float32Array(4), [2, 2]), e.tensor(new Float32Array(4), [2, 2])];
    const ids = Int32Array.from([1, 4]);
    expect(() => shardedEmbedding(s, e.tensor(ids, [2], 'i32'), ids)).toThrow(/id 4 at position 1 .*vocabulary \(4\)/);
  });
});

describe('sharded LM head', () => {
  it('x @ Wᵀ over row shards and its gradients (float64 reference)', async () => {
    const [R, D] = [6, 7];
    const rows = [9, 9, 5];
    const V = 23;
    const x = randn(R * D, 4);
    const w = randn(V * D, 5);
    const up = randn(R * V, 6);
    const { y, grads } = await forwardBackward(
      e,
      [{ data: x, shape: [R, D] }, ...split(w, D, rows).map((s, k) => ({ data: s, shape: [rows[k]!, D] }))],
      (ts) => shardedLinear(ts[0]!, ts.slice(1)),
      up,
    );
    const yRef = new Float64Array(R * V);
    const dx = new Float64Array(R * D);
    const dw = new Float64Array(V * D);
    for (let r = 0; r < R; r++) {
      for (let v = 0; v < V; v++) {
        let acc = 0;
        for (let d = 0; d < D; d++) acc += x[r * D + d]! * w[v * D + d]!;
        yRef[r * V + v] = acc;
        for (let d = 0; d < D; d++) {
          dx[r * D + d] += up[r * V + v]! * w[v * D + d]!;
          dw[v * D + d] += up[r * V + v]! * x[r * D + d]!;
        }
      }
    }
    expectClose(y, yRef, 1e-5, 1e-5, 'logits');
    expectClose(grads[0]!, dx, 1e-5, 1e-5, 'd x');
    const joined = new Float32Array(V * D);
    let at = 0;
    for (const g of grads.slice(1)) {
      joined.set(g!, at);
      at += g!.length;
    }
    expectClose(joined, dw, 1e-5, 1e-5, 'd W');
  });
});

describe('chunked row ops', () => {
  // M rows through 3 shards of W, 2 rows per chunk, logits scaled by 1 / temperature.
  const [M, D, V, K] = [7, 6, 29, 5];
  const rows = [10, 10, 9];
  const scale = 1 / 0.7;
  const h = randn(M * D, 7);
  const w = randn(V * D, 8, 0.8);
  const t = randn(M * D, 9);
  const wt = randn(V * D, 10, 0.8);
  const targets = randint(M, V, 11);
  const mask = Float32Array.from({ length: M }, (_, i) => (i % 3 === 1 ? 0 : 1));

  /**
   * The student's trained head (h and W's shards with gradients: 2 rows per chunk, or one plain head) and the
   * teacher's constant one (3 rows per chunk), within the caller's tidy.
   */
  function heads(chunked: boolean) {
    const hT = e.tensor(h, [M, D]);
    hT.requiresGrad = true;
    const ws = chunked ? split(w, D, rows).map((s, k) => e.tensor(s, [rows[k]!, D])) : [e.tensor(w, [V, D])];
    for (const x of ws) x.requiresGrad = true;
    const tws = chunked ? split(wt, D, rows).map((s, k) => e.tensor(s, [rows[k]!, D])) : [e.tensor(wt, [V, D])];
    const student = vocabHead(hT, ws, scale, chunked ? 2 : M);
    const teacher = e.noGrad(() => vocabHead(e.tensor(t, [M, D]), tws, scale, chunked ? 3 : M));
    return { hT, ws, student, teacher };
  }

  /** Every output of the row ops and the gradients of h and W, from a chunked head or a plain one. */
  async function run(chunked: boolean) {
    const out = e.tidy(() => {
      const { hT, ws, student, teacher } = heads(chunked);
      expect(student.logits === null).toBe(chunked);
      const lp = rowLogprobs(student, e.tensor(targets, [M], 'i32'));
      const ent = rowEntropy(student);
      const kl = rowTopkKl(student, teacher, e.tensor(mask, [M]), { k: K, tail: true, direction: 'reverse' });
      const up = e.tensor(randn(M, 12), [M]);
      e.backward(sum(mul(lp, up)));
      const gh1 = e.keep(hT.grad!);
      hT.grad = null;
      const gw1 = ws.map((x) => {
        const g = e.keep(x.grad!);
        x.grad = null;
        return g;
      });
      // The KL's backward on its own tape (one loss each keeps the check sharp).
      const student2 = vocabHead(hT, ws, scale, chunked ? 2 : M);
      const kl2 = rowTopkKl(student2, teacher, e.tensor(mask, [M]), { k: K, tail: true, direction: 'reverse' });
      e.backward(kl2.loss);
      // Taken off the leaves, which dispose their .grad with themselves at the end of this tidy.
      const gh2 = e.keep(hT.grad!);
      hT.grad = null;
      const gw2 = ws.map((x) => {
        const g = e.keep(x.grad!);
        x.grad = null;
        return g;
      });
      const keep = (x: Tensor) => e.keep(x);
      return {
        lp: keep(lp),
        ent: keep(ent),
        kl: keep(kl.perToken),
        loss: keep(kl.loss),
        ids: keep(kl.ids),
        slp: keep(kl.studentLogp),
        tlp: keep(kl.teacherLogp),
        gh1,
        gw1,
        gh2,
        gw2,
      };
    });
    const read = async (x: Tensor) => {
      const v = Float32Array.from(await x.readF32());
      x.dispose();
      return v;
    };
    const join = async (xs: Tensor[]) => {
      const parts = [];
      for (const x of xs) parts.push(await read(x));
      const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        all.set(p, at);
        at += p.length;
      }
      return all;
    };
    const ids = Int32Array.from((await out.ids.read()) as Int32Array);
    out.ids.dispose();
    return {
      lp: await read(out.lp),
      ent: await read(out.ent),
      kl: await read(out.kl),
      loss: await read(out.loss),
      ids,
      slp: await read(out.slp),
      tlp: await read(out.tlp),
      gh1: await read(out.gh1),
      gw1: await join(out.gw1),
      gh2: await read(out.gh2),
      gw2: await join(out.gw2),
    };
  }

  it('token log-probs, entropy and the top-K KL equal the one-tensor ops, forward and backward', async () => {
    const a = await run(true);
    const b = await run(false);
    expectClose(a.lp, b.lp, 1e-5, 1e-5, 'log-probs');
    expectClose(a.ent, b.ent, 1e-5, 1e-5, 'entropy');
    expectClose(a.kl, b.kl, 1e-5, 1e-6, 'KL per token');
    expectClose(a.loss, b.loss, 1e-5, 1e-6, 'KL loss');
    expect([...a.ids]).toEqual([...b.ids]);
    expectClose(a.slp, b.slp, 1e-5, 1e-5, 'student log-probs');
    expectClose(a.tlp, b.tlp, 1e-5, 1e-5, 'teacher log-probs');
    expectClose(a.gh1, b.gh1, 1e-4, 1e-5, 'd h (log-probs)');
    expectClose(a.gw1, b.gw1, 1e-4, 1e-5, 'd W (log-probs)');
    expectClose(a.gh2, b.gh2, 1e-4, 1e-6, 'd h (KL)');
    expectClose(a.gw2, b.gw2, 1e-4, 1e-6, 'd W (KL)');
  });

  /** studentRowTerms' outputs and the gradients of sum(lp · up) + 0.3 · D (D only with klGrad), chunked or plain. */
  async function terms(chunked: boolean, klGrad: boolean) {
    const out = e.tidy(() => {
      const { hT, ws, student, teacher } = heads(chunked);
      const r = studentRowTerms(
        student,
        teacher,
        e.tensor(targets, [M], 'i32'),
        e.tensor(mask, [M]),
        { k: K, tail: true, direction: 'reverse' },
        klGrad,
      );
      const lossLp = sum(mul(r.logp, e.tensor(randn(M, 12), [M])));
      e.backward(klGrad ? add(lossLp, scaleOp(r.topk!.loss, 0.3)) : lossLp);
      const grads = [hT, ...ws].map((x) => {
        const g = e.keep(x.grad!);
        x.grad = null;
        return g;
      });
      return { values: [r.logp, r.entropy, r.topk!.perToken, r.topk!.loss].map((x) => e.keep(x)), grads };
    });
    const flat = async (xs: Tensor[]) => {
      const v: number[] = [];
      for (const x of xs) {
        v.push(...(await x.readF32()));
        x.dispose();
      }
      return Float32Array.from(v);
    };
    return { values: await flat(out.values), grads: await flat(out.grads) };
  }

  it.each([true, false])(
    'studentRowTerms: one pass over a chunked head gives the plain ops, forward and backward (KL trained: %s)',
    async (klGrad) => {
      const a = await terms(true, klGrad);
      const b = await terms(false, klGrad);
      expectClose(a.values, b.values, 1e-5, 1e-5, 'log-probs, entropy, KL per token, D');
      expectClose(a.grads, b.grads, 1e-4, 1e-5, 'd h and d W');
      // The KL's gradient is in there only when trained.
      const lpOnly = await terms(false, false);
      if (klGrad) expect(Math.max(...b.grads.map((g, i) => Math.abs(g - lpOnly.grads[i]!)))).toBeGreaterThan(1e-4);
    },
  );

  it('log-probs of a chunked sharded head: gradients match finite differences', async () => {
    const tg = e.tensor(targets, [M], 'i32');
    await gradCheck(
      e,
      [
        { name: 'h', data: h, shape: [M, D] },
        ...split(w, D, rows).map((s, k) => ({ name: `W${k}`, data: s, shape: [rows[k]!, D] })),
      ],
      (ts) => rowLogprobs(vocabHead(ts[0]!, ts.slice(1), scale, 2), tg),
      { samples: 8 },
    );
  });

  it('the top-K KL of a chunked sharded head: gradients match finite differences', async () => {
    const teacher = e.keep(e.tensor(t, [M, D]));
    const tw = e.keep(e.tensor(wt, [V, D]));
    const maskT = e.keep(e.tensor(mask, [M]));
    await gradCheck(
      e,
      [
        { name: 'h', data: h, shape: [M, D] },
        ...split(w, D, rows).map((s, k) => ({ name: `W${k}`, data: s, shape: [rows[k]!, D] })),
      ],
      (ts) =>
        rowTopkKl(
          vocabHead(ts[0]!, ts.slice(1), scale, 3),
          e.noGrad(() => vocabHead(teacher, [tw], scale, 2)),
          maskT,
          {
            k: K,
          },
        ).perToken,
      { samples: 8 },
    );
  });
});
