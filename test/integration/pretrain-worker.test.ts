// Pretraining through the engine worker's API, in Node (Dawn) over an in-memory idb-keyval, at toy size:
// progress and loss arrive as run events, the model is stored as a model entry (with its TRAINING.md) that
// loads back, trains further and exports; a second job is refused while one runs, Stop stops it, a name
// is never reused, and a diverging loss, a full storage quota or a lost device fail with a clear message
// and leave every stored entry as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { filesFromMap } from '../../src/model/files.ts';
import { loadModel } from '../../src/model/io.ts';
import { loadTokenizer } from '../../src/model/tokenizer.ts';
import { PRETRAIN_DEFAULTS } from '../../src/pretrain/settings.ts';
import type { RunEvent } from '../../src/selfplay/events.ts';
import { WorkerApi } from '../../src/worker/api.ts';
import { BrowserCheckpoints, memoryBackend } from '../../src/worker/checkpoint-store.ts';
import type { PretrainRequest, WorkerMessage } from '../../src/worker/protocol.ts';
import { readZip } from '../../src/worker/zip.ts';
import { testEngine } from '../helpers/engine.ts';

const TOY: PretrainRequest = {
  ...PRETRAIN_DEFAULTS,
  seed: 3,
  steps: 3,
  batch: 1,
  seq: 1024,
  lr: 1e-2,
  hidden: 16,
  layers: 1,
  vocab: 512,
  worldSize: 20,
  tokenizerWorlds: 1,
  logEvery: 1,
};

let api: WorkerApi;
const kv = memoryBackend();
const msgs: WorkerMessage[] = [];

const events = (): RunEvent[] => msgs.flatMap((m) => (m.type === 'run' ? [m.event as RunEvent] : []));
const phases = (): string[] => msgs.flatMap((m) => (m.type === 'phase' ? [m.phase] : []));

