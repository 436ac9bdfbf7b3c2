// What the policies act on: the corpus with its BM25 search tool, how source documents and hop counts are
// drawn, the held-out evaluation questions, and (world corpus only) world-generated training questions
// for the project's fallback when the examiner writes too few valid ones.
import {
  Bm25Index,
  WorldIndex,
  auditQuestion,
  generateQuestion,
  generateWorld,
  makeEvalSet,
  worldQcp,
  yardstickQuestions,
  yardstickWorld,
  type Passage,
  type Qcp,
  type QuestionVerdict,
  type Rng,
  type World,
  type WorldQuestion,
} from '../env/index.ts';
import { DenseIndex, transformersEmbedder, type Embedder } from '../env/dense.ts';
import type { SelfPlayConfig } from './config.ts';

/** A question the student trains on, with how it was made (the teacher's privileged context). */
export interface TrainQuestion {
  id: string;
  question: string;
  answer: string;
  hops: number;
  qcp: Qcp;
  /** 'examiner' (self-play) or 'world' (the fallback). */
  origin: 'examiner' | 'world';
}

export interface EvalQuestion {
  /** Stable across runs and arms (per-question records pair on it). */
  id: string;
  question: string;
  answers: string[];
  hops: number;
}

export class Environment {
  readonly index: Bm25Index;
  private readonly worldIndex: WorldIndex | null;
  /** Where evaluation asks evalSet and searches: this environment, or a held-out world's (its own corpus). */
  readonly heldOut: Environment;

  constructor(
    readonly passages: readonly Passage[],
    readonly evalSet: readonly EvalQuestion[],
    readonly topK: number,
    readonly world: World | null = null,
    heldOut: Environment | null = null,
  ) {
    if (passages.length === 0) throw new Error('piplay: the corpus is empty');
    if (heldOut && heldOut.evalSet !== evalSet)
      throw new Error('piplay: an environment with a held-out world asks that world’s questions');
    this.index = new Bm25Index(passages);
    this.worldIndex = world ? new WorldIndex(world) : null;
    this.heldOut = heldOut ?? this;
  }

  /**
   * The fictional world of the config (seeded) with its held-out questions: from the yardstick's unseen world
   * (--eval-world dev or test, searched through that world's corpus) or the training world's own held-out set
   * (makeEvalSet's seed, as public/worlds/ has it).
   */
  static fromWorld(c: SelfPlayConfig): Environment {
    const world = generateWorld({ seed: c.worldSeed, size: c.worldSize });
    if (c.evalWorld === 'train' || c.evalPerHop === 0) {
      const evalSet = c.evalPerHop > 0 ? makeEvalSet(world, { perHop: c.evalPerHop, hops: c.evalHops }) : [];
      return new Environment(
        world.passages,
        evalSet.map((q, i) => toEval(q, `train-${q.hops}h-${i}`)),
        c.retrievalTopK,
        world,
      );
    }
    const unseen = yardstickWorld(c.evalWorld);
    const questions = yardstickQuestions(unseen, c.evalWorld, c.evalPerHop, c.evalHops).map((q) => toEval(q, q.id));
    const heldOut = new Environment(unseen.passages, questions, c.retrievalTopK, unseen);
    return new Environment(world.passages, questions, c.retrievalTopK, world, heldOut);
  }

  /** The same corpus and world with other held-out questions (an --eval-set file), searched here. */
  withEvalSet(questions: readonly EvalQuestion[]): Environment {
    return new Environment(this.passages, questions, this.topK, this.world);
  }

  /** The search tool: the top-k passages for a query, by BM25. */
  search = (query: string): Passage[] => this.index.search(query, this.topK).map((h) => h.passage);

  private dense = new Map<string, Promise<DenseIndex>>();

  /**
   * The search tool by dense retrieval on `model` (E5 style). The passages are embedded on the first
   * search (once per model); a model that cannot be loaded fails that search with a message.
   */
  denseSearch(model: string, embedder: Embedder = transformersEmbedder(model)): (query: string) => Promise<Passage[]> {
    return async (query) =>
      (await (await this.denseIndex(model, embedder)).search(query, this.topK)).map((h) => h.passage);
  }

  /** The dense index on `model` (built once per model): a host builds it before a run, so a model that cannot be
   *  loaded fails before anything is written rather than at the first search. */
  denseIndex(model: string, embedder: Embedder = transformersEmbedder(model)): Promise<DenseIndex> {
    let index = this.dense.get(model);
    if (!index) {
      index = DenseIndex.build(this.passages, embedder);
      this.dense.set(model, index);
      index.catch(() => this.dense.delete(model));
    }
    return index;
  }

  /** A source document, uniformly. */
  sampleSource(rng: Rng): Passage {
    return rng.pick(this.passages);
  }

  /** A hop count h = i + 1 with probability proportional to weights[i] (the paper's 4:3:2:1). */
  sampleHops(rng: Rng, weights: readonly number[]): number {
    return rng.weightedIndex(weights) + 1;
  }

  get canMakeQuestions(): boolean {
    return this.worldIndex !== null;
  }

  /**
   * Whether a written question is true of the world (src/env/world/audit.ts): 'right', 'wrong',
   * 'unanswerable' or 'unreadable'; null for a corpus without a world, where no such check exists.
   */
  auditQuestion(question: string, answer: string): QuestionVerdict | null {
    return this.worldIndex ? auditQuestion(this.worldIndex, question, answer).verdict : null;
  }

  /** The share of questions that are true of the world; undefined for a corpus without a world. */
  rightShare(questions: readonly { question: string; answer: string }[]): number | undefined {
    if (!this.worldIndex || questions.length === 0) return undefined;
    return questions.filter((q) => this.auditQuestion(q.question, q.answer) === 'right').length / questions.length;
  }

  /**
   * A world-generated question of `hops` hops that is not in the held-out set, with a QCP shaped like
   * the examiner's: the source passage, then one search per further hop (the next entity's name as the
   * query and what the search tool returns for it). Null when none is found.
   */
  worldQuestion(rng: Rng, hops: number, id: string): TrainQuestion | null {
    const ix = this.worldIndex;
    if (!ix) return null;
    const held = new Set(this.evalSet.map((q) => q.question));
    for (let attempt = 0; attempt < 8; attempt++) {
      const q = generateQuestion(ix, rng, hops);
      if (!q || held.has(q.question)) continue;
      return {
        id,
        question: q.question,
        answer: q.answers[0]!,
        hops,
        qcp: worldQcp(ix, q, this.search),
        origin: 'world',
      };
    }
    return null;
  }
}

function toEval(q: WorldQuestion, id: string): EvalQuestion {
  return { id, question: q.question, answers: q.answers, hops: q.hops };
}
