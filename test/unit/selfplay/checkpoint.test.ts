// Checkpoint slots: weights or optimizer moments with a NaN or an infinity are never saved (the previous
// checkpoint stays the latest), a half-written slot is never taken for a complete one, and a corrupt
// state.json in the latest slot falls back to the other, intact slot with a warning that names the file.
import { describe, expect, it } from 'vitest';
import type { AdamWState } from '../../../src/gpu/optim/adamw.ts';
import { writeSafetensors } from '../../../src/model/safetensors.ts';
import {
  latestCheckpoint,
  NonFiniteCheckpointError,
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
