// The buffer pool's bookkeeping against a fake device (no GPU): reuse across size classes, the cap on
// cached free bytes with least-recently-freed eviction, the budget, trim and the high-water marks.
import { describe, expect, it } from 'vitest';
import { BufferPool, bucketSize, type PoolOptions } from '../../../src/gpu/buffer-pool.ts';

const STORAGE = 0x80;
const MiB = 2 ** 20;

interface FakeBuffer {
  size: number;
  usage: number;
  label?: string;
  destroyed: boolean;
  destroy(): void;
}

function fakePool(opts: PoolOptions = {}) {
  const made: FakeBuffer[] = [];
  const device = {
    createBuffer(d: { size: number; usage: number; label?: string }) {
      const b: FakeBuffer = {
        ...d,
        destroyed: false,
        destroy() {
          this.destroyed = true;
        },
      };
      made.push(b);
      return b;
    },
  } as unknown as GPUDevice;
  // Tests of other rules switch the cut on a miss off unless they ask for it.
  const pool = new BufferPool(device, { freeFraction: Infinity, ...opts });
  const acquire = (bytes: number) => pool.acquire(bytes, STORAGE) as unknown as FakeBuffer;
  /** Releases buffers and submits, so they become free. */
  const release = async (...bufs: FakeBuffer[]) => {
    for (const b of bufs) pool.release(b as unknown as GPUBuffer);
    pool.afterSubmit();
  };
  return { pool, made, acquire, release };
}

