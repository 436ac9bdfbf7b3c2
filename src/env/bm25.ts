// BM25 retrieval over passages (title + text), the project's default search tool.
//
// Score of passage d for query q (summed over the query's tokens, repeats included, as Lucene does for
// repeated clauses):
//   idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))                      (Lucene's, never negative)
//   score    = Σ_t idf(t) · tf·(k1 + 1) / (tf + k1·(1 - b + b·|d|/avgdl))
// with k1 = 0.9, b = 0.4 (Pyserini's defaults). Differences from Pyserini, on purpose: our own tokenizer
// (no stemming), exact document lengths (Lucene quantises them), and the (k1 + 1) factor that Lucene >= 8
// drops (a constant factor: the ranking is the same). Ties are broken by passage order.

import type { Passage } from './corpus.ts';

export interface Bm25Settings {
  k1: number;
  b: number;
  /** Drop a tiny list of English function words (both in passages and in queries). */
  stopwords: boolean;
}

export const DEFAULT_BM25: Readonly<Bm25Settings> = { k1: 0.9, b: 0.4, stopwords: true };

/** The tiny stopword list (function words and question words). */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'the',
  'of',
  'in',
  'on',
  'at',
  'to',
  'and',
  'or',
  'by',
  'for',
  'with',
  'as',
  'from',
  'into',
  'is',
  'was',
  'are',
  'were',
  'be',
  'been',
  'it',
  'its',
  'this',
  'that',
  'which',
  'what',
  'who',
  'whom',
  'whose',
  'where',
  'when',
  'how',
  'did',
  'does',
  'do',
]);

const SPLIT = /[^\p{L}\p{N}]+/u;

/** Lowercases and splits on runs of characters that are neither letters nor digits (Unicode-aware). */
export function tokenize(text: string, stopwords = DEFAULT_BM25.stopwords): string[] {
  const out: string[] = [];
  for (const tok of text.toLowerCase().split(SPLIT)) {
    if (tok === '' || (stopwords && STOPWORDS.has(tok))) continue;
    out.push(tok);
  }
  return out;
}

export interface SearchHit {
  passage: Passage;
  /** Index of the passage in the corpus. */
  index: number;
  score: number;
}

interface Posting {
  docs: number[];
  tfs: number[];
}

/** An inverted index over a fixed corpus, built once. */
export class Bm25Index {
  readonly settings: Readonly<Bm25Settings>;
  readonly passages: readonly Passage[];
  private readonly postings = new Map<string, Posting>();
  private readonly lengths: Float64Array;
  private readonly avgdl: number;

  constructor(passages: readonly Passage[], settings: Partial<Bm25Settings> = {}) {
    this.settings = { ...DEFAULT_BM25, ...settings };
    this.passages = passages;
    this.lengths = new Float64Array(passages.length);
    let total = 0;
    passages.forEach((p, d) => {
      const tokens = tokenize(`${p.title} ${p.text}`, this.settings.stopwords);
      this.lengths[d] = tokens.length;
      total += tokens.length;
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, tf] of counts) {
        let post = this.postings.get(t);
        if (!post) this.postings.set(t, (post = { docs: [], tfs: [] }));
        post.docs.push(d);
        post.tfs.push(tf);
      }
    });
    this.avgdl = passages.length ? total / passages.length : 0;
  }

  get size(): number {
    return this.passages.length;
  }

  /** Number of passages containing the (already tokenized) term. */
  documentFrequency(term: string): number {
    return this.postings.get(term)?.docs.length ?? 0;
  }

  idf(term: string): number {
    const n = this.passages.length;
    const df = this.documentFrequency(term);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** BM25 scores of every passage for the query (0 where no query token occurs). */
  scores(query: string): Float64Array {
    const { k1, b } = this.settings;
    const scores = new Float64Array(this.passages.length);
    if (this.avgdl === 0) return scores;
    for (const term of tokenize(query, this.settings.stopwords)) {
      const post = this.postings.get(term);
      if (!post) continue;
      const idf = this.idf(term);
      for (let i = 0; i < post.docs.length; i++) {
        const d = post.docs[i]!;
        const tf = post.tfs[i]!;
        const norm = k1 * (1 - b + (b * this.lengths[d]!) / this.avgdl);
        scores[d]! += (idf * tf * (k1 + 1)) / (tf + norm);
      }
    }
    return scores;
  }

  /**
   * The top-k passages for the query, best first; only passages sharing at least one token with the
   * query are returned (so fewer than k, possibly none). Equal scores keep corpus order.
   */
  search(query: string, k = 3): SearchHit[] {
    const scores = this.scores(query);
    const hits: number[] = [];
    for (let d = 0; d < scores.length; d++) if (scores[d]! > 0) hits.push(d);
    hits.sort((x, y) => scores[y]! - scores[x]! || x - y);
    return hits.slice(0, Math.max(0, k)).map((d) => ({ passage: this.passages[d]!, index: d, score: scores[d]! }));
  }
}
