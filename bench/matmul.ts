// Matmul GFLOP/s: piplay's kernel vs tfjs-backend-webgpu on the same adapter.
import type { Engine } from '../src/gpu/engine.ts';
import { matmul, setMatmulVariant, type MatmulVariant } from '../src/gpu/ops/matmul.ts';
import { timeGpu, fmt } from './timing.ts';

export const MATMUL_SIZES: [number, number, number][] = [
  [128, 128, 128],
  [256, 256, 256],
  [512, 512, 512],
  [256, 1536, 512], // a tiny model's MLP up-projection over 256 tokens
  [333, 257, 129], // awkward, non-tile sizes
];

type TF = typeof import('@tensorflow/tfjs-core');

/** Alternating rounds per shape and the minimum time of each side's round. */
const ROUNDS = 3;
const ROUND_MS = 150;

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[Math.floor(s.length / 2)]!;
}

async function loadTfjs(e: Engine): Promise<TF | null> {
  try {
    const nav = ((globalThis as { navigator?: object }).navigator ??= {}) as object;
    if (!('gpu' in nav)) Object.defineProperty(nav, 'gpu', { value: e.host.gpu, configurable: true });
    const tf = await import('@tensorflow/tfjs-core');
    await import('@tensorflow/tfjs-backend-webgpu');
    if (!(await tf.setBackend('webgpu'))) return null;
    return tf;
  } catch (err) {
    console.log(`  (tfjs-backend-webgpu unavailable: ${(err as Error).message})`);
    return null;
  }
}

async function timeTf(tf: TF, M: number, N: number, K: number, minMs = 400, warmup = 2): Promise<number> {
  const a = tf.randomNormal([M, K]);
  const b = tf.randomNormal([K, N]);
  const run = () => tf.tidy(() => tf.matMul(a, b));
  for (let k = 0; k < warmup; k++) await run().data();
  let calls = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs || calls < 3) {
    const outs = Array.from({ length: 4 }, run);
    await outs[3]!.data();
    outs.forEach((o) => o.dispose());
    calls += 4;
  }
  const ms = (performance.now() - t0) / calls;
  a.dispose();
  b.dispose();
  return ms;
}

/** piplay's kernel (the device's default, or `variants` one after another) beside tfjs-backend-webgpu. */
export async function benchMatmul(
  e: Engine,
  sizes: readonly [number, number, number][] = MATMUL_SIZES,
  variants: readonly (MatmulVariant | null)[] = [null],
): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const v of variants) {
    setMatmulVariant(v);
    try {
      rows.push(...(await benchVariant(e, sizes, v)));
    } finally {
      setMatmulVariant(null);
    }
  }
  return rows;
}

async function benchVariant(
  e: Engine,
  sizes: readonly [number, number, number][],
  variant: MatmulVariant | null,
): Promise<Record<string, unknown>[]> {
  const tf = await loadTfjs(e);
  console.log(`\nmatmul C[M,N] = A[M,K] B[K,N], f32, piplay kernel: ${variant ?? 'the default'}`);
  console.log(`      M     N     K |  piplay ms  GFLOP/s | tfjs ms  GFLOP/s | piplay/tfjs`);
  const rows: Record<string, unknown>[] = [];
  for (const [M, N, K] of sizes) {
    const flops = 2 * M * N * K;
    const a = e.tensor(
      Float32Array.from({ length: M * K }, (_, i) => Math.sin(i)),
      [M, K],
    );
    const b = e.tensor(
      Float32Array.from({ length: K * N }, (_, i) => Math.cos(i)),
      [K, N],
    );
    // piplay and tfjs alternate over ROUNDS rounds and each keeps its median, so a change in the machine's load
    // (other jobs on a shared CPU driver) falls on both sides of the ratio.
    const oursMs: number[] = [];
    const tfMsAll: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const warmup = r === 0 ? 2 : 0;
      oursMs.push((await timeGpu(e, () => e.noGrad(() => matmul(a, b).dispose()), ROUND_MS, warmup)).msPerCall);
      if (tf) tfMsAll.push(await timeTf(tf, M, N, K, ROUND_MS, warmup));
    }
    const ours = { msPerCall: median(oursMs) };
    const gOurs = flops / ours.msPerCall / 1e6;
    let line = `  ${String(M).padStart(5)} ${String(N).padStart(5)} ${String(K).padStart(5)} | ${fmt(ours.msPerCall, 3)} ${fmt(gOurs)} |`;
    const row: Record<string, unknown> = {
      op: 'matmul',
      variant: variant ?? 'default',
      M,
      N,
      K,
      ms: ours.msPerCall,
      gflops: gOurs,
    };
    if (tf) {
      const tfMs = median(tfMsAll);
      const gTf = flops / tfMs / 1e6;
      line += ` ${fmt(tfMs, 3)} ${fmt(gTf)} | ${fmt(gOurs / gTf)}x`;
      Object.assign(row, { tfjsMs: tfMs, tfjsGflops: gTf, ratio: gOurs / gTf });
    } else line += '      n/a      n/a |';
    console.log(line);
    rows.push(row);
    a.dispose();
    b.dispose();
  }
  return rows;
}
