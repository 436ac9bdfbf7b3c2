// Batched multi-turn rollouts with the search tool (ALGORITHM.md section 2), for the student and the
// examiner. Tokens in, tokens out: each rollout keeps the ids the model sampled and the tool ids the
// environment appended, a policy mask (1 = sampled) and the sampling policy's log-prob of every sampled id.
// The decoded text is only read (by the tag parsers), never encoded again.
//
// One turn = one generation call, which stops at a stop string of the role, at EOS or at the turn's token
// budget. After a `</search>` with a non-empty query the environment appends its reply and the next turn
// starts, up to `maxTurns`; an empty `<search></search>` is no valid call and gets no reply (as in Dr.
// Zero), so the policy writes on in the next turn. What the policy wrote is told from the tool replies by
// the mask, never by the text: an `<information>` block the policy wrote is its own text.
import type { Passage } from '../env/corpus.ts';
import {
  ANSWER_CLOSE,
  EXAMINER_STOP_STRINGS,
  QUESTION_OPEN,
  SEARCH_CLOSE,
  STUDENT_STOP_STRINGS,
  finalAnswer,
  parseStudentTurn,
  type Role,
} from '../env/tags.ts';
import type { CausalLM } from '../model/decoder.ts';
import { GenerationSession } from '../model/generate.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import { encodeToolReply } from './tool-reply.ts';

/** The search tool: the top passages for a query (the caller decides how many; the spec says 3). */
export type SearchFn = (query: string) => readonly Passage[] | Promise<readonly Passage[]>;

export interface RolloutOptions {
  role: Role;
  search: SearchFn;
  /** Assistant turns at most (the spec: 5). */
  maxTurns: number;
  /** New tokens per turn at most. */
  turnTokens: number;
  /** Tokens of one tool reply at most (the reply is cut to fit). */
  toolTokens: number;
  /** 1 for training rollouts, 0 (greedy) for evaluation. */
  temperature: number;
  topP?: number;
  /** Seeded U(0, 1) source (one draw per row per decoding step). */
  random: () => number;
  /** End-of-sequence ids. */
  stopIds: readonly number[];
  /** Called after every turn with the number of rollouts still running. */
  onTurn?: (turn: number, running: number) => void;
  /** Bytes the KV cache of one decoding batch may take (0 or absent: no limit; see generate.ts). */
  kvBudgetBytes?: number;
}

export interface SearchRecord {
  query: string;
  passages: readonly Passage[];
  /** The body of the `<information>` block as the policy saw it (cut to the budget). */
  information: string;
  /** Number of tool ids appended. */
  tokens: number;
}

export type FinishReason =
  /** student: a complete `<answer>`; examiner: `</answer>` after a `<question>`. */
  | 'answer'
  /** EOS. */
  | 'eos'
  /** The turn's token budget ran out inside a turn. */
  | 'length'
  /** maxTurns turns were used. */
  | 'turns'
  /** A stop string closed no well-formed action (e.g. `</search>` without `<search>`). */
  | 'no-action'
  /** The model's context window could not hold another turn. */
  | 'context';

export interface Rollout {
  role: Role;
  /** Prompt + response ids. */
  ids: number[];
  /** 1 where the policy sampled the id, 0 for prompt and tool ids. */
  mask: number[];
  /** log π(id) under the sampling distribution where mask = 1, else 0. */
  logprobs: number[];
  promptLength: number;
  /** The response decoded (sampled and tool ids), for display. */
  text: string;
  /**
   * The policy's own text, turn by turn: each run of sampled ids between tool replies, decoded (for the tag parsers).
   */
  policyTurns: string[];
  turns: number;
  searches: SearchRecord[];
  finish: FinishReason;
}

/** Number of ids the policy sampled. */
export function policyTokens(r: Pick<Rollout, 'mask'>): number {
  let n = 0;
  for (const m of r.mask) n += m;
  return n;
}

/** The stop string whose first occurrence in `text` ends earliest (the one that stopped generation). */
export function firstStop(text: string, stops: readonly string[]): string | null {
  let best: string | null = null;
  let bestEnd = Infinity;
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && at + s.length < bestEnd) {
      best = s;
      bestEnd = at + s.length;
    }
  }
  return best;
}

/** The query of the last `<search>…</search>` in a turn, or null when the turn holds none. */
function lastSearchQuery(turnText: string): string | null {
  let q: string | null = null;
  for (const m of turnText.matchAll(/<search>([\s\S]*?)<\/search>/g)) q = m[1]!.trim();
  return q;
}

/** The runs of ids the policy sampled after the prompt (mask 1), split at the tool replies (mask 0). */
export function sampledRuns(ids: readonly number[], mask: readonly number[], promptLength: number): number[][] {
  const runs: number[][] = [];
  let open = false;
  for (let t = promptLength; t < ids.length; t++) {
    if (!mask[t]) {
      open = false;
      continue;
    }
    if (!open) runs.push([]);
    runs[runs.length - 1]!.push(ids[t]!);
    open = true;
  }
  return runs;
}

/** The student's final answer: the last `<answer>` of what the policy wrote (never one inside a tool reply). */
export function rolloutAnswer(r: Pick<Rollout, 'policyTurns'>): string | null {
  return finalAnswer(r.policyTurns.join('\n'));
}

type TurnAction = { kind: 'search'; query: string } | { kind: 'done'; finish: FinishReason } | { kind: 'continue' };

/**
 * What a finished turn asks for, given why generation stopped and what the role wrote: `turnText` this turn's
 * sampled text, `ownText` all the policy's own text so far (tool replies left out; read for the examiner only).
 */
