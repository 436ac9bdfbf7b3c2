// The stream `npm run pretrain -- --write-stream DIR` writes for scripts/torch-train/pretrain.py: the start
// model, and every step's batch exactly as the engine's own run would read it (batchSource), copy-task steps
// included; the schedule settings with the loop's defaults and check points of learningRate.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { writeStream } from '../../../src/cli/pretrain-stream.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { loadModel } from '../../../src/model/io.ts';
import { loadTokenizer } from '../../../src/model/tokenizer.ts';
import { batchSource, type PretrainOptions } from '../../../src/pretrain/run.ts';
import { learningRate, type OptimizerSettings } from '../../../src/pretrain/train.ts';
import { testEngine } from '../../helpers/engine.ts';

const dir = mkdtempSync(join(tmpdir(), 'piplay-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const O: PretrainOptions = {
  seed: 3,
  steps: 5,
  batch: 2,
  seq: 512,
  lr: 1e-3,
  hidden: 16,
  layers: 1,
  vocab: 300,
  tokenizerWorlds: 1,
  copyEvery: 2,
  copyRows: [4, 16],
  data: { worldSize: 20, studentPerWorld: 4, examinerPerWorld: 2 },
};

it('writes the start model and every batch as the engine reads them', async () => {
  const e = await testEngine();
  const done = await writeStream(e, O, dir, 'npm run pretrain -- (test)');
  const tok = await loadTokenizer(filesFromNodeFolder(join(dir, 'model')), { eosIds: [], where: dir });
  const model = await loadModel(e, filesFromNodeFolder(join(dir, 'model')), { source: dir });
  expect(model.cfg.hidden).toBe(16);
  model.dispose();

  const file = (name: string) => readFileSync(join(dir, name));
  const int32 = (b: Buffer) => new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const shapes = int32(file('steps.bin'));
  const ids = int32(file('ids.bin'));
  const targets = int32(file('targets.bin'));
  const mask = file('mask.bin');
  expect(shapes.length).toBe(2 * O.steps);
  const source = batchSource(tok, O);
  let at = 0;
  for (let step = 0; step < O.steps; step++) {
    const b = source.next();
    expect([shapes[2 * step], shapes[2 * step + 1]]).toEqual([b.rows, b.seq]);
    const n = b.rows * b.seq;
    expect(ids.subarray(at, at + n)).toEqual(b.ids);
    expect(targets.subarray(at, at + n)).toEqual(b.targets);
    expect(Float32Array.from(mask.subarray(at, at + n))).toEqual(b.mask);
    at += n;
  }
  expect(at).toBe(ids.length);
  // Step 2 (of 1..5) is a copy-task step: its rows are the copy task's.
  expect([shapes[2], shapes[3]]).toEqual([4, 16]);
  expect(done.tokens).toBe(ids.length);

  const spec = JSON.parse(file('spec.json').toString()) as {
    train: OptimizerSettings;
    lrCheck: { step: number; lr: number }[];
  };
  expect(spec.train).toEqual({
    steps: 5,
    lr: 1e-3,
    warmup: 0,
    minLrRatio: 0.1,
    weightDecay: 0.01,
    maxGradNorm: 1,
    beta2: 0.95,
  });
  for (const c of spec.lrCheck) expect(c.lr).toBe(learningRate(c.step, { steps: 5, lr: 1e-3 }));
  expect(JSON.parse(file('stats.json').toString()).tokens).toBe(ids.length);
});
