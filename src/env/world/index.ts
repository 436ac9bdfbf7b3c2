// Look-ups over a world's relations (built once per world, not stored in it).

import type { Entity, Predicate, Relation, World } from './types.ts';

export class WorldIndex {
  readonly byId = new Map<string, Entity>();
  readonly byName = new Map<string, Entity[]>();
  private readonly out = new Map<string, (string | number)[]>();
  private readonly inc = new Map<string, string[]>();

  constructor(readonly world: World) {
    for (const e of world.entities) {
      this.byId.set(e.id, e);
      const key = e.name.toLowerCase();
      const list = this.byName.get(key);
      if (list) list.push(e);
      else this.byName.set(key, [e]);
    }
    for (const r of world.relations) this.add(r);
  }

  private add(r: Relation): void {
    const k = `${r.subject}|${r.predicate}`;
    const list = this.out.get(k);
    if (list) list.push(r.object);
    else this.out.set(k, [r.object]);
    if (typeof r.object === 'string') {
      const ki = `${r.object}|${r.predicate}`;
      const li = this.inc.get(ki);
      if (li) li.push(r.subject);
      else this.inc.set(ki, [r.subject]);
    }
  }

  entity(id: string): Entity {
    const e = this.byId.get(id);
    if (!e) throw new Error(`unknown entity ${id}`);
    return e;
  }

  /** Objects of (subject, predicate): entity ids, or years for year predicates. */
  objects(subject: string, predicate: Predicate): readonly (string | number)[] {
    return this.out.get(`${subject}|${predicate}`) ?? [];
  }

  /** Subjects s with (s, predicate, object). */
  subjects(object: string, predicate: Predicate): readonly string[] {
    return this.inc.get(`${object}|${predicate}`) ?? [];
  }

  /** The single object of a functional relation, or undefined when absent (throws when several). */
  one(subject: string, predicate: Predicate): string | number | undefined {
    const list = this.objects(subject, predicate);
    if (list.length > 1) throw new Error(`${subject} has ${list.length} ${predicate} objects`);
    return list[0];
  }
}
