import { describe, expect, it } from 'vitest';
import { corpusToJsonl, parseCorpusJsonl, JsonlParseError } from '../../../src/env/corpus.ts';
import { normalizeAnswer } from '../../../src/env/em.ts';
import { Rng } from '../../../src/env/random.ts';
import {
  STEPS,
  WorldIndex,
  answersOfChain,
  auditQuestion,
  readQuestion,
  entityCounts,
  evalSetToJsonl,
  generateQuestion,
  generateWorld,
  makeEvalSet,
  parseEvalSetJsonl,
  stepDef,
  valueText,
  type WorldQuestion,
} from '../../../src/env/world.ts';

const world = generateWorld({ seed: 2024, size: 150 });
const ix = new WorldIndex(world);

describe('generateWorld', () => {
  it('is deterministic per seed and differs across seeds', () => {
    expect(generateWorld({ seed: 2024, size: 150 })).toEqual(world);
    const other = generateWorld({ seed: 2025, size: 150 });
    expect(other.passages.map((p) => p.title)).not.toEqual(world.passages.map((p) => p.title));
    expect(generateWorld({ seed: 'demo', size: 40 })).toEqual(generateWorld({ seed: 'demo', size: 40 }));
    expect(generateWorld({ seed: world.seed, size: world.size })).toEqual(world);
  });

  it('has the requested size and one passage per entity', () => {
    for (const size of [20, 60, 150, 400]) {
      const w = size === 150 ? world : generateWorld({ seed: 1, size });
      expect(w.entities).toHaveLength(size);
      expect(w.passages).toHaveLength(size);
      const counts = entityCounts(size);
      for (const [type, n] of Object.entries(counts)) expect(w.entities.filter((e) => e.type === type)).toHaveLength(n);
    }
    world.entities.forEach((e, i) => {
      expect(world.passages[i]!.id).toBe(e.id);
      expect(world.passages[i]!.title).toBe(e.name);
      expect(world.passages[i]!.text.startsWith(e.name) || world.passages[i]!.text.includes(e.name)).toBe(true);
    });
  });

  it('gives unique names and ids, and its corpus round-trips through JSONL', () => {
    const names = world.entities.map((e) => e.name.toLowerCase());
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(world.entities.map((e) => e.id)).size).toBe(names.length);
    expect(parseCorpusJsonl(corpusToJsonl(world.passages), 'world')).toEqual(world.passages);
  });

  it('makes every relation a question follows functional', () => {
    for (const e of world.entities) {
      for (const def of STEPS.filter((s) => s.from === e.type)) {
        const n = (def.inverse ? ix.subjects(e.id, def.predicate) : ix.objects(e.id, def.predicate)).length;
        if (def.id === 'organisation_of') expect(n).toBeLessThanOrEqual(1);
        else expect(n, `${e.id} ${def.id}`).toBe(1);
      }
    }
    // years are plausible: founders born before founding, authors before publishing, publishers exist
    for (const r of world.relations) {
      const s = ix.entity(r.subject);
      if (r.predicate === 'founded_by') expect(ix.entity(r.object).year).toBeLessThan(s.year);
      if (r.predicate === 'created_by') expect(ix.entity(r.object).year).toBeLessThan(s.year);
      if (r.predicate === 'published_by') expect(ix.entity(r.object).year).toBeLessThanOrEqual(s.year);
    }
  });

  it('states each relation in the subject passage', () => {
    const text = new Map(world.passages.map((p) => [p.id, p.text]));
    for (const r of world.relations) {
      const value = typeof r.object === 'number' ? String(r.object) : ix.entity(r.object).name;
      expect(text.get(r.subject), `${r.subject} ${r.predicate}`).toContain(value);
    }
  });
});

