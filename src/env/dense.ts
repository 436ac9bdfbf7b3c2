// Dense retrieval, E5 style: passages are embedded once as "passage: <title> <text>", each query as
// "query: <query>", both mean-pooled and L2-normalised, and a search returns the passages with the highest
// cosine similarity. The embedder is a function, so the index works with any model: the default one runs
// a sentence-embedding model through @huggingface/transformers (downloaded from the hub, browser-cached).
import type { Passage } from './corpus.ts';

/** Texts -> unit-length embeddings, one per text, in order. */
export type Embedder = (texts: string[]) => Promise<Float32Array[]>;

export const E5_QUERY = 'query: ';
export const E5_PASSAGE = 'passage: ';

export function passageText(p: Passage): string {
  return `${E5_PASSAGE}${p.title} ${p.text}`;
}

export class DenseIndex {
  private constructor(
    readonly passages: readonly Passage[],
    private readonly vectors: Float32Array[],
    private readonly embed: Embedder,
  ) {}

  /** Embeds every passage (in batches, reporting progress) and returns the index. */
  static async build(
    passages: readonly Passage[],
    embed: Embedder,
    opts: { batch?: number; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<DenseIndex> {
    const batch = opts.batch ?? 32;
    const vectors: Float32Array[] = [];
    for (let i = 0; i < passages.length; i += batch) {
      const texts = passages.slice(i, i + batch).map(passageText);
      const got = await embed(texts);
      if (got.length !== texts.length)
        throw new Error(`dense retrieval: the embedder returned ${got.length} vectors for ${texts.length} passages`);
      vectors.push(...got);
      opts.onProgress?.(vectors.length, passages.length);
    }
    const dim = vectors[0]?.length ?? 0;
    if (vectors.some((v) => v.length !== dim))
      throw new Error('dense retrieval: the embedder returned vectors of different sizes');
    return new DenseIndex(passages, vectors, embed);
  }

  /** The top-k passages by cosine similarity (ties keep corpus order). */
  async search(query: string, k = 3): Promise<{ passage: Passage; index: number; score: number }[]> {
    const [q] = await this.embed([E5_QUERY + query]);
    return topByDot(q!, this.vectors, k).map(({ index, score }) => ({ passage: this.passages[index]!, index, score }));
  }
}

/** Indices and dot products of the k vectors most similar to `q`, best first, ties by index. */
export function topByDot(
  q: Float32Array,
  vectors: readonly Float32Array[],
  k: number,
): { index: number; score: number }[] {
  const scored = vectors.map((v, index) => {
    let s = 0;
    for (let d = 0; d < q.length; d++) s += q[d]! * v[d]!;
    return { index, score: s };
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.slice(0, k);
}

/**
 * An Embedder on a hub sentence-embedding model (e.g. Xenova/e5-base-v2) through
 * @huggingface/transformers' feature-extraction pipeline, mean pooling and normalisation as E5 needs.
 */
export function transformersEmbedder(modelId: string): Embedder {
  let extractor: Promise<(texts: string[], o: object) => Promise<{ tolist(): number[][] }>> | null = null;
  return async (texts) => {
    extractor ??= import('@huggingface/transformers').then(
      (t) =>
        t.pipeline('feature-extraction', modelId) as unknown as Promise<
          (texts: string[], o: object) => Promise<{ tolist(): number[][] }>
        >,
    );
    let run: Awaited<typeof extractor>;
    try {
      run = await extractor;
    } catch (e) {
      extractor = null;
      throw new Error(
        `dense retrieval: could not load the embedding model '${modelId}' (${(e as Error).message}). ` +
          'It is downloaded from the Hugging Face hub on first use; offline, use --retriever bm25.',
      );
    }
    const out = await run(texts, { pooling: 'mean', normalize: true });
    return out.tolist().map((row) => Float32Array.from(row));
  };
}
