// Trains a small byte-level BPE tokenizer (GPT-2 / Qwen style) from text and writes it as the HF files
// `tokenizer.json` + `tokenizer_config.json`, which src/model/tokenizer.ts (through
// @huggingface/transformers) and Python's `tokenizers` load as they are.
//
// Layout of the ids: 0..255 the byte alphabet (GPT-2's bytes_to_unicode characters, in byte order), then
// one id per learned merge, then the added tokens (control tokens first, then the caller's added tokens,
// e.g. the tool tags). The control tokens (<|endoftext|>, <|im_start|>, <|im_end|>) are `special`; the
// other added tokens are not, as Qwen3 does with <think>: each is one id, never split or merged, and
// decode() returns it as text even with skipSpecialTokens, so stop strings and tag parsers see it.
//
// Deterministic: the same texts and options give the same files (ties between equally frequent pairs are
// broken by the pair's text).

export const ENDOFTEXT = '<|endoftext|>';
export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';

/** Control tokens: special (skipped by decode({skipSpecialTokens: true})). */
export const CONTROL_TOKENS: readonly string[] = [ENDOFTEXT, IM_START, IM_END];

/**
 * The tool tags of src/env/tags.ts (spelled out here so that `model` does not depend on `env`; a test
 * checks they agree). As single ids, a tiny model learns the format far more easily, and each stop
 * string is one token.
 */
export const TOOL_TAGS: readonly string[] = [
  '<think>',
  '</think>',
  '<search>',
  '</search>',
  '<information>',
  '</information>',
  '<answer>',
  '</answer>',
  '<question>',
  '</question>',
];

/**
 * The pre-tokenizer's split (GPT-2's, Unicode-aware): contractions, a word with its leading space, a
 * number with its leading space, a run of other symbols, white space. Merges never cross these pieces.
 */
export const SPLIT_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/** ChatML, as Qwen uses it: `<|im_start|>role\ncontent<|im_end|>\n` per message. */
export const CHAT_TEMPLATE =
  '{%- for message in messages %}' +
  "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  '{%- endfor %}' +
  "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}";

export interface BpeTrainOptions {
  /** Total vocabulary: 256 bytes + merges + added tokens (default 1024). */
  vocabSize?: number;
  /** A pair must occur at least this often to be merged (default 2). */
  minFrequency?: number;
  /** Special control tokens (default CONTROL_TOKENS: pad/separator, turn start, turn end / EOS). */
  controlTokens?: readonly string[];
  /** Added, non-special tokens, e.g. the tool tags (default none). */
  addedTokens?: readonly string[];
}

export interface TrainedTokenizer {
  /** The parsed `tokenizer.json`. */
  tokenizerJson: Record<string, unknown>;
  /** The parsed `tokenizer_config.json`. */
  tokenizerConfig: Record<string, unknown>;
  /** Number of merges learned (may be below what vocabSize allows when the text runs out of pairs). */
  merges: number;
  vocabSize: number;
}

/** GPT-2's reversible map from bytes to printable characters (so byte-level tokens are plain strings). */
export function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const set = new Set(printable);
  const out = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(set.has(b) ? b : 256 + n++);
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Splits text into the pieces the pre-tokenizer makes, added tokens removed (they are never merged). */
export function* preTokenize(text: string, addedTokens: readonly string[]): Generator<string> {
  const split = new RegExp(SPLIT_PATTERN, 'gu');
  const sorted = [...addedTokens].sort((a, b) => b.length - a.length);
  const segments = sorted.length ? text.split(new RegExp(sorted.map(escapeRegExp).join('|'), 'g')) : [text];
  for (const seg of segments) for (const m of seg.matchAll(split)) yield m[0];
}

/**
 * Learns byte-level BPE merges from `texts`. Word counts first (unique pieces are few in templated text),
 * then the classic loop: merge the most frequent adjacent pair, update the counts of the words it touched.
 */
