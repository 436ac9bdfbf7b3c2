// A CausalLM stand-in whose next token follows a script, for testing the rollout loop deterministically:
// each prompt has a stream of ids it "samples" (logit 40 on that id, 0 elsewhere, so its probability is
// 1 - V·e^-40), then EOS. Rows are recognised by their prompt (the first `promptLength` ids). The next id
// is the stream's entry at the number of ids the row's context holds after its prompt, tool replies not
// counted (a reply runs from the id before `<information>` to the id after `</information>`), so the
// script holds across turns, tool replies, batches in which finished rows are still computed and batches
// that finished rows have left (`keepRows`).
import type { Engine } from '../../src/gpu/engine.ts';
import type { Tensor } from '../../src/gpu/tensor.ts';
import { CausalLM, type KVCache, type TokenBatch } from '../../src/model/decoder.ts';
import type { ModelConfig } from '../../src/model/config.ts';

export const SCRIPT_LOGIT = 40;

export class ScriptedModel extends CausalLM {
  private readonly streams = new Map<string, number[]>();
  /** Row index in the current batch -> its context so far. */
  private batch: number[][] = [];
  /** Every prefill's context per row (prompt + everything so far), for assertions. */
  readonly contexts: number[][] = [];

  constructor(
    engine: Engine,
    cfg: ModelConfig,
    private readonly promptLength: number,
    private readonly eos: number,
    private readonly infoOpen: number,
    private readonly infoClose: number,
  ) {
    super(engine, cfg);
  }

  /** It reads each step's ids on the host. */
  override takesDeviceIds(): boolean {
    return false;
  }

  /** The ids the row with this prompt will emit, in order across all its turns. */
  script(prompt: readonly number[], ids: readonly number[]): void {
    this.streams.set(this.key(prompt), [...ids]);
  }

  /** Ids after the prompt that are not inside a tool reply. */
  private emitted(ctx: readonly number[]): number {
    let n = 0;
    for (let t = this.promptLength; t < ctx.length; t++) {
      if (ctx[t + 1] === this.infoOpen) {
        const close = ctx.indexOf(this.infoClose, t);
        t = close < 0 ? ctx.length : close + 1;
        continue;
      }
      n++;
    }
    return n;
  }

  private key(ids: readonly number[]): string {
    return ids.slice(0, this.promptLength).join(',');
  }

  override hidden(input: TokenBatch, cache?: KVCache, keep?: Int32Array): Tensor {
    if (input.time > 1 || (cache && cache.length === 0)) {
      this.batch = [];
      for (let b = 0; b < input.batch; b++) {
        const start = input.keyStart?.[b] ?? 0;
        const ids = Array.from(input.ids.slice(b * input.time + start, (b + 1) * input.time));
        this.contexts.push(ids.slice());
        this.batch.push(ids);
      }
    } else {
      for (let b = 0; b < input.batch; b++) this.batch[b]!.push(input.ids[b]!);
    }
    if (cache) cache.length += input.time;
    // Kept rows are each row's last column (a prefill's): row b's logits come from this.batch[b].
    return keep ? this.engine.zeros([keep.length, 1]) : this.engine.zeros([input.batch, input.time, 1]);
  }

  private nextLogits(B: number): Tensor {
    const V = this.cfg.vocabSize;
    const data = new Float32Array(B * V);
    for (let b = 0; b < B; b++) {
      const ctx = this.batch[b]!;
      const stream = this.streams.get(this.key(ctx)) ?? [];
      const id = stream[this.emitted(ctx)] ?? this.eos;
      data[b * V + id] = SCRIPT_LOGIT;
    }
    return this.engine.tensor(data, [B, V]);
  }

  override logits(hidden: Tensor): Tensor {
    if (hidden.rank === 2) return this.nextLogits(hidden.shape[0]!);
    return this.nextLogits(hidden.shape[0]!).reshape([hidden.shape[0]!, 1, this.cfg.vocabSize]);
  }

  override newCache(batch: number, capacity: number): KVCache {
    const cache: KVCache = {
      keys: [],
      values: [],
      capacity,
      length: 0,
      batch,
      keepRows: (rows) => {
        this.batch = rows.map((r) => this.batch[r]!);
        cache.batch = rows.length;
      },
      dispose() {},
    };
    return cache;
  }
}
