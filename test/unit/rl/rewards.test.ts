import { describe, expect, it } from 'vitest';
import {
  answerScore,
  difficultyReward,
  difficultyRewardOfOutcomes,
  examinerFormatReward,
  examinerFormatRewardOfTranscript,
  examinerReward,
  examinerRewardOfCounts,
  studentReward,
  studentRewardOfRollout,
  toolScore,
  type ExaminerFormatInput,
} from '../../../src/rl/rewards.ts';

describe('student reward (EM)', () => {
  it('is 1 for a normalised match, 0 otherwise, 0 without an answer', () => {
    expect(studentReward('the Beatles!', 'Beatles')).toBe(1);
    expect(studentReward('Beatle', 'Beatles')).toBe(0);
    expect(studentReward(null, 'Beatles')).toBe(0);
    expect(studentReward('', 'Beatles')).toBe(0);
    expect(studentReward('b', ['a', 'B'])).toBe(1);
  });
  it('reads the last <answer> of a rollout', () => {
    expect(
      studentRewardOfRollout(
        '<answer>wrong</answer><search>q</search><information>r</information><answer> Poupol </answer>',
        'Poupol',
      ),
    ).toBe(1);
    expect(studentRewardOfRollout('<answer>Poupol</answer><answer>wrong</answer>', 'Poupol')).toBe(0);
    expect(studentRewardOfRollout('Poupol', 'Poupol')).toBe(0);
  });
});

describe('difficulty reward r_d = 1[0<k<n] (n-k)/(n-1)', () => {
  it.each([
    [0, 5, 0],
    [1, 5, 1],
    [2, 5, 0.75],
    [3, 5, 0.5],
    [4, 5, 0.25],
    [5, 5, 0],
    [1, 2, 1],
    [0, 1, 0],
    [1, 1, 0],
  ])('k=%i n=%i -> %f', (k, n, r) => {
    expect(difficultyReward(k, n)).toBe(r);
  });
  it('rejects impossible counts', () => {
    expect(() => difficultyReward(6, 5)).toThrow(RangeError);
    expect(() => difficultyReward(-1, 5)).toThrow(RangeError);
    expect(() => difficultyReward(1, 0)).toThrow(RangeError);
    expect(() => difficultyReward(1.5, 5)).toThrow(RangeError);
  });
  it('counts successes from outcomes', () => {
    expect(difficultyRewardOfOutcomes([0, 1, 0, 0, 0])).toBe(1);
    expect(difficultyRewardOfOutcomes([1, 1, 1, 0, 0])).toBe(0.5);
  });
});

