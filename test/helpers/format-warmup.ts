// A few steps of supervised fine-tuning that teach a random tiny examiner the shape of its output
// (`<think>ok</think><question>What year?</question><answer>…</answer>`), so that the examiner stage of a
// one-iteration test sees valid and invalid questions side by side and HRPO has rewards that differ. Half
// the targets answer with a year of the source document (found in it), half with a made-up word (not
// found), so the format reward's `ans` term varies too. Test scaffolding only: self-play uses no
// demonstrations.
import { examinerPrompt } from '../../src/env/prompts.ts';
import { crossEntropy } from '../../src/gpu/ops/log_softmax.ts';
import { AdamW } from '../../src/gpu/optim/adamw.ts';
import type { CausalLM } from '../../src/model/decoder.ts';
import { policyBatch } from '../../src/rl/batch.ts';
import { policyLogits } from '../../src/rl/forward.ts';
import { headLogits } from '../../src/gpu/ops/vocab_head.ts';
import { encodePrompt, type BaseModel } from '../../src/selfplay/base-model.ts';
import type { Environment } from '../../src/selfplay/environment.ts';

export async function warmUpExaminer(
  model: CausalLM,
  base: BaseModel,
  env: Environment,
  opts: { steps: number; batch: number; lr: number },
): Promise<number[]> {
  const e = model.engine;
  const tok = base.tokenizer;
  const eos = tok.eosIds[0]!;
  const examples: { ids: number[]; mask: number[] }[] = [];
  for (const [k, source] of env.passages.entries()) {
    const year = /\b\d{4}\b/.exec(source.text)?.[0];
    const answer = k % 2 === 0 && year ? year : 'Zorblat';
    const prompt = encodePrompt(tok, examinerPrompt({ source, hops: 1 }));
    const completion = [
      ...tok.encode(`<think>ok</think><question>What year?</question><answer>${answer}</answer>`, {
        addSpecialTokens: false,
      }),
      eos,
    ];
    examples.push({ ids: [...prompt, ...completion], mask: [...prompt.map(() => 0), ...completion.map(() => 1)] });
  }
  const opt = new AdamW(model.trainable(), { lr: opts.lr, weightDecay: 0 });
  const losses: number[] = [];
  try {
    for (let step = 0; step < opts.steps; step++) {
      const batch = Array.from({ length: opts.batch }, (_, k) => examples[(step * opts.batch + k) % examples.length]!);
      const pb = policyBatch(batch, tok.padId ?? 0);
      const loss = e.tidy(() => {
        const logits = headLogits(policyLogits(model, pb, 1));
        const M = pb.targets.length;
        return crossEntropy(logits, e.tensor(pb.targets, [M], 'i32'), e.tensor(new Float32Array(M).fill(1), [M]));
      });
      losses.push(await e.item(loss));
      e.backward(loss);
      loss.dispose();
      opt.step().dispose();
      opt.zeroGrad();
    }
  } finally {
    opt.dispose();
  }
  return losses;
}
