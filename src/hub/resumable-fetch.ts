// One file over HTTP that survives a dropped connection: when the body breaks off (or ends short of its length)
// the download continues from the last byte received with a Range request (`Range: bytes=N-`), so a large
// weights file is not fetched again from the start. A server that ignores Range (it answers 200 with the whole
// file) is read again from the start; one that answers a range other than the one asked for, too. A resumed answer
// for another version of the file (another length or ETag than the bytes held came with) is dropped, and the file
// read again from the start, so bytes of two versions are never joined. Nothing the server says is trusted past
// what the caller knows: with the file's length from elsewhere (the hub's listing), an answer announcing another
// length is a failed attempt and a body is never read past that length; 5xx and 429 answers are retried with
// back-off like a dropped connection, and the attempts of one download are bounded. A server that does not answer,
// or whose body stalls (less than MIN_WINDOW_BYTES in a window of the stall timeout: a byte every few seconds is a
// stall), fails the attempt, so a download ends in bounded time whatever the server does.

import { BodyTooLargeError, readBody } from '../model/files.ts';

/** Bytes a body must bring in each window of the stall timeout (or the rest of the file, when less). */
export const MIN_WINDOW_BYTES = 1024;

/** How long a server may take: to answer (headers), and per window of a body (see MIN_WINDOW_BYTES). */
export interface Timeouts {
  /** ms until the answer's headers. */
  answerMs: number;
  /** ms per window of the body. */
  stallMs: number;
  /** The setting that sets them, for messages (e.g. HF_HUB_DOWNLOAD_TIMEOUT). */
  setting: string;
}

