// A model of a config's shapes with seeded random weights, for throughput rows of real model shapes without
// their weights (npm run bench model, the GPU benchmark).
import type { Engine } from '../src/gpu/engine.ts';
import { expectedTensors, parseConfig } from '../src/model/config.ts';
import { CausalLM } from '../src/model/decoder.ts';

/** A model of `config`'s shapes with seeded random weights (uniform, ±0.035; norms 1), in f32. */
export function randomModel(e: Engine, config: object): CausalLM {
  const cfg = parseConfig(config);
  let seed = 1;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.07;
  const specs = new Map(expectedTensors(cfg).map((s) => [s.name, s.shape]));
  return CausalLM.fromHost(e, cfg, (name) => {
    const shape = specs.get(name);
    if (!shape) return undefined;
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (name.endsWith('norm.weight')) data.fill(1);
    else for (let i = 0; i < n; i++) data[i] = rand();
    return { data, shape: [...shape] };
  });
}
