// Where a call's prefill splits its columns (src/model/generate.ts). The rows' new tokens are their last ones,
// right-aligned at column L, so a chunk of columns [t0, t0 + T) runs every row whose new tokens start before its
// end, padding included: a row whose tokens start inside the chunk pays for the columns before them. Uniform
// chunks from the longest row's start paid a fifth of an iteration's prefill for such columns (bench/NOTES.md,
// round 18). Here the chunk edges fall where rows' new tokens start, chosen to minimise the columns run plus a
// fixed cost per chunk (a forward pass of many small dispatches), each chunk holding at most `budget` tokens
// (rows x columns; one column at least) as the memory plan sizes it.

/** A chunk's fixed cost, in tokens: about what a forward pass's dispatches cost beyond its tokens on lavapipe. */
export const CHUNK_COST = 32;

/**
 * The chunks [t0, T] (first column, columns), left to right, of a prefill over columns [L - max(fresh), L) whose
 * rows have fresh[k] new tokens each (their last ones); each chunk holds at most max(1, floor(budget / m))
 * columns, m being the rows it runs. Every column with a new token is in exactly one chunk, and the last chunk ends
 * at L and runs every row.
 */
export function prefillChunks(fresh: readonly number[], L: number, budget: number): [number, number][] {
  // Distances from the end: the distinct new-token counts, ascending, after 0. Between consecutive ones d[i] and
  // d[i + 1] the same rows run: those with more than d[i] new tokens.
  const d = [0, ...new Set(fresh.filter((f) => f > 0))].sort((a, b) => a - b);
  const k = d.length - 1;
  if (k === 0) return [];
  const rowsPast = d.map((di) => fresh.filter((f) => f > di).length);
  const widest = (m: number) => Math.max(1, Math.floor(budget / m));
  // best[j]: the cheapest cover of distances (0, d[j]]; from[j] the start of its last chunk.
  const best = new Array<number>(k + 1).fill(Number.POSITIVE_INFINITY);
  const from = new Array<number>(k + 1).fill(0);
  best[0] = 0;
  for (let j = 1; j <= k; j++) {
    for (let i = 0; i < j; i++) {
      const w = d[j]! - d[i]!;
      const cost = best[i]! + w * rowsPast[i]! + CHUNK_COST * Math.ceil(w / widest(rowsPast[i]!));
      if (cost < best[j]!) {
        best[j] = cost;
        from[j] = i;
      }
    }
  }
  // Spans (d[i], d[j]] from the end, each cut to its widest chunk, then as columns from the left.
  const chunks: [number, number][] = [];
  for (let j = k; j > 0; j = from[j]!) {
    const i = from[j]!;
    const step = widest(rowsPast[i]!);
    for (let a = d[j]!; a > d[i]!; a -= step) chunks.push([L - a, Math.min(step, a - d[i]!)]);
  }
  return chunks;
}
