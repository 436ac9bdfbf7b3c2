// Logits at the policy positions of a packed batch (see batch.ts): the decoder runs over the whole batch,
// the vocabulary projection only where a loss needs it.
//
// The trained policy is the tempered one (as in verl and TRL): rollouts sample from π_T = softmax(z / T), so
// every log-prob that enters a loss or a metric (ratios, the examiner's policy gradient, the KL to the
// reference, both sides of the top-K distillation, entropy, the per-token records) is taken from z / T, with
// T the rollout temperature. Only the forward passes below apply it; greedy evaluation samples at T = 0 and
// never comes here. T = 0 (greedy rollouts) trains the untempered policy.
//
// The logits come as an LM head over the policy rows (src/gpu/ops/vocab_head.ts): with a small vocabulary the
// [M, V] logits are materialised once, as one tensor; with a real one (~152k) the row ops that read them run
// chunk by chunk, so that no more than one chunk of [rows x V] logits exists, forward or backward.
import { rowLogprobs, type VocabHead } from '../gpu/ops/vocab_head.ts';
import type { CausalLM } from '../model/decoder.ts';
import type { PolicyBatch } from './batch.ts';

/** The temperature of the trained policy for rollouts sampled at `sampling` (greedy, 0: the untempered 1). */
export function policyTemperature(sampling: number): number {
  if (!(sampling >= 0) || !Number.isFinite(sampling))
    throw new Error(`piplay: the temperature must be a finite number >= 0, got ${sampling}`);
  return sampling > 0 ? sampling : 1;
}

/**
 * The [M, V] logits of π_T predicting each policy token of the batch (recorded on the tape when the model
 * trains), as an LM head over those M rows: the model's logits divided by the policy temperature of rollouts
 * sampled at `temperature`. Read them with the row ops of vocab_head.ts (rowLogprobs, rowEntropy, rowTopkKl).
 */
export function policyLogits(model: CausalLM, batch: PolicyBatch, temperature: number): VocabHead {
  const T = policyTemperature(temperature);
  // Rows of one length need no padding: the plain causal pass (no key starts to read). Rows packed as prefix
  // trees carry their nodes' depths as positions and the tree mask.
  const padded = batch.keyStart.some((k) => k > 0);
  // Only the policy rows are read: the last layer's MLP runs there alone.
  const h = model.hidden(
    {
      ids: batch.ids,
      batch: batch.batch,
      time: batch.time,
      ...(padded || batch.keyEnd ? { positions: batch.positions, keyStart: batch.keyStart } : {}),
      ...(batch.keyEnd ? { keyEnd: batch.keyEnd } : {}),
    },
    undefined,
    batch.rows,
  );
  return model.head(h, 1 / T);
}

/** Logits of a model that is not trained here (teacher, reference): no tape, so no gradient can reach it. */
export function constantLogits(model: CausalLM, batch: PolicyBatch, temperature: number): VocabHead {
  return model.engine.noGrad(() => policyLogits(model, batch, temperature));
}

/** log π_T(token) of every policy token under `model`, on the host (no gradient). */
export async function policyLogprobs(model: CausalLM, batch: PolicyBatch, temperature: number): Promise<Float32Array> {
  const e = model.engine;
  const lp = e.noGrad(() =>
    e.tidy(() =>
      e.keep(
        rowLogprobs(policyLogits(model, batch, temperature), e.tensor(batch.targets, [batch.targets.length], 'i32')),
      ),
    ),
  );
  try {
    return (await lp.read()) as Float32Array;
  } finally {
    lp.dispose();
  }
}
