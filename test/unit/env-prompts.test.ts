import { describe, expect, it } from 'vitest';
import {
  PRIVILEGED_MODES,
  STUDENT_INSTRUCTIONS,
  examinerPrompt,
  keptHops,
  privilegedBlock,
  qcpFromExaminer,
  studentPrompt,
  teacherPrompt,
  type Qcp,
} from '../../src/env/prompts.ts';
import { parseExaminerOutput } from '../../src/env/tags.ts';

const qcp: Qcp = {
  source: { title: 'Beyond Thefyn', text: 'Beyond Thefyn is a poetry collection by Noraexel Moufeirani.' },
  hops: 3,
  searches: [
    { query: 'Noraexel Moufeirani', information: 'Doc 1 (Title: Noraexel Moufeirani) Noraexel Moufeirani was a poet born in Poupol.' },
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
    for (const tag of ['<think>', '<search>', '</search>', '<information>', '<answer>', '</answer>']) expect(p).toContain(tag);
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
      if (mode === 'none') expect(teacher).toBe(student);
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

  it('partial QCP drops a seeded half of the hops and keeps question and answer', () => {
    expect(keptHops(qcp, { seed: 1 })).toHaveLength(2); // 3 hops, floor(1.5) = 1 dropped
    expect(keptHops({ ...qcp, searches: [...qcp.searches, qcp.searches[0]!] }, { seed: 1 })).toHaveLength(2); // 4 -> 2
    expect(keptHops({ ...qcp, hops: 1, searches: [] }, { seed: 1 })).toEqual([0]);
    expect(privilegedBlock(qcp, 'partial', { seed: 7 })).toBe(privilegedBlock(qcp, 'partial', { seed: 7 }));
    const variants = new Set(Array.from({ length: 20 }, (_, s) => privilegedBlock(qcp, 'partial', { seed: s })));
    expect(variants.size).toBe(3); // each of the 3 hops gets dropped by some seed
    for (const v of variants) {
      expect(v).toContain('Answer: Soudrovia');
      expect(v.length).toBeLessThan(privilegedBlock(qcp, 'full').length);
    }
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

  it('builds a QCP from an examiner transcript', () => {
    const t =
      '<think>a</think><search>Noraexel Moufeirani</search><information>R1</information>' +
      '<think>b</think><search>Poupol</search><information>R2</information>' +
      '<think>c</think><question>Q?</question><answer>Soudrovia</answer>';
    const q = qcpFromExaminer(qcp.source, 3, parseExaminerOutput(t));
    expect(q.searches).toEqual([{ query: 'Noraexel Moufeirani', information: 'R1' }, { query: 'Poupol', information: 'R2' }]);
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
