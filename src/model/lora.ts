// Low-rank adapters (LoRA) on the decoder's projections: y = x Wᵀ + (alpha / r) · (x Aᵀ) Bᵀ, with the
// base W frozen. A starts small and random, B at zero, so an adapted model starts equal to its base.
// Several policies (examiner, student, teacher) can share one frozen base and differ only in adapters.
import type { Engine } from '../gpu/engine.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { add, scale } from '../gpu/ops/elementwise.ts';
import { linear, matmul } from '../gpu/ops/matmul.ts';
import type { ModelConfig } from './config.ts';
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
        const group = kind.endsWith('_proj') && ['gate_proj', 'up_proj', 'down_proj'].includes(kind) ? 'mlp' : 'self_attn';
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

  /** y + scale · B(A x) for the projection `name` (unchanged when it has no adapter). */
  apply(name: string, x: Tensor, y: Tensor): Tensor {
    const ad = this.adapters.get(name);
    if (!ad) return y;
    return add(y, scale(linear(linear(x, ad.A), ad.B), this.scale));
  }

  /**
   * The weight `name.weight` with its adapter folded in, W + scale · B A (W itself when the projection has
   * no adapter): what an exported model folder carries, so it needs no LoRA support to load.
   */
  merged(name: string, w: Tensor): Tensor {
    const ad = this.adapters.get(name);
    if (!ad) return w;
    return add(w, matmul(ad.B, ad.A, { alpha: this.scale }));
  }

  parameters(): Tensor[] {
    return [...this.adapters.values()].flatMap((a) => [a.A, a.B]);
  }

  dispose(): void {
    for (const t of this.parameters()) t.dispose();
    this.adapters.clear();
  }
}
