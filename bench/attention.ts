// Fused causal attention, forward and forward+backward, at a few sequence lengths; and (attention-tree) rows
// packed as prefix trees against the same sequences as separate rows.
import type { Engine } from '../src/gpu/engine.ts';
import { attention, type AttentionOptions } from '../src/gpu/ops/attention.ts';
import type { Tensor } from '../src/gpu/tensor.ts';
import { Rng } from '../src/env/random.ts';
import { packTree } from '../src/rl/tree.ts';
import { questionRollouts } from './rollouts.ts';
import { timeGpu, fmt } from './timing.ts';

export interface AttentionSize {
  B: number;
  Hq: number;
  Hkv: number;
  T: number;
  Dh: number;
}

const SIZES: AttentionSize[] = [
  { B: 1, Hq: 4, Hkv: 2, T: 128, Dh: 32 },
  { B: 1, Hq: 4, Hkv: 2, T: 512, Dh: 32 },
  { B: 2, Hq: 8, Hkv: 2, T: 256, Dh: 64 },
  { B: 1, Hq: 8, Hkv: 4, T: 1024, Dh: 64 },
];

export async function benchAttention(
  e: Engine,
  sizes: readonly AttentionSize[] = SIZES,
): Promise<Record<string, unknown>[]> {
  console.log('\nattention (causal, GQA), f32; FLOPs count the causal half of QKᵀ and PV');
  console.log('   B  Hq Hkv     T  Dh |  fwd ms  GFLOP/s | fwd+bwd ms  GFLOP/s');
  const rows: Record<string, unknown>[] = [];
  for (const { B, Hq, Hkv, T, Dh } of sizes) {
    const flops = 2 * 2 * B * Hq * ((T * (T + 1)) / 2) * Dh; // QKᵀ and PV, causal
    const mk = (H: number, seed: number) =>
      e.tensor(
        Float32Array.from({ length: B * H * T * Dh }, (_, i) => Math.sin(i * 0.37 + seed) * 0.5),
        [B, H, T, Dh],
      );
    const q = mk(Hq, 1);
    const k = mk(Hkv, 2);
    const v = mk(Hkv, 3);
    const fwd = await timeGpu(e, () => e.noGrad(() => attention(q, k, v).dispose()));
    for (const t of [q, k, v]) t.requiresGrad = true;
    const both = await timeGpu(e, () =>
      e.tidy(() => {
        const o = attention(q, k, v);
        e.backward(o, e.tensor(new Float32Array(o.size).fill(1), o.shape));
        for (const t of [q, k, v]) {
          t.grad?.dispose();
          t.grad = null;
        }
      }),
    );
    // backward is about 2.5x the forward's matmul work (dQ, dK, dV plus recomputing P)
    const gF = flops / fwd.msPerCall / 1e6;
    const gB = (3.5 * flops) / both.msPerCall / 1e6;
    console.log(
      `  ${String(B).padStart(2)} ${String(Hq).padStart(3)} ${String(Hkv).padStart(3)} ${String(T).padStart(5)} ${String(Dh).padStart(3)} | ${fmt(fwd.msPerCall, 2)} ${fmt(gF)} | ${fmt(both.msPerCall, 2)}   ${fmt(gB)}`,
    );
    rows.push({
      op: 'attention',
      B,
      Hq,
      Hkv,
      T,
      Dh,
      fwdMs: fwd.msPerCall,
      fwdGflops: gF,
      fwdBwdMs: both.msPerCall,
      fwdBwdGflops: gB,
    });
    for (const t of [q, k, v]) t.dispose();
  }
  return rows;
}

/**
 * One question's rollouts (a prompt, then answers that branch off each other) as one row packed as a prefix tree
 * (keyEnd), against the same sequences as separate left-padded rows, and against a plain causal row of the packed
 * length (what the mask costs, and what skipping subtrees saves, over a causal row of that length).
 */