/** A server that did not answer, or whose body stalled, within the timeouts. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/** `fetchFn(url, init)`, aborted when no answer (its headers) comes within `t.answerMs`. */
export async function fetchWithin(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit,
  t: Timeouts | undefined,
): Promise<Response> {
  if (!t) return fetchFn(url, init);
  const ac = new AbortController();
  const why = new TimeoutError(`no answer within ${seconds(t.answerMs)} (${t.setting})`);
  const timer = setTimeout(() => ac.abort(why), t.answerMs);
  try {
    return await fetchFn(url, { ...init, signal: ac.signal });
  } catch (e) {
    throw ac.signal.aborted ? why : e;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The next chunk of a body, or done; fails with a TimeoutError when a window of `t.stallMs` ends having brought fewer
 * than `need()` bytes. `pending` carries a read across windows.
 */
export function stallGuard(reader: ReadableStreamDefaultReader<Uint8Array>, t: Timeouts | undefined) {
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  let windowEnd = Date.now() + (t?.stallMs ?? 0);
  let windowBytes = 0;
  return async (need: number): Promise<ReadableStreamReadResult<Uint8Array>> => {
    for (;;) {
      pending ??= reader.read();
      if (!t) {
        const r = await pending;
        pending = null;
        return r;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<'late'>((ok) => {
        timer = setTimeout(() => ok('late'), Math.max(0, windowEnd - Date.now()));
      });
      const r = await Promise.race([pending, late]);
      clearTimeout(timer);
      if (r !== 'late') {
        pending = null;
        if (!r.done) windowBytes += r.value.length;
        return r;
      }
      if (windowBytes < Math.min(need, MIN_WINDOW_BYTES)) {
        await reader.cancel().catch(() => {});
        throw new TimeoutError(
          `the body stalled: ${windowBytes} bytes in ${seconds(t.stallMs)} (${t.setting}; at least ` +
            `${MIN_WINDOW_BYTES} are needed)`,
        );
      }
      windowEnd = Date.now() + t.stallMs;
      windowBytes = 0;
    }
  };
}

/** A whole small answer (a listing): its status and text, read within `deadlineMs` and at most `cap` bytes. */
export interface SmallAnswer {
  status: number;
  statusText: string;
  ok: boolean;
  text: string;
}

/** Fetches a small answer whole, within `deadlineMs` for headers and body together, cutting it at `cap` bytes. */
export async function fetchSmall(
  fetchFn: typeof fetch,
  url: string,
  opts: { deadlineMs: number; setting: string; cap: number },
): Promise<SmallAnswer> {
  const ac = new AbortController();
  const why = new TimeoutError(`no whole answer within ${seconds(opts.deadlineMs)} (${opts.setting})`);
  const timer = setTimeout(() => ac.abort(why), opts.deadlineMs);
  try {
    const res = await fetchFn(url, { signal: ac.signal });
    const text = new TextDecoder().decode(await readBody(res, opts.cap));
    return { status: res.status, statusText: res.statusText, ok: res.ok, text };
  } catch (e) {
    throw ac.signal.aborted ? why : e;
  } finally {
    clearTimeout(timer);
  }
}

/** What a download's bytes belong to: the file's length and the server's ETag for it (when it sends one). */
export interface FileVersion {
  total: number;
  etag?: string;
}

export interface ResumableOptions {
  /** Injected for tests; defaults to the global fetch. */
  fetchFn?: typeof fetch;
  /** Bytes received so far and the file's length (0 while unknown). */
  onProgress?: (loaded: number, total: number) => void;
  /** Failures in a row without a new byte before giving up (each resume that brings bytes starts the count again). */
  retries?: number;
  /** Requests of one download in all before giving up, progress or not. */
  maxAttempts?: number;
  /** The file's length as known from elsewhere (the hub's listing); the server's own word is then checked, not taken. */
  expectedTotal?: number;
  /** Wait before a retry, in ms (doubled after each failure in a row). */
  retryDelayMs?: number;
  /** The start of the file, already downloaded (e.g. by an earlier attempt that gave up). */
  partial?: Uint8Array;
  /** Each chunk as it arrives, at its offset in the file (offsets run on; 0 again when the download starts over). */
  onBytes?: (chunk: Uint8Array, offset: number) => void;
  /** The version `partial` was downloaded from (unknown: any resumed answer is taken to be of the same file). */
  partialVersion?: FileVersion;
  /** The file's version as a download from the start begins (before its first chunk), to keep with its bytes. */
  onVersion?: (v: FileVersion) => void;
  /** The bytes held were dropped, the server's file not being the one they came from (why); the download restarts. */
  onRestart?: (reason: string) => void;
  /** How long the server may take to answer and per window of the body (none: it may take forever). */
  timeouts?: Timeouts;
  /** The most bytes the file may have when no length is known from elsewhere. */
  maxBytes?: number;
}

/** Requests of one download before it gives up, however many of them brought bytes. */
export const MAX_ATTEMPTS = 32;

/** Answers worth asking again: the server's own trouble (5xx) or a request to slow down (429). */
const transient = (status: number) => status >= 500 || status === 429;

/** The server answered with an HTTP error status (404, 401, ...) rather than the file. */
export class HttpStatusError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    statusText: string,
  ) {
    super(`HTTP ${status}${statusText ? ` ${statusText}` : ''} for ${url}`);
    this.name = 'HttpStatusError';
  }
}

/** The connection failed more times in a row than allowed; `partial` holds the bytes received, for a later resume. */
export class DownloadInterruptedError extends Error {
  constructor(
    readonly url: string,
    readonly partial: Uint8Array,
    readonly total: number,
    readonly reason: string,
  ) {
    super(`the download of ${url} broke off at ${partial.length}${total ? ` of ${total}` : ''} bytes (${reason})`);
    this.name = 'DownloadInterruptedError';
  }
}

/**
 * `bytes 100-199/1000` -> { start: 100, total: 1000 }; `bytes * /1000` (a 416's) -> start -1; total 0 when `*`;
 * null when unreadable.
 */
export function parseContentRange(h: string | null): { start: number; total: number } | null {
  const m = /^bytes\s+(?:(\d+)-\d+|\*)\/(\d+|\*)$/i.exec(h?.trim() ?? '');
  if (!m) return null;
  return { start: m[1] === undefined ? -1 : Number(m[1]), total: m[2] === '*' ? 0 : Number(m[2]) };
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.length === length) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why a resumed answer (`now`) is not of the file the bytes held came from (`held`); null when it is. */
function versionChange(held: FileVersion, now: FileVersion): string | null {
  if (held.total && now.total && held.total !== now.total) {
    return `its length is now ${now.total} bytes, not ${held.total}`;
  }
  if (held.etag && now.etag && held.etag !== now.etag) return `its ETag is now ${now.etag}, not ${held.etag}`;
  return null;
}

/** The answer's ETag without a weak marker (a CDN may mark the same file's tag weak on one answer, not another). */
const etagOf = (res: Response): { etag?: string } => {
  const etag = res.headers.get('etag')?.replace(/^W\//, '');
  return etag ? { etag } : {};
};

/** Downloads `url` whole, resuming with Range requests after interruptions. */
export async function fetchResumable(url: string, opts: ResumableOptions = {}): Promise<Uint8Array> {
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const retries = opts.retries ?? 4;
  const maxAttempts = opts.maxAttempts ?? MAX_ATTEMPTS;
  const expected = opts.expectedTotal || 0;
  let delay = opts.retryDelayMs ?? 500;
  let chunks: Uint8Array[] = opts.partial?.length ? [opts.partial] : [];
  let loaded = opts.partial?.length ?? 0;
  let total = 0;
  let failures = 0;
  let held = loaded > 0 ? opts.partialVersion : undefined;
  if (expected && loaded > expected) {
    chunks = [];
    loaded = 0;
    held = undefined;
  }
  for (let attempt = 1; ; attempt++) {
    const before = loaded;
    let reason: string;
    let stalled = false;
    try {
      const res = await fetchWithin(
        fetchFn,
        url,
        loaded > 0 ? { headers: { Range: `bytes=${loaded}-` } } : {},
        opts.timeouts,
      );
      if (loaded > 0 && res.status === 416) {
        // Nothing left past what we hold: complete when the server's length agrees.
        const range = parseContentRange(res.headers.get('content-range'));
        const agreed = (!held?.total || held.total === loaded) && (!expected || expected === loaded);
        if (range && range.total === loaded && agreed) return concat(chunks, loaded);
        chunks = [];
        loaded = 0;
        throw new Error('the server refused the range of the partial download');
      }
      if (!res.ok && transient(res.status)) {
        await res.body?.cancel().catch(() => {});
        throw new Error(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
      }
      if (!res.ok) throw new HttpStatusError(url, res.status, res.statusText);
      if (loaded > 0 && res.status === 206) {
        const range = parseContentRange(res.headers.get('content-range'));
        // A range that starts elsewhere cannot be appended; an unreadable header (not exposed to the page by
        // CORS) is taken to be the range asked for.
        if (range && range.start !== loaded) {
          chunks = [];
          loaded = 0;
          throw new Error(`the server sent bytes from ${range.start}, not ${before}`);
        }
        const length = Number(res.headers.get('content-length') ?? 0);
        total = range?.total || (length ? loaded + length : total);
        const changed = held && versionChange(held, { total, ...etagOf(res) });
        if (changed) {
          await res.body?.cancel().catch(() => {});
          chunks = [];
          loaded = 0;
          held = undefined;
          opts.onRestart?.(changed);
          continue;
        }
      } else {
        // 200: the whole file (a first request, or a server that ignores Range).
        chunks = [];
        loaded = 0;
        total = Number(res.headers.get('content-length') ?? 0);
        held = { total, ...etagOf(res) };
        opts.onVersion?.(held);
      }
      if (expected && total && total !== expected) {
        await res.body?.cancel().catch(() => {});
        chunks = [];
        loaded = 0;
        held = undefined;
        throw new Error(`the server announced ${total} bytes for a file listed at ${expected}`);
      }
      total ||= expected;
      opts.onProgress?.(loaded, total);
      if (!res.body) {
        const b = new Uint8Array(await res.arrayBuffer());
        opts.onBytes?.(b, loaded);
        chunks.push(b);
        loaded += b.length;
      } else {
        const reader = res.body.getReader();
        const next = stallGuard(reader, opts.timeouts);
        for (;;) {
          const { done, value } = await next(total ? total - loaded : MIN_WINDOW_BYTES);
          if (done) break;
          if (!total && opts.maxBytes !== undefined && loaded + value.length > opts.maxBytes) {
            await reader.cancel().catch(() => {});
            throw new BodyTooLargeError(`the file ran past ${opts.maxBytes} bytes, the most such a file may have`);
          }
          if (total && loaded + value.length > total) {
            // Past the length: nothing more is read (a body that never ends costs one chunk, not the disk).
            await reader.cancel().catch(() => {});
            loaded += value.length;
            break;
          }
          opts.onBytes?.(value, loaded);
          chunks.push(value);
          loaded += value.length;
          opts.onProgress?.(loaded, total);
        }
      }
      if (!total || loaded === total) {
        opts.onProgress?.(loaded, loaded);
        return concat(chunks, loaded);
      }
      if (loaded > total) {
        chunks = [];
        loaded = 0;
        throw new Error(`received more bytes than the file's length (${total})`);
      }
      reason = `the body ended at ${loaded} of ${total} bytes`;
    } catch (e) {
      if (e instanceof HttpStatusError || e instanceof BodyTooLargeError) throw e;
      stalled = e instanceof TimeoutError;
      reason = (e as Error).message;
    }
    // A stalled attempt counts as a failure whatever it brought (a trickle must not keep a download alive).
    failures = loaded > before && !stalled ? 0 : failures + 1;
    if (failures > retries || attempt >= maxAttempts) {
      const why = failures > retries ? reason : `${reason}; ${attempt} requests in all`;
      throw new DownloadInterruptedError(url, concat(chunks, loaded), total, why);
    }
    await sleep(delay);
    if (loaded === before) delay *= 2;
  }
}
