// Multi-hop questions over a world's knowledge graph, with unique answers.
//
// A question starts from a named entity and follows h relation steps (h = hops = passages needed):
//   h = 1: "In which city was Orvalen Tessik born?"                    (Tessik's passage)
//   h = 3: "What is the birthplace of the founder of the publisher of Songs of Vandrel?"
//          (the work's passage -> the publisher's -> the founder's)
// Every step is functional in the direction it is followed (see entities.ts) and names are unique, so the
// answer is unique; `answersOfChain` re-derives it from the relations alone, for tests and audits.
// Intermediate entities are never named in the question and never repeated along a chain, and the
// normalised answer never occurs inside the normalised question.

import { JsonlParseError, parseJsonlObjects, requireString } from '../corpus.ts';
import { normalizeAnswer } from '../em.ts';
import { Rng, type Seed } from '../random.ts';
import { WorldIndex } from './index.ts';
import type { EntityType, Predicate, World } from './types.ts';

export type StepId =
  | 'birthplace'
  | 'birth_year'
  | 'organisation_of'
  | 'founder'
  | 'home_city'
  | 'founding_year'
  | 'author'
  | 'publisher'
  | 'publication_year'
  | 'country_of'
  | 'city_founding_year'
  | 'capital'
  | 'country_founding_year';

export interface StepDef {
  id: StepId;
  from: EntityType;
  to: EntityType | 'year';
  predicate: Predicate;
  /** Follow the relation from object to subject (capital: country <- capital_of - city). */
  inverse: boolean;
  /** Noun phrases for the reached entity, {x} = the description of the current one. */
  np: readonly string[];
  /** Questions asking for the reached entity or year. */
  ask: readonly string[];
}

export const STEPS: readonly StepDef[] = [
  {
    id: 'birthplace',
    from: 'person',
    to: 'city',
    predicate: 'born_in',
    inverse: false,
    np: ['the birthplace of {x}', 'the city of birth of {x}'],
    ask: ['In which city was {x} born?', 'What is the birthplace of {x}?'],
  },
  {
    id: 'birth_year',
    from: 'person',
    to: 'year',
    predicate: 'birth_year',
    inverse: false,
    np: [],
    ask: ['In what year was {x} born?', 'What is the birth year of {x}?'],
  },
  {
    id: 'organisation_of',
    from: 'person',
    to: 'organisation',
    predicate: 'member_of',
    inverse: false,
    np: ['the organisation joined by {x}', 'the organisation that was joined by {x}'],
    ask: ['Which organisation was joined by {x}?', 'Of which organisation was {x} a member?'],
  },
  {
    id: 'founder',
    from: 'organisation',
    to: 'person',
    predicate: 'founded_by',
    inverse: false,
    np: ['the founder of {x}', 'the person who founded {x}'],
    ask: ['Who founded {x}?', 'Who was the founder of {x}?'],
  },
  {
    id: 'home_city',
    from: 'organisation',
    to: 'city',
    predicate: 'located_in',
    inverse: false,
    np: ['the home city of {x}', 'the city that is home to {x}'],
    ask: ['Which city is home to {x}?', 'What is the home city of {x}?'],
  },
  {
    id: 'founding_year',
    from: 'organisation',
    to: 'year',
    predicate: 'founded_year',
    inverse: false,
    np: [],
    ask: ['In what year was {x} founded?', 'What is the founding year of {x}?'],
  },
  {
    id: 'author',
    from: 'work',
    to: 'person',
    predicate: 'created_by',
    inverse: false,
    np: ['the author of {x}', 'the person who wrote {x}'],
    ask: ['Who wrote {x}?', 'Who is the author of {x}?'],
  },
  {
    id: 'publisher',
    from: 'work',
    to: 'organisation',
    predicate: 'published_by',
    inverse: false,
    np: ['the publisher of {x}', 'the organisation that published {x}'],
    ask: ['Which organisation published {x}?', 'Who published {x}?'],
  },
  {
    id: 'publication_year',
    from: 'work',
    to: 'year',
    predicate: 'published_year',
    inverse: false,
    np: [],
    ask: ['In what year was {x} published?', 'What is the publication year of {x}?'],
  },
  {
    id: 'country_of',
    from: 'city',
    to: 'country',
    predicate: 'located_in',
    inverse: false,
    np: ['the country containing {x}', 'the country that contains {x}'],
    ask: ['Which country contains {x}?', 'In which country is {x}?'],
  },
  {
    id: 'city_founding_year',
    from: 'city',
    to: 'year',
    predicate: 'founded_year',
    inverse: false,
    np: [],
    ask: ['In what year was {x} founded?', 'What is the founding year of {x}?'],
  },
  {
    id: 'capital',
    from: 'country',
    to: 'city',
    predicate: 'capital_of',
    inverse: true,
    np: ['the capital of {x}', 'the capital city of {x}'],
    ask: ['What is the capital of {x}?', 'Which city is the capital of {x}?'],
  },
  {
    id: 'country_founding_year',
    from: 'country',
    to: 'year',
    predicate: 'founded_year',
    inverse: false,
    np: [],
    ask: ['In what year did {x} become a state?', 'What is the year in which {x} became a state?'],
  },
];

