import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../../src/env/bm25.ts';
import { Rng } from '../../../src/env/random.ts';
import { generateQuestion, generateWorld, WorldIndex, worldQcp } from '../../../src/env/world.ts';
import { tokenizerFromJson } from '../../../src/model/tokenizer.ts';
import {
  PRIVILEGED_HEADER,
  PRIVILEGED_MODES,
  STUDENT_INSTRUCTIONS,
  compactQcp,
  examinerPrompt,
  partialQcp,
  privilegedBlock,
  qcpFromExaminer,
  studentPrompt,
  teacherPrompt,
  type Qcp,
} from '../../../src/env/prompts.ts';
import { parseExaminerOutput } from '../../../src/env/tags.ts';

const qcp: Qcp = {
  source: { title: 'Beyond Thefyn', text: 'Beyond Thefyn is a poetry collection by Noraexel Moufeirani.' },
  hops: 3,
  searches: [
    {
      query: 'Noraexel Moufeirani',
      information: 'Doc 1 (Title: Noraexel Moufeirani) Noraexel Moufeirani was a poet born in Poupol.',
    },
    { query: 'Poupol', information: 'Doc 1 (Title: Poupol) Poupol is a city located in Soudrovia.' },
  ],
  question: 'Which country contains the birthplace of the author of Beyond Thefyn?',
  answer: 'Soudrovia',
};
const question = qcp.question;

describe('student prompt', () => {
  it('holds the tool instructions and the question', () => {
    const p = studentPrompt({ question });
    expect(p).toBe(`${STUDENT_INSTRUCTIONS}\nQuestion: ${question}\n`);
    for (const tag of ['<think>', '<search>', '</search>', '<information>', '<answer>', '</answer>'])
      expect(p).toContain(tag);
  });
});

describe('teacher prompt', () => {
  it('is the student prompt with the privileged block before the question', () => {
    const student = studentPrompt({ question });
    for (const mode of PRIVILEGED_MODES) {
      const options = { seed: 1 };
      const block = privilegedBlock(qcp, mode, options);
      const teacher = teacherPrompt({ question, qcp, mode, options });
      expect(teacher).toBe(`${STUDENT_INSTRUCTIONS}\n${block}Question: ${question}\n`);
      expect(teacher.replace(block, '')).toBe(student);
      if (mode === 'none' || mode === 'self') expect(teacher).toBe(student);
      else expect(block.endsWith('\n')).toBe(true);
    }
  });

  it('full QCP holds the source, every query with its results, the question and the answer', () => {
    const b = privilegedBlock(qcp, 'full');
    expect(b).toContain('Source document: (Title: Beyond Thefyn) Beyond Thefyn is a poetry collection');
    expect(b).toContain('Search 1: Noraexel Moufeirani\n<information>Doc 1 (Title: Noraexel Moufeirani)');
    expect(b).toContain('Search 2: Poupol\n<information>Doc 1 (Title: Poupol)');
    expect(b).toContain(`Question: ${question}\nAnswer: Soudrovia\n`);
  });

  it("partial QCP removes a seeded half of the path's words and keeps question and answer", () => {
    const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
    const content = (p: { source: { text: string } | null; searches: { information: string }[] }) =>
      (p.source ? words(p.source.text) : 0) + p.searches.reduce((n, s) => n + words(s.information), 0);
    const full = content(qcp);
    for (let seed = 0; seed < 10; seed++)
      expect(content(partialQcp(qcp, { seed }))).toBe(full - Math.round(0.5 * full));
    // A 1-hop path keeps the first half of its source passage.
    const one = { ...qcp, hops: 1, searches: [] };
    expect(partialQcp(one, { seed: 3 }).source!.text).toBe('Beyond Thefyn is a'); // 9 words, round(4.5) = 5 removed
    expect(privilegedBlock(one, 'partial', { seed: 3 })).not.toBe(privilegedBlock(one, 'full'));
    expect(privilegedBlock(qcp, 'partial', { seed: 7 })).toBe(privilegedBlock(qcp, 'partial', { seed: 7 }));
    const variants = new Set(Array.from({ length: 20 }, (_, s) => privilegedBlock(qcp, 'partial', { seed: s })));
    expect(variants.size).toBeGreaterThan(2);
    for (const v of variants) {
      expect(v).toContain(`Question: ${question}\nAnswer: Soudrovia\n`);
      expect(v.length).toBeLessThan(privilegedBlock(qcp, 'full').length);
      // Every kept tool reply is a closed block; a removed search loses its query line too.
      expect(v.split('<information>').length).toBe(v.split('</information>').length);
      expect(v.split('Search ').length).toBe(v.split('<information>').length);
    }
    expect(partialQcp(qcp, { seed: 1, dropFraction: 0 })).toEqual({
      source: qcp.source,
      searches: qcp.searches.map((x, j) => ({ number: j + 1, ...x })),
    });
    expect(partialQcp(qcp, { seed: 1, dropFraction: 1 })).toEqual({ source: null, searches: [] });
    expect(() => privilegedBlock(qcp, 'partial')).toThrow(/seed/);
  });

  it('GT and GT+hop give the answer (and the hop count) only', () => {
    const gt = privilegedBlock(qcp, 'gt');
    expect(gt).toContain('Soudrovia');
    expect(gt).not.toContain('Poupol');
    expect(gt).not.toContain('hop');
    const gh = privilegedBlock(qcp, 'gt-hop');
    expect(gh).toContain('Soudrovia');
    expect(gh).toContain('3 hops');
    expect(privilegedBlock({ ...qcp, hops: 1 }, 'gt-hop')).toContain('1 hop.');
  });

  it('builds a QCP from an examiner rollout: the searches the tool answered, with their replies', () => {
    const t =
      '<think>a</think><search>Noraexel Moufeirani</search><information>R1</information>' +
      '<think>b</think><search></search>' +
      '<think>b</think><search>Poupol</search><information>R2</information>' +
      '<think>c</think><question>Q?</question><answer>Soudrovia</answer>';
    // The empty search got no reply; the QCP pairs queries and replies as the rollout recorded them.
    const searches = [
      { query: 'Noraexel Moufeirani', information: 'R1' },
      { query: 'Poupol', information: 'R2' },
    ];
    const q = qcpFromExaminer(qcp.source, 3, parseExaminerOutput(t), searches);
    expect(q.searches).toEqual([
      { query: 'Noraexel Moufeirani', information: 'R1' },
      { query: 'Poupol', information: 'R2' },
    ]);
    expect(q.question).toBe('Q?');
    expect(q.answer).toBe('Soudrovia');
  });
});

