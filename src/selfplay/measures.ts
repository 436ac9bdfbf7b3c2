// Search behaviour of rollouts (ALGORITHM.md section 7): searches per rollout and query redundancy.

/** Queries compare after lower-casing and collapsing white space. */
function normQuery(q: string): string {
  return q.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** How many of a rollout's queries repeat an earlier query of the same rollout. */
export function repeatedQueries(queries: readonly string[]): number {
  const seen = new Set<string>();
  let repeats = 0;
  for (const q of queries) {
    const k = normQuery(q);
    if (seen.has(k)) repeats++;
    seen.add(k);
  }
  return repeats;
}

/** Share of a rollout's queries that repeat an earlier query of the same rollout (0 without queries). */
export function queryRedundancy(queries: readonly string[]): number {
  return queries.length === 0 ? 0 : repeatedQueries(queries) / queries.length;
}

/** Mean searches per rollout, and mean redundancy over the rollouts that searched at all. */
export function searchStats(rollouts: readonly { searches: readonly { query: string }[] }[]): {
  searches: number;
  redundancy: number;
} {
  if (rollouts.length === 0) return { searches: 0, redundancy: 0 };
  let searches = 0;
  let red = 0;
  let searched = 0;
  for (const r of rollouts) {
    searches += r.searches.length;
    if (r.searches.length) {
      red += queryRedundancy(r.searches.map((s) => s.query));
      searched++;
    }
  }
  return { searches: searches / rollouts.length, redundancy: searched ? red / searched : 0 };
}