function checkQuestion(q: WorldQuestion): void {
  const start = q.path[0]!.from;
  // construction path: a chain, each hop read from the passage of the entity it starts from
  expect(q.path).toHaveLength(q.hops);
  q.path.forEach((step, i) => {
    if (i > 0) expect(step.from).toBe(q.path[i - 1]!.to);
    expect(step.passage).toBe(step.from);
    const def = stepDef(step.step);
    expect(step.predicate).toBe(def.predicate);
    expect(step.inverse).toBe(def.inverse);
    expect(ix.entity(step.from).type).toBe(def.from);
    const passage = world.passages.find((p) => p.id === step.passage)!;
    expect(passage.text).toContain(valueText(ix, step.to));
  });
  // unique answer: the relations alone admit exactly one value, which is the gold answer
  const answers = answersOfChain(
    ix,
    start,
    q.path.map((s) => s.step),
  );
  expect(answers).toEqual([q.path[q.hops - 1]!.to]);
  expect(q.answers).toEqual([valueText(ix, answers[0]!)]);
  // the question names the (unique) start entity and no intermediate one, and not the answer
  const startName = ix.entity(start).name;
  expect(ix.byName.get(startName.toLowerCase())).toHaveLength(1);
  expect(q.question).toContain(startName);
  for (const step of q.path.slice(1)) expect(q.question).not.toContain(ix.entity(step.from).name);
  expect(normalizeAnswer(q.question)).not.toContain(normalizeAnswer(q.answers[0]!));
  // no entity repeats along the chain
  const ids = [start, ...q.path.map((s) => s.to).filter((t): t is string => typeof t === 'string')];
  expect(new Set(ids).size).toBe(ids.length);
}

describe('questions', () => {
  const evalSet = makeEvalSet(world, { perHop: 20, seed: 3 });

  it('covers hop counts 1 to 4 with distinct questions', () => {
    for (const h of [1, 2, 3, 4]) expect(evalSet.filter((q) => q.hops === h)).toHaveLength(20);
    expect(new Set(evalSet.map((q) => q.question)).size).toBe(evalSet.length);
  });

  it('gives every question a unique answer and a path consistent with the passages', () => {
    for (const q of evalSet) checkQuestion(q);
  });

  it('is deterministic per seed', () => {
    expect(makeEvalSet(world, { perHop: 20, seed: 3 })).toEqual(evalSet);
    expect(makeEvalSet(ix, { perHop: 20, seed: 4 })).not.toEqual(evalSet);
  });

  it('starts where asked (the examiner source document)', () => {
    const rng = new Rng(5);
    for (const e of world.entities.slice(0, 40)) {
      for (const h of [1, 2, 3]) {
        const q = generateQuestion(ix, rng, h, { start: e.id });
        if (!q) continue;
        expect(q.path[0]!.from).toBe(e.id);
        checkQuestion(q);
      }
    }
    // every entity type supports a 1-hop question
    for (const e of world.entities) expect(generateQuestion(ix, rng, 1, { start: e.id })).not.toBeNull();
  });

  it('can avoid year answers', () => {
    const rng = new Rng(6);
    for (let i = 0; i < 50; i++) {
      const q = generateQuestion(ix, rng, 2, { years: false });
      if (q) expect(typeof q.path[1]!.to).toBe('string');
    }
  });

  it('works on a small world', () => {
    const small = generateWorld({ seed: 9, size: 40 });
    const set = makeEvalSet(small, { perHop: 5, seed: 1 });
    for (const h of [1, 2, 3, 4]) expect(set.filter((q) => q.hops === h).length).toBe(5);
  });

  it('round-trips the eval set through JSONL', () => {
    const text = evalSetToJsonl(evalSet);
    expect(text.split('\n').filter(Boolean)).toHaveLength(evalSet.length);
    expect(parseEvalSetJsonl(text, 'eval.jsonl')).toEqual(evalSet);
    expect(parseEvalSetJsonl('{"question":"Q?","answers":["A"],"hops":2}', 'x')).toEqual([
      { question: 'Q?', answers: ['A'], hops: 2, path: [] },
    ]);
  });

  it.each([
    ['{"answers":["A"],"hops":1}', /missing field "question"/],
    ['{"question":"Q","answers":[],"hops":1}', /"answers" must be a non-empty array/],
    ['{"question":"Q","answers":["A"],"hops":0}', /"hops" must be an integer >= 1/],
    [
      '{"question":"Q","answers":["A"],"hops":1,"path":[{"step":"nope","from":"a","passage":"a","to":"b"}]}',
      /path\[0\]: unknown step/,
    ],
    [
      '{"question":"Q","answers":["A"],"hops":2,"path":[{"step":"founder","from":"a","passage":"a","to":"b"}]}',
      /"path" has 1 steps but "hops" is 2/,
    ],
  ])('rejects %s with its line number', (line, pattern) => {
    try {
      parseEvalSetJsonl(`{"question":"Q","answers":["A"],"hops":1}\n\n${line}\n`, 'eval.jsonl');
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(JsonlParseError);
      expect((e as Error).message).toMatch(/^eval\.jsonl:3: /);
      expect((e as Error).message).toMatch(pattern);
    }
  });
});

