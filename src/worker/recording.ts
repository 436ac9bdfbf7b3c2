// A recorded run: what the page keeps of a run (its step metrics, evaluations, examiner questions and token-level
// student rollouts), as one JSON file that opens in the page with no training and no GPU. `npm run
// record-example` writes the shipped examples (public/examples/) from a run folder of `npm run train`; the page
// folds a recording's events into its view state exactly as it folds a live run's. Rollouts keep the packed
// token arrays of wire.ts (as plain lists, floats cut to a few significant digits), so a file stays small.
import type { SelfPlayConfig } from '../selfplay/config.ts';
import type { EvalMetrics, QuestionRecord, RolloutRecord, RunEvent, StepMetrics } from '../selfplay/events.ts';
import { packTokens, unpackTokens, type PackedTokens } from './wire.ts';

export const RECORDING_FORMAT = 'piplay-run-recording';
/** 2: top-k lists kept for the tokens that have one (packed.topkRows); 1: for every token. */
export const RECORDING_VERSION = 2;

/**
 * A rollout's packed tokens as JSON can hold them (typed arrays as lists). The top-k lists are kept for the
 * tokens in `topkRows` only (the policy's tokens; a tool's have none), k entries each; without `topkRows`
 * (version 1) for every token.
 */
export type JsonPackedTokens = {
  [K in keyof PackedTokens]: PackedTokens[K] extends ArrayLike<number> ? number[] : PackedTokens[K];
} & { topkRows?: number[] };

export type RecordedEvent =
  | { type: 'metrics'; metrics: StepMetrics }
  | { type: 'eval'; metrics: EvalMetrics }
  | { type: 'question'; record: QuestionRecord }
  | { type: 'rollout'; record: Omit<RolloutRecord, 'tokens'>; packed: JsonPackedTokens };

export interface RunRecording {
  format: typeof RECORDING_FORMAT;
  version: 1 | typeof RECORDING_VERSION;
  /** A short name (the file's, without .json). */
  name: string;
  /** What the run was, for the page's control and banner. */
  title: string;
  /** The base model the run started from. */
  base: string;
  /** When and how it was recorded. */
  recordedAt: string;
  command: string;
  /** The run's settings. */
  config: SelfPlayConfig;
  events: RecordedEvent[];
}

/** The kinds of run event a recording keeps (progress, checkpoints and logs are not what a run was). */
export const RECORDED_KINDS = ['metrics', 'eval', 'question', 'rollout'] as const;

/** Significant digits kept of a token's log-probabilities and KL (the page shows 3-4), and of its top-k log-probs (drawn as bars). */
const SIGNIFICANT = 5;
const TOPK_SIGNIFICANT = 3;

/** A float cut to `digits` significant digits; integers and non-finite values as they are. */
function cut(v: number, digits: number): number {
  return Number.isInteger(v) || !Number.isFinite(v) ? v : Number(v.toPrecision(digits));
}

function packedJson(p: PackedTokens): JsonPackedTokens {
  const ints = (a: ArrayLike<number>) => Array.from(a);
  const floats = (a: ArrayLike<number>, digits = SIGNIFICANT) => Array.from(a, (v) => cut(v, digits));
  const topkRows = Array.from({ length: p.count }, (_, i) => i).filter((i) => p.k > 0 && p.topkIds[i * p.k]! >= 0);
  const rows = <T extends Int32Array | Float32Array>(a: T) =>
    topkRows.flatMap((i) => Array.from(a.subarray(i * p.k, (i + 1) * p.k)));
  return {
    count: p.count,
    ids: ints(p.ids),
    policy: ints(p.policy),
    studentLogp: floats(p.studentLogp),
    teacherLogp: floats(p.teacherLogp),
    kl: floats(p.kl),
    texts: p.texts,
    k: p.k,
    topkRows,
    topkIds: rows(p.topkIds),
    topkStudent: floats(rows(p.topkStudent), TOPK_SIGNIFICANT),
    topkTeacher: floats(rows(p.topkTeacher), TOPK_SIGNIFICANT),
    vocab: p.vocab,
  };
}

/** The top-k arrays of every token (-1 ids and 0 log-probs for a token without a list), from JSON's. */
function denseTopk(p: JsonPackedTokens): Pick<PackedTokens, 'topkIds' | 'topkStudent' | 'topkTeacher'> {
  if (!p.topkRows)
    return {
      topkIds: Int32Array.from(p.topkIds),
      topkStudent: Float32Array.from(p.topkStudent),
      topkTeacher: Float32Array.from(p.topkTeacher),
    };
  const n = p.count * p.k;
  const out = {
    topkIds: new Int32Array(n).fill(-1),
    topkStudent: new Float32Array(n),
    topkTeacher: new Float32Array(n),
  };
  p.topkRows.forEach((row, r) => {
    const from = r * p.k;
    out.topkIds.set(p.topkIds.slice(from, from + p.k), row * p.k);
    out.topkStudent.set(p.topkStudent.slice(from, from + p.k), row * p.k);
    out.topkTeacher.set(p.topkTeacher.slice(from, from + p.k), row * p.k);
  });
  return out;
}

