// One file over HTTP that survives a dropped connection: when the body breaks off (or ends short of its length)
// the download continues from the last byte received with a Range request (`Range: bytes=N-`), so a large
// weights file is not fetched again from the start. A server that ignores Range (it answers 200 with the whole
// file) is read again from the start; one that answers a range other than the one asked for, too. A resumed answer
// for another version of the file (another length or ETag than the bytes held came with) is dropped, and the file
// read again from the start, so bytes of two versions are never joined.

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
}

/** The server answered with an HTTP error status (404, 401, 500, ...) rather than the file. */
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
  let delay = opts.retryDelayMs ?? 500;
  let chunks: Uint8Array[] = opts.partial?.length ? [opts.partial] : [];
  let loaded = opts.partial?.length ?? 0;
  let total = 0;
  let failures = 0;
  let held = loaded > 0 ? opts.partialVersion : undefined;
  for (;;) {
    const before = loaded;
    let reason: string;
    try {
      const res = await fetchFn(url, loaded > 0 ? { headers: { Range: `bytes=${loaded}-` } } : undefined);
      if (loaded > 0 && res.status === 416) {
        // Nothing left past what we hold: complete when the server's length agrees.
        const range = parseContentRange(res.headers.get('content-range'));
        if (range && range.total === loaded && (!held?.total || held.total === loaded)) return concat(chunks, loaded);
        chunks = [];
        loaded = 0;
        throw new Error('the server refused the range of the partial download');
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
      opts.onProgress?.(loaded, total);
      if (!res.body) {
        const b = new Uint8Array(await res.arrayBuffer());
        opts.onBytes?.(b, loaded);
        chunks.push(b);
        loaded += b.length;
      } else {
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
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
      if (e instanceof HttpStatusError) throw e;
      reason = (e as Error).message;
    }
    failures = loaded > before ? 0 : failures + 1;
    if (failures > retries) throw new DownloadInterruptedError(url, concat(chunks, loaded), total, reason);
    await sleep(delay);
    if (loaded === before) delay *= 2;
  }
}