describe('BufferPool', () => {
  it('reuses a freed buffer for a request of the same or a slightly smaller size class', async () => {
    const { pool, made, acquire, release } = fakePool();
    const a = acquire(3 * MiB);
    await release(a);
    // 2.5 MiB rounds to 2.5 MiB, two classes below 3 MiB: the 3 MiB buffer serves it.
    expect(bucketSize(2.5 * MiB)).toBe(2.5 * MiB);
    const b = acquire(2.5 * MiB);
    expect(b).toBe(a);
    expect(made).toHaveLength(1);
    await release(b);
    // Far smaller (a quarter): a new buffer, not the big one.
    const c = acquire(0.75 * MiB);
    expect(c).not.toBe(a);
    expect(pool.getStats().buffers).toBe(2);
  });

  it('never hands out a buffer larger than the binding limit', async () => {
    const { acquire, release } = fakePool({ maxBufferBytes: 100 * MiB });
    const big = acquire(99 * MiB);
    // bucketSize(99 MiB) is 112 MiB, past the limit: the buffer is made at its own size.
    expect(bucketSize(99 * MiB)).toBeGreaterThan(100 * MiB);
    expect(big.size).toBe(99 * MiB);
    const other = acquire(96 * MiB);
    await release(other);
    expect(acquire(90 * MiB)).toBe(other);
  });

  it('keeps free bytes under the cap, destroying the least recently freed first', async () => {
    const { pool, acquire, release } = fakePool({ maxFreeBytes: 2 * MiB });
    const [a, b, c] = [acquire(MiB), acquire(MiB), acquire(MiB)];
    await release(a);
    await release(b);
    expect(pool.getStats().freeBytes).toBe(2 * MiB);
    await release(c);
    expect(a.destroyed).toBe(true);
    expect(b.destroyed || c.destroyed).toBe(false);
    const s = pool.getStats();
    expect(s.freeBytes).toBe(2 * MiB);
    expect(s.allocatedBytes).toBe(2 * MiB);
    expect(s.buffers).toBe(2);
  });

  it('destroys free buffers before allocating past the budget', async () => {
    const { pool, acquire, release } = fakePool({ budgetBytes: 3 * MiB });
    const [a, b] = [acquire(MiB), acquire(MiB)];
    await release(a, b);
    // 2 MiB more does not fit beside the 2 MiB cached: one freed MiB goes back first.
    const c = acquire(2 * MiB);
    expect(c.size).toBe(2 * MiB);
    expect([a.destroyed, b.destroyed]).toEqual([true, false]);
    expect(pool.getStats().allocatedBytes).toBe(3 * MiB);
  });

  it('a request no free buffer serves first cuts free bytes to a share of the live bytes', async () => {
    const { pool, acquire, release } = fakePool({ freeFraction: 0.5 });
    const live = acquire(4 * MiB);
    const [a, b, c] = [acquire(MiB), acquire(MiB), acquire(MiB)];
    await release(a, b, c);
    // A hit takes a cached buffer and destroys nothing.
    const hit = acquire(MiB);
    expect(hit).toBe(a);
    expect(pool.getStats().freeBytes).toBe(2 * MiB);
    // A miss (8 MiB): free bytes go down to half the 5 MiB live, least recently freed first.
    acquire(8 * MiB);
    expect([b.destroyed, c.destroyed]).toEqual([false, false]);
    await release(hit);
    acquire(16 * MiB);
    // live 4 + 8 + 16 = 28 MiB, so 14 MiB may stay cached: nothing is destroyed yet.
    expect(pool.getStats().freeBytes).toBe(3 * MiB);
    const tight = fakePool({ freeFraction: 0 });
    const [x, y] = [tight.acquire(MiB), tight.acquire(2 * MiB)];
    await tight.release(x);
    expect(tight.acquire(2 * MiB)).not.toBe(x);
    expect(x.destroyed).toBe(true);
    expect(y.destroyed).toBe(false);
    expect(live.destroyed).toBe(false);
  });

  it('trim destroys every free buffer and nothing in use', async () => {
    const { pool, acquire, release } = fakePool();
    const [a, b] = [acquire(MiB), acquire(4 * MiB)];
    await release(a);
    pool.trim();
    expect(a.destroyed).toBe(true);
    expect(b.destroyed).toBe(false);
    expect(pool.getStats()).toMatchObject({ allocatedBytes: 4 * MiB, liveBytes: 4 * MiB, freeBytes: 0, buffers: 1 });
    // A trimmed buffer is never handed out again.
    expect(acquire(MiB)).not.toBe(a);
  });

  it('does not reuse a released buffer before the next submission', () => {
    const { pool, acquire } = fakePool();
    const a = acquire(MiB);
    pool.release(a as unknown as GPUBuffer);
    expect(acquire(MiB)).not.toBe(a);
  });

  it('records the high-water marks of allocated and live bytes, and resets them', async () => {
    const { pool, acquire, release } = fakePool({ maxFreeBytes: 0 });
    const a = acquire(2 * MiB);
    const b = acquire(4 * MiB);
    await release(a, b);
    acquire(MiB);
    let s = pool.getStats();
    expect(s.peakAllocatedBytes).toBe(6 * MiB);
    expect(s.peakLiveBytes).toBe(6 * MiB);
    expect(s.allocatedBytes).toBe(MiB);
    pool.resetPeak();
    s = pool.getStats();
    expect([s.peakAllocatedBytes, s.peakLiveBytes]).toEqual([MiB, MiB]);
  });

  it('records the low-water mark of allocated bytes, however briefly it lasted, and resets it', async () => {
    const { pool, acquire, release } = fakePool({ maxFreeBytes: 0 });
    const a = acquire(2 * MiB);
    const b = acquire(4 * MiB);
    pool.resetLow();
    expect(pool.getStats().lowAllocatedBytes).toBe(6 * MiB);
    await release(a, b); // destroyed at once (no free bytes kept): 0 allocated
    acquire(3 * MiB);
    let s = pool.getStats();
    expect([s.allocatedBytes, s.lowAllocatedBytes]).toEqual([3 * MiB, 0]);
    pool.resetLow();
    s = pool.getStats();
    expect(s.lowAllocatedBytes).toBe(3 * MiB);
  });
});
