// `npm run pretrain -- ... --write-stream DIR`: instead of training, writes the run's start model and every
// step's batch, exactly as the engine would train on them, for an external trainer of the same recipe
// (scripts/torch-train/pretrain.py trains them in PyTorch on the CPU, far faster than a CPU Vulkan driver).
//
// DIR/model/        the start model as an HF folder (fresh initialisation, or the --from folder's weights)
// DIR/spec.json     steps, the optimizer and schedule settings (src/pretrain/train.ts), the command; written
//                   first, so a trainer can start while the batches are still being written
// DIR/steps.bin     int32 [steps, 2]: rows and seq of each step's batch (copy-task steps differ)
// DIR/ids.bin       int32, every step's ids [rows, seq], row-major, one step after the other
// DIR/targets.bin   int32, the same layout: the id after each position
// DIR/mask.bin      uint8, the same layout: 1 where the position is a loss target
// DIR/stats.json    what the batches hold (PretrainStats), written last: the stream is complete
import { closeSync, openSync, writeSync } from 'node:fs';
import { writeFileAtomically } from './atomic-folder.ts';
import { join } from 'node:path';
import type { Engine } from '../gpu/engine.ts';
import { exportModel } from '../model/io.ts';
import { batchSource, pretrainStart, type PretrainOptions } from '../pretrain/run.ts';
import { learningRate, optimizerSettings } from '../pretrain/train.ts';
import { makeFolder } from '../node/make-folder.ts';

export async function writeStream(
  engine: Engine,
  o: PretrainOptions,
  dir: string,
  command: string,
  onProgress?: (step: number) => void,
): Promise<{ tokens: number; targets: number }> {
  const start = await pretrainStart(engine, o);
  try {
    makeFolder(join(dir, 'model'));
    const files = await exportModel(start.model, { extraFiles: start.tokenizerFiles });
    for (const [name, bytes] of files) writeFileAtomically(join(dir, 'model', name), bytes, { replace: true });
  } finally {
    start.model.dispose();
  }
  const train = optimizerSettings({ steps: o.steps, lr: o.lr, ...o.train });
  // The schedule the engine would use, so the external trainer can be checked against it.
  const lrCheck = [0, train.warmup, o.steps - 1].map((step) => ({ step, lr: learningRate(step, train) }));
  const spec = { command, seed: o.seed, train, lrCheck };
  writeFileAtomically(join(dir, 'spec.json'), JSON.stringify(spec, null, 1) + '\n', { replace: true });
  const source = batchSource(start.tokenizer, o);
  const out = Object.fromEntries(
    ['steps.bin', 'ids.bin', 'targets.bin', 'mask.bin'].map((f) => [f, openSync(join(dir, f), 'w')]),
  ) as Record<string, number>;
  const write = (f: string, a: Int32Array | Uint8Array) => writeSync(out[f]!, a, 0, a.byteLength);
  try {
    for (let step = 0; step < o.steps; step++) {
      const b = source.next();
      // The step's shape last: a trainer reading while this writes takes a step once its shape is there.
      write('ids.bin', new Uint8Array(b.ids.buffer, b.ids.byteOffset, b.ids.byteLength));
      write('targets.bin', new Uint8Array(b.targets.buffer, b.targets.byteOffset, b.targets.byteLength));
      write(
        'mask.bin',
        Uint8Array.from(b.mask, (m) => (m > 0 ? 1 : 0)),
      );
      write('steps.bin', Int32Array.of(b.rows, b.seq));
      onProgress?.(step + 1);
    }
  } finally {
    for (const fd of Object.values(out)) closeSync(fd);
  }
  const stats = source.stats();
  writeFileAtomically(join(dir, 'stats.json'), JSON.stringify(stats, null, 1) + '\n', { replace: true });
  return { tokens: stats.tokens, targets: stats.targets };
}
