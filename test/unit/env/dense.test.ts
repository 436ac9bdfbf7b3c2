// Dense retrieval with a deterministic stand-in embedder (hashed bag of words), so no model is downloaded.
import { describe, expect, it } from 'vitest';
import type { Passage } from '../../../src/env/corpus.ts';
import { DenseIndex, E5_PASSAGE, E5_QUERY, topByDot, type Embedder } from '../../../src/env/dense.ts';
import { Environment } from '../../../src/selfplay/environment.ts';

/** Words (prefix stripped) hashed into 64 buckets, L2-normalised. Records what it was asked to embed. */
function bagOfWords(seen: string[] = []): Embedder {
  return async (texts) =>
    texts.map((t) => {
      seen.push(t);
      const v = new Float32Array(64);
      for (const w of t
        .replace(/^(query|passage): /, '')
        .toLowerCase()
        .split(/\W+/)
        .filter(Boolean)) {
        let h = 2166136261;
        for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
        v[(h >>> 0) % 64]! += 1;
      }
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
}

const passages: Passage[] = [
  { id: 'a', title: 'Kraglar Harbour', text: 'Kraglar Harbour is a port city founded in 1712.' },
  { id: 'b', title: 'Vileth Academy', text: 'Vileth Academy teaches music and is in Kraglar Harbour.' },
  { id: 'c', title: 'Mopet Tiltson', text: 'Mopet Tiltson wrote herbals.' },
];

describe('dense retrieval', () => {
  it('embeds passages and queries with the E5 prefixes and ranks by cosine similarity', async () => {
    const seen: string[] = [];
    const index = await DenseIndex.build(passages, bagOfWords(seen), { batch: 2 });
    expect(seen).toEqual(passages.map((p) => `${E5_PASSAGE}${p.title} ${p.text}`));
    const hits = await index.search('Mopet Tiltson herbals', 2);
    expect(seen.at(-1)).toBe(`${E5_QUERY}Mopet Tiltson herbals`);
    expect(hits[0]!.passage.id).toBe('c');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('breaks ties by corpus order and returns at most k', () => {
    const v = [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(1, 0)];
    expect(topByDot(Float32Array.of(1, 0), v, 2)).toEqual([
      { index: 0, score: 1 },
      { index: 2, score: 1 },
    ]);
  });

  it('serves as the environment search tool, embedding the corpus once', async () => {
    const seen: string[] = [];
    const env = new Environment(passages, [], 2);
    const search = env.denseSearch('stand-in', bagOfWords(seen));
    expect((await search('Vileth Academy music')).map((p) => p.id)[0]).toBe('b');
    await search('Kraglar Harbour port');
    expect(seen.filter((t) => t.startsWith(E5_PASSAGE)).length).toBe(passages.length);
  });

  it('does not keep a failed index: the next search tries again', async () => {
    const env = new Environment(passages, [], 2);
    let calls = 0;
    const flaky: Embedder = async (texts) => {
      calls++;
      if (calls === 1) throw new Error('model not reachable');
      return bagOfWords()(texts);
    };
    const search = env.denseSearch('flaky', flaky);
    await expect(search('Mopet')).rejects.toThrow(/not reachable/);
    expect((await search('Mopet Tiltson herbals'))[0]!.id).toBe('c');
  });
});
