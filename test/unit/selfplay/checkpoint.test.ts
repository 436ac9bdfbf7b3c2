// Checkpoint slots: weights or optimizer moments with a NaN or an infinity are never saved (the previous
// checkpoint stays the latest), a half-written slot is never taken for a complete one, and a corrupt
// state.json in the latest slot falls back to the other, intact slot with a warning that names the file.
// A reader loads exactly the bytes it verified, state.json is covered by its own hash and its settings are
// checked as flags are, and a checkpoint names its run and its base's files.
import { describe, expect, it } from 'vitest';
import type { AdamWState } from '../../../src/gpu/optim/adamw.ts';
import { writeSafetensors } from '../../../src/model/safetensors.ts';
import { parseSafetensors, toFloat32 } from '../../../src/model/safetensors.ts';
import {
  CheckpointChangedError,
  latestCheckpoint,
  NonFiniteCheckpointError,
  otherBase,
  otherRun,
  restorePolicies,
  saveCheckpoint,
  type RunState,
} from '../../../src/selfplay/checkpoint.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import type { Policies } from '../../../src/selfplay/policies.ts';
import { MemoryStorage, textBytes } from '../../../src/selfplay/storage.ts';

/** Just what saveCheckpoint reads of the policies: one tensor per policy, one moment pair per optimizer. */
function fakePolicies(weight: number, moment = 0): Policies {
  const w = new Float32Array([weight, 1, 2]);
  return {
    saveWeights: async () =>
      writeSafetensors([{ name: 'w', dtype: 'F32', shape: [3], data: new Uint8Array(w.slice().buffer) }], {
        format: 'pt',
      }),
    optimizerState: async (): Promise<AdamWState> => ({
      step: 1,
      params: [{ name: 'w', shape: [3], step: 1, m: new Float32Array([moment, 0, 0]), v: new Float32Array(3) }],
    }),
  } as unknown as Policies;
}

function state(step: number): RunState {
  return {
    version: 1,
    config: makeConfig('smoke'),
    cursor: { iteration: 0, stage: 'examiner', step },
    rng: { seed: 1, scheme: 'labels-v1' },
    dataset: [],
    metrics: [],
    evals: [],
    records: { metrics: step, questions: 0, rollouts: 0, eval: 0 },
    base: 'random-tiny',
  };
}

