// The pretraining text: an endless, seeded stream of documents from generated worlds other than the
// default one. Each world contributes its encyclopedia passages, transcripts of a scripted student
// (mostly 1-hop questions: multi-hop solving stays scarce, so self-play has something to teach) and
// transcripts of a scripted examiner (hop counts 1..4 in the ratio 4:3:2:1 of ALGORITHM.md), shuffled
// together.
import { Rng, seedToInt, type Seed } from '../env/random.ts';
import { generateQuestion, generateWorld, WorldIndex } from '../env/world.ts';
import { examinerTranscript, passageDoc, scriptWorld, studentTranscript, type Doc } from './transcripts.ts';

/** The seed of the default (shipped, evaluated) world; pretraining never uses it. */
export const DEFAULT_WORLD_SEED = 1;

export interface DataSettings {
  seed: number;
  /** Entities (= passages) per world (default 400, the default world's size). */
  worldSize?: number;
  /** Student transcripts per world (default 150). */
  studentPerWorld?: number;
  /** Weights of the student's hop counts 1, 2, 3, ... (default [0.9, 0.08, 0.02]). */
  studentHops?: readonly number[];
  /** Examiner transcripts per world (default 75). */
  examinerPerWorld?: number;
  /** Weights of the examiner's hop counts 1, 2, 3, 4 (default 4:3:2:1). */
  examinerHops?: readonly number[];
}

export const DATA_DEFAULTS = {
  worldSize: 400,
  studentPerWorld: 150,
  studentHops: [0.9, 0.08, 0.02],
  examinerPerWorld: 75,
  examinerHops: [4, 3, 2, 1],
} as const;

/** The seed of the k-th pretraining world (a string, never the default world's seed). */
export function worldSeed(seed: number, k: number): Seed {
  for (let salt = 0; ; salt++) {
    const s = `pretrain-${seed}-${k}${salt ? `-${salt}` : ''}`;
    if (seedToInt(s) !== seedToInt(DEFAULT_WORLD_SEED)) return s;
  }
}

/** The documents of world k, in a seeded random order. */
export function worldDocs(settings: DataSettings, k: number): Doc[] {
  const o = { ...DATA_DEFAULTS, ...settings };
  const world = generateWorld({ seed: worldSeed(o.seed, k), size: o.worldSize });
  const w = scriptWorld(new WorldIndex(world));
  const rng = new Rng(`pretrain-docs-${o.seed}-${k}`);
  const docs: Doc[] = world.passages.map(passageDoc);
  const qr = rng.fork('student');
  for (let made = 0, tries = 0; made < o.studentPerWorld && tries < 20 * o.studentPerWorld; tries++) {
    const hops = 1 + qr.weightedIndex(o.studentHops);
    const q = generateQuestion(w.ix, qr, hops);
    const doc = q && studentTranscript(w, q);
    if (doc) {
      docs.push(doc);
      made++;
    }
  }
  const er = rng.fork('examiner');
  for (let made = 0, tries = 0; made < o.examinerPerWorld && tries < 20 * o.examinerPerWorld; tries++) {
    const hops = 1 + er.weightedIndex(o.examinerHops);
    const doc = examinerTranscript(w, er.pick(world.passages), hops, er);
    if (doc) {
      docs.push(doc);
      made++;
    }
  }
  return rng.fork('order').shuffle(docs);
}

/** Every document of worlds 0, 1, 2, ... forever. */
export function* docStream(settings: DataSettings): Generator<Doc> {
  for (let k = 0; ; k++) yield* worldDocs(settings, k);
}
