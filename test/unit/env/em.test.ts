import { describe, expect, it } from 'vitest';
import { exactMatch, normalizeAnswer } from '../../../src/env/em.ts';

describe('normalizeAnswer (SQuAD / Dr. Zero)', () => {
  it.each([
    ['The Beatles', 'beatles'],
    ['  A   tale of  Two Cities ', 'tale of two cities'],
    ['an apple', 'apple'],
    ['Theatre', 'theatre'], // articles only as whole words
    ['Anna and the King', 'anna and king'],
    ['U.S.A.', 'usa'],
    ["O'Brien-Smith, Jr.", 'obriensmith jr'],
    ['1,821', '1821'],
    ['Tab\tand\nnewline', 'tab and newline'],
    ['the', ''],
    ['...', ''],
    ['Beijing—China', 'beijing—china'], // only ASCII punctuation is dropped, as Python's string.punctuation
    ['éa b', 'éa b'], // Unicode word boundary like Python's \b: the "a" inside "éa" stays
    ['a-b', 'ab'], // punctuation goes first, so "a-b" is one word
    ['A', ''],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeAnswer(input)).toBe(expected);
  });
});

describe('exactMatch', () => {
  it('compares normalised strings against any gold', () => {
    expect(exactMatch('the  Beatles.', 'Beatles')).toBe(true);
    expect(exactMatch('Beatles', ['Rolling Stones', 'The Beatles'])).toBe(true);
    expect(exactMatch('Beatle', 'Beatles')).toBe(false);
    expect(exactMatch('New York City', 'New York')).toBe(false);
    expect(exactMatch('1821', ['1821'])).toBe(true);
    expect(exactMatch('x', [])).toBe(false);
  });
});
