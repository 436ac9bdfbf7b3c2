// GPU memory of a LoRA set-up of a real-shape checkpoint (make-checkpoint.ts): the buffer pool's bytes after
// the base is read and the policies are built (frozen base, adapters, AdamW moments), then its high-water
// mark after one LoRA training step of the student (forward, backward, AdamW) on one sequence. A dev tool:
//
//   npx tsx scripts/real-shapes/weight-memory.ts --model runs/real/smollm2 [--tokens 128]
import { parseArgs } from 'node:util';
import { Engine } from '../../src/gpu/engine.ts';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { filesFromNodeFolder } from '../../src/gpu/host/node-files.ts';
import { mul, sum } from '../../src/gpu/ops/elementwise.ts';
import { folderBase } from '../../src/selfplay/base-model.ts';
import { makeConfig } from '../../src/selfplay/config.ts';
import { Policies } from '../../src/selfplay/policies.ts';

const { values } = parseArgs({ options: { model: { type: 'string' }, tokens: { type: 'string', default: '128' } } });
if (!values.model) throw new Error('--model DIR: a model folder (scripts/real-shapes/make-checkpoint.ts writes one)');
const T = Number(values.tokens);
const MB = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

const e = await Engine.create(nodeHost());
const config = makeConfig('smoke', { policies: 'lora', model: values.model });
let t0 = performance.now();
const base = await folderBase(e, filesFromNodeFolder(values.model), values.model);
const p = Policies.create(e, base, config);
await e.sync();
let bytes = 0;
const dtypes = new Map<string, number>();
for (const t of p.student.params.values()) {
  bytes += t.byteLength;
  dtypes.set(t.dtype, (dtypes.get(t.dtype) ?? 0) + t.byteLength);
}
const byDtype = [...dtypes].map(([d, b]) => `${d} ${MB(b)}`).join(', ');
const loaded = e.memory();
console.log(`load: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(`frozen base on the GPU: ${MB(bytes)} (${byDtype})`);
console.log(`pool after load: live ${MB(loaded.liveBytes)}, high-water ${MB(loaded.peakAllocatedBytes)}`);

t0 = performance.now();
const V = base.cfg.vocabSize;
const ids = Int32Array.from({ length: T }, (_, k) => (k * 7919 + 13) % V);
for (const ad of p.student.lora!.adapters.values()) e.fill(ad.B, 1e-3); // a gradient for A too
e.tidy(() => {
  const logits = p.student.forward({ ids, batch: 1, time: T });
  e.backward(sum(mul(logits, e.tensor(new Float32Array(T * V).fill(1e-3), logits.shape))));
});
p.studentOpt.step().dispose();
await e.sync();
const stepped = e.memory();
console.log(`one LoRA step (${T} tokens): ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(`pool after the step: live ${MB(stepped.liveBytes)}, high-water ${MB(stepped.peakAllocatedBytes)}`);
p.dispose();
e.destroy();
