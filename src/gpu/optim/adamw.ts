// AdamW over a list of parameter tensors, as torch.optim.AdamW with torch.nn.utils.clip_grad_norm_ before
// each step. Moments live on the GPU; the global gradient norm is computed and applied there too, so a
// step never waits for the GPU.
import type { Engine } from '../engine.ts';
import type { Tensor } from '../tensor.ts';
import { adamwUpdate } from '../ops/adamw.ts';
import { gradNorm } from '../ops/grad_norm.ts';

export interface AdamWOptions {
  /** Learning rate (default 1e-3, as torch). */
  lr?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay: param *= 1 - lr * weightDecay each step (default 0.01, as torch). */
  weightDecay?: number;
  /** Clip gradients to this global L2 norm before each step; null, 0 or Infinity: no clipping (default). */
  maxGradNorm?: number | null;
}

/** Optimizer state for checkpoints: host copies of the moments, in the order the parameters were given. */
export interface AdamWState {
  /** Number of `step()` calls. */
  step: number;
  params: { name?: string; shape: number[]; step: number; m: Float32Array; v: Float32Array }[];
}

export class AdamW {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  maxGradNorm: number | null;
  /** Number of `step()` calls. */
  stepCount = 0;
  private readonly m: Tensor[];
  private readonly v: Tensor[];
  /** Per parameter, as torch: a parameter without a gradient in a step is skipped and does not count it. */
  private readonly steps: number[];

  constructor(
    readonly params: Tensor[],
    opts: AdamWOptions = {},
  ) {
    this.lr = opts.lr ?? 1e-3;
    this.beta1 = opts.beta1 ?? 0.9;
    this.beta2 = opts.beta2 ?? 0.999;
    this.eps = opts.eps ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0.01;
    this.maxGradNorm = opts.maxGradNorm ?? null;
    if (params.length === 0) throw new Error('piplay: AdamW needs at least one parameter');
    if (new Set(params).size !== params.length) throw new Error('piplay: AdamW was given the same parameter twice');
    for (const p of params) {
      if (p.dtype !== 'f32') throw new Error(`piplay: AdamW trains f32 parameters, got ${p.describe()}`);
    }
    const e = params[0]!.engine;
    this.m = params.map((p) => e.keep(e.zeros(p.shape)));
    this.v = params.map((p) => e.keep(e.zeros(p.shape)));
    this.steps = params.map(() => 0);
  }

  /**
   * The global L2 norm of the current gradients as a scalar tensor (the caller disposes it), so a caller can
   * check it before `step(lr, norm)` applies anything; zero when no parameter has a gradient.
   */
  gradNorm(): Tensor {
    const e = this.params[0]!.engine;
    return e.noGrad(() => {
      const live = this.params.flatMap((p) => (p.grad ? [p.grad] : []));
      return live.length ? gradNorm(live) : e.zeros([]);
    });
  }

  /**
   * One step on every parameter that has a gradient (clipped first when maxGradNorm is set). Returns the
   * pre-clip global gradient norm as a scalar tensor (the caller disposes it); reading it is optional.
   * `norm`, from gradNorm() over the same gradients, is used (and returned) instead of computing it again.
   */
  step(lr: number = this.lr, given?: Tensor): Tensor {
    const e = this.params[0]!.engine;
    this.stepCount++;
    const leave = e.profile?.enterOuter('optimizer');
    try {
      return this.update(e, lr, given);
    } finally {
      leave?.();
    }
  }

  private update(e: Engine, lr: number, given?: Tensor): Tensor {
    return e.noGrad(() => {
      const live = this.params.flatMap((p, k) => (p.grad ? [k] : []));
      if (live.length === 0) return given ?? e.zeros([]);
      const norm = given ?? gradNorm(live.map((k) => this.params[k]!.grad!));
      for (const k of live) {
        this.steps[k]!++;
        adamwUpdate(
          this.params[k]!,
          this.params[k]!.grad!,
          this.m[k]!,
          this.v[k]!,
          {
            lr,
            beta1: this.beta1,
            beta2: this.beta2,
            eps: this.eps,
            weightDecay: this.weightDecay,
            step: this.steps[k]!,
            maxGradNorm: this.maxGradNorm,
          },
          norm,
        );
      }
      return norm;
    });
  }

  /** Drops every parameter's gradient (torch's zero_grad(set_to_none=True)). */
  zeroGrad(): void {
    for (const p of this.params) {
      p.grad?.dispose();
      p.grad = null;
    }
  }

  /** Copies the state to the host (flushes pending GPU work). */
  async state(): Promise<AdamWState> {
    const params: AdamWState['params'] = [];
    for (let k = 0; k < this.params.length; k++) {
      const p = this.params[k]!;
      params.push({
        ...(p.name !== undefined ? { name: p.name } : {}),
        shape: [...p.shape],
        step: this.steps[k]!,
        m: (await this.m[k]!.read()) as Float32Array,
        v: (await this.v[k]!.read()) as Float32Array,
      });
    }
    return { step: this.stepCount, params };
  }

  /** Restores a state from `state()` of an optimizer over parameters of the same shapes, in the same order. */
  loadState(s: AdamWState): void {
    if (s.params.length !== this.params.length) {
      throw new Error(
        `piplay: AdamW.loadState: the state has ${s.params.length} parameters, this optimizer ${this.params.length}`,
      );
    }
    const e = this.params[0]!.engine;
    s.params.forEach((ps, k) => {
      const p = this.params[k]!;
      const what = `parameter ${k}${p.name ? ` '${p.name}'` : ''}`;
      if (ps.m.length !== p.size || ps.v.length !== p.size) {
        throw new Error(
          `piplay: AdamW.loadState: ${what} ${p.describe()} does not match the state's shape [${ps.shape.join(', ')}]`,
        );
      }
      if (!(Number.isInteger(ps.step) && ps.step >= 0))
        throw new Error(`piplay: AdamW.loadState: ${what} has step ${ps.step}`);
    });
    s.params.forEach((ps, k) => {
      e.write(this.m[k]!, ps.m);
      e.write(this.v[k]!, ps.v);
      this.steps[k] = ps.step;
    });
    this.stepCount = s.step;
  }

  /** Frees the moment tensors. */
  dispose(): void {
    for (const t of [...this.m, ...this.v]) t.dispose();
  }
}
