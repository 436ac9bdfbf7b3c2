// The browser checkpoint store under injected failures, on a faithful IndexedDB (fake-indexeddb): the
// real saveCheckpoint of the self-play loop writes through the real BrowserRunStorage and the real
// idb-keyval transactions. At every write of a save, a full quota, an aborted transaction, or the tab
// closing (the database connection force-closed mid-transaction, or the save never finishing) must leave
// the previous checkpoint intact and loadable after a reload, and the next save must succeed.
import { IDBFactory, IDBObjectStore, forceCloseDatabase } from 'fake-indexeddb';
import { createStore } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdamWState } from '../../../src/gpu/optim/adamw.ts';
import { parseSafetensors, toFloat32, writeSafetensors } from '../../../src/model/safetensors.ts';
import { latestCheckpoint, restorePolicies, saveCheckpoint, type RunState } from '../../../src/selfplay/checkpoint.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import type { Policies } from '../../../src/selfplay/policies.ts';
import { BrowserCheckpoints, CheckpointSaveError, POINTER_FILE } from '../../../src/worker/checkpoint-store.ts';
import { idbBackend } from '../../../src/worker/checkpoint-store.ts';

// A whole configuration: a reader checks a stored one as it checks flags.
const config = makeConfig('smoke', { iterations: 2 });

/**
 * What saveCheckpoint and restorePolicies use of Policies, with weights and optimizer moments that say
 * which save they belong to (`version`). `hang` makes saveWeights of that policy never return.
 */
class VersionedPolicies {
  loaded = new Map<string, number>();
  constructor(
    readonly version: number,
    readonly hang: string | null = null,
  ) {}
  policy(_name: string): object {
    return {};
  }
  saveWeights(name: string): Promise<Uint8Array> {
    if (name === this.hang) return new Promise(() => {});
    const data = Float32Array.from([this.version, 1, 2, 3]);
    return Promise.resolve(writeSafetensors([{ name: `${name}.w`, dtype: 'F32', shape: [4], data }]));
  }
  loadWeights(name: string, bytes: Uint8Array): void {
    this.loaded.set(name, toFloat32(parseSafetensors(bytes, name).tensors.get(`${name}.w`)!)[0]!);
  }
  async optimizerState(_name: string): Promise<AdamWState> {
    const v = this.version;
    const m = Float32Array.from([v, 0]);
    return { step: v, params: [{ name: 'w', shape: [2], step: v, m, v: Float32Array.from([1, 2]) }] };
  }
  loadOptimizerState(name: string, s: AdamWState): void {
    this.loaded.set(`${name}.optim`, s.step);
  }
}

function stateOf(version: number): RunState {
  return {
    version: 1,
    config,
    cursor: { iteration: 0, stage: 'student', step: version },
    rng: { seed: 1, scheme: 'labels-v1' },
    dataset: [],
    metrics: [{ stage: 'student', iteration: 0, step: version, reward: version / 10 } as never],
    evals: [],
    records: { metrics: version, questions: 0, rollouts: 0, eval: 0 },
    base: 'b',
  };
}

const asPolicies = (p: VersionedPolicies) => p as unknown as Policies;

// ---- fault injection at the n-th IndexedDB put ------------------------------------------------------

type Fault = 'quota' | 'abort' | 'close';
const realPut = IDBObjectStore.prototype.put;
let puts = 0;
let faultAt: { n: number; fault: Fault } | null = null;

beforeEach(() => {
  globalThis.indexedDB = new IDBFactory();
  puts = 0;
  faultAt = null;
  IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
    const req = realPut.call(this, value, key);
    if (faultAt && ++puts === faultAt.n) {
      const fault = faultAt.fault;
      const tx = this.transaction as IDBTransaction & { _abort(name: string | null): void };
      // The write fails when it is carried out, as in a browser: a write over the quota aborts its
      // transaction with a QuotaExceededError; the user agent may abort a transaction with no error;
      // closing the tab (or clearing site data) aborts the open transactions with an AbortError and
      // force-closes the connection. The abort undoes every write of the transaction.
      req.addEventListener('success', () => {
        if (fault === 'quota') tx._abort('QuotaExceededError');
        else if (fault === 'abort') tx.abort();
        else {
          tx._abort('AbortError');
          forceCloseDatabase(tx.db as never);
        }
      });
    }
    return req;
  } as typeof realPut;
});
afterEach(() => {
  IDBObjectStore.prototype.put = realPut;
});

/** A fresh page: a new connection to the same database, a new store, the run's storage. */
function reopen() {
  const kv = idbBackend(createStore('piplay', 'checkpoints'));
  const store = new BrowserCheckpoints(kv);
  return { kv, store, run: store.runStorage('r1') };
}

/** Checks that the run's latest checkpoint, seen from a new page, is save `version`, and loads it. */
async function expectLatest(version: number): Promise<void> {
  const { store, run } = reopen();
  const latest = await latestCheckpoint(run);
  expect(latest?.state.cursor.step).toBe(version);
  const p = new VersionedPolicies(0);
  await restorePolicies(run, latest!.slot, asPolicies(p));
  expect(Object.fromEntries(p.loaded)).toEqual({
    examiner: version,
    student: version,
    teacher: version,
    'examiner.optim': version,
    'student.optim': version,
  });
  const entry = (await store.list()).find((e) => e.name === 'r1');
  expect(entry?.cursor?.step).toBe(version);
  expect(entry?.metrics.student_reward).toBeCloseTo(version / 10);
}

