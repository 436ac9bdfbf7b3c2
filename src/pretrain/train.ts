// The pretraining loop: next-token cross-entropy on packed rows, AdamW, linear warm-up then cosine decay.
// One step records forward, backward and the optimizer update without waiting for the GPU; the loss is
// read back only every `logEvery` steps (which also keeps the CPU from running far ahead of the GPU).
import { maskedMean } from '../gpu/ops/masked_mean.ts';
import { rowLogprobs } from '../gpu/ops/vocab_head.ts';
import { AdamW } from '../gpu/optim/adamw.ts';
import type { CausalLM } from '../model/decoder.ts';
import type { Batch } from './pack.ts';

export interface TrainSettings {
  steps: number;
  /** Peak learning rate. */
  lr: number;
  /** Steps of linear warm-up (default 5% of steps, at most 100). */
  warmup?: number;
  /** The learning rate decays (cosine) to lr * minLrRatio at the last step (default 0.1). */
  minLrRatio?: number;
  /** Decoupled weight decay (default 0.01). */
  weightDecay?: number;
  /** Gradient clipping to this global norm (default 1). */
  maxGradNorm?: number;
  beta2?: number;
  /** Read the loss back every this many steps (the first and last steps are always read). */
  logEvery?: number;
  /** Train only the first this many steps of the schedule (checking an external trainer); default all. */
  stopAfter?: number;
  /** Checked before each step; once aborted the loop throws the signal's reason (the browser's Stop). */
  signal?: AbortSignal;
}

export interface StepLog {
  step: number;
  steps: number;
  loss: number;
  lr: number;
  /** Tokens processed (inputs, masked or not) so far. */
  tokens: number;
  seconds: number;
}

/** The optimizer and schedule settings with the loop's defaults filled in (also what an external trainer reads). */
export type OptimizerSettings = Required<
  Pick<TrainSettings, 'steps' | 'lr' | 'warmup' | 'minLrRatio' | 'weightDecay' | 'maxGradNorm' | 'beta2'>
>;

export function optimizerSettings(s: TrainSettings): OptimizerSettings {
  return {
    steps: s.steps,
    lr: s.lr,
    warmup: s.warmup ?? Math.min(100, Math.floor(s.steps * 0.05)),
    minLrRatio: s.minLrRatio ?? 0.1,
    weightDecay: s.weightDecay ?? 0.01,
    maxGradNorm: s.maxGradNorm ?? 1,
    beta2: s.beta2 ?? 0.95,
  };
}

/** Warm-up then cosine decay; `step` counts from 0. */
export function learningRate(step: number, settings: TrainSettings): number {
  const s = optimizerSettings(settings);
  const warmup = s.warmup;
  const floor = s.lr * s.minLrRatio;
  if (step < warmup) return (s.lr * (step + 1)) / warmup;
  const span = Math.max(1, s.steps - warmup - 1);
  const p = Math.min(1, (step - warmup) / span);
  return floor + 0.5 * (s.lr - floor) * (1 + Math.cos(Math.PI * p));
}

/**
 * Trains `model` in place for `s.steps` steps on `nextBatch()`. Calls `onLog` with the read-back loss
 * every `logEvery` steps and at the end; returns the log.
 */
export async function pretrainLoop(
  model: CausalLM,
  nextBatch: () => Batch,
  s: TrainSettings & { logEvery: number },
  onLog?: (log: StepLog) => void,
): Promise<StepLog[]> {
  const e = model.engine;
  model.setTrainable(true);
  const o = optimizerSettings(s);
  const opt = new AdamW(model.trainable(), {
    lr: o.lr,
    beta1: 0.9,
    beta2: o.beta2,
    weightDecay: o.weightDecay,
    maxGradNorm: o.maxGradNorm,
  });
  const logEvery = s.logEvery;
  const logs: StepLog[] = [];
  const t0 = performance.now();
  let tokens = 0;
  try {
    const last = Math.min(s.steps, s.stopAfter ?? s.steps);
    for (let step = 0; step < last; step++) {
      s.signal?.throwIfAborted();
      const b = nextBatch();
      const lr = learningRate(step, s);
      // The vocabulary projection runs only at positions that are targets (a transcript's prompt and
      // tool replies are most of its tokens).
      const rows: number[] = [];
      for (let i = 0; i < b.mask.length; i++) if (b.mask[i]! > 0) rows.push(i);
      if (rows.length === 0) throw new Error(`pretrain: batch ${step + 1} has no loss targets`);
      const targets = Int32Array.from(rows, (i) => b.targets[i]!);
      const loss = e.tidy(() => {
        const h = model.hidden({ ids: b.ids, batch: b.rows, time: b.seq });
        // Token-mean cross-entropy; a large vocabulary's logits are taken chunk by chunk (vocab_head.ts).
        const lp = rowLogprobs(model.headAt(h, Int32Array.from(rows)), e.tensor(targets, [rows.length], 'i32'));
        const l = maskedMean(lp, e.tensor(new Float32Array(rows.length).fill(1), [rows.length]), -1);
        e.backward(l);
        opt.step(lr).dispose();
        opt.zeroGrad();
        return l;
      });
      tokens += b.ids.length;
      if ((step + 1) % logEvery === 0 || step === last - 1 || step === 0) {
        const value = (await loss.read())[0]!;
        const log = {
          step: step + 1,
          steps: s.steps,
          loss: value,
          lr,
          tokens,
          seconds: (performance.now() - t0) / 1000,
        };
        logs.push(log);
        onLog?.(log);
        if (!Number.isFinite(value)) throw new Error(`pretrain: the loss is ${value} at step ${step + 1}; lower --lr`);
      }
      loss.dispose();
    }
  } finally {
    opt.dispose();
    model.setTrainable(false);
  }
  return logs;
}
