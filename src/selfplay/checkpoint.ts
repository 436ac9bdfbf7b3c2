// Checkpoints: all three policies, both optimizers' state, the run's cursor (what to do next), its RNG
// state, its training set and its metrics so far. Two slots are written in turn and a small pointer file
// names the complete one, written last: a crash while saving leaves the previous checkpoint intact.
//
//   checkpoints/latest.json                 {slot, cursor, savedAt}
//   checkpoints/<slot>/state.json           RunState, with the size and SHA-256 of each file below and of itself
//   checkpoints/<slot>/{examiner,student,teacher}.safetensors      trained tensors (f32, bit-exact)
//   checkpoints/<slot>/{examiner,student}.optim.safetensors        AdamW moments and step counters
//
// A vocabulary matrix kept on the GPU as row shards is saved whole under its HF name, weights and moments alike,
// and cut into the loading adapter's shards (policies.ts): a run resumes under any binding limit.
//
// A reader trusts nothing it did not check: state.json's own hash and its settings (validated as flags are), every
// file's size and hash, and on loading the very bytes it loads (a run may be saving while eval reads): what is
// loaded is what was verified, or the load fails with CheckpointChangedError. A checkpoint names the run it belongs
// to and the base model files it was trained from, so one copied into another run's folder, or a base replaced
// under a run, is refused instead of resumed (loop.ts).
import { ConfigError, upgradeConfig, validateConfig, type SelfPlayConfig } from './config.ts';
import type { BaseModel } from './base-model.ts';
import type { TrainQuestion } from './environment.ts';
import type { EvalMetrics, StepMetrics } from './events.ts';
import { optimizerStateFromBytes, optimizerStateToBytes, type Policies } from './policies.ts';
import { bytesText, sha256Hex, textBytes, type RunStorage } from './storage.ts';
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
  /** The SHA-256 of each file of the base model folder the run started from (absent for random-tiny, which its
   *  settings make, and in checkpoints of older versions): a resume on other files is refused. */
  baseFiles?: Record<string, string>;
  /** The run this checkpoint belongs to (the run folder's run.json; absent in older checkpoints). */
  runId?: string;
  /** Each file of the slot as it was written (absent in checkpoints of older versions): a slot is whole only when
   *  every file has this size and hash. */
  files?: Record<string, { bytes: number; sha256: string }>;
  /** The SHA-256 of state.json's text without this field (absent in older checkpoints). */
  sha256?: string;
}

