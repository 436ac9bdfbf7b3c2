// The profile by kernel (src/gpu/profile.ts, src/gpu/stream.ts): where the device has GPU timestamps, each
// dispatch is timed in a compute pass of its own, charged to its phase and kernel, without a submission per kernel
// change (whose cost a small kernel's time would otherwise hold).
import { describe, expect, it } from 'vitest';
import { add } from '../../../src/gpu/ops/elementwise.ts';
import { matmul } from '../../../src/gpu/ops/matmul.ts';
import { Profile } from '../../../src/gpu/profile.ts';
import { testEngine } from '../../helpers/engine.ts';

describe('profile by kernel', () => {
  it('times each dispatch by GPU timestamps in one submission, charging its phase and kernel', async () => {
    const e = await testEngine();
    if (!e.info.timestamps) return; // (lavapipe and Dawn's GPUs have them)
    const a = e.tensor(
      Array.from({ length: 64 * 64 }, (_, i) => (i % 7) - 3),
      [64, 64],
    );
    await e.sync();
    const profile = new Profile();
    profile.byKernel = true;
    profile.setStage('test');
    e.profile = profile;
    const submits = e.counters.submits;
    const t0 = performance.now();
    // Three kernels taking turns: a submission per kernel change would make 6.
    const leave = profile.enter('work');
    const outs = e.noGrad(() => {
      const b = add(a, a);
      const c = matmul(b, a);
      const d = add(c, a);
      return [b, c, d, matmul(d, a), add(a, d), matmul(a, a)];
    });
    leave();
    await e.sync();
    const wall = (performance.now() - t0) / 1000;
    e.profile = null;
    profile.flush();
    expect(e.counters.submits - submits, 'one submission').toBe(1);
    const kernels = [...profile.phases].filter(([phase]) => phase.startsWith('test / work ['));
    const names = kernels.map(([phase]) => phase);
    expect(names).toHaveLength(2);
    expect(names.some((p) => /^test \/ work \[elementwise(_vec4)?\.main\]$/.test(p))).toBe(true);
    expect(names.some((p) => /^test \/ work \[matmul/.test(p))).toBe(true);
    for (const [phase, t] of kernels) {
      expect(t.dispatches, phase).toBe(3);
      expect(t.gpuSeconds, phase).toBeGreaterThan(0);
    }
    const gpu = kernels.reduce((s, [, t]) => s + t.gpuSeconds, 0);
    expect(gpu).toBeLessThanOrEqual(wall);
    // Nothing else is charged GPU time (a submission's time would count its kernels again).
    for (const [phase, t] of profile.phases)
      if (!kernels.some(([k]) => k === phase)) expect(t.gpuSeconds, phase).toBe(0);
    for (const t of [a, ...outs]) t.dispose();
  });
});
