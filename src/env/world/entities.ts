// The knowledge graph of a world: entities with names, kinds and years, and typed relations.
//
// Every relation a question can follow is functional in the direction questions use it:
// a person has one birthplace, one birth year, at most one organisation; an organisation one founder,
// one city, one founding year; a work one author, one publisher, one year; a city one country; a country
// exactly one capital. Years are plausible (people are born before they found or write anything; a work
// is published by an organisation that already exists).

import type { Rng } from '../random.ts';
import { NameForge } from './names.ts';
import type { Entity, EntityType, Relation } from './types.ts';

/** Occupations; those with a work kind write works. */
export const OCCUPATIONS: readonly { occupation: string; work?: string }[] = [
  { occupation: 'novelist', work: 'novel' },
  { occupation: 'poet', work: 'poetry collection' },
  { occupation: 'historian', work: 'chronicle' },
  { occupation: 'cartographer', work: 'atlas' },
  { occupation: 'philosopher', work: 'treatise' },
  { occupation: 'playwright', work: 'play' },
  { occupation: 'composer', work: 'song cycle' },
  { occupation: 'astronomer', work: 'star catalogue' },
  { occupation: 'botanist', work: 'herbal' },
  { occupation: 'engineer' },
  { occupation: 'physician' },
  { occupation: 'merchant' },
  { occupation: 'painter' },
  { occupation: 'diplomat' },
  { occupation: 'architect' },
];

/** Organisation kinds with their name patterns ({X} = an invented word); `publishes` marks publishers. */
export const ORG_KINDS: readonly { kind: string; patterns: readonly string[]; publishes: boolean }[] = [
  { kind: 'university', patterns: ['{X} University'], publishes: true },
  { kind: 'publishing house', patterns: ['{X} Press', '{X} House'], publishes: true },
  { kind: 'learned society', patterns: ['{X} Society'], publishes: true },
  { kind: 'academy', patterns: ['{X} Academy'], publishes: true },
  { kind: 'trading company', patterns: ['{X} Trading Company'], publishes: false },
  { kind: 'guild', patterns: ['{X} Guild'], publishes: false },
  { kind: 'observatory', patterns: ['{X} Observatory'], publishes: false },
  { kind: 'conservatory', patterns: ['{X} Conservatory'], publishes: false },
];

const WORK_TITLES = [
  '{X}',
  'The {X}',
  'Songs of {X}',
  'The Book of {X}',
  'Letters from {X}',
  'A History of {X}',
  'Beyond {X}',
  'The {X} Papers',
];

const FEATURES: Record<EntityType, readonly string[]> = {
  country: [
    'its high plateaus',
    'its long coastline',
    'its lake district',
    'its wool trade',
    'its mountain passes',
    'its amber mines',
    'its river deltas',
    'its pine forests',
  ],
  city: [
    'its river harbour',
    'its covered markets',
    'its bell towers',
    'its salt works',
    'its glass makers',
    'its terraced vineyards',
    'its old stone bridge',
    'its spring fair',
    'its canals',
    'its lighthouse',
  ],
  organisation: [
    'its library of maps',
    'its annual lectures',
    'its printing workshop',
    'its grand hall',
    'its prizes for young scholars',
    'its archives',
  ],
  person: [
    'careful prose',
    'bold experiments',
    'long travels',
    'clear lectures',
    'detailed notebooks',
    'public debates',
    'a quarrelsome temper',
    'generous patronage',
  ],
  work: [
    'its vivid descriptions',
    'its unusual structure',
    'its many illustrations',
    'its long prologue',
    'its plain language',
    'its careful footnotes',
  ],
};

/** How many entities of each type a world of `size` entities gets (exactly `size` when size >= 20). */
export function entityCounts(size: number): Record<EntityType, number> {
  const country = Math.max(2, Math.round(size * 0.04));
  const city = Math.max(2 * country, Math.round(size * 0.18));
  const organisation = Math.max(3, Math.round(size * 0.18));
  const work = Math.max(3, Math.round(size * 0.22));
  const person = Math.max(6, size - country - city - organisation - work);
  return { country, city, organisation, person, work };
}

export interface Graph {
  entities: Entity[];
  relations: Relation[];
}

