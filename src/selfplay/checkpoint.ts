// Checkpoints: all three policies, both optimizers' state, the run's cursor (what to do next), its RNG
// state, its training set and its metrics so far. Two slots are written in turn and a small pointer file
// names the complete one, written last: a crash while saving leaves the previous checkpoint intact.
//
//   checkpoints/latest.json                 {slot, cursor, savedAt}
//   checkpoints/<slot>/state.json           RunState, with the size and SHA-256 of each file below
//   checkpoints/<slot>/{examiner,student,teacher}.safetensors      trained tensors (f32, bit-exact)
//   checkpoints/<slot>/{examiner,student}.optim.safetensors        AdamW moments and step counters
//
// A vocabulary matrix kept on the GPU as row shards is saved whole under its HF name, weights and moments alike,
// and cut into the loading adapter's shards (policies.ts): a run resumes under any binding limit.
import type { SelfPlayConfig } from './config.ts';
import type { TrainQuestion } from './environment.ts';
import type { EvalMetrics, StepMetrics } from './events.ts';
import { optimizerStateFromBytes, optimizerStateToBytes, type Policies } from './policies.ts';
import { bytesText, textBytes, type RunStorage } from './storage.ts';
import { parseSafetensors, toFloat32 } from '../model/safetensors.ts';

export type CursorStage = 'eval-start' | 'examiner' | 'generate' | 'student' | 'eval' | 'done';

/** The next unit of work: an examiner step, data generation, a student step, or an evaluation. */
export interface Cursor {
  iteration: number;
  stage: CursorStage;
  step: number;
}

export interface RunState {
  version: 1;
  config: SelfPlayConfig;
  cursor: Cursor;
  /**
   * Every draw derives from the seed and the unit's labels (see context.ts rngFor): the seed is the whole RNG state.
   */
  rng: { seed: number; scheme: 'labels-v1' };
  /** The current iteration's student training set. */
  dataset: TrainQuestion[];
  metrics: StepMetrics[];
  evals: EvalMetrics[];
  /** Records emitted so far per kind (a resumed host truncates its logs to these counts). */
  records: { metrics: number; questions: number; rollouts: number; eval: number };
  /** Which base model the policies started from. */
  base: string;
  /** Each file of the slot as it was written (absent in checkpoints of older versions): a slot is whole only when
   *  every file has this size and hash. */
  files?: Record<string, { bytes: number; sha256: string }>;
}

/** The SHA-256 of some bytes, in hex (Web Crypto: the browser and Node alike). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

const DIR = 'checkpoints';
const POINTER = `${DIR}/latest.json`;

interface Pointer {
  slot: string;
  cursor: Cursor;
  savedAt: string;
}

async function readPointer(storage: RunStorage): Promise<Pointer | null> {
  const b = await storage.get(POINTER);
  if (!b) return null;
  try {
    return JSON.parse(bytesText(b)) as Pointer;
  } catch (e) {
    throw new Error(`piplay: ${POINTER} is not valid JSON (${(e as Error).message})`);
  }
}

/**
 * Writes a checkpoint into the slot other than `keep` (default: the slot the pointer names), then points at
 * it. The slot's state.json is emptied first and written last, so a slot with a readable state.json holds a
 * complete checkpoint even when an earlier save into it failed half way. Every weight and optimizer moment
 * is checked on the host copy being written: a NaN or infinity is never saved (NonFiniteCheckpointError,
 * with the previous checkpoint left as it was). Returns the slot.
 */
export async function saveCheckpoint(
  storage: RunStorage,
  policies: Policies,
  state: RunState,
  keep?: string,
): Promise<string> {
  const prev = keep ?? (await readPointer(storage))?.slot;
  const slot = prev === 'a' ? 'b' : 'a';
  const at = (name: string) => `${DIR}/${slot}/${name}`;
  const files: NonNullable<RunState['files']> = {};
  const put = async (name: string, bytes: Uint8Array) => {
    await storage.put(at(name), bytes);
    files[name] = { bytes: bytes.length, sha256: await sha256Hex(bytes) };
  };
  await storage.put(at('state.json'), new Uint8Array(0));
  for (const name of ['examiner', 'student', 'teacher'] as const) {
    const bytes = await policies.saveWeights(name);
    if (!bytes) continue;
    for (const [tensor, entry] of parseSafetensors(bytes, `${name}.safetensors`).tensors) {
      checkFiniteArray(toFloat32(entry), state.cursor, name, `weight '${tensor}'`);
    }
    await put(`${name}.safetensors`, bytes);
  }
  for (const name of ['examiner', 'student'] as const) {
    const opt = await policies.optimizerState(name);
    opt.params.forEach((p, k) => {
      const what = `parameter ${k}${p.name ? ` '${p.name}'` : ''}`;
      checkFiniteArray(p.m, state.cursor, name, `optimizer first moment of ${what}`);
      checkFiniteArray(p.v, state.cursor, name, `optimizer second moment of ${what}`);
    });
    await put(`${name}.optim.safetensors`, optimizerStateToBytes(opt));
  }
  await storage.put(at('state.json'), textBytes(JSON.stringify({ ...state, files })));
  const pointer: Pointer = { slot, cursor: state.cursor, savedAt: new Date().toISOString() };
  await storage.put(POINTER, textBytes(JSON.stringify(pointer)));
  return slot;
}

