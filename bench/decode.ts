// npm run bench -- decode: decoding alone, the fused step (src/model/decode-step.ts) against the general ops side
// by side in one run, on the embedded default model (public/models/piplay-tiny, its real weights; with LoRA as
// the student decodes: rank 16 on every projection, B random so the adapters change the numbers). Rows of
// random prompts, greedy, no stop: every row decodes every step, so tokens/s is rows x steps / wall time of the
// decoding steps (each call's prefill is timed apart; the first call includes compiling the kernels). Alternates
// the paths, REPEATS times each. `--by-kernel` then times each kernel of one more call of each path (by GPU
// timestamps, a compute pass per dispatch, where the device has them: src/gpu/profile.ts).
import type { Engine } from '../src/gpu/engine.ts';
import { filesFromNodeFolder } from '../src/gpu/host/node-files.ts';
import { phaseKernel, Profile } from '../src/gpu/profile.ts';
import { type DecodePath, setDecodePath } from '../src/model/decode-step.ts';
import type { CausalLM } from '../src/model/decoder.ts';
import { generate } from '../src/model/generate.ts';
import { loadModel } from '../src/model/io.ts';
import { LoraSet } from '../src/model/lora.ts';
import { describeRoofline, measureBandwidth, type Roofline, tokenBounds } from './roofline.ts';

const MODEL = new URL('../public/models/piplay-tiny/', import.meta.url).pathname;
const ROWS = 20;
const PROMPT = 150;
const NEW_TOKENS = 64;
const REPEATS = 2;

export interface DecodeBenchOptions {
  /** Calls of each path and adapter setting (default REPEATS). */
  repeats?: number;
  /** Also time each kernel of one more call of each path (default: the command line's --by-kernel). */
  byKernel?: boolean;
  /** The adapter's roofline (default: its bandwidth measured here, no compute peak). */
  roofline?: Roofline;
}

interface DecodeRun {
  path: DecodePath;
  lora: boolean;
  tokPerS: number;
  prefillTokPerS: number;
  dispatchesPerStep: number;
  readsPerStep: number;
}

/** One generate call: prefill timed apart from the decoding steps (the first onStep marks its end). */
async function run(e: Engine, model: CausalLM, path: DecodePath, lora: boolean): Promise<DecodeRun> {
  setDecodePath(path);
  let seed = 1;
  const prompts = Array.from({ length: ROWS }, () =>
    Array.from({ length: PROMPT }, () => (seed = (seed * 48271) % 2147483647) % model.cfg.vocabSize),
  );
  await e.sync();
  const c0 = { ...e.counters };
  const t0 = performance.now();
  let tFirst = 0;
  let c1 = c0;
  await generate(model, prompts, {
    maxNewTokens: NEW_TOKENS,
    temperature: 0,
    random: () => 0.5,
    onStep: (s) => {
      if (s === 1) {
        tFirst = performance.now();
        c1 = { ...e.counters };
      }
    },
  });
  await e.sync();
  const t1 = performance.now();
  const steps = NEW_TOKENS - 1;
  return {
    path,
    lora,
    tokPerS: (ROWS * steps) / ((t1 - tFirst) / 1000),
    prefillTokPerS: (ROWS * PROMPT) / ((tFirst - t0) / 1000),
    dispatchesPerStep: (e.counters.dispatches - c1.dispatches) / steps,
    readsPerStep: (e.counters.reads - c1.reads) / steps,
  };
}

export async function benchDecode(e: Engine, opts: DecodeBenchOptions = {}): Promise<Record<string, unknown>[]> {
  const model = await loadModel(e, filesFromNodeFolder(MODEL), { source: 'piplay-tiny' });
  console.log(
    `\ndecode: ${MODEL} (${model.cfg.layers} layers, width ${model.cfg.hidden}), ${ROWS} rows, ` +
      `${PROMPT}-token prompts, ${NEW_TOKENS} new tokens, greedy; fused and general alternating`,
  );
  const roof = opts.roofline ?? { bytesPerS: await measureBandwidth(e), flopsPerS: 0 };
  const params = model.numParameters();
  console.log(
    `  ${describeRoofline(roof)}: ${params} parameters read once per step bound decoding at ` +
      `${tokenBounds(roof, params, ROWS).decode.toFixed(0)} tok/s for ${ROWS} rows`,
  );
  console.log('  path     LoRA | decode tok/s | prefill tok/s | dispatches/step | read-backs/step');
  const rows: Record<string, unknown>[] = [];
  for (const lora of [false, true]) {
    if (lora) {
      model.lora = new LoraSet(e, model.cfg, { rank: 16, alpha: 32, seed: 1 });
      for (const ad of model.lora.adapters.values())
        e.write(
          ad.B,
          Float32Array.from({ length: ad.B.size }, (_, i) => Math.sin(i) * 0.01),
        );
    }
    for (let k = 0; k < (opts.repeats ?? REPEATS); k++)
      for (const path of ['general', 'fused'] as DecodePath[]) {
        const r = await run(e, model, path, lora);
        console.log(
          `  ${path.padEnd(8)} ${lora ? 'yes' : ' no'}  | ${r.tokPerS.toFixed(0).padStart(12)} | ` +
            `${r.prefillTokPerS.toFixed(0).padStart(13)} | ${r.dispatchesPerStep.toFixed(1).padStart(15)} | ` +
            `${r.readsPerStep.toFixed(2).padStart(15)}`,
        );
        rows.push({ ...r });
      }
  }
  if (opts.byKernel ?? process.argv.includes('--by-kernel'))
    for (const path of ['general', 'fused'] as DecodePath[]) await byKernel(e, model, path);
  setDecodePath(null);
  return rows;
}

/** GPU ms per dispatch and share of GPU time of each kernel in one call (LoRA as the last runs had it). */
async function byKernel(e: Engine, model: CausalLM, path: DecodePath): Promise<void> {
  const profile = new Profile();
  profile.byKernel = true;
  e.profile = profile;
  await run(e, model, path, model.lora !== null);
  await e.sync(); // the kernels' GPU timestamps are charged once read
  profile.flush();
  e.profile = null;
  const kernels = [...profile.phases].filter(([, t]) => t.dispatches > 0);
  const total = kernels.reduce((a, [, t]) => a + t.gpuSeconds, 0);
  console.log(`
  ${path}: GPU ${total.toFixed(2)} s in ${kernels.length} kernels (prefill included)`);
  for (const [phase, t] of kernels.sort((a, b) => b[1].gpuSeconds - a[1].gpuSeconds).slice(0, 12))
    console.log(
      `  ${(phaseKernel(phase).kernel ?? phase).padEnd(40)} ${((1000 * t.gpuSeconds) / t.dispatches).toFixed(3).padStart(8)} ms x ${String(t.dispatches).padStart(6)} = ${((100 * t.gpuSeconds) / total).toFixed(1).padStart(5)}%`,
    );
}
