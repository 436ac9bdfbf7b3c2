import { describe, expect, it } from 'vitest';
import {
  NO_RESULTS,
  countThinkingTurns,
  countValidSearches,
  formatDoc,
  formatInformation,
  formatInformationBody,
  lastAnswer,
  opensWithThink,
  parseExaminerOutput,
  parseInformationBody,
  parseStudentTurn,
  stopAction,
  splitTranscript,
  stripInformation,
} from '../../../src/env/tags.ts';

describe('parseInformationBody', () => {
  it('reads back the docs formatInformationBody wrote, and nothing else', () => {
    const passages = [
      { title: 'Poupol (city)', text: 'Poupol is a city. It lies in Soudrovia.' },
      { title: 'Soudrovia', text: 'Soudrovia is a country.' },
    ];
    expect(parseInformationBody(formatInformationBody(passages))).toEqual(
      passages.map((p, i) => ({ index: i + 1, ...p })),
    );
    expect(parseInformationBody(NO_RESULTS)).toBeNull();
    expect(parseInformationBody('Doc 1 (Title: A) a\nsearch failed')).toBeNull();
  });
});

describe('formatInformation', () => {
  it('produces the exact block', () => {
    const block = formatInformation([
      { title: 'Poupol', text: 'Poupol is a city.' },
      { title: 'Soudrovia', text: 'Soudrovia is a country.' },
    ]);
    expect(block).toBe(
      '<information>Doc 1 (Title: Poupol) Poupol is a city.\nDoc 2 (Title: Soudrovia) Soudrovia is a country.</information>',
    );
  });

  it('collapses white space inside passages so "\\n" only separates documents', () => {
    expect(formatDoc(3, { title: ' Two\nLines ', text: 'a\n\nb\t c ' })).toBe('Doc 3 (Title: Two Lines) a b c');
  });

  it('says so when nothing was found', () => {
    expect(formatInformation([])).toBe(`<information>${NO_RESULTS}</information>`);
  });
});

describe('parseStudentTurn', () => {
  it.each([
    ['<think>need the city</think><search> Poupol </search>', { kind: 'search', query: 'Poupol' }],
    ['<think>ok</think>\n<answer> Soudrovia </answer>', { kind: 'answer', answer: 'Soudrovia' }],
    ['<answer></answer>', { kind: 'answer', answer: '' }],
    ['<search></search>', { kind: 'search', query: '' }],
    ['<think>no action yet</think>', { kind: 'none' }],
    ['<search>unclosed query', { kind: 'none' }],
    ['', { kind: 'none' }],
    // the first complete tag wins
    ['<search>a</search><answer>b</answer>', { kind: 'search', query: 'a' }],
    ['<answer>b</answer><search>a</search>', { kind: 'answer', answer: 'b' }],
    // an unclosed search before a complete answer: the answer
    ['<search>half <answer>b</answer>', { kind: 'answer', answer: 'b' }],
    // mismatched close does not count
    ['<search>x</answer>', { kind: 'none' }],
    // multi-line content
    ['<answer>\n  two\n words \n</answer>', { kind: 'answer', answer: 'two\n words' }],
  ])('%j', (text, expected) => {
    expect(parseStudentTurn(text)).toEqual(expected);
  });
});

describe('lastAnswer', () => {
  it('takes the last complete answer outside tool replies', () => {
    expect(lastAnswer('<answer>a</answer> more <answer> b </answer>')).toBe('b');
    expect(
      lastAnswer('<search>q</search><information>Doc 1 (Title: T) <answer>leak</answer></information>'),
    ).toBeNull();
    expect(lastAnswer('<answer>a</answer><information><answer>leak</answer></information>')).toBe('a');
    expect(lastAnswer('no tags <answer>unclosed')).toBeNull();
    expect(lastAnswer('<answer></answer>')).toBe('');
  });
});

describe('stopAction', () => {
  it('stops the student at </search> and </answer>', () => {
    expect(stopAction('<think>x</think><search>q</search>', 'student')).toBe('search');
    expect(stopAction('<answer>a</answer>', 'student')).toBe('answer');
    expect(stopAction('<answer>a</answer> ', 'student')).toBeNull();
    expect(stopAction('<search>q', 'student')).toBeNull();
  });
  it('stops the examiner at </answer> only after a <question>', () => {
    expect(stopAction('<search>q</search>', 'examiner')).toBe('search');
    expect(stopAction('<think>the answer is <answer>x</answer>', 'examiner')).toBeNull();
    expect(stopAction('<question>Q?</question><answer>A</answer>', 'examiner')).toBe('answer');
  });
});

describe('parseExaminerOutput', () => {
  const transcript = [
    '<think> start from Poupol </think> <search> Poupol </search>',
    '<information>Doc 1 (Title: Poupol) Poupol is a city in Soudrovia. <question>junk</question></information>',
    'junk before <search>  </search>',
    '<information>No results.</information>',
    '\n<think>done</think><question> Which country contains Poupol? </question><answer> Soudrovia </answer> trailing junk',
  ].join('');

  it('extracts question, answer, searches, turns and tool replies', () => {
    const out = parseExaminerOutput(transcript);
    expect(out.question).toBe('Which country contains Poupol?');
    expect(out.answer).toBe('Soudrovia');
    expect(out.searches).toEqual(['Poupol', '']);
    expect(countValidSearches(out.searches)).toBe(1);
    expect(out.turns).toEqual([{ thinks: true }, { thinks: false }, { thinks: true }]);
    expect(countThinkingTurns(out.turns)).toBe(2);
    expect(out.informations).toEqual([
      'Doc 1 (Title: Poupol) Poupol is a city in Soudrovia. <question>junk</question>',
      'No results.',
    ]);
  });

  it('is tolerant of missing and repeated parts', () => {
    expect(parseExaminerOutput('')).toEqual({ question: '', answer: '', searches: [], turns: [], informations: [] });
    const out = parseExaminerOutput(
      '<question>first</question><question> second </question><answer>x</answer><answer> y </answer><question>unclosed',
    );
    expect(out.question).toBe('second');
    expect(out.answer).toBe('y');
    expect(out.turns).toEqual([{ thinks: false }]);
    expect(parseExaminerOutput('<answer>only</answer>').question).toBe('');
  });

  it('counts a turn as thinking only when it opens with a complete <think> block', () => {
    expect(opensWithThink('  \n<think>x</think> rest')).toBe(true);
    expect(opensWithThink('text <think>x</think>')).toBe(false);
    expect(opensWithThink('<think>never closed')).toBe(false);
    expect(opensWithThink('<think></think>')).toBe(true);
  });

  it('splits turns at tool replies and drops empty ones', () => {
    const t = '<think>a</think><search>q</search><information>r</information>   ';
    expect(splitTranscript(t)).toEqual({ turns: ['<think>a</think><search>q</search>'], informations: ['r'] });
    expect(stripInformation(t)).toBe('<think>a</think><search>q</search>   ');
  });
});