const STEP_BY_ID = new Map(STEPS.map((s) => [s.id, s]));

export function stepDef(id: StepId): StepDef {
  const s = STEP_BY_ID.get(id);
  if (!s) throw new Error(`unknown question step "${id}"`);
  return s;
}

/** One hop of a question's construction path. */
export interface PathStep {
  step: StepId;
  /** The entity the hop starts from; its passage states the fact. */
  from: string;
  /** The passage read in this hop (= the `from` entity's passage). */
  passage: string;
  predicate: Predicate;
  inverse: boolean;
  /** The entity reached, or the year. */
  to: string | number;
}

export interface WorldQuestion {
  question: string;
  /** Gold answers (the first is the canonical one). */
  answers: string[];
  hops: number;
  path: PathStep[];
}

/** Where one step leads from an entity: all values (entity ids or years) the relations give. */
export function follow(ix: WorldIndex, from: string, step: StepDef): readonly (string | number)[] {
  if (ix.entity(from).type !== step.from) return [];
  return step.inverse ? ix.subjects(from, step.predicate) : ix.objects(from, step.predicate);
}

/**
 * Every answer the chain of steps admits from the start entity, derived from the relations alone
 * (entity ids, or years). A well-formed question has exactly one.
 */
export function answersOfChain(ix: WorldIndex, start: string, steps: readonly StepId[]): (string | number)[] {
  let frontier: (string | number)[] = [start];
  for (const id of steps) {
    const def = stepDef(id);
    const next = new Set<string | number>();
    for (const v of frontier) if (typeof v === 'string') for (const t of follow(ix, v, def)) next.add(t);
    frontier = [...next];
  }
  return frontier;
}

/** The display form of a path target: the entity's name or the year. */
export function valueText(ix: WorldIndex, v: string | number): string {
  return typeof v === 'number' ? String(v) : ix.entity(v).name;
}

export interface QuestionOptions {
  /** Start entity id (e.g. the examiner's source document); random when absent. */
  start?: string;
  /** Allow a year as the answer (default true). */
  years?: boolean;
  /** Walks to try before giving up (default 40). */
  attempts?: number;
}

function capitalise(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
}

/** One random question of exactly `hops` steps, or null when none was found. */
export function generateQuestion(
  ix: WorldIndex,
  rng: Rng,
  hops: number,
  options: QuestionOptions = {},
): WorldQuestion | null {
  return generatePhrasedQuestion(ix, rng, hops, options)?.question ?? null;
}

/** generateQuestion's question with the descriptions it was phrased from (phraseQuestion), the same draws. */
export function generatePhrasedQuestion(
  ix: WorldIndex,
  rng: Rng,
  hops: number,
  options: QuestionOptions = {},
): { question: WorldQuestion; descriptions: string[] } | null {
  if (!(Number.isInteger(hops) && hops >= 1)) throw new RangeError(`generateQuestion: hops must be >= 1 (got ${hops})`);
  const entities = ix.world.entities;
  const attempts = options.attempts ?? 40;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const start = options.start ?? rng.pick(entities).id;
    const visited = new Set([start]);
    const path: PathStep[] = [];
    let cur = start;
    for (let h = 0; h < hops; h++) {
      const last = h === hops - 1;
      const options_: { def: StepDef; to: string | number }[] = [];
      for (const def of STEPS) {
        if (def.from !== ix.entity(cur).type) continue;
        if (def.to === 'year' && (!last || options.years === false)) continue;
        const targets = follow(ix, cur, def);
        if (targets.length !== 1) continue; // absent (e.g. no membership) or not functional
        const to = targets[0]!;
        if (typeof to === 'string' && visited.has(to)) continue;
        options_.push({ def, to });
      }
      if (!options_.length) break;
      const { def, to } = rng.pick(options_);
      path.push({ step: def.id, from: cur, passage: cur, predicate: def.predicate, inverse: def.inverse, to });
      if (typeof to === 'string') {
        visited.add(to);
        cur = to;
      }
    }
    if (path.length !== hops) continue;
    const { question, descriptions } = phraseQuestion(ix, path, rng);
    const answer = valueText(ix, path[hops - 1]!.to);
    if (normalizeAnswer(question).includes(normalizeAnswer(answer))) continue;
    return { question: { question, answers: [answer], hops, path }, descriptions };
  }
  return null;
}

