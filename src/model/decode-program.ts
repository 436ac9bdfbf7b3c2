// A fused decoding step's dispatches for one batch over one KV cache (src/model/decode-step.ts), prepared once and
// recorded at every step: their pipelines, uniforms and bind groups are made when the batch starts, not at each
// dispatch (a bind group costs 35-40 µs in Dawn on lavapipe, and more than the dispatch it serves on a GPU). What
// changes from step to step (the position and the cache slot) the kernels read from the call's state buffer, so
// every step's params and buffers are the same: the rows' embeddings, the cache, the weights, and the step's own
// intermediates (the attention output, the MLP activations and the logits), which the program owns.
import type { DispatchSpec, Engine, PreparedDispatch } from '../gpu/engine.ts';
import { Tensor } from '../gpu/tensor.ts';
import type { KVCache } from './decoder.ts';

/** Shapes of the step's intermediates; logits null where the LM head is not fused (decode-step.ts). */
export interface StepShapes {
  o: number[];
  act: number[];
  logits: number[] | null;
}

export class StepProgram {
  /** The step's logits [n, vocab] (null where the head runs as general ops). */
  readonly logits: Tensor | null = null;
  private readonly owned: Tensor[] = [];
  /** Every tensor the prepared bind groups hold (checked alive at each run: a freed buffer may be reused). */
  private readonly bound: Tensor[] = [];
  private readonly keys: readonly Tensor[];
  private readonly values: readonly Tensor[];
  private readonly capacity: number;
  private readonly prepared: PreparedDispatch[] = [];

  constructor(
    private readonly e: Engine,
    readonly n: number,
    cache: KVCache,
    readonly len0: number,
    readonly x: Tensor,
    specs: (bufs: { o: Tensor; act: Tensor; logits: Tensor | null }) => DispatchSpec[],
    shapes: StepShapes,
  ) {
    this.keys = [...cache.keys];
    this.values = [...cache.values];
    this.capacity = cache.capacity;
    try {
      const own = (shape: number[]) => {
        const t = e.keep(e.empty(shape));
        this.owned.push(t);
        return t;
      };
      const o = own(shapes.o);
      const act = own(shapes.act);
      this.logits = shapes.logits ? own(shapes.logits) : null;
      for (const spec of specs({ o, act, logits: this.logits })) {
        this.prepared.push(e.prepare(spec));
        for (const b of Object.values(spec.bindings))
          if (b instanceof Tensor && !this.bound.includes(b)) this.bound.push(b);
      }
    } catch (err) {
      this.dispose();
      throw err;
    }
  }

  /** Whether this program is the step of `n` rows over `cache` at `len0` reading `x`. */
  serves(n: number, cache: KVCache, len0: number, x: Tensor): boolean {
    return (
      n === this.n &&
      len0 === this.len0 &&
      x === this.x &&
      cache.capacity === this.capacity &&
      cache.keys.every((k, l) => k === this.keys[l]) &&
      cache.values.every((v, l) => v === this.values[l])
    );
  }

  /** Records the step. */
  run(): void {
    const gone = this.bound.find((t) => t.isDisposed);
    if (gone) throw new Error(`piplay: a decoding step binds ${gone.describe()}, which was freed`);
    for (const d of this.prepared) this.e.dispatchPrepared(d);
  }

  dispose(): void {
    for (const d of this.prepared) this.e.release(d);
    this.prepared.length = 0;
    for (const t of this.owned) t.dispose();
  }
}