export function turnAction(role: Role, turnText: string, ownText: string, stop: string | null): TurnAction {
  if (stop === 'stop-id') return { kind: 'done', finish: 'eos' };
  if (stop !== 'stop-string') return { kind: 'done', finish: 'length' };
  const stops = role === 'student' ? STUDENT_STOP_STRINGS : EXAMINER_STOP_STRINGS;
  const which = firstStop(turnText, stops);
  if (role === 'student') {
    const a = parseStudentTurn(turnText);
    if (a.kind === 'search') return a.query === '' ? { kind: 'continue' } : { kind: 'search', query: a.query };
    if (a.kind === 'answer') return { kind: 'done', finish: 'answer' };
    return { kind: 'done', finish: 'no-action' };
  }
  if (which === SEARCH_CLOSE) {
    const q = lastSearchQuery(turnText);
    if (q === null) return { kind: 'done', finish: 'no-action' };
    return q === '' ? { kind: 'continue' } : { kind: 'search', query: q };
  }
  if (which === ANSWER_CLOSE) {
    // The examiner stops at `</answer>` only after a `<question>`; an earlier `</answer>` is just text, so
    // the examiner goes on writing in the next turn (no tool reply in between).
    if (ownText.includes(QUESTION_OPEN)) return { kind: 'done', finish: 'answer' };
    return { kind: 'continue' };
  }
  return { kind: 'done', finish: 'no-action' };
}

/**
 * Runs one rollout per prompt (prompt ids, e.g. a chat-templated student or examiner prompt) as a batch.
 * Rollouts that finish drop out of the batch; the rest continue with their tool replies appended.
 */
export async function runRollouts(
  model: CausalLM,
  tok: Tokenizer,
  prompts: readonly number[][],
  opts: RolloutOptions,
): Promise<Rollout[]> {
  if (!(opts.maxTurns >= 1 && opts.turnTokens >= 1 && opts.toolTokens >= 0)) {
    throw new Error(
      `piplay: rollouts need maxTurns >= 1 and turnTokens >= 1 (got ${opts.maxTurns}, ${opts.turnTokens})`,
    );
  }
  // The session keeps its KV cache between turns: a turn prefills only its tool reply and the last token.
  const session = new GenerationSession(
    model,
    prompts.map((p) => [...p]),
    { keepCache: true },
  );
  try {
    return await rolloutTurns(session, tok, prompts, opts);
  } finally {
    session.dispose();
  }
}

/** The turns of runRollouts' rollouts in `session`, until every one has finished. */
async function rolloutTurns(
  session: GenerationSession,
  tok: Tokenizer,
  prompts: readonly number[][],
  opts: RolloutOptions,
): Promise<Rollout[]> {
  const model = session.model;
  const state = prompts.map((p) => ({
    promptLength: p.length,
    turns: 0,
    searches: [] as SearchRecord[],
    finish: null as FinishReason | null,
  }));
  const stopStrings = [...(opts.role === 'student' ? STUDENT_STOP_STRINGS : EXAMINER_STOP_STRINGS)];
  const decode = (ids: number[]) => tok.decode(ids);
  // Stop strings that are one token of their own (added tokens such as `</search>`) end a row on the GPU at once.
  const stopStringIds = stopStrings
    .map((ss) => tok.encode(ss, { addSpecialTokens: false }))
    .flatMap((ids) => (ids.length === 1 ? ids : []));
  const maxPos = model.cfg.maxPositions;
  let active = prompts.map((_, i) => i);
  let turn = 0;
  while (active.length > 0) {
    active = active.filter((r) => {
      if (session.sequences[r]!.ids.length + opts.turnTokens <= maxPos) return true;
      state[r]!.finish = 'context';
      return false;
    });
    if (active.length === 0) break;
    const starts = active.map((r) => session.sequences[r]!.ids.length);
    await session.run(
      {
        maxNewTokens: opts.turnTokens,
        temperature: opts.temperature,
        topP: opts.topP ?? 1,
        stopIds: [...opts.stopIds],
        stopStrings,
        stopStringIds,
        decode,
        random: opts.random,
        kvBudgetBytes: opts.kvBudgetBytes,
      },
      active,
    );
    turn++;
    const next: number[] = [];
    for (const [j, r] of active.entries()) {
      const s = session.sequences[r]!;
      const st = state[r]!;
      st.turns++;
      const turnText = tok.decode(s.ids.slice(starts[j]));
      // Only the examiner's stop rule reads the whole of its own text: the student's turns are not decoded again.
      const ownText =
        opts.role === 'examiner' ? sampledRuns(s.ids, s.sampled, st.promptLength).map(decode).join('\n') : '';
      const action = turnAction(opts.role, turnText, ownText, s.stop);
      if (action.kind === 'done') {
        st.finish = action.finish;
        continue;
      }
      if (action.kind === 'search') {
        const passages = await opts.search(action.query);
        const reply = encodeToolReply(tok, passages, opts.toolTokens);
        session.append(r, reply.ids);
        st.searches.push({ query: action.query, passages, information: reply.body, tokens: reply.ids.length });
      }
      if (st.turns >= opts.maxTurns) st.finish = 'turns';
      else next.push(r);
    }
    active = next;
    opts.onTurn?.(turn, active.length);
  }
  return session.sequences.map((s, i) => {
    const st = state[i]!;
    return {
      role: opts.role,
      ids: s.ids,
      mask: s.sampled,
      logprobs: s.logprobs,
      promptLength: st.promptLength,
      text: tok.decode(s.ids.slice(st.promptLength), { skipSpecialTokens: true }),
      policyTurns: sampledRuns(s.ids, s.sampled, st.promptLength).map((run) =>
        tok.decode(run, { skipSpecialTokens: true }),
      ),
      turns: st.turns,
      searches: st.searches,
      finish: st.finish ?? 'length',
    };
  });
}
