// A run's history in the browser store (what the page showed of it), on fake-indexeddb through the real
// saveCheckpoint and BrowserRunStorage: records become visible exactly with the checkpoint that follows them,
// a failed save keeps them for the next one, a new page reads them back in order (rollouts' tokens unpacked as
// they were), and a resume cuts them to its checkpoint's counts.
import { IDBFactory, IDBObjectStore } from 'fake-indexeddb';
import { createStore } from 'idb-keyval';
import { beforeEach, describe, expect, it } from 'vitest';
import { writeSafetensors } from '../../../src/model/safetensors.ts';
import { saveCheckpoint, type RunState } from '../../../src/selfplay/checkpoint.ts';
import type { RolloutRecord, RunEvent } from '../../../src/selfplay/events.ts';
import type { Policies } from '../../../src/selfplay/policies.ts';
import { BrowserCheckpoints, idbBackend, type KvBackend } from '../../../src/worker/checkpoint-store.ts';
import { unpackEvent } from '../../../src/worker/wire.ts';

const policies = {
  saveWeights: async (name: string) =>
    writeSafetensors([{ name: `${name}.w`, dtype: 'F32', shape: [1], data: Float32Array.from([1]) }]),
  optimizerState: async () => ({ step: 1, params: [] }),
} as unknown as Policies;

function rollout(step: number): RolloutRecord {
  return {
    iteration: 0,
    step,
    question: `q${step}?`,
    gold: 'a',
    hops: 1,
    answer: 'a',
    reward: 1,
    advantage: 0.5,
    searches: ['x'],
    privilegedMode: 'full',
    privilegedBlock: 'Notes\n',
    tokens: [
      {
        id: 7,
        text: ' a',
        policy: 1,
        studentLogp: -0.5,
        teacherLogp: -0.25,
        kl: 0.125,
        topk: { ids: [7, 8], texts: [' a', ' b'], studentLogp: [-0.5, -1], teacherLogp: [-0.25, -2] },
      },
      { id: 9, text: '<information>', policy: 0, studentLogp: 0, teacherLogp: 0, kl: 0 },
    ],
  };
}

const metrics = (step: number): RunEvent => ({ type: 'metrics', metrics: { stage: 'student', iteration: 0, step } });

function state(step: number, records: RunState['records']): RunState {
  return {
    version: 1,
    config: { policies: 'separate' } as never,
    cursor: { iteration: 0, stage: 'student', step },
    rng: { seed: 1, scheme: 'labels-v1' },
    dataset: [],
    metrics: [],
    evals: [],
    records,
    base: 'b',
  };
}

const page = (kv: KvBackend = idbBackend(createStore('piplay', 'checkpoints'))) => new BrowserCheckpoints(kv);

beforeEach(() => {
  globalThis.indexedDB = new IDBFactory();
});

describe('run history in the browser store', () => {
  it('stores the records with the checkpoint after them and reads them back in order from a new page', async () => {
    const store = page();
    const run = await store.createRun({ name: 'r1', base: 'b', config: { policies: 'separate' } as never });
    run.record(metrics(0));
    run.record({ type: 'rollout', record: rollout(0) });
    run.record({ type: 'progress', stage: 'student', iteration: 0, done: 1, total: 2 });
    run.record({ type: 'log', level: 'info', message: 'not history' });
    // Not a checkpoint yet: nothing of it is visible.
    expect(await page().history('r1')).toEqual([]);
    await saveCheckpoint(run, policies, state(1, { metrics: 1, questions: 0, rollouts: 1, eval: 0 }));
    run.record(metrics(1));
    run.record({ type: 'rollout', record: rollout(1) });
    await saveCheckpoint(run, policies, state(2, { metrics: 2, questions: 0, rollouts: 2, eval: 0 }));
    const events = (await page().history('r1')).map(unpackEvent);
    expect(events.map((e) => e.type)).toEqual(['metrics', 'rollout', 'metrics', 'rollout']);
    const r = events[3] as Extract<RunEvent, { type: 'rollout' }>;
    expect(r.record).toEqual(rollout(1));
  });

  it('keeps the records of a failed save for the next one, once each', async () => {
    const store = page();
    const run = await store.createRun({ name: 'r1', base: 'b', config: { policies: 'separate' } as never });
    run.record(metrics(0));
    const real = idbBackend(createStore('piplay', 'checkpoints'));
    // The pointer's transaction fails once (as over quota): the checkpoint, and the history with it, are not stored.
    const orig = IDBObjectStore.prototype.put;
    let failed = false;
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if (!failed && String(key).endsWith('checkpoints/latest.json')) {
        failed = true;
        throw Object.assign(new Error('The quota has been exceeded.'), { name: 'QuotaExceededError' });
      }
      return orig.call(this, value, key);
    } as typeof orig;
    try {
      await expect(
        saveCheckpoint(run, policies, state(1, { metrics: 1, questions: 0, rollouts: 0, eval: 0 })),
      ).rejects.toThrow(/quota/);
    } finally {
      IDBObjectStore.prototype.put = orig;
    }
    expect(await page(real).history('r1')).toEqual([]);
    run.record(metrics(1));
    await saveCheckpoint(run, policies, state(2, { metrics: 2, questions: 0, rollouts: 0, eval: 0 }));
    const steps = (await page(real).history('r1')).map((e) => (e.type === 'metrics' ? e.metrics.step : -1));
    expect(steps).toEqual([0, 1]);
  });

  it('cuts the history to a checkpoint’s counts, and names a missing run', async () => {
    const store = page();
    const run = await store.createRun({ name: 'r1', base: 'b', config: { policies: 'separate' } as never });
    for (let i = 0; i < 3; i++) run.record(metrics(i));
    run.record({ type: 'rollout', record: rollout(0) });
    run.record({ type: 'rollout', record: rollout(1) });
    await saveCheckpoint(run, policies, state(1, { metrics: 3, questions: 0, rollouts: 2, eval: 0 }));
    const cut = await store.history('r1', { metrics: 2, rollouts: 1, questions: 0, eval: 0 });
    expect(cut.map((e) => e.type)).toEqual(['metrics', 'metrics', 'rollout']);
    await expect(store.history('nope')).rejects.toThrow(/no stored run named 'nope'/);
  });
});
