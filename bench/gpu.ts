// The GPU benchmark (scripts/gpu-bench/run.sh runs it): on the adapter Dawn picks (a hardware GPU through
// Vulkan where there is one), in this order: matmul with piplay's `tiled` and `regs` kernels beside
// tfjs-backend-webgpu; fused attention forward and backward; decoding alone on the default model, the fused step
// against the general ops (bench/decode.ts); self-play on the default model (one demo-preset
// iteration and the quick preset's whole run, phase by phase: what a user of the page waits for); decode and
// training tokens/s of the SmolLM2-135M and Qwen3-0.6B shapes with random weights. Prints the tables and
// writes OUT/gpu-bench.json after each part, so a run stopped by its time limit keeps what it finished.
//   npx tsx bench/gpu.ts OUT [--small]    (--small: tiny sizes, for a dry run on a CPU driver)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../src/gpu/engine.ts';
import { nodeHost } from '../src/gpu/host/node.ts';
import { benchAttention, type AttentionSize } from './attention.ts';
import { benchDecode } from './decode.ts';
import { describeRoofline, measureBandwidth, type Roofline } from './roofline.ts';
import { benchSelfPlay } from './iteration.ts';
import { benchMatmul } from './matmul.ts';
import { benchRandomModel, RANDOM_MODEL_HEADER } from './random-model.ts';
// The real models' configs, as the tests read them (bench/configs/, from the models' repositories).
import QWEN3_06B from './configs/qwen3-0.6b.json' with { type: 'json' };
import SMOLLM2_135M from './configs/smollm2-135m.json' with { type: 'json' };

const TINY = {
  ...SMOLLM2_135M,
  vocab_size: 512,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const out = args.find((a) => !a.startsWith('-'));
  if (!out) throw new Error('usage: bench/gpu.ts OUT_DIR [--small]  (OUT_DIR: where gpu-bench.json goes)');
  const small = args.includes('--small');
  const e = await Engine.create(nodeHost());
  const i = e.info;
  console.log(
    `device: ${i.description || i.vendor} (${i.vendor} ${i.architecture}; ${i.isCpu ? 'a CPU driver' : 'hardware'}${i.f16 ? ', shader-f16' : ''})`,
  );
  if (i.isCpu && !small) console.log('  (a CPU driver: the full sizes take long here; --small is the dry run)');
  const results: Record<string, unknown> = { device: i, date: new Date().toISOString(), small };
  const t0 = performance.now();
  mkdirSync(out, { recursive: true });
  const save = () => {
    results['seconds'] = (performance.now() - t0) / 1000;
    writeFileSync(join(out, 'gpu-bench.json'), JSON.stringify(results, null, 2));
  };
  const sizes: [number, number, number][] = small
    ? [
        [64, 64, 64],
        [128, 96, 160],
      ]
    : [
        [1024, 1024, 1024],
        [2048, 2048, 2048],
        [4096, 4096, 4096],
      ];
  results['matmul'] = await benchMatmul(e, sizes, i.isCpu ? ['subgroup', 'regs', 'tiled'] : ['tiled', 'regs']);
  save();
  const att: AttentionSize[] = small
    ? [{ B: 1, Hq: 4, Hkv: 2, T: 64, Dh: 32 }]
    : [
        { B: 1, Hq: 9, Hkv: 3, T: 1024, Dh: 64 },
        { B: 1, Hq: 16, Hkv: 8, T: 2048, Dh: 128 },
      ];
  results['attention'] = await benchAttention(e, att);
  save();
  const best = Math.max(...(results['matmul'] as { gflops: number }[]).map((r) => r.gflops));
  const roofline: Roofline = { bytesPerS: await measureBandwidth(e, small ? 16 : 256), flopsPerS: best * 1e9 };
  results['roofline'] = roofline;
  console.log(`\n${describeRoofline(roofline)}`);
  results['decode'] = await benchDecode(e, { repeats: small ? 1 : 3, byKernel: !small, roofline });
  save();
  // The dry run shrinks both to one step of each kind, one iteration and one held-out question per hop.
  const shrink = small ? { steps: 1, evalPerHop: 1 } : {};
  results['demoIteration'] = await benchSelfPlay(e, { preset: 'demo', ...shrink });
  save();
  results['quickRun'] = await benchSelfPlay(e, {
    preset: 'quick',
    wholeRun: true,
    ...shrink,
    ...(small ? { iterations: 1 } : {}),
  });
  save();
  console.log('\nrandom-weight models: decode (KV cache, greedy) and training (forward + backward + AdamW), f32');
  console.log(RANDOM_MODEL_HEADER);
  const models: [string, object][] = small
    ? [['tiny', TINY]]
    : [
        ['SmolLM2-135M', SMOLLM2_135M],
        ['Qwen3-0.6B', QWEN3_06B],
      ];
  const rows = [];
  const plan = small
    ? { warmTokens: 2, newTokens: 8, batch: 2, time: 32, steps: 2 }
    : { warmTokens: 2, newTokens: 32, batch: 4, time: 256, steps: 3 };
  for (const [name, cfg] of models) rows.push(await benchRandomModel(e, name, cfg, plan, roofline));
  results['model'] = rows;
  save();
  console.log(`\n${(results['seconds'] as number).toFixed(0)} s; wrote ${join(out, 'gpu-bench.json')}`);
  process.exit(0);
}

main().catch((err) => {
  console.error((err as Error).message);
  process.exit(1);
});