function packedFromJson(p: JsonPackedTokens): PackedTokens {
  const { topkRows: _, ...rest } = p;
  return {
    ...rest,
    ids: Int32Array.from(p.ids),
    policy: Uint8Array.from(p.policy),
    studentLogp: Float32Array.from(p.studentLogp),
    teacherLogp: Float32Array.from(p.teacherLogp),
    kl: Float32Array.from(p.kl),
    ...denseTopk(p),
  };
}

/** The recorded form of a run event, or null for a kind a recording does not keep. */
export function recordEvent(ev: RunEvent): RecordedEvent | null {
  switch (ev.type) {
    case 'metrics':
    case 'question':
      return ev;
    case 'eval': {
      // Each question's outcome is for paired comparisons (npm run experiment), not for a run's view.
      const { outcomes: _, ...metrics } = ev.metrics;
      return { type: 'eval', metrics };
    }
    case 'rollout': {
      const { tokens, ...record } = ev.record;
      return { type: 'rollout', record, packed: packedJson(packTokens(tokens)) };
    }
    default:
      return null;
  }
}

/** The run event a recorded one stands for. */
export function replayEvent(ev: RecordedEvent): RunEvent {
  if (ev.type !== 'rollout') return ev;
  return { type: 'rollout', record: { ...ev.record, tokens: unpackTokens(packedFromJson(ev.packed)) } };
}

/** A bad recording file: the message names it and what is wrong. */
export class RecordingError extends Error {
  override name = 'RecordingError';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the fields a view reads of one event (so a bad file fails here, with its place, not in a panel). */
function eventProblem(e: unknown): string | null {
  if (!isObject(e)) return 'is not an object';
  const has = (o: unknown, fields: string[]) => isObject(o) && fields.every((f) => f in o);
  switch (e.type) {
    case 'metrics':
      return has(e.metrics, ['stage', 'iteration', 'step']) ? null : 'lacks metrics.stage, .iteration or .step';
    case 'eval':
      return has(e.metrics, ['iteration', 'em', 'emByHop']) ? null : 'lacks metrics.iteration, .em or .emByHop';
    case 'question':
      return has(e.record, ['question', 'answer', 'hops', 'qcp', 'k', 'n']) ? null : 'is not a question record';
    case 'rollout': {
      if (!has(e.record, ['question', 'gold', 'iteration', 'step'])) return 'is not a rollout record';
      const p = e.packed as Partial<JsonPackedTokens> | undefined;
      if (!isObject(p) || typeof p.count !== 'number' || typeof p.k !== 'number') return 'lacks its packed tokens';
      const n = p.count;
      for (const f of ['ids', 'policy', 'studentLogp', 'teacherLogp', 'kl', 'texts'] as const)
        if (!Array.isArray(p[f]) || p[f]!.length !== n) return `has packed.${f} of other than ${n} entries`;
      const rows = p.topkRows;
      if (rows !== undefined && !(Array.isArray(rows) && rows.every((r) => Number.isInteger(r) && r >= 0 && r < n)))
        return `has packed.topkRows that are not rows of its ${n} tokens`;
      const want = (rows?.length ?? n) * p.k;
      for (const f of ['topkIds', 'topkStudent', 'topkTeacher'] as const)
        if (!Array.isArray(p[f]) || p[f]!.length !== want) return `has packed.${f} of other than ${want} entries`;
      return null;
    }
    default:
      return `has type ${JSON.stringify(e.type)} (a recording holds ${RECORDED_KINDS.join(', ')})`;
  }
}

/** Parses and checks a recording; `what` names the file in messages. */
export function parseRecording(text: string, what: string): RunRecording {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new RecordingError(`${what} is not valid JSON (${(e as Error).message}); is it a piplay run recording?`);
  }
  if (!isObject(j) || j.format !== RECORDING_FORMAT)
    throw new RecordingError(`${what} is not a piplay run recording (its "format" is not "${RECORDING_FORMAT}")`);
  if (j.version !== 1 && j.version !== RECORDING_VERSION)
    throw new RecordingError(
      `${what} is a recording of version ${String(j.version)}; this piplay reads versions 1 to ${RECORDING_VERSION}`,
    );
  if (!Array.isArray(j.events)) throw new RecordingError(`${what} has no "events" list`);
  if (!isObject(j.config)) throw new RecordingError(`${what} has no "config" (the run's settings)`);
  j.events.forEach((e, i) => {
    const problem = eventProblem(e);
    if (problem) throw new RecordingError(`${what}: event ${i + 1} ${problem}`);
  });
  return j as unknown as RunRecording;
}

/** A recording of a run's events (those of RECORDED_KINDS; the others are passed over). */
export function makeRecording(
  meta: Omit<RunRecording, 'format' | 'version' | 'events'>,
  events: Iterable<RunEvent>,
): RunRecording {
  const out: RecordedEvent[] = [];
  for (const ev of events) {
    const r = recordEvent(ev);
    if (r) out.push(r);
  }
  return { format: RECORDING_FORMAT, version: RECORDING_VERSION, ...meta, events: out };
}