describe('checkpoints', () => {
  it('refuses to save non-finite weights or moments, keeping the previous checkpoint', async () => {
    const s = new MemoryStorage();
    expect(await saveCheckpoint(s, fakePolicies(0.5), state(1))).toBe('a');
    const err = await saveCheckpoint(s, fakePolicies(Infinity), state(2)).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(NonFiniteCheckpointError);
    expect((err as Error).message).toMatch(
      /the examiner's weight 'w' holds 1 of 3 values that are NaN or infinite.*iteration 1, examiner step 2 was not saved/,
    );
    const m = await saveCheckpoint(s, fakePolicies(0.5, NaN), state(2)).catch((x: unknown) => x);
    expect((m as Error).message).toMatch(/the examiner's optimizer first moment of parameter 0 'w' holds 1 of 3/);
    const latest = await latestCheckpoint(s);
    expect(latest?.slot).toBe('a');
    expect(latest?.state.cursor.step).toBe(1);
    expect(latest?.warning).toBeUndefined();
    // The half-written slot b is not taken for a checkpoint even when slot a is lost.
    s.files.set('checkpoints/a/state.json', textBytes('{"version": 1, "cur'));
    await expect(latestCheckpoint(s)).rejects.toThrow(
      /no intact checkpoint: checkpoints\/a\/state.json is not valid JSON.*; checkpoints\/b\/state.json is empty \(a save into the slot did not finish\)/,
    );
  });

  it('falls back to the other slot when the latest state.json is corrupt, and then saves over the corrupt one', async () => {
    const s = new MemoryStorage();
    await saveCheckpoint(s, fakePolicies(0.5), state(1)); // a
    await saveCheckpoint(s, fakePolicies(0.5), state(2)); // b
    s.files.set('checkpoints/b/state.json', textBytes('not json'));
    const cp = await latestCheckpoint(s);
    expect(cp?.slot).toBe('a');
    expect(cp?.state.cursor.step).toBe(1);
    expect(cp?.warning).toMatch(
      /^checkpoints\/b\/state.json is not valid JSON .*; using the other checkpoint, checkpoints\/a \(iteration 1, examiner step 1\)/,
    );
    // A run resumed from slot a keeps it: the next save goes to b.
    expect(await saveCheckpoint(s, fakePolicies(0.5), state(2), cp!.slot)).toBe('b');
    expect((await latestCheckpoint(s))?.warning).toBeUndefined();
    // A corrupt pointer: the slot that got further is used.
    s.files.set('checkpoints/latest.json', textBytes('{'));
    const p = await latestCheckpoint(s);
    expect(p?.slot).toBe('b');
    expect(p?.warning).toMatch(/^checkpoints\/latest.json is not valid JSON/);
  });

  it('verifies every file of the newest slot by size and SHA-256, falling back to the other slot by name', async () => {
    const s = new MemoryStorage();
    await saveCheckpoint(s, fakePolicies(0.5), state(1)); // a
    await saveCheckpoint(s, fakePolicies(0.25), state(2)); // b
    const file = 'checkpoints/b/examiner.optim.safetensors';
    const whole = s.files.get(file)!;
    s.files.set(file, whole.slice(0, 100));
    const cut = await latestCheckpoint(s);
    expect(cut?.slot).toBe('a');
    expect(cut?.warning).toBe(
      `${file} has 100 bytes where the checkpoint wrote ${whole.length} (truncated or replaced); using the other ` +
        'checkpoint, checkpoints/a (iteration 1, examiner step 1)',
    );
    // The same size, other bytes.
    const flipped = whole.slice();
    flipped[whole.length - 1] ^= 1;
    s.files.set(file, flipped);
    expect((await latestCheckpoint(s))?.warning).toMatch(
      /^checkpoints\/b\/examiner.optim.safetensors is not the file the checkpoint wrote \(its SHA-256 differs\); using the other checkpoint, checkpoints\/a/,
    );
    s.files.delete(file);
    expect((await latestCheckpoint(s))?.warning).toMatch(
      /^checkpoints\/b\/examiner.optim.safetensors is missing; using/,
    );
    s.files.set(file, whole);
    expect((await latestCheckpoint(s))?.warning).toBeUndefined();
  });

  it('finds the newest readable slot when latest.json is lost; nothing at all is no checkpoint', async () => {
    const s = new MemoryStorage();
    expect(await latestCheckpoint(s)).toBeNull();
    await saveCheckpoint(s, fakePolicies(0.5), state(1)); // a
    await saveCheckpoint(s, fakePolicies(0.5), state(2)); // b
    s.files.delete('checkpoints/latest.json');
    const cp = await latestCheckpoint(s);
    expect(cp?.slot).toBe('b');
    expect(cp?.state.cursor.step).toBe(2);
    expect(cp?.warning).toMatch(/^checkpoints\/latest.json is missing; using the other checkpoint, checkpoints\/b/);
  });
});

/** What restorePolicies gives the policies: the first weight of each loaded policy. */
function loadingPolicies(): { loaded: Map<string, number>; policies: Policies } {
  const loaded = new Map<string, number>();
  const policies = {
    policy: (name: string) => (name === 'teacher' ? null : {}),
    loadWeights: (name: string, bytes: Uint8Array) =>
      loaded.set(name, toFloat32(parseSafetensors(bytes, name).tensors.get('w')!)[0]!),
    loadOptimizerState: () => {},
  } as unknown as Policies;
  return { loaded, policies };
}

describe('a checkpoint read while a run saves, or edited by hand', () => {
  it('loads the bytes it verified, or says the file changed (eval during train mixed two checkpoints)', async () => {
    const s = new MemoryStorage();
    await saveCheckpoint(s, fakePolicies(0.5), state(1)); // a
    const cp = (await latestCheckpoint(s))!;
    // A run saves into slot a again between the check and the load.
    const other = new MemoryStorage();
    await saveCheckpoint(other, fakePolicies(0.25), state(2));
    s.files.set('checkpoints/a/student.safetensors', other.files.get('checkpoints/a/student.safetensors')!);
    const { loaded, policies } = loadingPolicies();
    await expect(restorePolicies(s, cp.slot, policies, cp.state.files)).rejects.toThrow(CheckpointChangedError);
    await expect(restorePolicies(s, cp.slot, policies, cp.state.files)).rejects.toThrow(
      'checkpoints/a/student.safetensors is not the file the checkpoint wrote (its SHA-256 differs) since it was ' +
        'checked: a run saved into it meanwhile',
    );
    expect(loaded.get('student')).toBeUndefined();
  });

  it('covers state.json by its own hash: an edited one falls back to the other slot', async () => {
    const s = new MemoryStorage();
    await saveCheckpoint(s, fakePolicies(0.5), state(1)); // a
    await saveCheckpoint(s, fakePolicies(0.5), state(2)); // b
    const file = 'checkpoints/b/state.json';
    const text = new TextDecoder().decode(s.files.get(file)!);
    s.files.set(file, textBytes(text.replace('"iterations":1,', '"iterations":1000000000,')));
    const cp = await latestCheckpoint(s);
    expect(cp?.slot).toBe('a');
    expect(cp?.warning).toMatch(
      /^checkpoints\/b\/state.json is not the file the checkpoint wrote \(its SHA-256 differs: it was edited or damaged\); using the other checkpoint, checkpoints\/a/,
    );
  });

  it('validates stored settings as flags are (iterations 1e9, lr -1, a negative batch, an unknown mode)', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ iterations: 1e9 }, '--iterations: 1000000000 is not allowed; use an integer from 1 to 10000'],
      [{ lr: -1 }, '--lr: -1 is not allowed'],
      [{ studentBatch: -2 }, '--student-batch: -2 is not allowed'],
      [{ privileged: 'oracle' }, '--privileged: "oracle" is not allowed'],
      [{ privileged: undefined }, '--privileged is missing from the configuration'],
    ];
    for (const [change, why] of bad) {
      const s = new MemoryStorage();
      await saveCheckpoint(s, fakePolicies(0.5), state(1));
      // An older checkpoint (no hash of its own) edited by hand: only the check of its settings stands.
      const file = 'checkpoints/a/state.json';
      const stored = JSON.parse(new TextDecoder().decode(s.files.get(file)!)) as RunState;
      delete stored.sha256;
      stored.config = { ...stored.config, ...change };
      s.files.set(file, textBytes(JSON.stringify(stored)));
      await expect(latestCheckpoint(s)).rejects.toThrow(
        `no intact checkpoint: checkpoints/a/state.json holds settings piplay refuses (${why}`,
      );
    }
  });

  it('names the run it belongs to and the files of its base', () => {
    const st = { ...state(1), runId: 'run-1', baseFiles: { 'config.json': 'c1', 'model.safetensors': 'w1' } };
    expect(otherRun(st, 'run-1')).toBeNull();
    expect(otherRun(st, 'run-2')).toMatch(/the checkpoints belong to run run-1, not to this folder's run run-2/);
    expect(otherRun(st, undefined)).toMatch(/not to this folder's a run without an identity \(no run.json\)/);
    expect(otherRun(state(1), 'run-2')).toMatch(/belong to a run of an older version, without an identity/);
    expect(otherRun(state(1), undefined)).toBeNull();
    const base = (files: Record<string, string>) => ({ name: 'models/m', files });
    expect(otherBase(st, base({ 'config.json': 'c1', 'model.safetensors': 'w1', 'x.json': 'x' }))).toBeNull();
    expect(otherBase(st, base({ 'config.json': 'c1', 'model.safetensors': 'w2' }))).toBe(
      'piplay: the base model models/m is not the one this run was trained from: its model.safetensors has ' +
        'another SHA-256; put the original files back to resume, or start a new run on this model',
    );
    expect(otherBase(state(1), base({}))).toBeNull();
    expect(otherBase(st, { name: 'a stored run' })).toBeNull();
    expect(otherBase(st, base({ 'config.json': 'c1' }))).toMatch(/its model.safetensors is missing;/);
  });
});
