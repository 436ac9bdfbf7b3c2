// Dr. Zero's data generation keeps, of a source document's samples, the best-formatted question.
import { describe, expect, it } from 'vitest';
import { bestFormatted } from '../../../src/selfplay/data.ts';
import type { WrittenQuestion } from '../../../src/selfplay/examiner.ts';

const written = (question: string, f: number) => ({ question, format: { f } }) as unknown as WrittenQuestion;

describe('bestFormatted', () => {
  it('keeps the sample with the highest format reward, the first of equals', () => {
    expect(bestFormatted([written('a', 0), written('b', 0.5), written('c', 1), written('d', 1)]).question).toBe('c');
    expect(bestFormatted([written('a', 0.2), written('b', 0.2)]).question).toBe('a');
    expect(bestFormatted([written('a', 0)]).question).toBe('a');
  });
});
