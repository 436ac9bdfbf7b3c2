// Checks the PyTorch trainer against the engine on a stream that `npm run pretrain -- --write-stream DIR`
// wrote: the engine trains the first N steps of the same schedule from DIR/model on the same batches, and
// the losses are compared with those scripts/torch-train/pretrain.py logged in TORCH_OUT/log.jsonl (it logs
// every one of the first 50 steps). Usage: npx tsx scripts/torch-train/check-stream.ts DIR TORCH_OUT [N]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/gpu/engine.ts';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { filesFromNodeFolder } from '../../src/gpu/host/node-files.ts';
import { loadModel } from '../../src/model/io.ts';
import type { Batch } from '../../src/pretrain/pack.ts';
import { pretrainLoop, type TrainSettings } from '../../src/pretrain/train.ts';

const [dir, torchOut, nArg] = process.argv.slice(2);
if (!dir || !torchOut) throw new Error('usage: npx tsx scripts/torch-train/check-stream.ts DIR TORCH_OUT [N]');
const n = Number(nArg ?? 20);
const spec = JSON.parse(readFileSync(join(dir, 'spec.json'), 'utf8')) as { train: TrainSettings };
const torch = readFileSync(join(torchOut, 'log.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { step: number; loss: number });

const int32s = (name: string) => {
  const b = readFileSync(join(dir, name));
  return new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const shape = int32s('steps.bin');
const ids = int32s('ids.bin');
const targets = int32s('targets.bin');
const mask = readFileSync(join(dir, 'mask.bin'));
let step = 0;
let at = 0;
const next = (): Batch => {
  const rows = shape[2 * step]!;
  const seq = shape[2 * step + 1]!;
  step++;
  const span = [at, at + rows * seq] as const;
  at = span[1];
  return {
    rows,
    seq,
    ids: ids.slice(...span),
    targets: targets.slice(...span),
    mask: Float32Array.from(mask.subarray(...span)),
  };
};

const e = await Engine.create(nodeHost());
const model = await loadModel(e, filesFromNodeFolder(join(dir, 'model')), { source: dir });
const logs = await pretrainLoop(model, next, { ...spec.train, stopAfter: n, logEvery: 1 });
let worst = 0;
for (const l of logs) {
  const t = torch.find((x) => x.step === l.step);
  if (!t) throw new Error(`${torchOut}/log.jsonl has no step ${l.step}`);
  const rel = Math.abs(l.loss - t.loss) / Math.abs(t.loss);
  worst = Math.max(worst, rel);
  console.log(`step ${l.step}: engine ${l.loss.toFixed(6)} torch ${t.loss.toFixed(6)} (rel ${rel.toExponential(1)})`);
}
console.log(`worst relative difference over ${logs.length} steps: ${worst.toExponential(2)}`);
model.dispose();
e.destroy();
process.exit(worst < 1e-3 ? 0 : 1);