describe('examiner format reward (Dr. Zero)', () => {
  const source = 'Poupol is a city located in Soudrovia. Poupol was founded in 1380.';
  const base: ExaminerFormatInput = {
    question: 'Which country contains the birthplace of Kahola Drastalley?',
    answer: 'Soudrovia',
    hops: 3,
    turns: [{ thinks: true }, { thinks: false }, { thinks: true }],
    validSearches: 2,
    toolReplies: 2,
    sourceText: 'Kahola Drastalley was a poet born in Poupol in 1801.',
    retrievedTexts: ['Doc 1 (Title: Poupol) ' + source],
  };

  it('hand-worked: h=3, 2 of 3 turns think, 2 searches, answer in retrieved text', () => {
    // think 2/3, tool min((1+2)/3, 1) = 1, ans 1 -> f = (1 + 2/3 + 1 + 1)/4 = 11/12
    const r = examinerFormatReward(base);
    expect(r).toEqual({ f: 11 / 12, integrity: true, think: 2 / 3, tool: 1, ans: 1 });
  });

  it('tool term', () => {
    expect(toolScore(1, 0, 0)).toBe(1);
    expect(toolScore(1, 3, 3)).toBe(1);
    expect(toolScore(1, 2, 1)).toBe(1); // h = 1 is never penalised
    expect(toolScore(4, 1, 1)).toBe(0.5);
    expect(toolScore(4, 2, 2)).toBe(0.75);
    expect(toolScore(2, 5, 5)).toBe(1); // capped
    expect(toolScore(3, 0, 0)).toBe(0);
    expect(toolScore(3, 2, 1)).toBe(0); // searches and replies disagree
    expect(toolScore(3, 1, 2)).toBe(0); // e.g. one empty query that still got a reply
  });

  it('retrieved text counts only when the tool condition holds', () => {
    // valid searches 2, replies 1: tool = 0 and the answer, only in the retrieved text, is not found.
    const r = examinerFormatReward({ ...base, toolReplies: 1 });
    expect(r.tool).toBe(0);
    expect(r.ans).toBe(0);
    expect(r.f).toBeCloseTo((1 + 2 / 3 + 0 + 0) / 4, 15);
    // answer in the source: found regardless
    expect(
      examinerFormatReward({ ...base, toolReplies: 1, answer: 'Poupol', question: 'Where was Kahola Drastalley born?' })
        .ans,
    ).toBe(1);
  });

  it('answer term: yes/no, word counts, normalisation, substring rule', () => {
    expect(answerScore('Yes', 'nothing relevant')).toBe(1);
    expect(answerScore('no.', 'nothing relevant')).toBe(1);
    expect(answerScore('The Soudrovia', 'soudrovia!')).toBe(1);
    expect(answerScore('one two three four five', 'One, two, three, four, five.')).toBe(1);
    expect(answerScore('one two three four five six', 'one two three four five six')).toBe(0.5);
    expect(answerScore('a b c d e f g h i j', 'b c d e f g h i j')).toBe(0.5); // the article "a" is dropped: 9 words
    expect(answerScore('1 2 3 4 5 6 7 8 9 10 11', '1 2 3 4 5 6 7 8 9 10 11')).toBe(0);
    expect(answerScore('Tarvel', 'no such name')).toBe(0);
    expect(answerScore('', 'anything')).toBe(0);
    expect(answerScore('the', 'the')).toBe(0); // empty after normalisation
    expect(answerScore('art', 'a party')).toBe(1); // Dr. Zero's `in` is a substring test
  });

  it('integrity: empty question or answer, or answer inside the question, gives f = 0', () => {
    for (const patch of [
      { question: '' },
      { question: '   ' },
      { answer: '' },
      { answer: ' ' },
      { question: 'Is Soudrovia the country of Poupol?' },
      { answer: 'The' },
    ]) {
      const r = examinerFormatReward({ ...base, ...patch });
      expect(r.integrity).toBe(false);
      expect(r.f).toBe(0);
    }
    // inside the question after normalisation (case, punctuation, articles)
    expect(examinerFormatReward({ ...base, question: 'Which country, SOUDROVIA or not?' }).f).toBe(0);
  });

  it('yes/no answers are exempt from the evidence check only', () => {
    const r = examinerFormatReward({
      ...base,
      hops: 1,
      validSearches: 0,
      toolReplies: 0,
      retrievedTexts: [],
      turns: [{ thinks: true }],
      question: 'Was Kahola Drastalley a poet?',
      answer: 'Yes',
    });
    expect(r).toEqual({ f: 1, integrity: true, think: 1, tool: 1, ans: 1 });
  });

  it('no turns: think = 0', () => {
    const r = examinerFormatReward({ ...base, turns: [] });
    expect(r.think).toBe(0);
    expect(r.f).toBe(0.75);
  });

  it('from a raw transcript', () => {
    const transcript =
      '<think>Hop 1 is Poupol.</think><search>Poupol</search>' +
      `<information>Doc 1 (Title: Poupol) ${source}</information>` +
      '<think>Soudrovia is hop 2.</think><question>Which country contains the birthplace of Kahola Drastalley?</question><answer>Soudrovia</answer>';
    // h = 2: think 2/2, tool min(2/2, 1) = 1, ans 1 -> f = 1
    expect(examinerFormatRewardOfTranscript(transcript, 2, base.sourceText).f).toBe(1);
    // h = 4: tool = 2/4 -> f = (1 + 1 + 0.5 + 1)/4
    expect(examinerFormatRewardOfTranscript(transcript, 4, base.sourceText).f).toBe(0.875);
    expect(examinerFormatRewardOfTranscript('<think>x</think>', 2, base.sourceText).f).toBe(0);
  });
});

describe('examiner reward r = 0.5 f + r_d (r_d only when f > 0)', () => {
  it('combines', () => {
    expect(examinerReward(0.75, 0.5)).toBe(0.875);
    expect(examinerReward(1, 1)).toBe(1.5);
    expect(examinerReward(0, 1)).toBe(0);
    expect(examinerReward(0.5, 0)).toBe(0.25);
    expect(examinerRewardOfCounts(0.5, 1, 5)).toBe(1.25);
    expect(examinerRewardOfCounts(0.5, 5, 5)).toBe(0.25);
    expect(examinerRewardOfCounts(0.5, 0, 5)).toBe(0.25);
    expect(examinerRewardOfCounts(0, 1, 5)).toBe(0);
  });
});
