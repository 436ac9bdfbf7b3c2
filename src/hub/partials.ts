// Where the bytes of an unfinished download wait for the next attempt, so a Range request can continue it: in
// memory (for the life of the worker or process) or in the browser's Cache Storage (across reloads: the bytes
// are kept in pieces as they arrive, so a closed tab loses at most one piece). The command line keeps them in a
// file beside the others (src/hub/file-partials.ts), with the version of the file they came from.
import type { FileVersion } from './resumable-fetch.ts';
export interface PartialStore {
  /** The bytes kept of `url`'s download (null when none). */
  load(url: string): Promise<Uint8Array | null>;
  /** Keeps a chunk at `offset`; chunks come in order, and offset 0 starts the download afresh. */
  append(url: string, offset: number, chunk: Uint8Array): void;
  /** Waits until every chunk appended so far is kept (before giving up on a download). */
  flush(url: string): Promise<void>;
  /** Forgets `url`'s bytes (the download completed). */
  clear(url: string): Promise<void>;
  /** The version (length, ETag) of the file the kept bytes came from, where the store records it. */
  version?(url: string): Promise<FileVersion | null>;
  /** Records the version of a download that starts from offset 0 (called before its first chunk). */
  begin?(url: string, v: FileVersion): void;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Unfinished downloads in memory, by URL. */
export function memoryPartials(): PartialStore {
  const kept = new Map<string, Uint8Array[]>();
  return {
    async load(url) {
      const parts = kept.get(url);
      return parts?.length ? concat(parts) : null;
    },
    append(url, offset, chunk) {
      if (offset === 0 || !kept.has(url)) kept.set(url, []);
      kept.get(url)!.push(chunk.slice());
    },
    async flush() {},
    async clear(url) {
      kept.delete(url);
    },
  };
}

/** Bytes a Cache Storage piece holds before it is written (a closed tab loses at most this much). */
export const PIECE_BYTES = 16 * 2 ** 20;

/**
 * Unfinished downloads in Cache Storage: pieces under `<url>?piplay-piece=<k>` (a query, since Cache Storage
 * ignores fragments when it matches), written as each fills up.
 */
export function cachePartials(cache: Pick<Cache, 'match' | 'put' | 'delete'>, pieceBytes = PIECE_BYTES): PartialStore {
  const key = (url: string, k: number) => `${url}${url.includes('?') ? '&' : '?'}piplay-piece=${k}`;
  interface Open {
    pieces: number;
    buffer: Uint8Array[];
    buffered: number;
    writes: Promise<void>;
  }
  const open = new Map<string, Open>();
  const removePieces = async (url: string) => {
    for (let k = 0; await cache.delete(key(url, k)); k++);
  };
  const write = (url: string, o: Open) => {
    if (o.buffered === 0) return;
    const bytes = concat(o.buffer);
    const k = o.pieces++;
    o.buffer = [];
    o.buffered = 0;
    // A full quota only costs the resume: the download itself goes on.
    o.writes = o.writes.then(() => cache.put(key(url, k), new Response(bytes.buffer as ArrayBuffer)).catch(() => {}));
  };
  return {
    async load(url) {
      const parts: Uint8Array[] = [];
      for (let k = 0; ; k++) {
        const hit = await cache.match(key(url, k));
        if (!hit) break;
        parts.push(new Uint8Array(await hit.arrayBuffer()));
      }
      open.set(url, { pieces: parts.length, buffer: [], buffered: 0, writes: Promise.resolve() });
      return parts.length ? concat(parts) : null;
    },
    append(url, offset, chunk) {
      let o = open.get(url);
      if (!o || offset === 0) {
        const before = o?.writes ?? Promise.resolve();
        o = { pieces: 0, buffer: [], buffered: 0, writes: before.then(() => removePieces(url)) };
        open.set(url, o);
      }
      o.buffer.push(chunk.slice());
      o.buffered += chunk.length;
      if (o.buffered >= pieceBytes) write(url, o);
    },
    async flush(url) {
      const o = open.get(url);
      if (!o) return;
      write(url, o);
      await o.writes;
    },
    async clear(url) {
      const o = open.get(url);
      open.delete(url);
      await o?.writes;
      await removePieces(url);
    },
  };
}
