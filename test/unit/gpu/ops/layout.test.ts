import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { gatherRows } from '../../../../src/gpu/ops/layout.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { forwardBackward } from '../../../helpers/forward-backward.ts';
import { randn } from '../../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('gatherRows', () => {
  it('takes the listed rows and scatters their gradient back, other rows getting 0', async () => {
    const [N, D] = [5, 3];
    const x = randn(N * D, 1);
    const idx = Int32Array.from([3, 0, 4]);
    const g = randn(idx.length * D, 2);
    const got = await forwardBackward(e, [{ data: x, shape: [N, D] }], ([t]) => gatherRows(t!, idx), g);
    const y = Array.from(idx).flatMap((r) => Array.from(x.subarray(r * D, (r + 1) * D)));
    const dx = new Float32Array(N * D);
    idx.forEach((r, i) => dx.set(g.subarray(i * D, (i + 1) * D), r * D));
    expect(Array.from(got.y)).toEqual(y);
    expect(Array.from(got.grads[0]!)).toEqual(Array.from(dx));
  });

  it('gives [0, D] for no rows and refuses a row outside or listed twice', async () => {
    const x = e.tensor(new Float32Array(6), [2, 3]);
    const none = gatherRows(x, new Int32Array(0));
    expect(none.shape).toEqual([0, 3]);
    none.dispose();
    expect(() => gatherRows(x, Int32Array.from([2]))).toThrow(/row 2 is outside/);
    expect(() => gatherRows(x, Int32Array.from([1, 1]))).toThrow(/row 1 is listed twice/);
    x.dispose();
  });
});