/**
 * The words of a question along `path`: descriptions[h] names the entity hop h starts from (the start's
 * name, then "the birthplace of <name>", "the country containing the birthplace of <name>", ...), and the
 * question asks the last step of the last description.
 */
function phraseQuestion(
  ix: WorldIndex,
  path: readonly PathStep[],
  rng: Rng,
): { question: string; descriptions: string[] } {
  const descriptions = [ix.entity(path[0]!.from).name];
  for (const p of path.slice(0, -1))
    descriptions.push(rng.pick(stepDef(p.step).np).replace('{x}', descriptions.at(-1)!));
  // A long nested description reads better at the end of the question: from 3 hops on, prefer the
  // templates that end with {x}.
  const asks = stepDef(path.at(-1)!.step).ask;
  const endPlaced = asks.filter((t) => t.endsWith('{x}?'));
  const question = capitalise(
    rng.pick(path.length > 2 && endPlaced.length ? endPlaced : asks).replace('{x}', descriptions.at(-1)!),
  );
  return { question, descriptions };
}

export interface EvalSetOptions {
  /** Questions per hop count (default 25). */
  perHop?: number;
  seed?: Seed;
  /** Hop counts to cover (default 1, 2, 3, 4). */
  hops?: readonly number[];
}

/**
 * A held-out evaluation set: `perHop` distinct questions for each hop count, start entities spread
 * over the world (each start used once per hop count while possible). Fewer when the world is too small.
 */
export function makeEvalSet(world: World | WorldIndex, options: EvalSetOptions = {}): WorldQuestion[] {
  const ix = world instanceof WorldIndex ? world : new WorldIndex(world);
  const perHop = options.perHop ?? 25;
  const root = new Rng(options.seed ?? 'eval');
  const out: WorldQuestion[] = [];
  const seen = new Set<string>();
  for (const hops of options.hops ?? [1, 2, 3, 4]) {
    const rng = root.fork(`hops-${hops}`);
    let got = 0;
    for (let pass = 0; pass < 3 && got < perHop; pass++) {
      for (const e of rng.shuffle(ix.world.entities)) {
        if (got >= perHop) break;
        const q = generateQuestion(ix, rng, hops, { start: e.id, attempts: 4 });
        if (!q || seen.has(q.question)) continue;
        seen.add(q.question);
        out.push(q);
        got++;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// JSONL: one {question, answers, hops, path} per line.

export function evalSetToJsonl(questions: readonly WorldQuestion[]): string {
  return (
    questions
      .map((q) => JSON.stringify({ question: q.question, answers: q.answers, hops: q.hops, path: q.path }))
      .join('\n') + (questions.length ? '\n' : '')
  );
}

function parsePathStep(v: unknown, source: string, line: number, i: number): PathStep {
  const bad = (what: string) => new JsonlParseError(source, line, `path[${i}]: ${what}`);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('expected an object');
  const o = v as Record<string, unknown>;
  if (typeof o.step !== 'string' || !STEP_BY_ID.has(o.step as StepId))
    throw bad(`unknown step ${JSON.stringify(o.step)}`);
  const def = stepDef(o.step as StepId);
  for (const k of ['from', 'passage'] as const)
    if (typeof o[k] !== 'string' || o[k] === '') throw bad(`"${k}" must be a non-empty string`);
  if (typeof o.to !== 'string' && typeof o.to !== 'number') throw bad('"to" must be a string or a number');
  return {
    step: def.id,
    from: o.from as string,
    passage: o.passage as string,
    predicate: def.predicate,
    inverse: def.inverse,
    to: o.to,
  };
}

/** Parses an eval set; errors name the source and 1-based line. */
export function parseEvalSetJsonl(text: string, sourceName: string): WorldQuestion[] {
  return parseJsonlObjects(text, sourceName).map(({ line, value }) => {
    const question = requireString(value, 'question', sourceName, line);
    const answers = value.answers;
    if (
      !Array.isArray(answers) ||
      answers.length === 0 ||
      !answers.every((a) => typeof a === 'string' && a.trim() !== '')
    ) {
      throw new JsonlParseError(sourceName, line, '"answers" must be a non-empty array of non-empty strings');
    }
    const hops = value.hops;
    if (typeof hops !== 'number' || !Number.isInteger(hops) || hops < 1)
      throw new JsonlParseError(sourceName, line, '"hops" must be an integer >= 1');
    const rawPath = value.path ?? [];
    if (!Array.isArray(rawPath)) throw new JsonlParseError(sourceName, line, '"path" must be an array');
    const path = rawPath.map((s, i) => parsePathStep(s, sourceName, line, i));
    if (path.length && path.length !== hops)
      throw new JsonlParseError(sourceName, line, `"path" has ${path.length} steps but "hops" is ${hops}`);
    return { question, answers: answers as string[], hops, path };
  });
}
