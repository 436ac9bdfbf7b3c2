// A synthetic warm-up for copying: rows of random token spans, each followed by the same span again,
// with the loss on the repeats only. Everything the agent does copies a span from its context (the
// question's entity into its query, a retrieved sentence into its notes, the value into its answer), and
// the circuit for that (induction heads) is what a tiny model learns last: it had not formed after 3.4M
// tokens of transcripts, and formed after ~900 copy-task steps interleaved with text (--copy-every 2; see
// public/models/piplay-tiny/TRAINING.md). Spans have random lengths, so no fixed-offset (positional) head
// can solve the task; only matching the previous token's earlier occurrence does.
import type { Rng } from '../env/random.ts';
import type { Batch } from './pack.ts';

export interface CopyTaskSettings {
  /** Token ids spans are drawn from (ordinary text tokens, no control tokens or tags). */
  ids: readonly number[];
  /** Span lengths, [min, max] (default [4, 24]). */
  span?: readonly [number, number];
}

/** `rows` rows of `seq` tokens: span, span again, span', span' again, ... */
export function copyTaskBatch(rng: Rng, rows: number, seq: number, s: CopyTaskSettings): Batch {
  if (s.ids.length < 2) throw new Error('copy task: needs at least 2 token ids to draw from');
  const [lo, hi] = s.span ?? [4, 24];
  const ids = new Int32Array(rows * seq);
  const targets = new Int32Array(rows * seq);
  const mask = new Float32Array(rows * seq);
  for (let r = 0; r < rows; r++) {
    const row: number[] = [];
    const repeat: number[] = [];
    while (row.length < seq + 1) {
      const n = lo + rng.int(hi - lo + 1);
      const span = Array.from({ length: n }, () => s.ids[rng.int(s.ids.length)]!);
      row.push(...span, ...span);
      repeat.push(...span.map(() => 0), ...span.map(() => 1));
    }
    for (let t = 0; t < seq; t++) {
      ids[r * seq + t] = row[t]!;
      targets[r * seq + t] = row[t + 1]!;
      // Position t predicts row[t + 1]; only repeated tokens past a span's first are determined by context.
      mask[r * seq + t] = repeat[t + 1]! && repeat[t]! ? 1 : 0;
    }
  }
  return { ids, targets, mask, rows, seq };
}