/** Weights or optimizer moments with a NaN or an infinity: the checkpoint is not saved. */
export class NonFiniteCheckpointError extends Error {
  override name = 'NonFiniteCheckpointError';
  constructor(
    readonly cursor: Cursor,
    readonly policy: string,
    readonly what: string,
    readonly count: number,
    readonly size: number,
  ) {
    super(
      `piplay: the ${policy}'s ${what} holds ${count} of ${size} values that are NaN or infinite (training ` +
        `diverged), so the checkpoint at iteration ${cursor.iteration + 1}, ${cursor.stage} step ${cursor.step} was ` +
        'not saved and the previous one is kept; resume from it (--resume), or start again with a lower learning ' +
        `rate (${policy === 'examiner' ? '--examiner-lr' : '--lr'}) or a tighter --grad-clip`,
    );
  }
}

function checkFiniteArray(a: Float32Array, cursor: Cursor, policy: string, what: string): void {
  let bad = 0;
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) bad++;
  if (bad) throw new NonFiniteCheckpointError(cursor, policy, what, bad, a.length);
}

/** A slot's state, or why it cannot be read. */
async function readState(storage: RunStorage, slot: string): Promise<RunState | string> {
  const file = `${DIR}/${slot}/state.json`;
  const b = await storage.get(file);
  if (!b) return `${file} is missing`;
  if (b.length === 0) return `${file} is empty (a save into the slot did not finish)`;
  let state: RunState;
  try {
    state = JSON.parse(bytesText(b)) as RunState;
  } catch (e) {
    return `${file} is not valid JSON (${(e as Error).message})`;
  }
  if (!state || typeof state !== 'object' || !state.cursor || !state.config) return `${file} is not a checkpoint state`;
  if (state.version !== 1) return `${file} has checkpoint version ${String(state.version)}, which is not supported`;
  for (const [name, want] of Object.entries(state.files ?? {})) {
    const path = `${DIR}/${slot}/${name}`;
    const got = await storage.get(path);
    if (!got) return `${path} is missing`;
    if (got.length !== want.bytes)
      return `${path} has ${got.length} bytes where the checkpoint wrote ${want.bytes} (truncated or replaced)`;
    if ((await sha256Hex(got)) !== want.sha256)
      return `${path} is not the file the checkpoint wrote (its SHA-256 differs)`;
  }
  return state;
}

/** How far a state got: every record it has emitted (grows with every unit of work). */
const progressOf = (s: RunState) => s.records.metrics + s.records.questions + s.records.rollouts + s.records.eval;

export interface LatestCheckpoint {
  slot: string;
  state: RunState;
  /** Set when the pointer's slot (or the pointer) could not be read and the other, intact slot is used. */
  warning?: string;
}

/**
 * The state of the latest checkpoint and its slot, or null when the storage holds none. When the pointer or
 * its slot's state.json is unreadable, the other slot is used if it is intact (with a warning naming the
 * file); when neither is, the error names both files.
 */
export async function latestCheckpoint(storage: RunStorage): Promise<LatestCheckpoint | null> {
  let pointer: Pointer | null;
  let problem: string;
  try {
    pointer = await readPointer(storage);
    if (!pointer) {
      // No pointer: a run whose latest.json was lost still has its slots.
      const names = await storage.list();
      if (!names.some((n) => /^checkpoints\/[ab]\/state\.json$/.test(n))) return null;
      throw new Error(`${POINTER} is missing`);
    }
    if (pointer.slot !== 'a' && pointer.slot !== 'b') throw new Error(`piplay: ${POINTER} names no slot 'a' or 'b'`);
    const state = await readState(storage, pointer.slot);
    if (typeof state !== 'string') return { slot: pointer.slot, state };
    problem = state;
  } catch (e) {
    pointer = null;
    problem = (e as Error).message.replace(/^piplay: /, '');
  }
  const candidates = pointer ? [pointer.slot === 'a' ? 'b' : 'a'] : ['a', 'b'];
  const intact: { slot: string; state: RunState }[] = [];
  const reasons = [problem];
  for (const slot of candidates) {
    const state = await readState(storage, slot);
    if (typeof state === 'string') reasons.push(state);
    else intact.push({ slot, state });
  }
  if (!intact.length) throw new Error(`piplay: no intact checkpoint: ${reasons.join('; ')}`);
  const best = intact.reduce((x, y) => (progressOf(y.state) > progressOf(x.state) ? y : x));
  const c = best.state.cursor;
  return {
    ...best,
    warning:
      `${problem}; using the other checkpoint, ${DIR}/${best.slot} (iteration ${c.iteration + 1}, ${c.stage} ` +
      `step ${c.step})`,
  };
}

/** Loads a slot's weights and optimizer state into policies built from the same config. */
export async function restorePolicies(storage: RunStorage, slot: string, policies: Policies): Promise<void> {
  const need = async (name: string) => {
    const b = await storage.get(`${DIR}/${slot}/${name}`);
    if (!b) throw new Error(`piplay: checkpoint slot '${slot}' lacks ${name}`);
    return b;
  };
  for (const name of ['examiner', 'student', 'teacher'] as const) {
    if (policies.policy(name)) policies.loadWeights(name, await need(`${name}.safetensors`));
  }
  for (const name of ['examiner', 'student'] as const) {
    policies.loadOptimizerState(
      name,
      optimizerStateFromBytes(await need(`${name}.optim.safetensors`), `${name}.optim.safetensors`),
    );
  }
}
