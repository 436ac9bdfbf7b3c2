import { describe, expect, it } from 'vitest';
import { testEngine } from '../../helpers/engine.ts';

describe('engine.readAll', () => {
  it('reads tensors of several dtypes and odd byte lengths in one read-back', async () => {
    const e = await testEngine();
    const a = e.tensor([1.5, -2, 3], [3]);
    const h = e.tensor([0.5, 0.25, -1], [3], e.info.f16 ? 'f16' : 'f32'); // 6 bytes as f16: padded to 8
    const b = e.tensor([7, -8, 9, 10, 11], [5], 'i32');
    const c = e.zeros([2, 2]);
    e.fill(c, 4); // recorded into the open batch, so the read must see it
    const reads = e.counters.reads;
    const [ra, rh, rb, rc] = await e.readAll([a, h, b, c]);
    expect(e.counters.reads - reads).toBe(1);
    expect(Array.from(ra!)).toEqual([1.5, -2, 3]);
    expect(Array.from(rh!)).toEqual([0.5, 0.25, -1]);
    expect(rb).toBeInstanceOf(Int32Array);
    expect(Array.from(rb!)).toEqual([7, -8, 9, 10, 11]);
    expect(Array.from(rc!)).toEqual([4, 4, 4, 4]);
    for (const t of [a, h, b, c]) t.dispose();
  });
});
