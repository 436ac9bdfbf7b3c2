// npm run bench [suite ...]: kernel and model throughput on the adapter Dawn finds (lavapipe on a machine without a
// GPU), with peers side by side. Prints tables; writes bench/results/latest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Engine } from '../src/gpu/engine.ts';
import { nodeHost } from '../src/gpu/host/node.ts';
import { benchAttentionTree } from './attention.ts';
import { benchDecode } from './decode.ts';
import { benchIteration } from './iteration.ts';
import { benchMatmul } from './matmul.ts';
import { benchTrainingPass } from './training-pass.ts';

const suites: Record<string, (e: Engine) => Promise<Record<string, unknown>[]>> = {
  matmul: benchMatmul,
};
/** Suites that run only when named (minutes long). */
const onRequest: Record<string, (e: Engine) => Promise<Record<string, unknown>[]>> = {
  iteration: benchIteration,
  decode: (e) => benchDecode(e),
  'attention-tree': benchAttentionTree,
  'train-pass': benchTrainingPass,
};

async function optionalSuite(name: string, path: string, fn: string): Promise<void> {
  try {
    const mod = (await import(path)) as Record<string, (e: Engine) => Promise<Record<string, unknown>[]>>;
    if (mod[fn]) suites[name] = mod[fn]!;
  } catch {
    /* the suite's module is not there yet */
  }
}

async function main(): Promise<void> {
  await optionalSuite('attention', './attention.ts', 'benchAttention');
  await optionalSuite('model', './model.ts', 'benchModel');
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const e = await Engine.create(nodeHost());
  const i = e.info;
  console.log(
    `device: ${i.description || i.vendor} (${i.host}${i.isCpu ? ', software' : ''}${i.f16 ? ', shader-f16' : ''})`,
  );
  const results: Record<string, unknown> = {
    device: i.description || i.vendor,
    isCpu: i.isCpu,
    date: new Date().toISOString(),
  };
  const unknown = only.filter((n) => !(n in suites) && !(n in onRequest));
  if (unknown.length)
    throw new Error(
      `bench: no suite ${unknown.join(', ')}; choose from ${[...Object.keys(suites), ...Object.keys(onRequest)].join(', ')}`,
    );
  for (const [name, fn] of [...Object.entries(suites), ...Object.entries(onRequest)]) {
    if (only.length ? !only.includes(name) : name in onRequest) continue;
    results[name] = await fn(e);
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', JSON.stringify(results, null, 2));
  console.log('\nwrote bench/results/latest.json');
  process.exit(0);
}

main().catch((err) => {
  console.error((err as Error).message);
  process.exit(1);
});
