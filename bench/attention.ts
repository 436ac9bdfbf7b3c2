// Fused causal attention, forward and forward+backward, at a few sequence lengths.
import type { Engine } from '../src/gpu/engine.ts';
import { attention } from '../src/gpu/ops/attention.ts';
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