describe('examiner prompt', () => {
  it('asks for h-1 searches from the source document', () => {
    const p1 = examinerPrompt({ source: qcp.source, hops: 1 });
    expect(p1).toContain('Do not search');
    expect(p1).toContain('Hops: 1\nSource document: (Title: Beyond Thefyn) Beyond Thefyn is a poetry collection');
    const p3 = examinerPrompt({ source: qcp.source, hops: 3 });
    expect(p3).toContain('exactly 3 hops');
    expect(p3).toContain('exactly 2 times');
    expect(examinerPrompt({ source: qcp.source, hops: 2 })).toContain('exactly 1 time ');
    for (const tag of ['<question>', '</question>', '<answer>', '</answer>', '<think>']) expect(p3).toContain(tag);
    expect(() => examinerPrompt({ source: qcp.source, hops: 0 })).toThrow(RangeError);
  });

  it('stays short', () => {
    expect(examinerPrompt({ source: { title: '', text: '' }, hops: 4 }).split(/\s+/).length).toBeLessThan(130);
    expect(STUDENT_INSTRUCTIONS.split(/\s+/).length).toBeLessThan(80);
  });
});

describe('partial QCP on world questions', () => {
  // The share of the privileged block's content tokens that 'partial' keeps, per hop count, with the shipped
  // tokenizer: about half for every hop count, and partial differs from full on every question.
  it('keeps about half of the content tokens for every hop count', async () => {
    const dir = new URL('../../../public/models/piplay-tiny/', import.meta.url);
    const tok = await tokenizerFromJson(
      JSON.parse(readFileSync(new URL('tokenizer.json', dir), 'utf8')),
      JSON.parse(readFileSync(new URL('tokenizer_config.json', dir), 'utf8')),
    );
    const world = generateWorld({ seed: 'partial-test', size: 60 });
    const ix = new WorldIndex(world);
    const bm25 = new Bm25Index(world.passages);
    const search = (query: string) => bm25.search(query, 3).map((h) => h.passage);
    const rng = new Rng(11);
    const count = (t: string) => tok.encode(t, { addSpecialTokens: false }).length;
    // Content tokens: those of the source passage's text and of the search results (the frame, titles,
    // queries, question and answer, is kept whole); the whole block's share is reported beside them.
    const content = (p: { source: { text: string } | null; searches: { information: string }[] }) =>
      (p.source ? count(p.source.text) : 0) + p.searches.reduce((n, x) => n + count(x.information), 0);
    const shares: Record<number, number[]> = {};
    const blocks: Record<number, number[]> = {};
    for (let i = 0; i < 80; i++) {
      const hops = 1 + (i % 4);
      const q = generateQuestion(ix, rng, hops);
      if (!q) continue;
      const qcp = worldQcp(ix, q, search);
      const options = { seed: `s/${i}` };
      const full = privilegedBlock(qcp, 'full');
      const partial = privilegedBlock(qcp, 'partial', options);
      expect(partial, `question ${i} (${hops} hops)`).not.toBe(full);
      (shares[hops] ??= []).push(content(partialQcp(qcp, options)) / content(qcp));
      (blocks[hops] ??= []).push(count(partial) / count(full));
    }
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    const table = Object.entries(shares).map(
      ([h, xs]) =>
        `${h} hops: ${xs.length} questions, ${pct(avg(xs))} of content tokens, ${pct(avg(blocks[+h]!))} of the block`,
    );
    console.log(`partial QCP, share of privileged content tokens kept:\n  ${table.join('\n  ')}`);
    for (const [h, xs] of Object.entries(shares)) {
      expect(xs.length, `${h} hops`).toBeGreaterThan(5);
      expect(avg(xs), `${h} hops`).toBeGreaterThan(0.4);
      expect(avg(xs), `${h} hops`).toBeLessThan(0.6);
    }
  });
});

