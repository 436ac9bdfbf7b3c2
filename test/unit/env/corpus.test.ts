import { describe, expect, it } from 'vitest';
import {
  JsonlParseError,
  MAX_PASSAGE_CHARS,
  corpusToJsonl,
  parseCorpusJsonl,
  passagesById,
} from '../../../src/env/corpus.ts';

function errorOf(fn: () => unknown): JsonlParseError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(JsonlParseError);
    return e as JsonlParseError;
  }
  throw new Error('expected a JsonlParseError');
}

describe('corpus JSONL', () => {
  const good = [
    '{"id":"a","title":"Alpha","text":"First passage."}',
    '',
    '   ',
    '{"id":"b","title":"Beta","text":"Second passage.","extra":1}',
  ].join('\n');

  it('parses, skipping blank lines and ignoring extra fields', () => {
    const ps = parseCorpusJsonl(good, 'good.jsonl');
    expect(ps).toEqual([
      { id: 'a', title: 'Alpha', text: 'First passage.' },
      { id: 'b', title: 'Beta', text: 'Second passage.' },
    ]);
    expect(passagesById(ps).get('b')!.title).toBe('Beta');
  });

  it('accepts CRLF line ends and a BOM', () => {
    const ps = parseCorpusJsonl(
      '\ufeff{"id":"a","title":"A","text":"x"}\r\n{"id":"b","title":"B","text":"y"}\r\n',
      'crlf',
    );
    expect(ps.map((p) => p.id)).toEqual(['a', 'b']);
  });

  it('round-trips through corpusToJsonl', () => {
    const ps = parseCorpusJsonl(good, 'good.jsonl');
    const text = corpusToJsonl(ps);
    expect(text.endsWith('\n')).toBe(true);
    expect(parseCorpusJsonl(text, 'again')).toEqual(ps);
    expect(corpusToJsonl([])).toBe('');
  });

  it('names the source, the 1-based line and the problem', () => {
    const bad = '{"id":"a","title":"A","text":"x"}\n\n{"id":"b", "title": }\n';
    const e = errorOf(() => parseCorpusJsonl(bad, 'wiki.jsonl'));
    expect(e.source).toBe('wiki.jsonl');
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/^wiki\.jsonl:3: bad JSON/);
  });

  it.each([
    ['{"title":"A","text":"x"}', /missing field "id"/],
    ['{"id":"a","text":"x"}', /missing field "title"/],
    ['{"id":"a","title":"A"}', /missing field "text"/],
    ['{"id":"a","title":"  ","text":"x"}', /empty field "title"/],
    ['{"id":"","title":"A","text":"x"}', /empty field "id"/],
    ['{"id":7,"title":"A","text":"x"}', /field "id" must be a string/],
    ['[1,2]', /expected a JSON object/],
    ['null', /expected a JSON object/],
  ])('rejects %s', (line, pattern) => {
    const e = errorOf(() => parseCorpusJsonl(`{"id":"z","title":"Z","text":"z"}\n${line}`, 'c.jsonl'));
    expect(e.line).toBe(2);
    expect(e.message).toMatch(pattern);
    expect(e.message.startsWith('c.jsonl:2: ')).toBe(true);
  });

  it('rejects a duplicate id, naming both lines', () => {
    const text =
      '{"id":"a","title":"A","text":"x"}\n{"id":"b","title":"B","text":"y"}\n\n{"id":"a","title":"C","text":"z"}';
    const e = errorOf(() => parseCorpusJsonl(text, 'dup.jsonl'));
    expect(e.line).toBe(4);
    expect(e.message).toBe('dup.jsonl:4: duplicate id "a" (first on line 1)');
  });

  it('refuses a passage past the longest a prompt can hold, naming it (before: advice about micro-batches)', () => {
    const long = 'x'.repeat(MAX_PASSAGE_CHARS + 1);
    const ok = parseCorpusJsonl(JSON.stringify({ id: 'a', title: 'A', text: long.slice(1) }), 'c.jsonl');
    expect(ok[0]!.text).toHaveLength(MAX_PASSAGE_CHARS);
    const e = errorOf(() => parseCorpusJsonl(JSON.stringify({ id: 'book', title: 'B', text: long }), 'c.jsonl'));
    expect(e.message).toBe(
      `c.jsonl:1: passage "book" has ${MAX_PASSAGE_CHARS + 1} characters of text; a passage may have at most ` +
        `${MAX_PASSAGE_CHARS} (split long documents into passages of a few paragraphs)`,
    );
  });
});
