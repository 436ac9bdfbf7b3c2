// Unfinished downloads kept in Cache Storage pieces: written as each fills, read back in order, started afresh at
// offset 0, removed when the download completes.
import { describe, expect, it } from 'vitest';
import { mapCache } from '../../helpers/map-cache.ts';
import { cachePartials, memoryPartials } from '../../../src/hub/partials.ts';

const bytes = (from: number, n: number) => new Uint8Array(n).map((_, i) => (from + i) % 256);
const U = 'http://hub/a/b/resolve/main/model.safetensors';

describe('partial downloads', () => {
  it('writes full pieces as they fill, the rest on flush, and reads them back in order', async () => {
    const cache = mapCache();
    const store = cachePartials(cache, 100);
    for (let at = 0; at < 250; at += 50) store.append(U, at, bytes(at, 50));
    await store.flush(U);
    expect([...cache.m.keys()]).toEqual([0, 1, 2].map((k) => `${U}?piplay-piece=${k}`));
    // A reload: a new store over the same cache continues where the pieces end.
    const next = cachePartials(cache, 100);
    expect(await next.load(U)).toEqual(bytes(0, 250));
    next.append(U, 250, bytes(250, 100));
    await next.flush(U);
    expect(await cachePartials(cache, 100).load(U)).toEqual(bytes(0, 350));
  });

  it('starts afresh at offset 0 and forgets everything on clear', async () => {
    const cache = mapCache();
    const store = cachePartials(cache, 100);
    store.append(U, 0, bytes(0, 300));
    store.append(U, 0, bytes(7, 120));
    await store.flush(U);
    expect(await cachePartials(cache, 100).load(U)).toEqual(bytes(7, 120));
    await store.clear(U);
    expect(cache.m.size).toBe(0);
    expect(await store.load(U)).toBeNull();
  });

  it('keeps them in memory without a cache', async () => {
    const store = memoryPartials();
    store.append(U, 0, bytes(0, 10));
    store.append(U, 10, bytes(10, 5));
    expect(await store.load(U)).toEqual(bytes(0, 15));
    await store.clear(U);
    expect(await store.load(U)).toBeNull();
  });
});
