// The BPE trainer: deterministic, byte-level round trips, the tool tags and chat markers as single ids that
// decode as text, and files that src/model/tokenizer.ts loads.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tags from '../../../src/env/tags.ts';
import { generateWorld } from '../../../src/env/world.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { loadTokenizer, tokenizerFromJson, type Tokenizer } from '../../../src/model/tokenizer.ts';
import {
  CONTROL_TOKENS,
  IM_END,
  IM_START,
  TOOL_TAGS,
  tokenizerFiles,
  trainTokenizer,
  type TrainedTokenizer,
} from '../../../src/model/tokenizer-train.ts';

const world = generateWorld({ seed: 11, size: 60 });
const texts = world.passages.map((p) => `${p.title}\n${p.text}`);

let trained: TrainedTokenizer;
let tok: Tokenizer;
beforeAll(async () => {
  trained = trainTokenizer(texts, { vocabSize: 400, addedTokens: TOOL_TAGS });
  tok = await tokenizerFromJson(trained.tokenizerJson, trained.tokenizerConfig);
});

describe('trainTokenizer', () => {
  it('fills the vocabulary exactly and is deterministic', () => {
    expect(trained.vocabSize).toBe(400);
    expect(trained.merges).toBe(400 - 256 - CONTROL_TOKENS.length - TOOL_TAGS.length);
    expect(tok.vocabSize).toBe(400);
    const again = trainTokenizer(texts, { vocabSize: 400, addedTokens: TOOL_TAGS });
    expect(JSON.stringify(again.tokenizerJson)).toBe(JSON.stringify(trained.tokenizerJson));
  });

  it('spells the tool tags as src/env/tags.ts does', () => {
    const envTags = [
      tags.THINK_OPEN,
      tags.THINK_CLOSE,
      tags.SEARCH_OPEN,
      tags.SEARCH_CLOSE,
      tags.INFORMATION_OPEN,
      tags.INFORMATION_CLOSE,
      tags.ANSWER_OPEN,
      tags.ANSWER_CLOSE,
      tags.QUESTION_OPEN,
      tags.QUESTION_CLOSE,
    ];
    expect([...TOOL_TAGS].sort()).toEqual(envTags.sort());
  });

  it('round-trips text of another world, unseen characters included', () => {
    const other = generateWorld({ seed: 12, size: 40 });
    for (const p of other.passages) {
      const s = `${p.title}\n${p.text}`;
      expect(tok.decode(tok.encode(s))).toBe(s);
    }
    for (const s of ['', ' ', 'naïve 世界 🙂\n\ttabs  and  spaces', "it's 1847, isn't it?"])
      expect(tok.decode(tok.encode(s))).toBe(s);
    // Merges pay off on the text they were learned from.
    const chars = texts.join('').length;
    const ids = texts.reduce((n, t) => n + tok.encode(t).length, 0);
    expect(chars / ids).toBeGreaterThan(1.5);
  });

  it('makes each tag and chat marker one id that decodes as text', () => {
    for (const t of [...TOOL_TAGS, ...CONTROL_TOKENS]) {
      const ids = tok.encode(t);
      expect(ids).toHaveLength(1);
      expect(tok.idToToken(ids[0]!)).toBe(t);
    }
    const s = `${IM_START}assistant\n<think> go </think>\n<search> Foo Bar </search>\n<information>Doc 1 (Title: X) y</information>\n<answer> 1847 </answer>${IM_END}`;
    const ids = tok.encode(s);
    expect(tok.decode(ids)).toBe(s);
    // Control tokens are special (skippable); the tags are not, so parsers still see them.
    const skipped = tok.decode(ids, { skipSpecialTokens: true });
    expect(skipped).toBe(s.replace(IM_START, '').replace(IM_END, ''));
    expect(tags.parseStudentTurn(skipped)).toEqual({ kind: 'search', query: 'Foo Bar' });
    expect(tags.lastAnswer(skipped)).toBe('1847');
    for (const c of CONTROL_TOKENS) expect(tok.specialIds.has(tok.tokenToId(c)!)).toBe(true);
    for (const t of TOOL_TAGS) expect(tok.specialIds.has(tok.tokenToId(t)!)).toBe(false);
  });

  it('writes files that loadTokenizer reads, with a ChatML template, EOS and pad', async () => {
    const loaded = await loadTokenizer(filesFromMap(tokenizerFiles(trained)));
    expect(loaded.vocabSize).toBe(400);
    expect(loaded.eosIds).toEqual([loaded.tokenToId(IM_END)]);
    expect(loaded.padId).toBe(loaded.tokenToId('<|endoftext|>'));
    expect(loaded.bosId).toBeNull();
    const text = loaded.applyChatTemplate([{ role: 'user', content: 'Question: hi\n' }], { addGenerationPrompt: true });
    expect(text).toBe(`${IM_START}user\nQuestion: hi\n${IM_END}\n${IM_START}assistant\n`);
    expect(loaded.encode('Born in 1847', { addSpecialTokens: true })).toEqual(
      tok.encode('Born in 1847', { addSpecialTokens: false }),
    );
  });

  it('refuses a vocabulary too small for the bytes and added tokens', () => {
    expect(() => trainTokenizer(texts, { vocabSize: 260, addedTokens: TOOL_TAGS })).toThrow(/below the 256 bytes/);
  });
});