describe('compact notes', () => {
  const long: Qcp = {
    ...qcp,
    source: {
      title: 'Beyond Thefyn',
      text: 'Beyond Thefyn is a poetry collection. It was written by Noraexel Moufeirani. It won no prize.',
    },
    searches: [
      {
        query: 'Noraexel Moufeirani',
        information:
          'Doc 1 (Title: Kel) Kel is a town.\n' +
          'Doc 2 (Title: Noraexel Moufeirani) Noraexel Moufeirani was a poet. She was born in Poupol. She died young.',
      },
      { query: 'Poupol', information: 'Doc 1 (Title: Poupol) Poupol is old. Poupol is a city located in Soudrovia.' },
    ],
  };

  it('keeps of each document the sentence that names the next query, or the answer', () => {
    const c = compactQcp(long);
    expect(c.source).toEqual({ title: 'Beyond Thefyn', text: 'It was written by Noraexel Moufeirani.' });
    // The first sentence naming the next query whole: "Poupol" in "She was born in Poupol."
    expect(c.searches.map((s) => s.information)).toEqual([
      'Doc 2 (Title: Noraexel Moufeirani) She was born in Poupol.',
      'Doc 1 (Title: Poupol) Poupol is a city located in Soudrovia.',
    ]);
    expect(c.searches.map((s) => s.query)).toEqual(['Noraexel Moufeirani', 'Poupol']);
    expect([c.question, c.answer, c.hops]).toEqual([long.question, long.answer, long.hops]);
  });

  it('falls back to the sentence sharing most words, and keeps replies that are not docs', () => {
    const c = compactQcp({
      ...long,
      searches: [
        { query: 'poet Moufeirani birthplace', information: long.searches[0]!.information },
        { query: 'Poupol', information: 'No results.' },
      ],
    });
    expect(c.source.text).toBe('It was written by Noraexel Moufeirani.');
    expect(c.searches[0]!.information).toBe('Doc 2 (Title: Noraexel Moufeirani) She was born in Poupol.');
    expect(c.searches[1]!.information).toBe('No results.');
  });

  it("renders 'full' and 'partial' compactly only when asked; gt is the same either way", () => {
    const compact = { notes: 'compact' as const, seed: 'c' };
    expect(privilegedBlock(long, 'full', compact)).toBe(privilegedBlock(compactQcp(long), 'full'));
    expect(privilegedBlock(long, 'partial', compact)).toBe(privilegedBlock(compactQcp(long), 'partial', compact));
    expect(privilegedBlock(long, 'full', compact).length).toBeLessThan(privilegedBlock(long, 'full').length);
    expect(privilegedBlock(long, 'full', { notes: 'passages' })).toBe(privilegedBlock(long, 'full'));
    expect(privilegedBlock(long, 'gt', compact)).toBe(privilegedBlock(long, 'gt'));
  });

  it("renders 'answer-first' as the gt block's line, then the compact notes' path, answer line included", () => {
    const first = { notes: 'answer-first' as const, seed: 'c' };
    const compact = { notes: 'compact' as const, seed: 'c' };
    for (const mode of ['full', 'partial'] as const) {
      const got = privilegedBlock(long, mode, first);
      const [head, ...rest] = privilegedBlock(long, mode, compact).split('\n');
      expect(head).toBe(PRIVILEGED_HEADER);
      expect(got).toBe([privilegedBlock(long, 'gt').trimEnd(), ...rest].join('\n'));
      expect(got).toMatch(/^Private notes on how this question was made: the answer is Soudrovia\.\nSource document: /);
      expect(got).toMatch(/\nAnswer: Soudrovia\n$/);
    }
    expect(privilegedBlock(long, 'gt', first)).toBe(privilegedBlock(long, 'gt'));
  });
});
