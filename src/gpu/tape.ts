// The autograd tape: ops record nodes while any input has `requiresGrad`; `backward(loss)` runs them in reverse,
// accumulating `.grad` on the leaves.
import { add } from './ops/elementwise.ts';
import type { Engine, Tensor } from './tensor.ts';

export interface TapeNode {
  inputs: Tensor[];
  outputs: Tensor[];
  /** Given the gradients of the outputs (null where none flowed), returns those of the inputs. */
  backward: (gradOutputs: (Tensor | null)[]) => (Tensor | null)[];
  /** Tensors held alive for the backward pass. */
  saved: Tensor[];
}

export class Tape {
  private nodes: TapeNode[] = [];
  private enabled = true;

  constructor(private readonly engine: Engine) {}

  /** Whether ops record (false inside `noGrad`). */
  get recording(): boolean {
    return this.enabled;
  }

  /** Runs `fn` without recording gradients. */
  noGrad<T>(fn: () => T): T {
    const prev = this.enabled;
    this.enabled = false;
    try {
      return fn();
    } finally {
      this.enabled = prev;
    }
  }

  /**
   * Called by ops after computing `outputs` from `inputs`. When recording and some input needs a gradient,
   * marks the outputs and pushes a tape node. The node holds its inputs, outputs and `save`d tensors alive
   * until the tape is cleared, even if the caller disposes them.
   */
  record(inputs: Tensor[], outputs: Tensor[], backward: TapeNode['backward'], save: Tensor[] = []): void {
    if (!this.enabled || !inputs.some((t) => t.requiresGrad)) return;
    for (const o of outputs) o.requiresGrad = true;
    const saved = [...inputs, ...outputs, ...save];
    for (const t of saved) t.hold();
    this.nodes.push({ inputs, outputs, backward, saved });
  }

  /**
   * Back-propagates from `loss` (a scalar unless `grad` is given) through the tape, accumulating into
   * `.grad` of every leaf tensor with `requiresGrad` (one that no recorded op produced). Clears the tape.
   */
  backward(loss: Tensor, grad?: Tensor): void {
    const grads = new Map<Tensor, Tensor>();
    const produced = new Set<Tensor>();
    for (const node of this.nodes) for (const o of node.outputs) produced.add(o);
    const leaves = new Set<Tensor>();
    const e = this.engine;
    const leave = e.profile?.enterOuter('backward');
    try {
      this.noGrad(() =>
        e.tidy(() => {
          grads.set(loss, grad ?? e.tensor(new Float32Array(loss.size).fill(1), loss.shape));
          for (let n = this.nodes.length - 1; n >= 0; n--) {
            const node = this.nodes[n]!;
            const gOut = node.outputs.map((o) => grads.get(o) ?? null);
            if (gOut.every((g) => g === null)) continue;
            const gIn = node.backward(gOut);
            node.inputs.forEach((input, k) => {
              const g = gIn[k];
              if (!g || !input.requiresGrad) return;
              const prev = grads.get(input);
              grads.set(input, prev ? addInto(prev, g) : g);
              if (!produced.has(input)) leaves.add(input);
            });
          }
          for (const leaf of leaves) {
            const g = grads.get(leaf)!;
            const shaped = sameShape(g.shape, leaf.shape) ? g : g.reshape(leaf.shape);
            if (leaf.grad) {
              const old = leaf.grad;
              leaf.grad = e.keep(addInto(old, shaped));
              old.dispose();
            } else {
              leaf.grad = e.keep(shaped);
            }
          }
        }),
      );
    } finally {
      leave?.();
      this.clear();
    }
  }

  /**
   * Runs `fn` on a fresh tape that records, then returns to this one as it was: a block recomputed inside a
   * backward pass (src/gpu/recompute.ts) records and back-propagates its own ops without touching the nodes
   * the outer backward is walking.
   */
  nested<T>(fn: () => T): T {
    const nodes = this.nodes;
    const enabled = this.enabled;
    this.nodes = [];
    this.enabled = true;
    try {
      return fn();
    } finally {
      this.clear();
      this.nodes = nodes;
      this.enabled = enabled;
    }
  }

  /** Drops the tape and releases what it held (e.g. after a forward pass used only for inference). */
  clear(): void {
    for (const node of this.nodes) for (const t of node.saved) t.unhold();
    this.nodes = [];
  }

  get length(): number {
    return this.nodes.length;
  }
}

/** a + b (b reshaped to a's shape): gradients are summed under noGrad, so `add` records nothing. */
function addInto(a: Tensor, b: Tensor): Tensor {
  return add(a, sameShape(a.shape, b.shape) ? b : b.reshape(a.shape));
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, k) => d === b[k]);
}
