// Finite-difference gradient checks through the autograd tape.
//
// The loss is L = sum_o sum(output_o * upstream_o) with fixed random upstreams, so every output element
// matters. Analytic gradients come from `engine.backward`; numeric ones from central differences of the
// same GPU forward pass (f32), at a sample of coordinates per input to keep CPU-driver runs short.
import type { Engine } from '../../src/gpu/engine.ts';
import type { Tensor, DType } from '../../src/gpu/tensor.ts';
import { mul, sum, add } from '../../src/gpu/ops/elementwise.ts';
import { randn, rng } from './random.ts';

export interface GradInput {
  name: string;
  data: Float32Array | Int32Array;
  shape: number[];
  dtype?: DType;
  /** Check this input's gradient (default true for f32). */
  grad?: boolean;
}

export interface GradCheckOptions {
  h?: number;
  rtol?: number;
  atol?: number;
  /** Coordinates checked per input (default 12). */
  samples?: number;
  seed?: number;
}

export async function gradCheck(
  e: Engine,
  inputs: GradInput[],
  forward: (ts: Tensor[]) => Tensor | Tensor[],
  opts: GradCheckOptions = {},
): Promise<void> {
  const { h = 1e-2, rtol = 2e-2, atol = 2e-3, samples = 12, seed = 1 } = opts;
  const wants = inputs.map((x) => x.grad ?? (x.dtype ?? 'f32') === 'f32');
  let upstreams: Float32Array[] | null = null;

  const run = (datas: (Float32Array | Int32Array)[], withGrad: boolean) =>
    e.tidy(() => {
      const ts = inputs.map((x, k) => {
        const t = e.tensor(datas[k]!, x.shape, x.dtype ?? 'f32');
        t.requiresGrad = withGrad && wants[k]!;
        return t;
      });
      const outs = [forward(ts)].flat();
      upstreams ??= outs.map((o, k) => randn(o.size, seed * 100 + k));
      let L: Tensor | null = null;
      outs.forEach((o, k) => {
        const term = sum(mul(o, e.tensor(upstreams![k]!, o.shape)));
        L = L ? add(L, term) : term;
      });
      const loss = L!;
      if (!withGrad) return { loss: e.keep(loss), grads: [] as (Tensor | null)[] };
      e.backward(loss);
      const grads = ts.map((t) => {
        const g = t.grad;
        t.grad = null;
        return g ? e.keep(g) : null;
      });
      return { loss: e.keep(loss), grads };
    });

  const base = inputs.map((x) => x.data);
  const analytic = run(base, true);
  const r = rng(seed);
  for (let k = 0; k < inputs.length; k++) {
    if (!wants[k]) continue;
    const x = inputs[k]!;
    const g = analytic.grads[k];
    if (!g) throw new Error(`gradCheck: no gradient reached input '${x.name}'`);
    const ga = await g.read();
    const n = x.data.length;
    const coords = n <= samples ? [...Array(n).keys()] : Array.from({ length: samples }, () => Math.floor(r() * n));
    for (const c of coords) {
      const eval1 = async (delta: number) => {
        const d = Float32Array.from(x.data as Float32Array);
        d[c] = d[c]! + delta;
        const datas = base.map((b, j) => (j === k ? d : b));
        const { loss } = run(datas, false);
        const v = (await loss.read())[0]!;
        loss.dispose();
        return v;
      };
      const fd = ((await eval1(h)) - (await eval1(-h))) / (2 * h);
      const an = ga[c]!;
      if (!(Math.abs(an - fd) <= atol + rtol * Math.max(Math.abs(fd), Math.abs(an)))) {
        throw new Error(`gradCheck: d/d${x.name}[${c}] analytic ${an} vs finite difference ${fd}`);
      }
    }
    g.dispose();
  }
  analytic.loss.dispose();
}
