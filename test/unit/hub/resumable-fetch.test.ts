// The resumable download against fake servers: a body that breaks off mid-way and a Range resume, a server that
// ignores Range, one that keeps failing, a download continued from bytes an earlier attempt kept, and a resume
// refused when the file's ETag or length is not the one the bytes held came with.
import { describe, expect, it } from 'vitest';
import {
  DownloadInterruptedError,
  HttpStatusError,
  fetchResumable,
  parseContentRange,
} from '../../../src/hub/resumable-fetch.ts';

const FILE = new Uint8Array(10_000).map((_, i) => (i * 7) % 251);

/** A body that sends `bytes` in chunks of 1000 and, when `cutAt` is given, errors once that many are sent. */
function body(bytes: Uint8Array, cutAt?: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(ctl) {
      if (cutAt !== undefined && at >= cutAt) {
        ctl.error(new TypeError('network error'));
        return;
      }
      if (at >= bytes.length) {
        ctl.close();
        return;
      }
      const end = Math.min(bytes.length, at + 1000, cutAt ?? Infinity);
      ctl.enqueue(bytes.slice(at, end));
      at = end;
    },
  });
}

interface Call {
  range: string | null;
}

/**
 * A fake server for FILE: `cuts[i]` cuts the i-th response's body after that many bytes, `etags[i]` is its ETag;
 * Range honoured or not.
 */
function server(opts: { cuts?: (number | undefined)[]; etags?: string[]; honourRange?: boolean; fail?: number }) {
  const calls: Call[] = [];
  const fetchFn = (async (_url: string, init?: RequestInit) => {
    const range = new Headers(init?.headers).get('range');
    calls.push({ range });
    if (opts.fail !== undefined && calls.length <= opts.fail) throw new TypeError('Failed to fetch');
    const cut = opts.cuts?.[calls.length - 1];
    const etag = opts.etags?.[calls.length - 1];
    const tag: Record<string, string> = etag ? { etag } : {};
    const m = range ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m && opts.honourRange !== false) {
      const start = Number(m[1]);
      const rest = FILE.slice(start);
      return new Response(body(rest, cut), {
        status: 206,
        headers: {
          'content-length': String(rest.length),
          'content-range': `bytes ${start}-${FILE.length - 1}/${FILE.length}`,
          ...tag,
        },
      });
    }
    return new Response(body(FILE, cut), { headers: { 'content-length': String(FILE.length), ...tag } });
  }) as unknown as typeof fetch;
  return { fetchFn, calls };
}