/** Builds the entities and relations of a world; deterministic in `rng`'s seed. */
export function buildGraph(rng: Rng, size: number): Graph {
  const counts = entityCounts(size);
  const forge = new NameForge(rng.fork('names'));
  const r = rng.fork('graph');
  const entities: Entity[] = [];
  const relations: Relation[] = [];
  const make = (type: EntityType, index: number, name: string, kind: string, year: number): Entity => {
    const e: Entity = { id: `${type}-${index}`, type, name, kind, year, feature: r.pick(FEATURES[type]) };
    entities.push(e);
    return e;
  };

  // Countries and cities: the first city of each country is its capital.
  const countries: Entity[] = [];
  for (let i = 0; i < counts.country; i++)
    countries.push(make('country', i, forge.word('country'), 'country', r.int(900, 1600)));
  const cities: Entity[] = [];
  for (let i = 0; i < counts.city; i++) {
    const country = i < countries.length ? countries[i]! : r.pick(countries);
    const city = make('city', i, forge.word('city'), 'city', r.int(700, 1650));
    cities.push(city);
    relations.push({ subject: city.id, predicate: 'located_in', object: country.id });
    if (i < countries.length) relations.push({ subject: city.id, predicate: 'capital_of', object: country.id });
    relations.push({ subject: city.id, predicate: 'founded_year', object: city.year });
  }
  for (const c of countries) relations.push({ subject: c.id, predicate: 'founded_year', object: c.year });

  // People: about 60% have an occupation that writes.
  const writing = OCCUPATIONS.filter((o) => o.work);
  const other = OCCUPATIONS.filter((o) => !o.work);
  const people: Entity[] = [];
  const birthplace = new Map<string, string>();
  for (let i = 0; i < counts.person; i++) {
    const occ = r.chance(0.6) ? r.pick(writing) : r.pick(other);
    const p = make('person', i, `${forge.word('given')} ${forge.word('family')}`, occ.occupation, r.int(1650, 1940));
    people.push(p);
    const city = r.pick(cities);
    birthplace.set(p.id, city.id);
    relations.push({ subject: p.id, predicate: 'born_in', object: city.id });
    relations.push({ subject: p.id, predicate: 'birth_year', object: p.year });
  }

  // Organisations: founders cycle through a shuffled list of people, so few people found two.
  const orgs: Entity[] = [];
  const founderOf = new Map<string, string>();
  let founders = r.shuffle(people);
  for (let i = 0; i < counts.organisation; i++) {
    if (founders.length === 0) founders = r.shuffle(people);
    const founder = founders.pop()!;
    const kind = r.pick(ORG_KINDS);
    const name = r.pick(kind.patterns).replace('{X}', forge.word('org'));
    const org = make('organisation', i, name, kind.kind, founder.year + r.int(25, 60));
    orgs.push(org);
    founderOf.set(org.id, founder.id);
    const homeChoices = cities.filter((c) => c.id !== birthplace.get(founder.id));
    relations.push({ subject: org.id, predicate: 'founded_by', object: founder.id });
    relations.push({
      subject: org.id,
      predicate: 'located_in',
      object: r.pick(homeChoices.length ? homeChoices : cities).id,
    });
    relations.push({ subject: org.id, predicate: 'founded_year', object: org.year });
  }

  // Membership: at most one organisation per person, one that existed by the time they were 50.
  for (const p of people) {
    if (!r.chance(0.75)) continue;
    const open = orgs.filter((o) => o.year <= p.year + 50 && founderOf.get(o.id) !== p.id);
    if (open.length) relations.push({ subject: p.id, predicate: 'member_of', object: r.pick(open).id });
  }

  // Works: written by people with a writing occupation, published by an organisation already founded.
  const writers = people.filter((p) => writing.some((o) => o.occupation === p.kind));
  const authors = writers.length ? writers : people;
  let queue = r.shuffle(authors);
  const publishers = orgs.filter((o) => ORG_KINDS.find((k) => k.kind === o.kind)!.publishes);
  for (let i = 0; i < counts.work; i++) {
    if (queue.length === 0) queue = r.shuffle(authors);
    const author = queue.pop()!;
    const kind = OCCUPATIONS.find((o) => o.occupation === author.kind)?.work ?? 'memoir';
    let year = author.year + r.int(20, 60);
    const candidates = publishers.filter((o) => o.year <= year);
    const fallback = orgs.filter((o) => o.year <= year);
    let publisher: Entity;
    if (candidates.length) publisher = r.pick(candidates);
    else if (fallback.length) publisher = r.pick(fallback);
    else {
      publisher = orgs.reduce((a, b) => (b.year < a.year ? b : a));
      year = Math.max(year, publisher.year + r.int(1, 20));
    }
    const title = r.pick(WORK_TITLES).replace('{X}', forge.word('work'));
    const work = make('work', i, title, kind, year);
    relations.push({ subject: work.id, predicate: 'created_by', object: author.id });
    relations.push({ subject: work.id, predicate: 'published_by', object: publisher.id });
    relations.push({ subject: work.id, predicate: 'published_year', object: work.year });
  }

  return { entities, relations };
}
