// Low-rank adapters (LoRA) on the decoder's projections: y = x Wᵀ + (alpha / r) · (x Aᵀ) Bᵀ, with the
// base W frozen. A starts small and random, B at zero, so an adapted model starts equal to its base.
// Several policies (examiner, student, teacher) can share one frozen base and differ only in adapters.
import type { Engine } from '../gpu/engine.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { add, scale } from '../gpu/ops/elementwise.ts';
import { linear, matmul } from '../gpu/ops/matmul.ts';
import { widen } from '../gpu/ops/packed.ts';
import type { ModelConfig } from './config.ts';
import type { HostTensor, HostWeights } from './host-weights.ts';
import { mulberry32 } from './seeded.ts';

export interface LoraOptions {
  rank: number;
  alpha: number;
  /** Projection kinds to adapt (default: all attention and MLP projections). */
  targets?: string[];
  seed?: number;
}

export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

interface Adapter {
  A: Tensor; // [rank, in]
  B: Tensor; // [out, rank]
}

export class LoraSet {
  readonly adapters = new Map<string, Adapter>();
  readonly scale: number;

  constructor(
    engine: Engine,
    cfg: ModelConfig,
    readonly opts: LoraOptions,
  ) {
    this.scale = opts.alpha / opts.rank;
    const targets = opts.targets ?? LORA_TARGETS;
    const rand = mulberry32(opts.seed ?? 0);
    const qOut = cfg.heads * cfg.headDim;
    const kvOut = cfg.kvHeads * cfg.headDim;
    const shapes: Record<string, [number, number]> = {
      q_proj: [qOut, cfg.hidden],
      k_proj: [kvOut, cfg.hidden],
      v_proj: [kvOut, cfg.hidden],
      o_proj: [cfg.hidden, qOut],
      gate_proj: [cfg.intermediate, cfg.hidden],
      up_proj: [cfg.intermediate, cfg.hidden],
      down_proj: [cfg.hidden, cfg.intermediate],
    };
    for (let l = 0; l < cfg.layers; l++) {
      for (const kind of targets) {
        const shape = shapes[kind];
        if (!shape) throw new Error(`piplay: unknown LoRA target '${kind}' (use ${LORA_TARGETS.join(', ')})`);
        const [out, inp] = shape;
        const group =
          kind.endsWith('_proj') && ['gate_proj', 'up_proj', 'down_proj'].includes(kind) ? 'mlp' : 'self_attn';
        const name = `model.layers.${l}.${group}.${kind}`;
        // Kaiming-uniform bound 1/sqrt(in) for A, as PEFT does; B = 0.
        const bound = 1 / Math.sqrt(inp);
        const a = Float32Array.from({ length: opts.rank * inp }, () => (2 * rand() - 1) * bound);
        const A = engine.keep(engine.tensor(a, [opts.rank, inp]));
        const B = engine.keep(engine.zeros([out, opts.rank]));
        A.name = `${name}.lora_A.weight`;
        B.name = `${name}.lora_B.weight`;
        this.adapters.set(name, { A, B });
      }
    }
  }

  /**
   * y + B(scale · A x) for the projection `name` (unchanged when it has no adapter). The scale goes on the
   * rank-wide A x, so a training pass keeps two tensors of the projection's width beside y, not three.
   */
  apply(name: string, x: Tensor, y: Tensor): Tensor {
    const ad = this.adapters.get(name);
    if (!ad) return y;
    return add(y, linear(scale(linear(x, ad.A), this.scale), ad.B));
  }

  /**
   * The weight `name.weight` with its adapter folded in, W + scale · B A (W itself when the projection has
   * no adapter): what an exported model folder carries, so it needs no LoRA support to load. A 16-bit base
   * is widened first: the sum is f32.
   */
  merged(name: string, w: Tensor): Tensor {
    const ad = this.adapters.get(name);
    if (!ad) return w;
    return add(widen(w), matmul(ad.B, ad.A, { alpha: this.scale }));
  }

  parameters(): Tensor[] {
    return [...this.adapters.values()].flatMap((a) => [a.A, a.B]);
  }

  dispose(): void {
    for (const t of this.parameters()) t.dispose();
    this.adapters.clear();
  }
}

/**
 * LoraSet.merged on the host: the base weights with every adapter in `adapters` (the tensors a LoRA
 * checkpoint holds: `<projection>.lora_A.weight` [rank, in] and `<projection>.lora_B.weight` [out, rank])
 * folded in as W + (alpha / rank) · B A. For exporting a stored LoRA run without building it on the GPU.
 * `what` names the adapters' file in errors.
 */
export function mergeLoraHost(
  base: HostWeights,
  adapters: ReadonlyMap<string, HostTensor>,
  opts: { rank: number; alpha: number; what: string },
): Map<string, HostTensor> {
  const out = new Map([...base.keys()].map((name) => [name, base.get(name)!]));
  const scale = opts.alpha / opts.rank;
  const r = opts.rank;
  for (const name of adapters.keys()) {
    const [, proj, half] = /^(.*)\.lora_([AB])\.weight$/.exec(name) ?? [];
    if (!proj)
      throw new Error(
        `piplay: ${opts.what}: '${name}' is not a LoRA adapter tensor (<projection>.lora_A.weight or .lora_B.weight)`,
      );
    const other = `${proj}.lora_${half === 'A' ? 'B' : 'A'}.weight`;
    if (!adapters.has(other)) throw new Error(`piplay: ${opts.what} has '${name}' but not its pair '${other}'`);
    if (half === 'B') continue;
    const A = adapters.get(name)!;
    const B = adapters.get(other)!;
    const W = base.get(`${proj}.weight`);
    if (!W)
      throw new Error(
        `piplay: ${opts.what} adapts '${proj}', which the base model does not have; was the run started from another ` +
          'base?',
      );
    const [rows, cols] = W.shape as [number, number];
    if (A.shape[0] !== r || A.shape[1] !== cols || B.shape[0] !== rows || B.shape[1] !== r) {
      throw new Error(
        `piplay: ${opts.what}: the adapters of '${proj}' have shapes A [${A.shape}], B [${B.shape}]; rank ${r} on a ` +
          `[${W.shape}] weight needs A [${r},${cols}] and B [${rows},${r}] (does loraRank match the run's?)`,
      );
    }
    const merged = new Float32Array(W.data);
    for (let o = 0; o < rows; o++) {
      for (let i = 0; i < cols; i++) {
        let s = 0;
        for (let k = 0; k < r; k++) s += B.data[o * r + k]! * A.data[k * cols + i]!;
        merged[o * cols + i] = merged[o * cols + i]! + scale * s;
      }
    }
    out.set(`${proj}.weight`, { data: merged, shape: [...W.shape] });
  }
  return out;
}
