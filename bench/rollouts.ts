// Synthetic rollouts of a question for the training-pass and attention benchmarks: a prompt the rollouts share,
// then turns each shares with an earlier one for a while before going its own way, as a question's rollouts do
// (on the demo a question's tokens hold about half as many distinct prefixes).
import type { Rng } from '../src/env/random.ts';
import type { MaskedSequence } from '../src/rl/batch.ts';

/** A question's n rollouts: `prompt` tokens, then turns rollouts share for a while before they part. */
export function questionRollouts(rng: Rng, V: number, n: number, prompt: number, response: number): MaskedSequence[] {
  const head = Array.from({ length: prompt }, () => rng.int(V));
  const out: MaskedSequence[] = [];
  for (let k = 0; k < n; k++) {
    const from = k > 0 && rng.next() < 0.75 ? out[rng.int(k)]! : null;
    const shared = from ? rng.int(from.ids.length - prompt + 1) : 0;
    const ids = [...head, ...(from ? from.ids.slice(prompt, prompt + shared) : [])];
    const length = prompt + Math.max(shared + 8, Math.round(response * (0.6 + 0.8 * rng.next())));
    while (ids.length < length) ids.push(rng.int(V));
    // Every fourth stretch of 40 tokens is a tool reply (mask 0).
    out.push({ ids, mask: ids.map((_, t) => (t >= prompt && Math.floor((t - prompt) / 40) % 4 !== 3 ? 1 : 0)) });
  }
  return out;
}