describe('fetchResumable', () => {
  it('continues a body cut mid-way with a Range request from the last byte received', async () => {
    const s = server({ cuts: [4000] });
    const progress: [number, number][] = [];
    const got = await fetchResumable('http://hub/f', {
      fetchFn: s.fetchFn,
      retryDelayMs: 1,
      onProgress: (l, t) => progress.push([l, t]),
    });
    expect(got).toEqual(FILE);
    expect(s.calls.map((c) => c.range)).toEqual([null, 'bytes=4000-']);
    // Progress never goes back and ends at the whole file.
    for (let i = 1; i < progress.length; i++) expect(progress[i]![0]).toBeGreaterThanOrEqual(progress[i - 1]![0]);
    expect(progress.at(-1)).toEqual([FILE.length, FILE.length]);
  });

  it('resumes several times in a row while each attempt brings bytes', async () => {
    const s = server({ cuts: [3000, 2000, 2000] });
    expect(await fetchResumable('http://hub/f', { fetchFn: s.fetchFn, retryDelayMs: 1, retries: 1 })).toEqual(FILE);
    expect(s.calls.map((c) => c.range)).toEqual([null, 'bytes=3000-', 'bytes=5000-', 'bytes=7000-']);
  });

  it('starts again from byte 0 when the server ignores Range (200 with the whole file)', async () => {
    const s = server({ cuts: [4000], honourRange: false });
    const progress: number[] = [];
    const got = await fetchResumable('http://hub/f', {
      fetchFn: s.fetchFn,
      retryDelayMs: 1,
      onProgress: (l) => progress.push(l),
    });
    expect(got).toEqual(FILE);
    expect(s.calls.map((c) => c.range)).toEqual([null, 'bytes=4000-']);
    expect(progress).toContain(0);
  });

  it('retries a request that fails before any byte arrives', async () => {
    const s = server({ fail: 2 });
    expect(await fetchResumable('http://hub/f', { fetchFn: s.fetchFn, retryDelayMs: 1 })).toEqual(FILE);
    expect(s.calls.length).toBe(3);
  });

  it('gives up after the allowed failures in a row and hands back the bytes it got', async () => {
    const s = server({ cuts: [4000, 0, 0, 0] });
    const err = await fetchResumable('http://hub/f', { fetchFn: s.fetchFn, retryDelayMs: 1, retries: 2 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DownloadInterruptedError);
    const d = err as DownloadInterruptedError;
    expect(d.partial).toEqual(FILE.slice(0, 4000));
    expect(d.total).toBe(FILE.length);
    expect(s.calls.length).toBe(4);
    // A later call continues from those bytes.
    const again = server({});
    expect(await fetchResumable('http://hub/f', { fetchFn: again.fetchFn, partial: d.partial })).toEqual(FILE);
    expect(again.calls.map((c) => c.range)).toEqual(['bytes=4000-']);
  });

  it('starts again from byte 0 when a resumed answer has another ETag than the bytes held came with', async () => {
    const s = server({ cuts: [4000], etags: ['"a"', '"b"', '"b"'] });
    const versions: unknown[] = [];
    const restarts: string[] = [];
    const got = await fetchResumable('http://hub/f', {
      fetchFn: s.fetchFn,
      retryDelayMs: 1,
      onVersion: (v) => versions.push(v),
      onRestart: (why) => restarts.push(why),
    });
    expect(got).toEqual(FILE);
    expect(s.calls.map((c) => c.range)).toEqual([null, 'bytes=4000-', null]);
    expect(versions).toEqual([
      { total: FILE.length, etag: '"a"' },
      { total: FILE.length, etag: '"b"' },
    ]);
    expect(restarts).toEqual(['its ETag is now "b", not "a"']);
  });

  it('checks a kept partial against the version it came from: same ETag continues, another starts again', async () => {
    const partial = FILE.slice(0, 4000);
    const same = server({ etags: ['"a"'] });
    const v = { total: FILE.length, etag: '"a"' };
    expect(await fetchResumable('http://hub/f', { fetchFn: same.fetchFn, partial, partialVersion: v })).toEqual(FILE);
    expect(same.calls.map((c) => c.range)).toEqual(['bytes=4000-']);
    const weak = server({ etags: ['W/"a"'] });
    expect(await fetchResumable('http://hub/f', { fetchFn: weak.fetchFn, partial, partialVersion: v })).toEqual(FILE);
    expect(weak.calls.map((c) => c.range)).toEqual(['bytes=4000-']);
    const other = server({ etags: ['"b"', '"b"'] });
    const restarts: string[] = [];
    const got = await fetchResumable('http://hub/f', {
      fetchFn: other.fetchFn,
      partial: partial.map((b) => b ^ 1),
      partialVersion: v,
      onRestart: (why) => restarts.push(why),
    });
    expect(got).toEqual(FILE);
    expect(other.calls.map((c) => c.range)).toEqual(['bytes=4000-', null]);
    expect(restarts).toHaveLength(1);
    const longer = server({});
    const restartsLength: string[] = [];
    await fetchResumable('http://hub/f', {
      fetchFn: longer.fetchFn,
      partial,
      partialVersion: { total: 20_000 },
      onRestart: (why) => restartsLength.push(why),
    });
    expect(restartsLength).toEqual([`its length is now ${FILE.length} bytes, not 20000`]);
  });

  it('passes HTTP errors through at once, without retrying', async () => {
    let n = 0;
    const fetchFn = (async () => {
      n++;
      return new Response('no', { status: 404, statusText: 'Not Found' });
    }) as unknown as typeof fetch;
    await expect(fetchResumable('http://hub/missing', { fetchFn, retryDelayMs: 1 })).rejects.toBeInstanceOf(
      HttpStatusError,
    );
    expect(n).toBe(1);
  });

  it('reads Content-Range headers', () => {
    expect(parseContentRange('bytes 100-199/1000')).toEqual({ start: 100, total: 1000 });
    expect(parseContentRange('bytes 0-9/*')).toEqual({ start: 0, total: 0 });
    expect(parseContentRange('bytes */1000')).toEqual({ start: -1, total: 1000 });
    expect(parseContentRange(null)).toBeNull();
  });
});
