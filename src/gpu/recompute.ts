// Activation recompute (gradient checkpointing) of one block, e.g. a decoder layer: the forward pass runs the
// block without a tape and keeps only its output; the backward pass runs the block again from its input on a
// tape of its own and back-propagates through it. A pass then keeps one tensor per block (its input) instead
// of every intermediate of every block, and a block's intermediates exist only while its backward runs; the
// price is one more forward of each block. The block must compute the same thing twice (no sampling).
import type { Engine } from './engine.ts';
import type { Tensor } from './tensor.ts';

/**
 * `block(x)`, recorded on the tape as one node that recomputes the block on the backward pass. `params` are
 * the tensors the block reads that may need gradients (they accumulate into their `.grad` as they would
 * without recompute); `saved` are other tensors it reads (e.g. positions), held alive until the backward.
 */
export function recomputed(
  e: Engine,
  x: Tensor,
  params: readonly Tensor[],
  saved: Tensor[],
  block: (x: Tensor) => Tensor,
): Tensor {
  const trained = params.filter((p) => p.requiresGrad);
  if (!e.recording || (!x.requiresGrad && trained.length === 0)) return block(x);
  const y = e.noGrad(() => e.tidy(() => block(x)));
  const backward = ([gy]: (Tensor | null)[]): (Tensor | null)[] => {
    const none = trained.map(() => null);
    if (!gy) return [null, ...none];
    const gx = e.tidy(() =>
      e.nestedTape(() => {
        // A fresh view of x is the leaf of the recomputed block, so its gradient is the block's input gradient.
        const input = e.noGrad(() => x.reshape(x.shape));
        input.requiresGrad = x.requiresGrad;
        e.backward(block(input), gy);
        const g = input.grad;
        input.grad = null;
        return g ? e.unkeep(g) : null;
      }),
    );
    return [gx, ...none];
  };
  e.record([x, ...trained], [y], backward, saved);
  return y;
}
