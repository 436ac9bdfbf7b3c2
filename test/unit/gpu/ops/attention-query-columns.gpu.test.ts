// Attention over some of a pass's queries (AttentionOptions.queryColumns, the 'lanes' kernels): o, dq, dk and dv equal
// those of the whole pass with the upstream gradient only at those queries, over causal rows, left padding and
// prefix-tree masks, grouped-query heads, queries out of reach of some keys and a column taken twice; and the
// option is refused where the lanes kernels do not run.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../../src/gpu/engine.ts';
import { attention, setAttentionVariant, takesQueryColumns } from '../../../../src/gpu/ops/attention.ts';
import { mul, sum } from '../../../../src/gpu/ops/elementwise.ts';
import { gatherRows } from '../../../../src/gpu/ops/layout.ts';
import type { Tensor } from '../../../../src/gpu/tensor.ts';
import { expectClose } from '../../../helpers/compare.ts';
import { testEngine } from '../../../helpers/engine.ts';
import { treeKeyEnds } from '../../../helpers/prefix-tree.ts';
import { randn } from '../../../helpers/random.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});
afterEach(() => setAttentionVariant(null));

interface Case {
  B: number;
  Hq: number;
  Hkv: number;
  T: number;
  Dh: number;
  /** Each row's query columns (the same count in every row). */
  cols: number[][];
  pad?: number[];
  tree?: boolean;
}

const cases: [string, Case][] = [
  ['causal', { B: 1, Hq: 4, Hkv: 2, T: 41, Dh: 24, cols: [[3, 9, 10, 11, 12, 13, 14, 15, 16, 30, 39, 40]] }],
  [
    'left padding, a column twice, grouped heads',
    {
      B: 2,
      Hq: 6,
      Hkv: 2,
      T: 19,
      Dh: 8,
      cols: [
        [0, 4, 4, 18],
        [2, 5, 6, 18],
      ],
      pad: [0, 5],
    },
  ],
  [
    'prefix trees',
    {
      B: 2,
      Hq: 2,
      Hkv: 1,
      T: 70,
      Dh: 16,
      cols: [Array.from({ length: 20 }, (_, i) => 3 * i + 5), Array.from({ length: 20 }, (_, i) => 8 + 3 * i)],
      pad: [0, 7],
      tree: true,
    },
  ],
];

/** o at the columns and the three gradients, through the whole pass or through the columns' queries only. */
async function run(c: Case, sub: boolean) {
  const { B, Hq, Hkv, T, Dh } = c;
  const R = c.cols[0]!.length;
  const q = e.keep(e.tensor(randn(B * T * Hq * Dh, 1), [B, T, Hq, Dh]));
  const k = e.keep(e.tensor(randn(B * T * Hkv * Dh, 2), [B, T, Hkv, Dh]));
  const v = e.keep(e.tensor(randn(B * T * Hkv * Dh, 3), [B, T, Hkv, Dh]));
  const u = e.keep(e.tensor(randn(B * R * Hq * Dh, 4), [B * R, Hq * Dh]));
  const flat = Int32Array.from(c.cols.flatMap((row, b) => row.map((t) => b * T + t)));
  const opts = {
    layout: 'tokens' as const,
    keyStart: c.pad ? e.tensor(Int32Array.from(c.pad), [B], 'i32') : null,
    keyEnd: c.tree ? e.tensor(treeKeyEnds(5, T, c.pad ?? [0]), [B, T], 'i32') : null,
  };
  for (const t of [q, k, v]) t.requiresGrad = true;
  const o = e.tidy(() => {
    let out: Tensor;
    if (sub) {
      const qs = gatherRows(q.reshape([B * T, Hq * Dh]), flat).reshape([B, R, Hq, Dh]);
      const queryColumns = e.tensor(Int32Array.from(c.cols.flat()), [B, R], 'i32');
      out = attention(qs, k, v, { ...opts, queryColumns }).reshape([B * R, Hq * Dh]);
    } else out = gatherRows(attention(q, k, v, opts).reshape([B * T, Hq * Dh]), flat);
    e.backward(sum(mul(out, u)));
    return e.keep(out);
  });
  const got = [await o.readF32(), ...(await Promise.all([q, k, v].map((t) => t.grad!.readF32())))];
  for (const t of [o, q, k, v, u]) t.dispose();
  return got;
}

describe('attention over some queries (queryColumns)', () => {
  it.each(cases)('%s: o, dq, dk and dv equal the whole pass at those queries', async (_, c) => {
    if (!takesQueryColumns(e, c.Dh)) return; // a GPU: the lanes kernels do not run
    const whole = await run(c, false);
    const some = await run(c, true);
    ['o', 'dq', 'dk', 'dv'].forEach((what, i) => expectClose(some[i]!, whole[i]!, 1e-4, 1e-5, what));
  });

  it('is refused where the lanes kernels do not run', () => {
    setAttentionVariant('rows');
    expect(takesQueryColumns(e, 8)).toBe(false);
    const q = e.tensor(new Float32Array(2 * 8), [1, 2, 1, 8]);
    const k = e.tensor(new Float32Array(4 * 8), [1, 4, 1, 8]);
    const cols = e.tensor(Int32Array.from([1, 3]), [1, 2], 'i32');
    expect(() => attention(q, k, k, { layout: 'tokens', queryColumns: cols })).toThrow(/queryColumns need the lanes/);
  });
});
