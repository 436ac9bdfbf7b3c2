// Renders each entity as an encyclopedia passage {id, title, text} that states the entity's own facts
// (and the inverse facts about it: works it wrote, organisations it founded, cities of a country) in
// varied sentences, several templates per relation. A passage never states a fact two relations away,
// so a k-hop question needs k passages. The entity's name opens the text and its short name recurs, so
// BM25 over the name ranks its own passage first.

import type { Passage } from '../corpus.ts';
import type { Rng } from '../random.ts';
import type { WorldIndex } from './index.ts';
import type { Entity } from './types.ts';

type Fill = Record<string, string | number>;

function fill(template: string, values: Fill): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = values[k];
    if (v === undefined) throw new Error(`render: no value for {${k}} in "${template}"`);
    return String(v);
  });
}

/** "A", "A and B", "A, B and C". */
export function listPhrase(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

/** The name used after the first mention: a person's family name, otherwise the full name. */
export function shortName(e: Entity): string {
  return e.type === 'person' ? e.name.split(' ').slice(-1)[0]! : e.name;
}

const T = {
  personIntro: [
    '{N} was {a} {kind} born in {city} in {year}.',
    '{N} (born {year} in {city}) was {a} {kind}.',
    '{N} was {a} {kind}. {S} was born in {year} in the city of {city}.',
    'Born in {city} in {year}, {N} became a well-known {kind}.',
  ],
  member: ['{S} was a member of {org}.', '{S} belonged to {org}.', 'Later in life {S} joined {org}.'],
  founded: ['{S} founded {org} in {oyear}.', 'In {oyear}, {S} established {org}.'],
  wrote: ['{S} wrote {works}.', '{S} is the author of {works}.', 'Works by {S} include {works}.'],
  personFeature: ['{S} was known for {feature}.', 'Contemporaries remembered {S} for {feature}.'],

  orgIntro: [
    '{N} is {a} {kind} based in {city}.',
    '{N} is {a} {kind} in the city of {city}.',
    'Based in {city}, {N} is {a} {kind}.',
  ],
  orgFounded: [
    '{N} was founded in {year} by {founder}.',
    '{founder} founded {N} in {year}.',
    'The founder of {N} was {founder}, who established it in {year}.',
  ],
  orgMembers: ['Members of {N} have included {members}.', 'Among the members of {N} were {members}.'],
  orgPublished: ['{N} published {works}.', 'Works published by {N} include {works}.'],
  orgFeature: ['{N} is known for {feature}.'],

  workIntro: [
    '{N} is {a} {kind} by {author}, published by {publisher} in {year}.',
    '{N} is {a} {kind} written by {author}. It was published in {year} by {publisher}.',
    'First published by {publisher} in {year}, {N} is {a} {kind} by {author}.',
    '{author} wrote the {kind} {N}, which {publisher} published in {year}.',
  ],
  workFeature: ['{N} is noted for {feature}.', 'The {kind} is noted for {feature}.'],

  cityIntro: [
    '{N} is a city in {country}.',
    '{N} is a city located in {country}.',
    'The city of {N} lies in {country}.',
  ],
  capital: ['{N} is the capital of {country}.', '{N} serves as the capital of {country}.'],
  cityFounded: [
    '{N} was founded in {year}.',
    'The city of {N} was founded in {year}.',
    '{N} dates its founding to {year}.',
  ],
  cityFeature: ['{N} is known for {feature}.', 'Visitors to {N} admire {feature}.'],

  countryIntro: [
    '{N} is a country whose capital is {capital}.',
    '{N} is a country. Its capital is {capital}.',
    'The capital of the country of {N} is {capital}.',
  ],
  countryFounded: ['{N} was established as a state in {year}.', '{N} became a state in {year}.'],
  countryCities: ['Other cities in {N} include {cities}.', 'Besides {capital}, the cities of {N} include {cities}.'],
  countryFeature: ['{N} is known for {feature}.'],
};

function nameOf(ix: WorldIndex, id: string | number | undefined): string {
  if (typeof id !== 'string') throw new Error(`render: expected an entity id, got ${String(id)}`);
  return ix.entity(id).name;
}

/** The sentences of one entity's passage (first sentence first, the rest in varied order). */
function sentences(e: Entity, ix: WorldIndex, r: Rng): string[] {
  const base: Fill = { N: e.name, S: shortName(e), kind: e.kind, a: article(e.kind), year: e.year, feature: e.feature };
  const say = (templates: readonly string[], extra: Fill = {}) => fill(r.pick(templates), { ...base, ...extra });
  const names = (ids: readonly string[], max: number) => listPhrase(r.sample(ids, max).map((id) => ix.entity(id).name));
  const rest: string[] = [];
  let intro: string;
  switch (e.type) {
    case 'person': {
      intro = say(T.personIntro, { city: nameOf(ix, ix.one(e.id, 'born_in')) });
      const org = ix.one(e.id, 'member_of');
      if (org !== undefined) rest.push(say(T.member, { org: nameOf(ix, org) }));
      for (const o of ix.subjects(e.id, 'founded_by'))
        rest.push(say(T.founded, { org: ix.entity(o).name, oyear: ix.entity(o).year }));
      const works = ix.subjects(e.id, 'created_by');
      if (works.length) rest.push(say(T.wrote, { works: names(works, 3) }));
      if (r.chance(0.7)) rest.push(say(T.personFeature));
      break;
    }
    case 'organisation': {
      intro = say(T.orgIntro, { city: nameOf(ix, ix.one(e.id, 'located_in')) });
      rest.push(say(T.orgFounded, { founder: nameOf(ix, ix.one(e.id, 'founded_by')) }));
      const members = ix.subjects(e.id, 'member_of');
      if (members.length) rest.push(say(T.orgMembers, { members: names(members, 2) }));
      const works = ix.subjects(e.id, 'published_by');
      if (works.length) rest.push(say(T.orgPublished, { works: names(works, 2) }));
      if (r.chance(0.6)) rest.push(say(T.orgFeature));
      break;
    }
    case 'work': {
      intro = say(T.workIntro, {
        author: nameOf(ix, ix.one(e.id, 'created_by')),
        publisher: nameOf(ix, ix.one(e.id, 'published_by')),
      });
      if (r.chance(0.7)) rest.push(say(T.workFeature));
      break;
    }
    case 'city': {
      const country = nameOf(ix, ix.one(e.id, 'located_in'));
      intro = say(T.cityIntro, { country });
      const capitalOf = ix.one(e.id, 'capital_of');
      if (capitalOf !== undefined) rest.push(say(T.capital, { country: nameOf(ix, capitalOf) }));
      rest.push(say(T.cityFounded));
      if (r.chance(0.7)) rest.push(say(T.cityFeature));
      break;
    }
    case 'country': {
      const capitalId = ix.subjects(e.id, 'capital_of')[0];
      const capital = nameOf(ix, capitalId);
      intro = say(T.countryIntro, { capital });
      rest.push(say(T.countryFounded));
      const others = ix.subjects(e.id, 'located_in').filter((c) => c !== capitalId);
      if (others.length) rest.push(say(T.countryCities, { capital, cities: names(others, 4) }));
      if (r.chance(0.6)) rest.push(say(T.countryFeature));
      break;
    }
  }
  return [intro, ...r.shuffle(rest)];
}

/** One passage per entity, in entity order; `rng` is forked per entity id so passages are stable. */
export function renderPassages(ix: WorldIndex, rng: Rng): Passage[] {
  return ix.world.entities.map((e) => ({ id: e.id, title: e.name, text: sentences(e, ix, rng.fork(e.id)).join(' ') }));
}
