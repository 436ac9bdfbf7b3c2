// The worker's storage side, in Node: the store-only zip writer/reader, the IndexedDB checkpoint store's
// listing, exports and imports (over an in-memory idb-keyval stand-in; its behaviour under failures is
// tested on a real IndexedDB in checkpoint-store-idb.test.ts), and the packing of rollout events into
// transferable typed arrays.
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseSafetensors, toFloat32, writeSafetensors } from '../../../src/model/safetensors.ts';
import type { RunEvent, TokenRecord } from '../../../src/selfplay/events.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { BrowserCheckpoints, POINTER_FILE, memoryBackend, summarize } from '../../../src/worker/checkpoint-store.ts';
import { packEvent, packTokens, unpackEvent, unpackTokens } from '../../../src/worker/wire.ts';
import { crc32, readZip, writeZip } from '../../../src/worker/zip.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = (s: string) => enc.encode(s);

describe('zip', () => {
  it('crc32 matches the standard check value', () => {
    expect(crc32(bytes('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it('writes a store-only archive that reads back byte for byte', async () => {
    const big = new Uint8Array(70_000).map((_, i) => (i * 31) & 255);
    const entries = [
      { name: 'model/config.json', data: bytes('{"a":1}') },
      { name: 'model/model.safetensors', data: big },
      { name: 'model/ünïcode.txt', data: bytes('π') },
      { name: 'model/empty', data: new Uint8Array(0) },
    ];
    const blob = writeZip(entries, new Date(2024, 0, 2, 3, 4, 6));
    const zip = new Uint8Array(await blob.arrayBuffer());
    // Local header signature, "stored", UTF-8 flag.
    expect([...zip.subarray(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
    expect(zip[8]).toBe(0);
    const back = await readZip(zip);
    expect(back.map((e) => e.name)).toEqual(entries.map((e) => e.name));
    back.forEach((e, i) => expect([...e.data]).toEqual([...entries[i]!.data]));
  });

  it('reads deflated entries (archives made by other tools) and rejects damaged ones', async () => {
    const text = bytes('hello hello hello hello hello');
    const z = deflateRawSync(text);
    // Build a one-entry deflate archive by hand.
    const name = bytes('a.txt');
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(8, 8, true);
    lv.setUint32(14, crc32(text), true);
    lv.setUint32(18, z.length, true);
    lv.setUint32(22, text.length, true);
    lv.setUint16(26, name.length, true);
    local.set(name, 30);
    const cd = new Uint8Array(46 + name.length);
    const cv = new DataView(cd.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(10, 8, true);
    cv.setUint32(16, crc32(text), true);
    cv.setUint32(20, z.length, true);
    cv.setUint32(24, text.length, true);
    cv.setUint16(28, name.length, true);
    cd.set(name, 46);
    const end = new Uint8Array(22);
    const ev = new DataView(end.buffer);
    ev.setUint32(0, 0x06054b50, true);
    ev.setUint16(8, 1, true);
    ev.setUint16(10, 1, true);
    ev.setUint32(12, cd.length, true);
    ev.setUint32(16, local.length + z.length, true);
    const all = new Uint8Array([...local, ...z, ...cd, ...end]);
    const [e] = await readZip(all);
    expect(dec.decode(e!.data)).toBe('hello hello hello hello hello');
    await expect(readZip(bytes('not a zip at all, just some text here'), 'x.zip')).rejects.toThrow(
      /x\.zip is not a readable ZIP file/,
    );
    const bad = all.slice();
    bad[30 + name.length] ^= 0xff; // corrupt the data
    await expect(readZip(bad, 'bad.zip')).rejects.toThrow(/bad\.zip/);
  });
});

/** What src/selfplay/checkpoint.ts writes for one checkpoint (its layout, not its code). */
async function saveLikeTheLoop(
  st: { put(n: string, b: Uint8Array): Promise<void>; get(n: string): Promise<Uint8Array | null> },
  em: number,
  cursorStep: number,
) {
  const prev = await st.get(POINTER_FILE);
  const slot = prev && JSON.parse(dec.decode(prev)).slot === 'a' ? 'b' : 'a';
  await st.put(`checkpoints/${slot}/student.safetensors`, new Uint8Array(1000).fill(em * 10));
  await st.put(`checkpoints/${slot}/examiner.safetensors`, new Uint8Array(1000));
  const state = {
    cursor: { iteration: 0, stage: 'student', step: cursorStep },
    evals: [{ iteration: 0, em, emByHop: { '1': em, '2': 0 }, searchesPerRollout: 1, redundancy: 0, n: 4 }],
    metrics: [{ stage: 'student', iteration: 0, step: 0, reward: 0.5, distill: 0.01, loss: 3 }],
  };
  await st.put(`checkpoints/${slot}/state.json`, bytes(JSON.stringify(state)));
  await st.put(POINTER_FILE, bytes(JSON.stringify({ slot, cursor: state.cursor, savedAt: '' })));
  return slot;
}

describe('checkpoints in IndexedDB (over an in-memory idb-keyval)', () => {
  const config = { ...makeConfig('smoke'), policies: 'separate', iterations: 2 } as never;

  it('lists a run once its first checkpoint is complete, with its cursor and metrics', async () => {
    const kv = memoryBackend();
    const store = new BrowserCheckpoints(kv);
    const run = await store.createRun({ name: 'r1', base: 'random-tiny', config });
    expect((await store.list())[0]).toMatchObject({ name: 'r1', kind: 'run', cursor: null });
    await saveLikeTheLoop(run, 0.25, 1);
    const [e] = await store.list();
    expect(e).toMatchObject({ name: 'r1', cursor: { stage: 'student', step: 1 } });
    expect(e!.bytes).toBeGreaterThan(2000); // the slot's three files
    expect(e!.metrics).toMatchObject({ em: 0.25, em_hop1: 0.25, student_reward: 0.5, student_distill: 0.01 });
    expect(e!.metrics.student_loss).toBeUndefined();
    expect(await run.list()).toEqual([
      'checkpoints/a/examiner.safetensors',
      'checkpoints/a/state.json',
      'checkpoints/a/student.safetensors',
      POINTER_FILE,
    ]);
  });

  it('exports a run as an HF folder: its base files and the student weights of the latest slot', async () => {
    const store = new BrowserCheckpoints(memoryBackend());
    const run = await store.createRun({ name: 'r1', base: 'b', config });
    await run.put('base/config.json', bytes('{}'));
    await run.put('base/tokenizer.json', bytes('{"model":{}}'));
    await run.put('base/source.json', bytes('{}'));
    await expect(store.modelFiles('r1')).rejects.toThrow(/no complete checkpoint/);
    const slot = await saveLikeTheLoop(run, 0.5, 0);
    const weights = new Uint8Array(Float32Array.from([1, 2, 3, 4]).buffer);
    const student = writeSafetensors([{ name: 'model.norm.weight', dtype: 'F32', shape: [4], data: weights }]);
    await run.put(`checkpoints/${slot}/student.safetensors`, student);
    const files = await store.modelFiles('r1');
    expect([...files.keys()].sort()).toEqual(['README.md', 'config.json', 'model.safetensors', 'tokenizer.json']);
    // The model card: no base_model for random-tiny (no hub model), and the EM of its state.
    const card = new TextDecoder().decode(files.get('README.md'));
    expect(card).toMatch(/^---\nlibrary_name: transformers\n/);
    expect(card).toContain('| after (this model) | 50.0% (1-hop 50.0%, 2-hop 0.0%; 4 questions) |');
    expect(files.get('model.safetensors')).toEqual(student); // no row shards: the file as it was saved
  });

  it("exports a LoRA run: the student's adapters merged into its base, rebuilt by the store's runBase", async () => {
    const f32 = (name: string, shape: number[], values: number[]) => ({
      name,
      dtype: 'F32' as const,
      shape,
      data: new Uint8Array(Float32Array.from(values).buffer),
    });
    const q = 'model.layers.0.self_attn.q_proj';
    // rank 1, alpha 2: W + 2 · B A.
    const student = writeSafetensors([
      f32(`${q}.lora_A.weight`, [1, 3], [1, 2, 3]),
      f32(`${q}.lora_B.weight`, [2, 1], [0.5, -1]),
    ]);
    const examiner = writeSafetensors([
      f32(`${q}.lora_A.weight`, [1, 3], [9, 9, 9]),
      f32(`${q}.lora_B.weight`, [2, 1], [9, 9]),
    ]);
    const base = new Map([
      [`${q}.weight`, { data: Float32Array.from([1, 1, 1, 0, 0, 0]), shape: [2, 3] }],
      ['model.norm.weight', { data: Float32Array.from([1, 1, 1]), shape: [3] }],
    ]);
    const kv = memoryBackend();
    const asked: string[] = [];
    const store = new BrowserCheckpoints(kv, {
      runBase: async (name) => {
        asked.push(name);
        return base;
      },
    });
    const run = await store.createRun({
      name: 'lora1',
      base: 'b',
      config: { ...makeConfig('smoke'), policies: 'lora', loraRank: 1, loraAlpha: 2 },
    });
    await run.put('base/config.json', bytes('{}'));
    await run.put('base/tokenizer.json', bytes('{"model":{}}'));
    await run.put('base/tokenizer_config.json', bytes('{}'));
    await run.put('base/source.json', bytes('{}'));
    await saveLikeTheLoop(run, 0.5, 0);
    await run.put('checkpoints/a/student.safetensors', student);
    await run.put('checkpoints/a/examiner.safetensors', examiner);
    const files = await store.modelFiles('lora1');
    expect(asked).toEqual(['lora1']);
    expect([...files.keys()].sort()).toEqual([
      'README.md',
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const st = parseSafetensors(files.get('model.safetensors')!, 'model.safetensors');
    expect([...st.tensors.keys()]).toEqual([`${q}.weight`, 'model.norm.weight']);
    expect(st.tensors.get(`${q}.weight`)!.shape).toEqual([2, 3]);
    expect([...toFloat32(st.tensors.get(`${q}.weight`)!)]).toEqual([1 + 1, 1 + 2, 1 + 3, -2, -4, -6]);
    expect([...toFloat32(st.tensors.get('model.norm.weight')!)]).toEqual([1, 1, 1]);

    // Without a way to rebuild the base, or when rebuilding fails, the error says why.
    await expect(new BrowserCheckpoints(kv).modelFiles('lora1')).rejects.toThrow(
      /run 'lora1' trains LoRA adapters on a base model that is not stored with it/,
    );
    const failing = new BrowserCheckpoints(kv, {
      runBase: () => Promise.reject(new Error('the folder picked from disk is gone')),
    });
    await expect(failing.modelFiles('lora1')).rejects.toThrow(
      /run 'lora1': exporting merges the student's LoRA adapters into the run's base model, which could not be rebuilt: the folder/,
    );
  });

  it('imports model folders, replaces by name, sweeps orphans and deletes', async () => {
    const kv = memoryBackend();
    const store = new BrowserCheckpoints(kv);
    const files = new Map([
      ['config.json', bytes('{}')],
      ['model.safetensors', new Uint8Array(10)],
    ]);
    const m1 = await store.importModel('tiny', files);
    expect(m1).toMatchObject({ name: 'tiny', kind: 'model', bytes: 12, files: ['config.json', 'model.safetensors'] });
    // Replacing by name drops the old data.
    await store.importModel('tiny', new Map([['config.json', bytes('{"v":3}')]]));
    expect(dec.decode((await store.modelFiles('tiny')).get('config.json')!)).toBe('{"v":3}');
    expect([...kv.map.keys()].filter((k) => k.startsWith('model:')).length).toBe(1);
    // Orphaned data (a crash before a flip) is swept when a new store opens.
    kv.map.set('model:dead/config.json', bytes('x'));
    kv.map.set('run:gone/checkpoints/a/state.json', bytes('x'));
    await new BrowserCheckpoints(kv).list();
    expect(kv.map.has('model:dead/config.json')).toBe(false);
    expect(kv.map.has('run:gone/checkpoints/a/state.json')).toBe(false);
    expect(await store.delete('tiny')).toBe(true);
    expect(await store.list()).toEqual([]);
    expect([...kv.map.keys()].filter((k) => k !== 'manifest')).toEqual([]);
  });

  it('summarize takes the last evaluation and the last student and examiner steps', () => {
    const m = summarize({
      evals: [{ iteration: 0, em: 0.1, emByHop: { '1': 0.2 }, searchesPerRollout: 0, redundancy: 0, n: 1 }],
      metrics: [
        { stage: 'student', iteration: 0, step: 0, reward: 0.1 },
        { stage: 'examiner', iteration: 0, step: 0, reward: 0.3, solvable_share: 0.4 },
        { stage: 'student', iteration: 0, step: 1, reward: 0.2 },
      ],
    });
    expect(m).toEqual({
      em: 0.1,
      em_hop1: 0.2,
      student_reward: 0.2,
      examiner_reward: 0.3,
      examiner_solvable_share: 0.4,
    });
  });
});

describe('rollout events cross as transferables', () => {
  const tokens: TokenRecord[] = [
    {
      id: 5,
      text: '<search>',
      policy: 1,
      studentLogp: -0.5,
      teacherLogp: -0.25,
      kl: 0.125,
      topk: { ids: [5, 7], texts: ['<search>', 'x'], studentLogp: [-0.5, -1.5], teacherLogp: [-0.25, -2] },
    },
    { id: 9, text: ' tool', policy: 0, studentLogp: 0, teacherLogp: 0, kl: 0 },
    {
      id: 7,
      text: 'x',
      policy: 1,
      studentLogp: -1,
      teacherLogp: -3,
      kl: 0.5,
      topk: { ids: [7], texts: ['x'], studentLogp: [-1], teacherLogp: [-3] },
    },
  ];

  it('packs tokens into typed arrays and unpacks them unchanged', () => {
    const p = packTokens(tokens);
    expect(p.k).toBe(2);
    expect([...p.topkIds]).toEqual([5, 7, -1, -1, 7, -1]);
    expect(p.vocab).toEqual({ 5: '<search>', 7: 'x' });
    expect(unpackTokens(p)).toEqual(tokens);
  });

  it('an event lists the buffers to transfer; other events pass as they are', () => {
    const ev: RunEvent = {
      type: 'rollout',
      record: {
        iteration: 0,
        step: 0,
        question: 'q',
        gold: 'g',
        hops: 1,
        answer: '',
        reward: 0,
        advantage: 0,
        searches: [],
        tokens,
      },
    };
    const { wire, transfer } = packEvent(ev);
    expect(transfer.length).toBe(8);
    expect(transfer.every((b) => b instanceof ArrayBuffer)).toBe(true);
    expect(JSON.stringify(unpackEvent(structuredClone(wire)))).toBe(JSON.stringify(ev));
    const log: RunEvent = { type: 'log', level: 'info', message: 'm' };
    expect(packEvent(log)).toEqual({ wire: log, transfer: [] });
  });
});