/** A file of a checkpoint that changed between its check and its load (a run saved into the slot meanwhile). */
export class CheckpointChangedError extends Error {
  override name = 'CheckpointChangedError';
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
  await storage.put(at('state.json'), await stateBytes(state, files));
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

/** state.json's bytes: the state with its files' sizes and hashes, then the hash of that text. */
async function stateBytes(state: RunState, files: NonNullable<RunState['files']>): Promise<Uint8Array> {
  const { files: _files, sha256: _sha, ...rest } = state;
  const text = JSON.stringify({ ...rest, files });
  const sha256 = await sha256Hex(textBytes(text));
  return textBytes(`${text.slice(0, -1)},"sha256":"${sha256}"}`);
}

/** Why a parsed state.json is not the text its hash was made of, or null (no hash: an older checkpoint). */
async function stateHashProblem(state: RunState, file: string): Promise<string | null> {
  if (state.sha256 === undefined) return null;
  const { sha256, ...rest } = state;
  if ((await sha256Hex(textBytes(JSON.stringify(rest)))) === sha256) return null;
  return `${file} is not the file the checkpoint wrote (its SHA-256 differs: it was edited or damaged)`;
}

const STAGES: readonly string[] = ['eval-start', 'examiner', 'generate', 'student', 'eval', 'done'];
const isCount = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Why a stored state cannot be resumed, or null: its settings are checked exactly as flags are (validateConfig), its
 * cursor against them, and the shape of what it holds, so a state.json edited or written by something else is
 * refused by name instead of failing deep in a run (an `iterations` of 1e9 used to end in V8's "invalid size").
 */
function stateProblem(state: RunState, file: string): string | null {
  try {
    state.config = validateConfig(upgradeConfig({ ...state.config }));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return `${file} holds settings piplay refuses (${e.message})`;
  }
  const c = state.cursor;
  if (!isCount(c.iteration) || c.iteration >= state.config.iterations || !STAGES.includes(c.stage) || !isCount(c.step))
    return `${file} holds a cursor outside its run (${JSON.stringify(c)})`;
  const r = state.records as Partial<RunState['records']> | undefined;
  if (!r || ![r.metrics, r.questions, r.rollouts, r.eval].every(isCount))
    return `${file} holds no record counts of its logs`;
  for (const key of ['dataset', 'metrics', 'evals'] as const)
    if (!Array.isArray(state[key])) return `${file} holds no list "${key}"`;
  if (state.runId !== undefined && typeof state.runId !== 'string') return `${file} holds a run id that is no string`;
  return null;
}

function checkFiniteArray(a: Float32Array, cursor: Cursor, policy: string, what: string): void {
  let bad = 0;
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) bad++;
  if (bad) throw new NonFiniteCheckpointError(cursor, policy, what, bad, a.length);
}

/** Why a checkpoint is not of the run resuming it (`runId`: the run's identity, when the host keeps one), or null. */
export function otherRun(state: RunState, runId: string | undefined): string | null {
  if (state.runId === runId) return null;
  const theirs = state.runId ? `run ${state.runId}` : 'a run of an older version, without an identity';
  const ours = runId ? `run ${runId} (its run.json)` : 'a run without an identity (no run.json)';
  return (
    `piplay: the checkpoints belong to ${theirs}, not to this folder's ${ours}: they were copied from another run ` +
    "folder, whose logs and settings are not this folder's; resume that run in its own folder, or start a new run"
  );
}

/**
 * Why the base model differs from the files the checkpoint's run started from (named by file), or null. A base
 * without files of its own (random-tiny, or the page's copy of a run's config and tokenizer beside its checkpoint's
 * weights) has nothing to compare.
 */
export function otherBase(state: RunState, base: Pick<BaseModel, 'name' | 'files'>): string | null {
  if (!state.baseFiles || !base.files) return null;
  const now = base.files;
  const changed = Object.keys(state.baseFiles).filter((f) => now[f] !== state.baseFiles![f]);
  if (!changed.length) return null;
  const f = changed[0]!;
  return (
    `piplay: the base model ${base.name} is not the one this run was trained from: its ${f} ` +
    `${now[f] ? 'has another SHA-256' : 'is missing'}${changed.length > 1 ? ` (and ${changed.length - 1} more file(s))` : ''}; ` +
    'put the original files back to resume, or start a new run on this model'
  );
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
  const problem = (await stateHashProblem(state, file)) ?? stateProblem(state, file);
  if (problem) return problem;
  for (const [name, want] of Object.entries(state.files ?? {})) {
    const path = `${DIR}/${slot}/${name}`;
    const got = await storage.get(path);
    if (!got) return `${path} is missing`;
    const wrong = await fileProblem(path, got, want);
    if (wrong) return wrong;
  }
  return state;
}

/** Why `got` is not the file the checkpoint wrote (`want`: its size and hash), or null. */
async function fileProblem(path: string, got: Uint8Array, want: { bytes: number; sha256: string }) {
  if (got.length !== want.bytes)
    return `${path} has ${got.length} bytes where the checkpoint wrote ${want.bytes} (truncated or replaced)`;
  if ((await sha256Hex(got)) !== want.sha256)
    return `${path} is not the file the checkpoint wrote (its SHA-256 differs)`;
  return null;
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

/**
 * Loads a slot's weights and optimizer state into policies built from the same config. With the slot's `files` (its
 * state's sizes and hashes, as latestCheckpoint verified them) each file is checked again as it is loaded, so the
 * bytes loaded are the bytes verified: a file a run saved over since is a CheckpointChangedError, never a mix of two
 * checkpoints.
 */
export async function restorePolicies(
  storage: RunStorage,
  slot: string,
  policies: Policies,
  files?: RunState['files'],
): Promise<void> {
  const need = async (name: string) => {
    const path = `${DIR}/${slot}/${name}`;
    const b = await storage.get(path);
    if (!b) throw new Error(`piplay: checkpoint slot '${slot}' lacks ${name}`);
    const want = files?.[name];
    const wrong = want ? await fileProblem(path, b, want) : null;
    if (wrong) throw new CheckpointChangedError(`piplay: ${wrong} since it was checked: a run saved into it meanwhile`);
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