export function trainBpe(
  texts: Iterable<string>,
  opts: BpeTrainOptions = {},
): { vocab: string[]; merges: [string, string][] } {
  const controls = opts.controlTokens ?? CONTROL_TOKENS;
  const added = opts.addedTokens ?? [];
  const vocabSize = opts.vocabSize ?? 1024;
  const minFrequency = opts.minFrequency ?? 2;
  const budget = vocabSize - 256 - controls.length - added.length;
  if (budget < 0)
    throw new Error(
      `tokenizer: vocabSize ${vocabSize} is below the 256 bytes + ${controls.length + added.length} added tokens`,
    );

  const byteChar = bytesToUnicode();
  const enc = new TextEncoder();
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const piece of preTokenize(text, [...controls, ...added])) counts.set(piece, (counts.get(piece) ?? 0) + 1);
  }
  // Words as arrays of symbol ids; symbols 0..255 are bytes, 256+k is merge k.
  const vocab = byteChar.slice();
  const words: number[][] = [];
  const freqs: number[] = [];
  for (const [piece, n] of [...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    words.push([...enc.encode(piece)]);
    freqs.push(n);
  }

  const key = (a: number, b: number) => a * 65536 + b;
  const pairs = new Map<number, number>();
  const addPairs = (w: number[], n: number) => {
    for (let i = 0; i + 1 < w.length; i++) {
      const k = key(w[i]!, w[i + 1]!);
      const c = (pairs.get(k) ?? 0) + n;
      if (c === 0) pairs.delete(k);
      else pairs.set(k, c);
    }
  };
  words.forEach((w, i) => addPairs(w, freqs[i]!));

  const merges: [string, string][] = [];
  while (merges.length < budget) {
    let best = -1;
    let bestCount = 0;
    let bestText = '';
    for (const [k, c] of pairs) {
      if (c < bestCount) continue;
      const text = vocab[Math.floor(k / 65536)]! + ' ' + vocab[k % 65536]!;
      if (c > bestCount || text < bestText) {
        best = k;
        bestCount = c;
        bestText = text;
      }
    }
    if (best < 0 || bestCount < minFrequency) break;
    const a = Math.floor(best / 65536);
    const b = best % 65536;
    const id = vocab.length;
    vocab.push(vocab[a]! + vocab[b]!);
    merges.push([vocab[a]!, vocab[b]!]);
    for (let wi = 0; wi < words.length; wi++) {
      const w = words[wi]!;
      let has = false;
      for (let i = 0; i + 1 < w.length; i++) {
        if (w[i] === a && w[i + 1] === b) {
          has = true;
          break;
        }
      }
      if (!has) continue;
      addPairs(w, -freqs[wi]!);
      const merged: number[] = [];
      for (let i = 0; i < w.length; i++) {
        if (i + 1 < w.length && w[i] === a && w[i + 1] === b) {
          merged.push(id);
          i++;
        } else merged.push(w[i]!);
      }
      words[wi] = merged;
      addPairs(merged, freqs[wi]!);
    }
  }
  return { vocab, merges };
}

/** Trains the tokenizer and builds both HF files. */
export function trainTokenizer(texts: Iterable<string>, opts: BpeTrainOptions = {}): TrainedTokenizer {
  const controls = opts.controlTokens ?? CONTROL_TOKENS;
  const added = opts.addedTokens ?? [];
  const { vocab, merges } = trainBpe(texts, opts);
  const vocabObj: Record<string, number> = {};
  vocab.forEach((t, id) => (vocabObj[t] = id));
  const addedTokens = [...controls.map((c) => [c, true] as const), ...added.map((c) => [c, false] as const)].map(
    ([content, special], k) => ({
      id: vocab.length + k,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special,
    }),
  );
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  const tokenizerJson: Record<string, unknown> = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
        byteLevel,
      ],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: vocabObj,
      merges,
    },
  };
  const vocabSize = vocab.length + addedTokens.length;
  return { tokenizerJson, tokenizerConfig: tokenizerConfig(controls, addedTokens), merges: merges.length, vocabSize };
}

/**
 * tokenizer_config.json: ChatML template, eos = <|im_end|> (the end of an assistant turn), pad =
 * <|endoftext|> (also the separator of packed documents), no BOS.
 */
function tokenizerConfig(
  controls: readonly string[],
  addedTokens: { id: number; content: string; special: boolean }[],
): Record<string, unknown> {
  const decoder: Record<string, unknown> = {};
  for (const t of addedTokens) {
    decoder[String(t.id)] = {
      content: t.content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: t.special,
    };
  }
  const pad = controls.includes(ENDOFTEXT) ? ENDOFTEXT : (controls[0] ?? null);
  const eos = controls.includes(IM_END) ? IM_END : (controls[controls.length - 1] ?? null);
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: decoder,
    additional_special_tokens: controls.filter((c) => c !== pad && c !== eos),
    bos_token: null,
    chat_template: CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: eos,
    errors: 'replace',
    model_max_length: 2048,
    pad_token: pad,
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
    unk_token: null,
  };
}

/** The two files as bytes, ready to write into a model folder. */
export function tokenizerFiles(t: TrainedTokenizer): Record<string, Uint8Array> {
  const enc = new TextEncoder();
  return {
    'tokenizer.json': enc.encode(JSON.stringify(t.tokenizerJson) + '\n'),
    'tokenizer_config.json': enc.encode(JSON.stringify(t.tokenizerConfig, null, 2) + '\n'),
  };
}
