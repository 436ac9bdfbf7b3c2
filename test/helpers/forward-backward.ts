// Runs an op forward and back through the tape with a given upstream gradient, for comparing both
// directions with a float64 CPU reference: L = sum(y * upstream), so d/d(input) is the op's vector-Jacobian
// product with `upstream`.
import { readFileSync } from 'node:fs';
import type { Engine } from '../../src/gpu/engine.ts';
import type { DType, Tensor } from '../../src/gpu/tensor.ts';
import { mul, sum } from '../../src/gpu/ops/elementwise.ts';
import { loadFixture, runFixture } from '../../src/fixtures/runner.ts';

export interface OpInput {
  data: ArrayLike<number>;
  shape: number[];
  dtype?: DType;
  /** Wants a gradient (default: f32 inputs do). */
  grad?: boolean;
}

export async function forwardBackward(
  e: Engine,
  inputs: OpInput[],
  forward: (ts: Tensor[]) => Tensor,
  upstream: Float32Array,
): Promise<{ y: Float32Array; grads: (Float32Array | null)[] }> {
  const kept = e.tidy(() => {
    const ts = inputs.map((x) => {
      const t = e.tensor(x.data, x.shape, x.dtype ?? 'f32');
      t.requiresGrad = x.grad ?? (x.dtype ?? 'f32') === 'f32';
      return t;
    });
    const y = forward(ts);
    e.backward(sum(mul(y, e.tensor(upstream, y.shape))));
    const grads = ts.map((t) => {
      const g = t.grad;
      t.grad = null;
      return g ? e.keep(g) : null;
    });
    return { y: e.keep(y), grads };
  });
  const y = await kept.y.readF32();
  kept.y.dispose();
  const grads: (Float32Array | null)[] = [];
  for (const g of kept.grads) {
    grads.push(g ? await g.readF32() : null);
    g?.dispose();
  }
  return { y, grads };
}

/** Runs one shared PyTorch fixture (../shared/fixtures/<file>) and throws with the worst element if it fails. */
export async function expectFixture(e: Engine, file: string): Promise<void> {
  const dir = new URL('../../../shared/fixtures/', import.meta.url);
  const fx = await loadFixture(readFileSync(new URL(file, dir), 'utf8'), file);
  const r = await runFixture(e, fx, file, dir.pathname);
  if (!r.ok) throw new Error(`fixture ${file}: worst ${r.worst.toFixed(2)}x tolerance: ${r.detail}`);
}
