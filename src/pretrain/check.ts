// A quick look at what pretraining taught: greedy student rollouts (src/rl/rollout.ts, BM25 search in the
// loop) on questions of a world the model never saw, scored for format and exact match.
import { Bm25Index } from '../env/bm25.ts';
import type { Passage } from '../env/corpus.ts';
import { exactMatch } from '../env/em.ts';
import { studentPrompt } from '../env/prompts.ts';
import { parseStudentTurn } from '../env/tags.ts';
import type { WorldQuestion } from '../env/world.ts';
import type { CausalLM } from '../model/decoder.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import { rolloutAnswer, runRollouts, type FinishReason } from '../rl/rollout.ts';
import { SEARCH_CLOSE, SEARCH_OPEN, THINK_CLOSE, THINK_OPEN } from '../env/tags.ts';
import { WorldIndex, type World } from '../env/world.ts';
import { chatPrompt, TOP_K } from './transcripts.ts';

export interface CheckOptions {
  /** Assistant turns per rollout (default 5, the spec's). */
  maxTurns?: number;
  /** New tokens per turn (default 72, the demo preset's: a turn that quotes a sentence fits). */
  turnTokens?: number;
  /** Tokens per tool reply (default 400: three whole passages). */
  toolTokens?: number;
  /** Rollouts generated together (default 8). */
  batch?: number;
}

export interface RolloutCheck {
  question: string;
  gold: string[];
  /** The assistant part: generated turns and tool replies. */
  text: string;
  searches: string[];
  answer: string | null;
  finish: FinishReason;
  /** Every turn of the rollout ended in a complete action and the last one is an answer. */
  wellFormed: boolean;
  em: boolean;
}

export interface CheckSummary {
  n: number;
  wellFormed: number;
  searched: number;
  answered: number;
  em: number;
}

export async function checkStudent(
  model: CausalLM,
  tok: Tokenizer,
  corpus: readonly Passage[],
  questions: readonly WorldQuestion[],
  o: CheckOptions = {},
): Promise<RolloutCheck[]> {
  const bm25 = new Bm25Index(corpus);
  const out: RolloutCheck[] = [];
  const batch = o.batch ?? 8;
  for (let at = 0; at < questions.length; at += batch) {
    const qs = questions.slice(at, at + batch);
    const prompts = qs.map((q) =>
      tok.encode(chatPrompt(studentPrompt({ question: q.question })), { addSpecialTokens: false }),
    );
    const rollouts = await runRollouts(model, tok, prompts, {
      role: 'student',
      search: (query) => bm25.search(query, TOP_K).map((h) => h.passage),
      maxTurns: o.maxTurns ?? 5,
      turnTokens: o.turnTokens ?? 72,
      toolTokens: o.toolTokens ?? 400,
      temperature: 0,
      random: () => 0.5,
      stopIds: tok.eosIds,
    });
    rollouts.forEach((r, i) => {
      const q = qs[i]!;
      const answer = rolloutAnswer(r);
      // Well-formed: the turns before the last each made one search, and the last one answered.
      const own = r.policyTurns.join('\n');
      const searchesOk = r.searches.length === (own.match(/<search>/g) ?? []).length;
      out.push({
        question: q.question,
        gold: q.answers,
        text: r.text,
        searches: r.searches.map((s) => s.query),
        answer,
        finish: r.finish,
        wellFormed: r.finish === 'answer' && searchesOk && parseStudentTurn(own).kind !== 'none',
        em: answer !== null && exactMatch(answer, q.answers),
      });
    });
  }
  return out;
}

export function summarise(results: readonly RolloutCheck[]): CheckSummary {
  const share = (f: (r: RolloutCheck) => boolean) => (results.length ? results.filter(f).length / results.length : 0);
  return {
    n: results.length,
    wellFormed: share((r) => r.wellFormed),
    searched: share((r) => r.searches.length > 0),
    answered: share((r) => r.answer !== null),
    em: share((r) => r.em),
  };
}

/**
 * How well the model copies the question's entity, measured even while it never answers: for each question,
 * the scripted first turn `<think> I need to search for X. </think>\n<search> X </search>` is fed in
 * (teacher forcing) and the model's greedy prediction is scored on the tokens of X, first where it must come
 * from the question, then where it repeats the X of the note. A model that has not learned to copy scores
 * near 0 on both, whatever its loss.
 */
export interface CopyCheck {
  /** Share of the entity's tokens predicted right in the note (copied from the question). */
  fromQuestion: number;
  /** Share predicted right in the search query (copied from the note). */
  fromNote: number;
  tokens: number;
}

export async function checkCopying(
  model: CausalLM,
  tok: Tokenizer,
  world: World,
  questions: readonly WorldQuestion[],
): Promise<CopyCheck> {
  const ix = new WorldIndex(world);
  const e = model.engine;
  const enc = (text: string) => tok.encode(text, { addSpecialTokens: false });
  const right = [0, 0];
  let total = 0;
  for (const q of questions) {
    const name = ` ${ix.entity(q.path[0]!.from).name}`;
    // Split where the pre-tokenizer splits anyway (before a space, at punctuation), so the pieces'
    // ids are the ids of the whole text.
    const pieces = [
      chatPrompt(studentPrompt({ question: q.question })) + `${THINK_OPEN} I need to search for`,
      name,
      `. ${THINK_CLOSE}\n${SEARCH_OPEN}`,
      name,
      ` ${SEARCH_CLOSE}`,
    ];
    const ids: number[] = [];
    const spans: [number, number][] = [];
    pieces.forEach((text, i) => {
      const start = ids.length;
      ids.push(...enc(text));
      if (i === 1 || i === 3) spans.push([start, ids.length]);
    });
    // Position t predicts ids[t + 1].
    const rows = spans.flatMap(([a, b]) => Array.from({ length: b - a }, (_, k) => a + k - 1));
    const logits = e.noGrad(() =>
      e.tidy(() =>
        model.logitsAt(model.hidden({ ids: Int32Array.from(ids), batch: 1, time: ids.length }), Int32Array.from(rows)),
      ),
    );
    const host = (await logits.read()) as Float32Array;
    logits.dispose();
    const V = host.length / rows.length;
    rows.forEach((t, j) => {
      let best = 0;
      for (let v = 1; v < V; v++) if (host[j * V + v]! > host[j * V + best]!) best = v;
      if (best === ids[t + 1]) right[t < spans[1]![0] - 1 ? 0 : 1]!++;
    });
    total += spans[0]![1] - spans[0]![0];
  }
  return { fromQuestion: total ? right[0]! / total : 0, fromNote: total ? right[1]! / total : 0, tokens: total };
}
