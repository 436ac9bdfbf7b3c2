// Logits at the policy positions of a packed batch (see batch.ts): the decoder runs over the whole batch,
// the vocabulary projection only where a loss needs it.
import type { Tensor } from '../gpu/tensor.ts';
import { tokenLogprobs } from '../gpu/ops/log_softmax.ts';
import type { CausalLM } from '../model/decoder.ts';
import type { PolicyBatch } from './batch.ts';

/** [M, V] logits predicting each policy token of the batch (recorded on the tape when the model trains). */
export function policyLogits(model: CausalLM, batch: PolicyBatch): Tensor {
  const h = model.hidden({ ids: batch.ids, batch: batch.batch, time: batch.time });
  return model.logitsAt(h, batch.rows);
}

/** Logits of a model that is not trained here (teacher, reference): no tape, so no gradient can reach it. */
export function constantLogits(model: CausalLM, batch: PolicyBatch): Tensor {
  return model.engine.noGrad(() => policyLogits(model, batch));
}

/** log π(token) of every policy token under `model`, on the host (no gradient). */
export async function policyLogprobs(model: CausalLM, batch: PolicyBatch): Promise<Float32Array> {
  const e = model.engine;
  const lp = e.noGrad(() =>
    e.tidy(() => e.keep(tokenLogprobs(policyLogits(model, batch), e.tensor(batch.targets, [batch.targets.length], 'i32')))),
  );
  try {
    return (await lp.read()) as Float32Array;
  } finally {
    lp.dispose();
  }
}
