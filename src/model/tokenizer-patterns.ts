// The regular expressions a tokenizer.json runs on every text (its pre-tokenizer's split patterns, its normalizer's
// and decoder's replacements) are run by JavaScript's backtracking engine. A pattern such as `(\w|\w)+$` takes time
// exponential in the length of a word, so one long word in a corpus would hang tokenizing: each pattern is timed at
// load on runs of one kind of character of growing length (where such patterns blow up), and a pattern whose time
// explodes is refused before any text is tokenized.

/** Characters of the kinds patterns treat alike (letters, capitals, digits, spaces, line ends, accents, CJK,
 *  punctuation, underscores), each repeated to make a run, then a character that ends it. */
const RUNS = ['a', 'A', '1', ' ', '\n', 'é', '中', '.', '_'];
const ENDS = ['!', 'a', ' ', '\u0000', ''];
/** Run lengths tried, in order; a pattern that blows up does so well before the last. */
const LENGTHS = [8, 12, 16, 18, 20, 22, 24, 26, 28, 32, 40];
/** One match over a short run taking longer than this is a blow-up (a linear pattern takes microseconds). */
const SLOW_MS = 50;

/** Every `{"Regex": "..."}` pattern in a tokenizer.json object. */
export function tokenizerPatterns(json: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'Regex' && typeof x === 'string') found.push(x);
        else if (k !== 'vocab' && k !== 'merges') walk(x);
      }
    }
  };
  walk(json);
  return [...new Set(found)];
}

/** The length of a run on which `source` takes more than SLOW_MS, or null when it stays fast. */
export function blowUpLength(source: string): number | null {
  let re: RegExp;
  try {
    re = new RegExp(source, 'gu');
  } catch {
    return null; // not a JavaScript pattern as written: the tokenizer library rewrites it, or refuses it itself
  }
  for (const n of LENGTHS) {
    for (const c of RUNS) {
      for (const end of ENDS) {
        const text = c.repeat(n) + end;
        // Slow three times over: a pause of the machine (a garbage collection, another process) is not a blow-up.
        if ([0, 1, 2].every(() => timeMatch(re, text) > SLOW_MS)) return n;
      }
    }
  }
  return null;
}

/** Milliseconds to find every match of `re` in `text`. */
function timeMatch(re: RegExp, text: string): number {
  const t0 = performance.now();
  for (const _ of text.matchAll(re));
  return performance.now() - t0;
}

/** Refuses a tokenizer.json with a pattern whose matching time explodes; `where` names the file. */
export function checkTokenizerPatterns(json: unknown, where: string): void {
  for (const p of tokenizerPatterns(json)) {
    const n = blowUpLength(p);
    if (n === null) continue;
    throw new Error(
      `tokenizer.json${where} has the pattern ${JSON.stringify(p)}, which takes over ${SLOW_MS} ms on a word of ` +
        `${n} characters and exponentially longer on longer ones (catastrophic backtracking): tokenizing a long word ` +
        "would hang. The tokenizer is malformed; use the model repository's own tokenizer.json",
    );
  }
}
