// Checkpoints: all three policies, both optimizers' state, the run's cursor (what to do next), its RNG
// state, its training set and its metrics so far. Two slots are written in turn and a small pointer file
// names the complete one, written last: a crash while saving leaves the previous checkpoint intact.
//
//   checkpoints/latest.json                 {slot, cursor, savedAt}
//   checkpoints/<slot>/state.json           RunState
//   checkpoints/<slot>/{examiner,student,teacher}.safetensors      trained tensors (f32, bit-exact)
//   checkpoints/<slot>/{examiner,student}.optim.safetensors        AdamW moments and step counters
import type { SelfPlayConfig } from './config.ts';
import type { TrainQuestion } from './environment.ts';
import type { EvalMetrics, StepMetrics } from './events.ts';
import { optimizerStateFromBytes, optimizerStateToBytes, type Policies } from './policies.ts';
import { bytesText, textBytes, type RunStorage } from './storage.ts';

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
  /** Every draw derives from the seed and the unit's labels (see context.ts rngFor): the seed is the whole RNG state. */
  rng: { seed: number; scheme: 'labels-v1' };
  /** The current iteration's student training set. */
  dataset: TrainQuestion[];
  metrics: StepMetrics[];
  evals: EvalMetrics[];
  /** Records emitted so far per kind (a resumed host truncates its logs to these counts). */
  records: { metrics: number; questions: number; rollouts: number; eval: number };
  /** Which base model the policies started from. */
  base: string;
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

/** Writes a checkpoint into the slot the pointer does not name, then points at it. Returns the slot. */
export async function saveCheckpoint(storage: RunStorage, policies: Policies, state: RunState): Promise<string> {
  const prev = await readPointer(storage);
  const slot = prev?.slot === 'a' ? 'b' : 'a';
  const at = (name: string) => `${DIR}/${slot}/${name}`;
  for (const name of ['examiner', 'student', 'teacher'] as const) {
    const bytes = await policies.saveWeights(name);
    if (bytes) await storage.put(at(`${name}.safetensors`), bytes);
  }
  for (const name of ['examiner', 'student'] as const) {
    await storage.put(at(`${name}.optim.safetensors`), optimizerStateToBytes(await policies.optimizerState(name)));
  }
  await storage.put(at('state.json'), textBytes(JSON.stringify(state)));
  const pointer: Pointer = { slot, cursor: state.cursor, savedAt: new Date().toISOString() };
  await storage.put(POINTER, textBytes(JSON.stringify(pointer)));
  return slot;
}

/** The state of the latest checkpoint and its slot, or null when the storage holds none. */
export async function latestCheckpoint(storage: RunStorage): Promise<{ slot: string; state: RunState } | null> {
  const pointer = await readPointer(storage);
  if (!pointer) return null;
  const b = await storage.get(`${DIR}/${pointer.slot}/state.json`);
  if (!b) throw new Error(`piplay: checkpoint slot '${pointer.slot}' has no state.json`);
  const state = JSON.parse(bytesText(b)) as RunState;
  if (state.version !== 1) throw new Error(`piplay: checkpoint version ${String(state.version)} is not supported`);
  return { slot: pointer.slot, state };
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
    policies.loadOptimizerState(name, optimizerStateFromBytes(await need(`${name}.optim.safetensors`), `${name}.optim.safetensors`));
  }
}