describe('auditQuestion: reading a question back into the world', () => {
  const rng = new Rng('audit');
  const qs = [1, 2, 3, 4].flatMap((h) =>
    Array.from({ length: 25 }, () => generateQuestion(ix, rng, h)).filter((q): q is WorldQuestion => q !== null),
  );
  const person = world.entities.find((e) => e.type === 'person')!;
  const city = world.entities.find((e) => e.type === 'city')!;

  it('reads every generated question as its own path, with its answer right', () => {
    expect(qs.length).toBeGreaterThan(90);
    for (const q of qs) {
      const a = auditQuestion(ix, q.question, q.answers[0]!);
      expect(a.verdict, q.question).toBe('right');
      expect(a.reading).toEqual({ start: q.path[0]!.from, steps: q.path.map((p) => p.step) });
      // Case and spacing are not held against it; the answer is compared as EM compares.
      expect(
        auditQuestion(ix, `  ${q.question.toLowerCase().replace(/ /g, '  ')}`, ` ${q.answers[0]!.toUpperCase()}.`)
          .verdict,
      ).toBe('right');
      expect(auditQuestion(ix, q.question.replace(/\?$/, ' ?'), q.answers[0]!).verdict).toBe('right');
      expect(auditQuestion(ix, q.question.replace(/\?$/, ''), q.answers[0]!).verdict).toBe('right');
    }
  });

  it('tells a wrong answer from a garbled question and from one whose chain has no single answer', () => {
    const q = qs.find((x) => x.hops === 2)!;
    const other = qs.find((x) => x.answers[0] !== q.answers[0])!.answers[0]!;
    expect(auditQuestion(ix, q.question, other)).toMatchObject({ verdict: 'wrong', answers: q.answers });
    // The examiner's garbled mix of two templates, an entity not in the world, a relation its type lacks.
    expect(auditQuestion(ix, `In which city is home to ${city.name}?`, 'x').verdict).toBe('unreadable');
    expect(auditQuestion(ix, 'In which city was Nobody Atall born?', 'x').verdict).toBe('unreadable');
    expect(auditQuestion(ix, `Who founded ${city.name}?`, 'x').verdict).toBe('unreadable');
    // Readable, but the person joined no organisation (or: several people were born in the city).
    const loner = world.entities.find((e) => e.type === 'person' && ix.objects(e.id, 'member_of').length === 0);
    if (loner)
      expect(auditQuestion(ix, `Which organisation was joined by ${loner.name}?`, 'x')).toMatchObject({
        verdict: 'unanswerable',
        answers: [],
      });
    expect(auditQuestion(ix, `In what year was ${person.name} born?`, String(person.year)).verdict).toBe('right');
    expect(readQuestion(ix, `What is the capital of the country containing ${city.name}?`)).toEqual([
      { start: city.id, steps: ['country_of', 'capital'] },
    ]);
  });

  it('reads the held-out set as right', () => {
    for (const q of makeEvalSet(world, { perHop: 10 }))
      expect(auditQuestion(ix, q.question, q.answers[0]!).verdict).toBe('right');
  });
});
