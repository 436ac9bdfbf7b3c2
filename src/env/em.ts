// Exact match (EM), SQuAD style, as in Search-R1 and Dr. Zero's `normalize_answer`:
// lowercase, drop punctuation, drop the articles a/an/the, collapse white space.

/** Python's `string.punctuation` (ASCII only: a curly quote or a dash like '—' is kept, as in Python). */
export const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const PUNCT_SET = new Set(PUNCTUATION);

// Python's `\b(a|an|the)\b` on str patterns is Unicode-aware (\w = letters, digits, underscore); JS's \b
// is ASCII-only even with /u, hence the explicit look-arounds.
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

/** Normalises an answer for EM: lower -> remove punctuation -> articles to spaces -> collapse spaces. */
export function normalizeAnswer(s: string): string {
  const lower = s.toLowerCase();
  let noPunct = '';
  for (const ch of lower) if (!PUNCT_SET.has(ch)) noPunct += ch;
  return noPunct.replace(ARTICLES, ' ').split(/\s+/).filter(Boolean).join(' ');
}

/** true when the normalised prediction equals one of the normalised gold answers. */
export function exactMatch(prediction: string, golds: string | readonly string[]): boolean {
  const p = normalizeAnswer(prediction);
  const list = typeof golds === 'string' ? [golds] : golds;
  return list.some((g) => normalizeAnswer(g) === p);
}