async function until(what: string, ok: () => boolean, timeoutMs = 120_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}; phases ${phases().join(',')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits for the job to end and returns how it ended (its last phase message). */
async function ended(): Promise<Extract<WorkerMessage, { type: 'phase' }>> {
  await until('the job to end', () => ['finished', 'stopped', 'failed'].includes(phases().at(-1) ?? ''));
  return msgs.filter((m): m is Extract<WorkerMessage, { type: 'phase' }> => m.type === 'phase').at(-1)!;
}

beforeAll(async () => {
  api = new WorkerApi(nodeHost(), kv);
  expect((await api.init()).ok).toBe(true);
  api.subscribe((batch) => msgs.push(...batch));
  // An entry stored before any pretraining: nothing below may touch it.
  await new BrowserCheckpoints(kv).importModel('keep-me', new Map([['config.json', new TextEncoder().encode('{}')]]));
});
afterAll(() => {
  api.loseDevice();
});

describe('pretraining in the engine worker', () => {
  it('reports progress and loss, stores the model with its TRAINING.md, refuses a second job', async () => {
    msgs.length = 0;
    const r = await api.pretrain({ ...TOY, name: 'toy' });
    expect(r).toEqual({ ok: true, name: 'toy' });
    // One job at a time: neither another pretraining nor a self-play run starts meanwhile.
    expect((await api.pretrain(TOY)).error).toMatch(/pretraining is under way.*one job at a time/);
    expect((await api.start({ resumeFrom: 'keep-me' })).error).toMatch(/pretraining is under way/);
    expect((await api.saveNow()).ok).toBe(false);
    const end = await ended();
    expect(end).toMatchObject({ phase: 'finished', job: 'pretrain' });

    const progress = events().filter((e): e is Extract<RunEvent, { type: 'progress' }> => e.type === 'progress');
    expect(progress.every((p) => p.stage === 'pretrain' && p.total === 3)).toBe(true);
    expect(progress.map((p) => p.done)).toEqual([0, 1, 2, 3]);
    expect(progress.at(-1)!.etaSeconds).toBe(0);
    expect(progress.at(-1)!.label).toMatch(/^loss \d+\.\d{3} · \d+ tokens\/s$/);
    const losses = events().flatMap((e) => (e.type === 'metrics' ? [e.metrics.loss as number] : []));
    expect(losses).toHaveLength(3);
    expect(losses.every(Number.isFinite)).toBe(true);

    const done = msgs.find((m) => m.type === 'pretrained');
    expect(done).toMatchObject({
      saved: 'toy',
      summary: { name: 'toy', steps: 3, tokens: 3 * 1024, hidden: 16, layers: 1, from: null },
    });
    if (done?.type !== 'pretrained') throw new Error('no summary');
    expect(done.summary.finalLoss).toBe(losses[2]);
    expect(done.summary.params).toBeGreaterThan(0);

    const list = await api.listCheckpoints();
    expect(list.map((c) => c.name).sort()).toEqual(['keep-me', 'toy']);
    const toy = list.find((c) => c.name === 'toy')!;
    expect(toy).toMatchObject({ kind: 'model', origin: 'pretrained', metrics: { loss: losses[2] } });
    expect(toy.files!.sort()).toEqual([
      'TRAINING.md',
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);

    // The stored folder loads back as a model with its tokenizer, and says how it was made.
    const store = new BrowserCheckpoints(kv);
    const files = await store.modelFiles('toy');
    const md = new TextDecoder().decode(files.get('TRAINING.md'));
    expect(md).toMatch(/\| steps \| 3 \(batch 1 x seq 1024, peak lr 0\.01/);
    expect(md).toMatch(/\| final loss \| \d+\.\d{3}/);
    expect(md).toMatch(/\| 3 \| \d+\.\d{3} \|/);
    const read = filesFromMap(files, 'toy');
    const model = await loadModel(await testEngine(), read);
    const tok = await loadTokenizer(read, { eosIds: model.cfg.eosIds });
    expect(model.cfg).toMatchObject({ hidden: 16, layers: 1, vocabSize: tok.vocabSize });
    model.dispose();

    // Its zip holds the HF folder and TRAINING.md.
    const zip = await api.exportCheckpoint('toy');
    const names = (await readZip(new Uint8Array(await zip.blob.arrayBuffer()))).map((e) => e.name).sort();
    expect(names).toEqual([
      'toy/TRAINING.md',
      'toy/config.json',
      'toy/model.safetensors',
      'toy/tokenizer.json',
      'toy/tokenizer_config.json',
    ]);
  }, 300_000);

  it('never reuses a name, and continues a stored model', async () => {
    expect(await api.pretrain({ ...TOY, name: 'keep-me' })).toEqual({
      ok: false,
      error: expect.stringMatching(/'keep-me' exists already.*nothing was replaced/),
    });
    expect((await api.pretrain({ ...TOY, hidden: 12 })).error).toMatch(/hidden must be a multiple of 8/);
    msgs.length = 0;
    const r = await api.pretrain({
      ...TOY,
      steps: 2,
      seed: 4,
      hidden: 8,
      layers: 3,
      from: { kind: 'checkpoint', name: 'toy' },
    });
    expect(r.name).toMatch(/^pretrained-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d$/);
    expect((await ended()).phase).toBe('finished');
    const done = msgs.find((m) => m.type === 'pretrained');
    // The stored model's shape wins over the form's.
    expect(done).toMatchObject({
      saved: r.name,
      summary: { from: "checkpoint 'toy'", hidden: 16, layers: 1, steps: 2 },
    });
    expect((await api.listCheckpoints()).length).toBe(3);
  }, 300_000);

  it('stops on request and stores nothing', async () => {
    msgs.length = 0;
    expect((await api.pretrain({ ...TOY, steps: 2000, name: 'long' })).ok).toBe(true);
    await until('the first step', () => events().some((e) => e.type === 'progress' && e.done >= 1));
    api.pause(); // no pausing a pretraining: it keeps running
    expect(phases().at(-1)).toBe('running');
    api.stop();
    expect((await ended()).phase).toBe('stopped');
    const steps = events().flatMap((e) => (e.type === 'progress' ? [e.done] : []));
    expect(Math.max(...steps)).toBeLessThan(2000);
    expect((await api.listCheckpoints()).some((c) => c.name === 'long')).toBe(false);
  }, 300_000);

  it('fails clearly when the loss diverges, and keeps every stored entry', async () => {
    const before = await api.listCheckpoints();
    msgs.length = 0;
    expect((await api.pretrain({ ...TOY, lr: 1e30, name: 'diverged' })).ok).toBe(true);
    const end = await ended();
    expect(end.phase).toBe('failed');
    expect(end.error).toMatch(/the loss is (NaN|-?Infinity) at step \d; lower the learning rate \(lr\)/);
    expect(await api.listCheckpoints()).toEqual(before);
    // The worker is free again.
    msgs.length = 0;
    expect((await api.pretrain({ ...TOY, steps: 1, name: 'after' })).ok).toBe(true);
    expect((await ended()).phase).toBe('finished');
  }, 300_000);

  it('keeps a model it could not store for download, and replaces nothing', async () => {
    const before = await api.listCheckpoints();
    msgs.length = 0;
    expect((await api.pretrain({ ...TOY, steps: 1, name: 'no-room' })).ok).toBe(true);
    kv.failSets(0); // the browser's storage is full from here on
    const end = await ended();
    kv.failSets(null);
    expect(end.phase).toBe('failed');
    expect(end.error).toMatch(
      /^The model trained, but storing it failed: Could not store 'no-room'.*quota is full.*It can still be downloaded as a zip\.$/,
    );
    expect(msgs.find((m) => m.type === 'pretrained')).toMatchObject({ saved: null, summary: { name: 'no-room' } });
    expect(await api.listCheckpoints()).toEqual(before);
    const zip = api.exportUnsavedModel()!;
    expect(zip.fileName).toBe('no-room.zip');
    const names = (await readZip(new Uint8Array(await zip.blob.arrayBuffer()))).map((e) => e.name).sort();
    expect(names).toEqual([
      'no-room/TRAINING.md',
      'no-room/config.json',
      'no-room/model.safetensors',
      'no-room/tokenizer.json',
      'no-room/tokenizer_config.json',
    ]);
  }, 300_000);

  it('explains a lost device without offering an unrelated run, and can start again', async () => {
    const before = await api.listCheckpoints();
    msgs.length = 0;
    expect((await api.pretrain({ ...TOY, steps: 2000, name: 'lost' })).ok).toBe(true);
    await until('the first step', () => events().some((e) => e.type === 'progress' && e.done >= 1));
    api.loseDevice();
    expect(['failed', 'stopped']).toContain((await ended()).phase);
    await until('the device-lost message', () => msgs.some((m) => m.type === 'device-lost'));
    expect(msgs.find((m) => m.type === 'device-lost')).toMatchObject({ job: 'pretrain', lastCheckpoint: null });
    expect(await api.listCheckpoints()).toEqual(before);
    msgs.length = 0;
    expect((await api.pretrain({ ...TOY, steps: 1, name: 'new-device' })).ok).toBe(true);
    expect((await ended()).phase).toBe('finished');
  }, 300_000);
});