/** The reason each fault's message gives (a regular expression). */
const WHY: Record<Fault, string> = {
  quota: 'the browser storage quota is full',
  abort: 'the browser aborted the IndexedDB transaction',
  close: 'the IndexedDB transaction was aborted \\(AbortError\\)',
};

/**
 * The number of IndexedDB puts one save makes: the slot's state.json emptied first (so a half-written slot is
 * never taken for a whole one), 5 slot files, state.json, then the pointer and the manifest.
 */
const PUTS_PER_SAVE = 9;

describe('saveCheckpoint into IndexedDB under injected failures', () => {
  it('a save makes the puts counted here, and a saved checkpoint loads after a reload', async () => {
    const { store, run } = reopen();
    await store.createRun({ name: 'r1', base: 'b', config });
    faultAt = { n: Infinity, fault: 'quota' };
    puts = 0;
    await saveCheckpoint(run, asPolicies(new VersionedPolicies(1)), stateOf(1));
    expect(puts).toBe(PUTS_PER_SAVE);
    await expectLatest(1);
  });

  for (const fault of ['quota', 'abort', 'close'] as const) {
    it(`${fault}: a failure at any write of a save leaves the previous checkpoint intact and loadable`, async () => {
      for (let n = 1; n <= PUTS_PER_SAVE; n++) {
        globalThis.indexedDB = new IDBFactory();
        const { store, run } = reopen();
        await store.createRun({ name: 'r1', base: 'b', config });
        await saveCheckpoint(run, asPolicies(new VersionedPolicies(1)), stateOf(1));
        await saveCheckpoint(run, asPolicies(new VersionedPolicies(2)), stateOf(2));
        puts = 0;
        faultAt = { n, fault };
        const err = await saveCheckpoint(run, asPolicies(new VersionedPolicies(3)), stateOf(3)).then(
          () => null,
          (e: unknown) => e,
        );
        faultAt = null;
        expect(err, `write ${n}`).toBeInstanceOf(CheckpointSaveError);
        expect((err as CheckpointSaveError).quota, `write ${n}`).toBe(fault === 'quota');
        const at =
          `^Could not save a checkpoint of run 'r1' \\(checkpoints/.*\\): ${WHY[fault]}; ` +
          'the previous checkpoint is intact';
        expect((err as Error).message, `write ${n}`).toMatch(new RegExp(at));
        await expectLatest(2);
        // The next save (after a reload) succeeds and becomes the latest.
        const again = reopen();
        await saveCheckpoint(again.run, asPolicies(new VersionedPolicies(3)), stateOf(3));
        await expectLatest(3);
      }
    });
  }

  it('a tab closed while the save waits for the GPU: a reload finds the previous checkpoint', async () => {
    const { store, run } = reopen();
    await store.createRun({ name: 'r1', base: 'b', config });
    await saveCheckpoint(run, asPolicies(new VersionedPolicies(1)), stateOf(1));
    // The save writes the examiner's weights and then never gets the student's: the page is gone.
    let settled = false;
    const hanging = saveCheckpoint(run, asPolicies(new VersionedPolicies(2, 'student')), stateOf(2));
    void hanging.finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    expect(await reopen().run.get('checkpoints/b/examiner.safetensors')).not.toBeNull();
    await expectLatest(1);
    await saveCheckpoint(reopen().run, asPolicies(new VersionedPolicies(2)), stateOf(2));
    await expectLatest(2);
    expect(JSON.parse(new TextDecoder().decode((await reopen().run.get(POINTER_FILE))!)).slot).toBe('b');
  });
});

describe('importModel into IndexedDB under injected failures', () => {
  const enc = new TextEncoder();
  const folder = (v: number) =>
    new Map([
      ['config.json', enc.encode(`{"v":${v}}`)],
      ['model.safetensors', new Uint8Array(8).fill(v)],
      ['tokenizer.json', enc.encode(`{"model":{},"v":${v}}`)],
    ]);

  for (const fault of ['quota', 'abort', 'close'] as const) {
    it(`${fault}: a failed re-import at any write leaves the previous model readable and no orphans`, async () => {
      for (let n = 1; n <= 4; n++) {
        globalThis.indexedDB = new IDBFactory();
        await reopen().store.importModel('tiny', folder(1));
        puts = 0;
        faultAt = { n, fault };
        const err = await reopen()
          .store.importModel('tiny', folder(2))
          .then(
            () => null,
            (e: unknown) => e,
          );
        faultAt = null;
        expect(err, `write ${n}`).toBeInstanceOf(CheckpointSaveError);
        const at = `^Could not store 'tiny' .*: ${WHY[fault]}; the previous 'tiny' is intact`;
        expect((err as Error).message, `write ${n}`).toMatch(new RegExp(at));
        const { kv, store } = reopen();
        expect(new TextDecoder().decode((await store.modelFiles('tiny')).get('config.json')!)).toBe('{"v":1}');
        await store.list(); // a new page sweeps what a failed import left behind
        expect((await kv.keys()).filter((k) => k.startsWith('model:')).length, `write ${n}`).toBe(3);
      }
    });
  }
});
