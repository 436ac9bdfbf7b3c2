// The pretraining text: an endless, seeded stream of documents from generated worlds other than the
// default one. Each world contributes its encyclopedia passages, transcripts of a scripted student
// (mostly 1-hop questions: multi-hop solving stays scarce, so self-play has something to teach),
// transcripts of a scripted examiner (hop counts 1..4 in the ratio 4:3:2:1 of ALGORITHM.md) and, where
// asked for, transcripts of the scripted student given the teacher's privileged prompt, shuffled together.
// Multi-hop solving in those follows the privileged notes: it is what self-play's teacher knows and the
// student must learn.
import { Rng, seedToInt, type Seed } from '../env/random.ts';
import { generateQuestion, generateWorld, WorldIndex, YARDSTICK_SEEDS } from '../env/world.ts';
import type { PrivilegedMode } from '../env/prompts.ts';
import {
  answerTargetsOnly,
  copyDrill,
  examinerTranscript,
  passageDoc,
  scriptWorld,
  studentTranscript,
  teacherTranscript,
  type Doc,
} from './transcripts.ts';
import type { DataSettings } from './options.ts';
import { PRETRAIN_DEFAULTS, settingsToOptions } from './settings.ts';

export type { DataSettings };

/** The seed of the default (shipped, evaluated) world; pretraining never uses it. */
export const DEFAULT_WORLD_SEED = 1;

/**
 * The defaults of the data settings: those the settings table declares (PRETRAIN_FIELDS, the page's and the
 * CLI's fields) come from it, so each is stated once; the rest are not settings of a run.
 */
export const DATA_DEFAULTS = {
  teacherModes: [5, 2, 2, 1],
  examinerHops: [4, 3, 2, 1],
  drillNames: [3, 8],
  ...settingsToOptions(PRETRAIN_DEFAULTS).data,
} as Readonly<Required<Omit<DataSettings, 'seed'>>>;

/** The privileged modes of teacher transcripts, in the order of DataSettings.teacherModes. */
export const TEACHER_MODES: readonly Exclude<PrivilegedMode, 'none'>[] = ['full', 'partial', 'gt', 'gt-hop'];

/** Worlds pretraining never draws: the default (self-play) world and the held-out yardstick's. */
const RESERVED_WORLDS = new Set([DEFAULT_WORLD_SEED, ...Object.values(YARDSTICK_SEEDS)].map(seedToInt));

/** The seed of the k-th pretraining world (a string, never a reserved world's seed). */
export function worldSeed(seed: number, k: number): Seed {
  for (let salt = 0; ; salt++) {
    const s = `pretrain-${seed}-${k}${salt ? `-${salt}` : ''}`;
    if (!RESERVED_WORLDS.has(seedToInt(s))) return s;
  }
}

/**
 * Appends `count` documents that `make` writes (given how many it made so far), trying at most 20 times as
 * often: a try may find no question or transcript.
 */
function addDocs(docs: Doc[], count: number, make: (made: number) => Doc | null): void {
  for (let made = 0, tries = 0; made < count && tries < 20 * count; tries++) {
    const doc = make(made);
    if (doc) {
      docs.push(doc);
      made++;
    }
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
  addDocs(docs, o.studentPerWorld, () => {
    const hops = 1 + qr.weightedIndex(o.studentHops);
    const q = generateQuestion(w.ix, qr, hops);
    return q && studentTranscript(w, q);
  });
  const tr = rng.fork('teacher');
  addDocs(docs, o.teacherPerWorld, (made) => {
    const hops = 1 + tr.weightedIndex(o.teacherHops);
    const mode = TEACHER_MODES[tr.weightedIndex(o.teacherModes)]!;
    const q = generateQuestion(w.ix, tr, hops);
    // Drawn only when asked for, so that runs without slips keep their text.
    const rng = o.teacherSlips > 0 && tr.chance(o.teacherSlips) ? tr.fork(`slip-${made}`) : null;
    const slip = rng && {
      rng,
      stop: o.teacherSlipStops > 0 && rng.fork('stop').chance(o.teacherSlipStops),
      blind: o.teacherSlipBlind > 0 && rng.fork('blind').chance(o.teacherSlipBlind),
    };
    const compact = o.teacherCompact > 0 && tr.chance(o.teacherCompact);
    // A fork, as below, so that the share changes only how the chosen notes are rendered.
    const first = compact && o.teacherAnswerFirst > 0 && tr.fork(`answer-first-${made}`).chance(o.teacherAnswerFirst);
    const notes = first ? 'answer-first' : compact ? 'compact' : 'passages';
    // A fork, so that the share changes which transcripts train the answer only and never their text.
    const answerOnly = o.teacherAnswerOnly > 0 && tr.fork(`answer-only-${made}`).chance(o.teacherAnswerOnly);
    const doc = q && teacherTranscript(w, q, mode, { seed: `pretrain-${o.seed}-${k}-${made}`, notes }, slip);
    return doc && answerOnly ? answerTargetsOnly(doc) : doc;
  });
  const er = rng.fork('examiner');
  addDocs(docs, o.examinerPerWorld, () => {
    const hops = 1 + er.weightedIndex(o.examinerHops);
    return examinerTranscript(w, er.pick(world.passages), hops, er);
  });
  const dr = rng.fork('drills');
  const names = world.entities.map((e) => e.name);
  for (let i = 0; i < o.drillsPerWorld; i++) {
    const n = o.drillNames[0] + dr.int(o.drillNames[1] - o.drillNames[0] + 1);
    docs.push(copyDrill(dr.sample(names, Math.min(n, names.length))));
  }
  return rng.fork('order').shuffle(docs);
}

/** Every document of worlds 0, 1, 2, ... forever. */
export function* docStream(settings: DataSettings): Generator<Doc> {
  for (let k = 0; ; k++) yield* worldDocs(settings, k);
}
