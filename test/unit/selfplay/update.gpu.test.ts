// gradientStep: a non-finite loss or gradient norm stops the step before the optimizer touches the weights
// or the moments, naming the value, the policy, the stage, the iteration and the step; weights that a
// finite step blows up are caught before they can be checkpointed.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { mul, sum } from '../../../src/gpu/ops/elementwise.ts';
import { AdamW } from '../../../src/gpu/optim/adamw.ts';
import { NonFiniteLossError } from '../../../src/selfplay/context.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import {
  gradientStep,
  runOptimizerSteps,
  warmupLr,
  warmupSteps,
  type MicroStep,
} from '../../../src/selfplay/update.ts';
import { testEngine } from '../../helpers/engine.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/** loss = sum(p * c): its gradient is c. */
function linear(pValues: number[], c: number, lr = 1e-3) {
  const p = e.keep(e.tensor(pValues, [pValues.length]));
  p.requiresGrad = true;
  const coef = e.keep(
    e.tensor(
      pValues.map(() => c),
      [pValues.length],
    ),
  );
  const opt = new AdamW([p], { lr, weightDecay: 0 });
  const micro: MicroStep = { weight: 1, run: () => ({ loss: sum(mul(p, coef)), metrics: {} }) };
  return {
    p,
    opt,
    micro,
    dispose: () => {
      p.dispose();
      coef.dispose();
      opt.dispose();
    },
  };
}

describe('gradientStep', () => {
  it('applies a finite step and returns the gradient norm', async () => {
    const t = linear([1, 2, 3, 4], 0.5);
    const r = await gradientStep(e, t.opt, [t.micro], { stage: 'student', iteration: 0, step: 0 }, t.opt.lr);
    expect(r.gradNorm).toBeCloseTo(1, 5);
    expect(Array.from((await t.p.read()) as Float32Array)).not.toEqual([1, 2, 3, 4]);
    t.dispose();
  });

  it('an overflowing gradient norm (finite loss) is refused before the step', async () => {
    // Each gradient is 1e38: finite, but the sum of squares overflows f32; the loss is 4e28.
    const t = linear([1e-10, 1e-10, 1e-10, 1e-10], 1e38);
    const before = await t.opt.state();
    const err = await gradientStep(e, t.opt, [t.micro], { stage: 'examiner', iteration: 3, step: 2 }, t.opt.lr).catch(
      (x: unknown) => x,
    );
    expect(err).toBeInstanceOf(NonFiniteLossError);
    expect((err as Error).message).toMatch(
      /the examiner's gradient norm is Infinity at the examiner stage, iteration 4, step 2: training diverged.*before the optimizer step.*--examiner-lr/,
    );
    expect(Array.from((await t.p.read()) as Float32Array)).toEqual(Array.from(new Float32Array(4).fill(1e-10)));
    const after = await t.opt.state();
    expect(after.step).toBe(before.step);
    expect(Array.from(after.params[0]!.m)).toEqual([0, 0, 0, 0]);
    expect(t.p.grad).toBeNull();
    t.dispose();
  });

  it('weights that a finite step makes non-finite stop the run, naming the step', async () => {
    const t = linear([1, 1], 1, 1e38);
    const err = await gradientStep(
      e,
      t.opt,
      [t.micro, t.micro],
      { stage: 'student', iteration: 1, step: 4 },
      t.opt.lr,
    ).catch((x: unknown) => x);
    // p - 1e38 * ~1 twice (two micro-batches accumulate the same gradient): |p| ~ 1e38, its square overflows.
    expect(err).toBeInstanceOf(NonFiniteLossError);
    expect((err as Error).message).toMatch(
      /the student's weight norm is Infinity after the optimizer step at the student stage, iteration 2, step 4.*--lr/,
    );
    t.dispose();
  });
});

describe('divergence advice', () => {
  it("names the setting that scales the term that diverged, then the stage's learning rate", () => {
    const msg = (stage: 'student' | 'examiner', what: string) => new NonFiniteLossError(stage, 0, 1, what, NaN).message;
    expect(msg('student', 'distill')).toMatch(
      /smaller distillation weight \(--lambda\), a lower learning rate \(--lr\)/,
    );
    expect(msg('student', 'kl_ref')).toMatch(/smaller KL weight \(--beta\), a lower learning rate \(--lr\)/);
    expect(msg('examiner', 'kl_ref')).toMatch(/\(--examiner-beta\), a lower learning rate \(--examiner-lr\)/);
    expect(msg('student', 'policy_loss')).toMatch(
      /start again with a lower learning rate \(--lr\) or a tighter --grad-clip$/,
    );
    expect(msg('student', 'policy_loss')).not.toMatch(/--lambda|--beta/);
  });
});

describe('learning-rate warm-up', () => {
  it('rises linearly over the warm-up steps (step k of W: lr·k/W), then holds', () => {
    const lrs = [1, 2, 3, 4, 5, 6].map((k) => warmupLr(1e-5, k, 4));
    [2.5e-6, 5e-6, 7.5e-6, 1e-5, 1e-5, 1e-5].forEach((v, i) => expect(lrs[i]).toBeCloseTo(v, 15));
    expect(warmupLr(3e-4, 1, 0)).toBe(3e-4);
    expect(warmupLr(3e-4, 1, 1)).toBe(3e-4);
  });

  it("counts a policy's optimizer steps in the run and takes the --lr-warmup share, rounded up", () => {
    const c = makeConfig('demo', { iterations: 3, studentSteps: 50, examinerSteps: 10, ppoEpochs: 2, miniBatches: 2 });
    expect(runOptimizerSteps(c, 'student')).toBe(600);
    expect(runOptimizerSteps(c, 'examiner')).toBe(30);
    expect(warmupSteps({ ...c, lrWarmup: 0.03 }, 'student')).toBe(18);
    expect(warmupSteps({ ...c, lrWarmup: 0.03 }, 'examiner')).toBe(1);
    expect(warmupSteps({ ...c, lrWarmup: 0 }, 'student')).toBe(0);
    // The papers' ratio is verl's lr_warmup_steps_ratio.
    expect(makeConfig('paper').lrWarmup).toBe(0.03);
  });

  it("gradientStep applies the learning rate it is given, not the optimizer's own", async () => {
    const t = linear([1, 2, 3, 4], 0.5, 1e-3);
    await gradientStep(e, t.opt, [t.micro], { stage: 'student', iteration: 0, step: 0 }, 0);
    // lr 0: Adam's moments move, the weights do not.
    expect(Array.from((await t.p.read()) as Float32Array)).toEqual([1, 2, 3, 4]);
    await gradientStep(e, t.opt, [t.micro], { stage: 'student', iteration: 0, step: 1 }, 0.25);
    // Adam's second step with a constant gradient: m̂/√v̂ = 1, so each weight moves by lr.
    const p = Array.from((await t.p.read()) as Float32Array);
    p.forEach((v, i) => expect(v).toBeCloseTo(i + 1 - 0.25, 5));
    t.dispose();
  });
});
