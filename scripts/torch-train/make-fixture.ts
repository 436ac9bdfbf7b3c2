// Writes test/assets/torch-train/torch.json: the run of spec.json trained in PyTorch (replay.py) from the
// engine's own initial weights and batches. Needs python3 with torch and numpy (Debian: python3-torch);
// the tests only read the result. Usage: npx tsx scripts/torch-train/make-fixture.ts [python]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSafetensors } from '../../src/model/safetensors.ts';
import { readTorchRun, torchRunBatches, torchRunModel, TORCH_TRAIN_DIR } from './torch-run.ts';

const python = process.argv[2] ?? '/usr/bin/python3';
const { spec } = readTorchRun();
const { cfg, weights } = torchRunModel(spec);
const dir = mkdtempSync(join(tmpdir(), 'torch-train-'));
writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg));
writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec));
writeFileSync(
  join(dir, 'weights.safetensors'),
  writeSafetensors([...weights].map(([name, t]) => ({ name, dtype: 'F32' as const, shape: t.shape, data: t.data }))),
);
const batches = torchRunBatches(spec);
const cat = (pick: (b: (typeof batches)[number]) => Int32Array | Float32Array) =>
  Buffer.concat(batches.map((b) => Buffer.from(pick(b).buffer)));
writeFileSync(
  join(dir, 'ids.bin'),
  cat((b) => b.ids),
);
writeFileSync(
  join(dir, 'targets.bin'),
  cat((b) => b.targets),
);
writeFileSync(
  join(dir, 'mask.bin'),
  cat((b) => b.mask),
);
const out = fileURLToPath(new URL('torch.json', TORCH_TRAIN_DIR));
execFileSync(python, [fileURLToPath(new URL('replay.py', import.meta.url)), dir, out], { stdio: 'inherit' });
console.log(`wrote ${out}`);
