import { describe, expect, it } from 'vitest';
import { Bm25Index, DEFAULT_BM25, tokenize } from '../../../src/env/bm25.ts';
import { generateWorld } from '../../../src/env/world.ts';

describe('tokenize', () => {
  it('lowercases, splits on non-alphanumerics, drops stopwords when asked', () => {
    expect(tokenize("The Book of Tarvel's 2nd-edition, 1821!")).toEqual([
      'book',
      'tarvel',
      's',
      '2nd',
      'edition',
      '1821',
    ]);
    expect(tokenize('The Book of X', false)).toEqual(['the', 'book', 'of', 'x']);
    expect(tokenize('Ærøskøbing Straße')).toEqual(['ærøskøbing', 'straße']);
    expect(tokenize('  ,,  ')).toEqual([]);
  });
});

describe('BM25', () => {
  it('has Pyserini default parameters', () => {
    expect(DEFAULT_BM25.k1).toBe(0.9);
    expect(DEFAULT_BM25.b).toBe(0.4);
  });

  // Three documents, lengths 3, 4, 3 (title + text, stopwords dropped), avgdl = 10/3.
  const docs = [
    { id: 'd0', title: 'Apple', text: 'apple pie' },
    { id: 'd1', title: 'Banana', text: 'an apple and banana bread' },
    { id: 'd2', title: 'Cherry', text: 'cherry tart' },
  ];
  const ix = new Bm25Index(docs);

  it('matches a hand-computed score', () => {
    // apple: N = 3, df = 2 -> idf = ln(1 + 1.5/2.5) = ln 1.6
    // d0: tf = 2, |d| = 3: K = 0.9 (0.6 + 0.4 * 3 / (10/3)) = 0.864 -> ln1.6 * 2 * 1.9 / 2.864 = 0.623608...
    // d1: tf = 1, |d| = 4: K = 0.9 (0.6 + 0.4 * 4 / (10/3)) = 0.972 -> ln1.6 * 1.9 / 1.972 = 0.452843...
    const hits = ix.search('apple');
    expect(hits.map((h) => h.passage.id)).toEqual(['d0', 'd1']);
    expect(hits[0]!.score).toBeCloseTo(0.6236081672953195, 12);
    expect(hits[1]!.score).toBeCloseTo(0.4528432533300698, 12);
    // banana: df = 1 -> idf = ln(1 + 2.5/1.5); d1 has tf = 2.
    const both = ix.search('Apple? BANANA!');
    expect(both[0]!.passage.id).toBe('d1');
    expect(both[0]!.score).toBeCloseTo(0.4528432533300698 + (Math.log(1 + 2.5 / 1.5) * 2 * 1.9) / 2.972, 12);
  });

  it('returns only passages sharing a token, at most k', () => {
    expect(ix.search('durian')).toEqual([]);
    expect(ix.search('the of and')).toEqual([]);
    expect(ix.search('apple cherry', 1)).toHaveLength(1);
    expect(ix.search('apple cherry tart').length).toBe(3);
    expect(ix.search('apple', 0)).toEqual([]);
  });

  it('breaks ties by passage order', () => {
    const same = new Bm25Index([
      { id: 'x', title: 'Zed', text: 'same words here' },
      { id: 'y', title: 'Zed', text: 'same words here' },
      { id: 'z', title: 'Other', text: 'nothing alike' },
    ]);
    const hits = same.search('zed words');
    expect(hits.map((h) => h.passage.id)).toEqual(['x', 'y']);
    expect(hits[0]!.score).toBe(hits[1]!.score);
  });

  it('ranks the exact-title passage first for every entity name of a generated world', () => {
    for (const [seed, size] of [
      [11, 120],
      [12, 400],
    ] as const) {
      const world = generateWorld({ seed, size });
      const index = new Bm25Index(world.passages);
      const misses = world.entities.filter((e) => index.search(e.name, 3)[0]?.passage.id !== e.id).map((e) => e.name);
      expect(misses).toEqual([]);
    }
  });
});
