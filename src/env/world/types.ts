// The data of a generated world: entities, typed relations between them, and one passage per entity.
// Plain JSON-able data; indexes are built separately (see index.ts).

import type { Passage } from '../corpus.ts';

export type EntityType = 'country' | 'city' | 'organisation' | 'person' | 'work';
export const ENTITY_TYPES: readonly EntityType[] = ['country', 'city', 'organisation', 'person', 'work'];

export interface Entity {
  /** Also the id of the entity's passage. */
  id: string;
  type: EntityType;
  /** Unique in the world; also the passage title. */
  name: string;
  /** A descriptor: occupation (person), kind (organisation: "university"…; work: "novel"…), 'city', 'country'. */
  kind: string;
  /** Birth year (person), founding year (country, city, organisation), publication year (work). */
  year: number;
  /** A flavour phrase used only in the passage text (no facts that questions use). */
  feature: string;
}

/** Relations between entities; subject type -> object type. */
export type LinkPredicate =
  | 'located_in' // city -> country, organisation -> city
  | 'capital_of' // city -> country (exactly one per country)
  | 'born_in' // person -> city
  | 'member_of' // person -> organisation (at most one)
  | 'founded_by' // organisation -> person
  | 'created_by' // work -> person
  | 'published_by'; // work -> organisation

/** Year attributes (the object is a number). */
export type YearPredicate = 'birth_year' | 'founded_year' | 'published_year';

export type Predicate = LinkPredicate | YearPredicate;

export const YEAR_PREDICATES: readonly YearPredicate[] = ['birth_year', 'founded_year', 'published_year'];

export function isYearPredicate(p: Predicate): p is YearPredicate {
  return (YEAR_PREDICATES as readonly string[]).includes(p);
}

export type Relation =
  | { subject: string; predicate: LinkPredicate; object: string }
  | { subject: string; predicate: YearPredicate; object: number };

export interface World {
  /** The seed as given to generateWorld (generateWorld({seed, size}) rebuilds this world). */
  seed: number | string;
  /** The requested number of entities (= passages). */
  size: number;
  entities: Entity[];
  relations: Relation[];
  /** One per entity, same order, passage.id = entity.id, passage.title = entity.name. */
  passages: Passage[];
}