export async function benchAttentionTree(e: Engine): Promise<Record<string, unknown>[]> {
  const REPEATS = 5;
  const shapes = [
    { Hq: 4, Hkv: 2, Dh: 24, prompt: 200, answer: 120, rollouts: 5 }, // piplay-tiny's heads, a demo-like group
    { Hq: 8, Hkv: 2, Dh: 64, prompt: 200, answer: 120, rollouts: 5 },
  ];
  console.log(`\nattention: prefix-tree row vs separate rows, f32; median of ${REPEATS} timings each`);
  console.log('  Hq Hkv  Dh | seqs | tokens: tree seqs padded | layout         |  fwd ms | fwd+bwd ms');
  const rows: Record<string, unknown>[] = [];
  for (const s of shapes) {
    // A question's rollouts, sharing the prompt and parts of their turns.
    const seqs = questionRollouts(new Rng('attention-tree'), 1 << 20, s.rollouts, s.prompt, s.answer).map((x) => x.ids);
    const tree = packTree(seqs);
    const N = tree.ids.length;
    const R = seqs.length;
    const L = Math.max(...seqs.map((x) => x.length));
    const real = seqs.reduce((a, x) => a + x.length, 0); // the sequences' tokens, unpadded
    const mk = (B: number, H: number, T: number, seed: number) =>
      e.tensor(
        Float32Array.from({ length: B * H * T * s.Dh }, (_, i) => Math.sin(i * 0.37 + seed) * 0.5),
        [B, H, T, s.Dh],
      );
    const layouts = [
      {
        name: 'tree (keyEnd)',
        qkv: [mk(1, s.Hq, N, 1), mk(1, s.Hkv, N, 2), mk(1, s.Hkv, N, 3)],
        opts: { keyEnd: e.keep(e.tensor(tree.end, [1, N], 'i32')) } as AttentionOptions,
      },
      {
        name: 'separate rows',
        qkv: [mk(R, s.Hq, L, 1), mk(R, s.Hkv, L, 2), mk(R, s.Hkv, L, 3)],
        opts: {
          keyStart: e.keep(
            e.tensor(
              Int32Array.from(seqs, (x) => L - x.length),
              [R],
              'i32',
            ),
          ),
        } as AttentionOptions,
      },
      { name: 'causal, N long', qkv: [mk(1, s.Hq, N, 1), mk(1, s.Hkv, N, 2), mk(1, s.Hkv, N, 3)], opts: {} },
    ];
    const fwd: number[][] = layouts.map(() => []);
    const both: number[][] = layouts.map(() => []);
    for (let r = 0; r < REPEATS; r++) {
      // Interleaved, so that a busy spell of the shared machine hits every layout alike.
      for (const [n, { qkv, opts }] of layouts.entries()) {
        const [q, k, v] = qkv as [Tensor, Tensor, Tensor];
        for (const t of qkv) t.requiresGrad = false;
        fwd[n]!.push((await timeGpu(e, () => e.noGrad(() => attention(q, k, v, opts).dispose()), 200, 1)).msPerCall);
        for (const t of qkv) t.requiresGrad = true;
        const t = await timeGpu(
          e,
          () =>
            e.tidy(() => {
              const o = attention(q, k, v, opts);
              e.backward(o, e.tensor(new Float32Array(o.size).fill(1), o.shape));
              for (const x of qkv) {
                x.grad?.dispose();
                x.grad = null;
              }
            }),
          200,
          1,
        );
        both[n]!.push(t.msPerCall);
      }
    }
    for (const [n, { name, qkv, opts }] of layouts.entries()) {
      const f = median(fwd[n]!);
      const b = median(both[n]!);
      const tokens = n === 1 ? R * L : N;
      console.log(
        `  ${String(s.Hq).padStart(2)} ${String(s.Hkv).padStart(3)} ${String(s.Dh).padStart(3)} | ${String(R).padStart(4)} | ` +
          `${String(N).padStart(12)} ${String(real).padStart(4)} ${String(R * L).padStart(6)} | ${name.padEnd(14)} | ` +
          `${fmt(f, 2)} | ${fmt(b, 2)}`,
      );
      rows.push({
        op: 'attention-tree',
        ...s,
        layout: name,
        tokens,
        fwdMs: f,
        fwdBwdMs: b,
        fwdAll: fwd[n],
        bothAll: both[n],
      });
      for (const t of qkv) t.dispose();
      opts.keyEnd?.dispose();
      opts.keyStart?.dispose();
    }
  }
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
