// The full-vocabulary KL the teacher probe compares the top-K term with (src/rl/full-kl.ts): against the
// formula on distributions written out by hand, its directions, and the GPU's top-K term, which must
// grow with K up to it and equal it when K covers the whole vocabulary.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { topkKl } from '../../../src/gpu/ops/topk_kl.ts';
import { fullKl, logSoftmaxRow } from '../../../src/rl/full-kl.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randn } from '../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe('fullKl', () => {
  it('is sum p log(p/q) over the whole vocabulary, in either direction', () => {
    // Logits log p and log q of p = (0.5, 0.25, 0.25), q = (0.25, 0.25, 0.5), plus a constant per row.
    const s = [Math.log(0.5) + 3, Math.log(0.25) + 3, Math.log(0.25) + 3];
    const t = [Math.log(0.25) - 1, Math.log(0.25) - 1, Math.log(0.5) - 1];
    const pq = 0.5 * Math.log(2) + 0.25 * 0 + 0.25 * Math.log(0.5);
    expect(fullKl(s, t, 0, 3, 'reverse')).toBeCloseTo(pq, 12);
    expect(fullKl(t, s, 0, 3, 'forward')).toBeCloseTo(pq, 12);
    expect(fullKl(s, s, 0, 3, 'reverse')).toBe(0);
    // Rows: the second row of [2, 3].
    expect(fullKl([0, 0, 0, ...s], [9, 9, 9, ...t], 1, 3, 'reverse')).toBeCloseTo(pq, 12);
  });

  it('log-softmax rows sum to one in probability and keep differences', () => {
    const z = [1, 2, -3, 0.5, 900, 901];
    const l = logSoftmaxRow(z, 1, 3);
    expect(Math.exp(l[0]!) + Math.exp(l[1]!) + Math.exp(l[2]!)).toBeCloseTo(1, 12);
    expect(l[1]! - l[0]!).toBeCloseTo(900 - 0.5, 9);
  });

  it('bounds the top-K term, which grows with K and meets it at K = V', async () => {
    const M = 6;
    const V = 40;
    const zs = Float32Array.from(randn(M * V, 11, 2));
    const zt = Float32Array.from(randn(M * V, 12, 2));
    for (const direction of ['reverse', 'forward'] as const) {
      const full = Array.from({ length: M }, (_, r) => fullKl(zs, zt, r, V, direction));
      let last = new Array<number>(M).fill(0);
      for (const k of [1, 5, 20, V]) {
        const t = e.noGrad(() =>
          e.tidy(
            () =>
              topkKl(e.tensor(zs, [M, V]), e.tensor(zt, [M, V]), e.tensor(new Float32Array(M).fill(1), [M]), {
                k,
                tail: true,
                direction,
              }).perToken,
          ),
        );
        const d = Array.from(await t.read());
        t.dispose();
        d.forEach((x, r) => {
          expect(x).toBeGreaterThanOrEqual(last[r]! - 1e-5);
          expect(x).toBeLessThanOrEqual(full[r]! + 1e-5);
        });
        if (k === V) d.forEach((x, r) => expect(x).toBeCloseTo(full[r]!, 4));
        last = d;
      }
    }
  });
});
