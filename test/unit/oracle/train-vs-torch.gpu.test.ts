// A whole pretraining run against PyTorch: the same initial weights and batches, trained for
// test/assets/torch-train/spec.json's steps by the engine (src/pretrain/train.ts) and by PyTorch
// (scripts/torch-train/replay.py, results in torch.json). Every op has its own test; this one catches what
// only a run shows: the backward graph wiring ops together, gradient accumulation over a tied embedding,
// clipping, the optimizer's state over steps and the learning-rate schedule.
import { describe, it, beforeAll, expect } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { pretrainLoop } from '../../../src/pretrain/train.ts';
import { testEngine } from '../../helpers/engine.ts';
import { readTorchRun, tensorStats, torchRunBatches, torchRunModel } from '../../../scripts/torch-train/torch-run.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('a training run matches PyTorch', () => {
  it('step by step loss and final weights', async () => {
    const { spec, result } = readTorchRun();
    expect(
      result,
      'test/assets/torch-train/torch.json is missing: run npx tsx scripts/torch-train/make-fixture.ts',
    ).not.toBeNull();
    const torch = result!;
    const { cfg, weights } = torchRunModel(spec);
    const model = CausalLM.fromHost(e, cfg, (name) => weights.get(name));
    const batches = torchRunBatches(spec);
    let k = 0;
    try {
      const logs = await pretrainLoop(model, () => batches[k++]!, { ...spec.train, logEvery: 1 });
      const loss = logs.map((l) => l.loss);
      expect(loss).toHaveLength(torch.loss.length);
      // The loss falls from ln 64 = 4.16, so a run that trained nothing would fail here too.
      expect(torch.loss.at(-1)!).toBeLessThan(torch.loss[0]! - 0.15);
      loss.forEach((l, i) =>
        expect(Math.abs(l - torch.loss[i]!), `loss at step ${i + 1}: engine ${l}, torch ${torch.loss[i]}`).toBeLessThan(
          1e-4,
        ),
      );
      for (const [name, p] of model.params) {
        const [s, s2, proj] = tensorStats(await p.readF32());
        const [ts, ts2, tproj] = torch.final[name]!;
        // Scales: sqrt(n * sum of squares) bounds the sum, sqrt(n * 50^2 * sum of squares) the projection.
        const scale = Math.sqrt(p.size * ts2);
        const what = `${name}: engine [${s}, ${s2}, ${proj}], torch [${ts}, ${ts2}, ${tproj}]`;
        expect(Math.abs(s - ts) / scale, what).toBeLessThan(1e-4);
        expect(Math.abs(s2 - ts2) / ts2, what).toBeLessThan(1e-4);
        expect(Math.abs(proj - tproj) / (50 * scale), what).toBeLessThan(1e-4);
      }
    } finally {
      model.dispose();
    }
  });
});
