import { describe, expect, it } from 'vitest';
import { CHUNK_COST, prefillChunks } from '../../../src/model/prefill-chunks.ts';

/** Rows a chunk [t0, T] runs (those whose new tokens start before its end) and the columns it runs for them. */
function run(fresh: number[], L: number, [t0, T]: [number, number]): { rows: number; tokens: number } {
  const rows = fresh.filter((f) => L - f < t0 + T).length;
  return { rows, tokens: rows * T };
}

/** The chunks' columns run, plus their fixed costs. */
function cost(fresh: number[], L: number, chunks: [number, number][]): number {
  return chunks.reduce((s, c) => s + run(fresh, L, c).tokens + CHUNK_COST, 0);
}

/** The chunks of a prefill before prefill-chunks.ts: uniform, from the longest row's first new column. */
function uniform(fresh: number[], L: number, budget: number): [number, number][] {
  const W = Math.max(...fresh);
  const step = Math.max(1, Math.floor(budget / fresh.length));
  const out: [number, number][] = [];
  for (let t0 = L - W; t0 < L; t0 += step) out.push([t0, Math.min(step, L - t0)]);
  return out;
}

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

describe('prefillChunks', () => {
  it('runs exactly the new tokens where every row gets its own edges cheaply', () => {
    // Three lengths, far apart: a chunk per length costs less than the padding.
    const fresh = [300, 300, 200, 200, 100, 100];
    const chunks = prefillChunks(fresh, 1000, 2048);
    expect(chunks).toEqual([
      [700, 100],
      [800, 100],
      [900, 100],
    ]);
    expect(chunks.reduce((s, c) => s + run(fresh, 1000, c).tokens, 0)).toBe(1200);
  });

  it('keeps one chunk where the padding costs less than another chunk', () => {
    expect(prefillChunks([40, 39, 38], 50, 2048)).toEqual([[10, 40]]);
  });

  it('a budget of one token runs one column a chunk, and only new tokens', () => {
    const fresh = [5, 3, 1, 3];
    const chunks = prefillChunks(fresh, 9, 1);
    expect(chunks.every(([, T]) => T === 1)).toBe(true);
    expect(chunks.reduce((s, c) => s + run(fresh, 9, c).tokens, 0)).toBe(12);
  });

  it('covers the new columns once, left to right, within the budget, never dearer than uniform chunks', () => {
    const r = rng(7);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(r() * 40);
      const L = 50 + Math.floor(r() * 900);
      const fresh = Array.from({ length: n }, () => 1 + Math.floor(r() * Math.min(L, 1 + r() * 400)));
      const budget = [1, 7, 64, 2048][trial % 4]!;
      const chunks = prefillChunks(fresh, L, budget);
      const W = Math.max(...fresh);
      let next = L - W;
      for (const c of chunks) {
        expect(c[0], `trial ${trial}`).toBe(next);
        expect(c[1]).toBeGreaterThan(0);
        next += c[1];
        const { rows, tokens } = run(fresh, L, c);
        expect(rows).toBeGreaterThan(0);
        expect(tokens).toBeLessThanOrEqual(Math.max(budget, rows));
      }
      expect(next).toBe(L);
      expect(run(fresh, L, chunks[chunks.length - 1]!).rows).toBe(n);
      expect(cost(fresh, L, chunks)).toBeLessThanOrEqual(cost(fresh, L, uniform(fresh, L, budget)));
    }
  });

  it('nothing new, no chunk', () => {
    expect(prefillChunks([], 10, 2048)).toEqual([]);
  });
});
