// Unfinished hub downloads of the command line kept on disk, so the next run continues them with a Range request
// (the browser keeps them in Cache Storage, src/hub/partials.ts). Beside where the file will go:
//   <file>.part       the bytes received so far, written as they arrive;
//   <file>.part.json  what they are: the URL, the file's length and ETag, and how many bytes of the part are known
//                     to be on disk (counted only after an fsync, every `syncBytes` and when a download gives up);
//   <file>.part.lock  the process writing the part (its pid): a second run downloading the same file at the same
//                     time keeps its bytes in memory only, since two writers could leave a hole in a counted prefix.
//                     A lock whose process is gone (killed) is taken over.
// A killed process leaves a part whose bytes past the count (a torn last write among them) are cut off on the next
// load, so what is resumed is always a prefix of the file. Files of these names that this store did not write are
// never touched, and a part that cannot be written (a full disk) is given up: that download is then kept in memory
// only, with a warning.
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { readInputFile } from '../node/input-file.ts';
import { processAlive, readRecord } from '../node/process.ts';
import type { PartialStore } from './partials.ts';
import type { FileVersion } from './resumable-fetch.ts';
import { makeFolder } from '../node/make-folder.ts';

/** Bytes written between two fsyncs (a killed process loses at most this much of its download). */
export const SYNC_BYTES = 4 * 2 ** 20;

const MARK = 'piplay partial download';

interface Meta {
  piplay: typeof MARK;
  url: string;
  total: number;
  etag?: string;
  /** Bytes of the .part known to be on disk. */
  length: number;
}

interface Open {
  part: string;
  fd: number;
  meta: Meta;
  /** Bytes written to the .part (synced or not). */
  written: number;
}

/** The .part.json at `path` when this store wrote it, else null. */
const readMeta = (path: string) =>
  readRecord<Meta>(path, (m) => m?.piplay === MARK && typeof m.url === 'string' && typeof m.length === 'number');

function writeMeta(part: string, meta: Meta): void {
  // Written whole, then renamed: the record is always one that was written complete.
  writeFileSync(`${part}.json.tmp`, JSON.stringify(meta));
  renameSync(`${part}.json.tmp`, `${part}.json`);
}

/** Partial downloads on disk (see fileParts). */
class DiskParts implements PartialStore {
  private readonly syncBytes: number;
  private readonly open = new Map<string, Open>();
  private readonly foreign = new Set<string>();

  constructor(
    private readonly pathOf: (url: string) => string | null,
    private readonly opts: { syncBytes?: number; warn?: (line: string) => void },
  ) {
    this.syncBytes = opts.syncBytes ?? SYNC_BYTES;
  }

  private leave(url: string, why: string) {
    this.foreign.add(url);
    this.opts.warn?.(`${why}, so this download is not kept for a later run`);
  }

  /** Takes `part`'s lock for this process: false when another live process (or not piplay) holds it. */
  private lock(url: string, part: string): boolean {
    const path = `${part}.lock`;
    const mine = JSON.stringify({ piplay: MARK, pid: process.pid });
    try {
      writeFileSync(path, mine, { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let pid: unknown;
    try {
      const held = JSON.parse(new TextDecoder().decode(readInputFile(path, { maxBytes: 2 ** 20 }))) as {
        piplay?: unknown;
        pid?: unknown;
      };
      pid = held.piplay === MARK ? held.pid : undefined;
    } catch {
      pid = undefined;
    }
    if (typeof pid !== 'number') {
      this.leave(url, `${path} was not written by piplay: left alone`);
      return false;
    }
    if (pid !== process.pid && processAlive(pid)) {
      this.leave(url, `another process (pid ${pid}) is downloading into ${part}`);
      return false;
    }
    writeFileSync(path, mine); // ours, from this process or from one that is gone
    return true;
  }

  /** The .part path of `url`, or null when it is not kept (no path, a part there is not ours, or it is busy). */
  private partOf(url: string): string | null {
    const p = this.pathOf(url);
    if (!p || this.foreign.has(url)) return null;
    const part = `${p}.part`;
    const ours = readMeta(`${part}.json`);
    if (!ours && (existsSync(part) || existsSync(`${part}.json`))) {
      this.leave(url, `${part} was not written by piplay: left alone`);
      return null;
    }
    try {
      makeFolder(dirname(part));
      return this.lock(url, part) ? part : null;
    } catch (e) {
      this.leave(url, `could not write ${part}.lock (${(e as Error).message})`);
      return null;
    }
  }

  private close(url: string) {
    const o = this.open.get(url);
    if (!o) return;
    this.open.delete(url);
    closeSync(o.fd);
  }

  /** A part that cannot be written stays as last synced (a prefix); the download goes on in memory. */
  private unwritable(url: string, o: Open, e: unknown) {
    this.close(url);
    this.leave(url, `could not write ${o.part} (${(e as Error).message})`);
  }

  private sync(o: Open) {
    if (o.meta.length === o.written) return;
    fdatasyncSync(o.fd);
    o.meta.length = o.written;
    writeMeta(o.part, o.meta);
  }

  /** sync, giving the part up when it cannot be written. */
  private syncOrGiveUp(url: string, o: Open) {
    try {
      this.sync(o);
    } catch (e) {
      this.unwritable(url, o, e);
    }
  }

  /** A download of `url` from byte 0: the record first (it claims the names), then an empty part. */
  private start(url: string, v: FileVersion): Open | null {
    this.close(url);
    const part = this.partOf(url);
    if (!part) return null;
    const meta: Meta = { piplay: MARK, url, total: v.total, ...(v.etag ? { etag: v.etag } : {}), length: 0 };
    try {
      writeMeta(part, meta);
      const o: Open = { part, fd: openSync(part, 'w'), meta, written: 0 };
      this.open.set(url, o);
      return o;
    } catch (e) {
      this.leave(url, `could not write ${part} (${(e as Error).message})`);
      return null;
    }
  }

  async load(url: string): Promise<Uint8Array | null> {
    this.close(url);
    const part = this.partOf(url);
    const meta = part ? readMeta(`${part}.json`) : null;
    if (!part || !meta || meta.url !== url || !existsSync(part)) return null;
    let fd: number | undefined;
    try {
      fd = openSync(part, 'r+');
      // Only what the record counts was synced; anything after it may be torn, and is cut off.
      const length = Math.min(meta.length, fstatSync(fd).size);
      ftruncateSync(fd, length);
      const bytes = new Uint8Array(length);
      for (let at = 0; at < length; ) at += readSync(fd, bytes, at, length - at, at);
      this.open.set(url, { part, fd, meta: { ...meta, length }, written: length });
      return length > 0 ? bytes : null;
    } catch (e) {
      if (fd !== undefined) closeSync(fd);
      this.leave(url, `could not read ${part} (${(e as Error).message})`);
      return null;
    }
  }
  async version(url: string): Promise<FileVersion | null> {
    const m = this.open.get(url)?.meta;
    return m ? { total: m.total, ...(m.etag ? { etag: m.etag } : {}) } : null;
  }
  begin(url: string, v: FileVersion): void {
    this.start(url, v);
  }
  append(url: string, offset: number, chunk: Uint8Array): void {
    let o = this.open.get(url);
    // Offset 0 after begin() writes into the part it made; without begin() the version is unknown.
    if (offset === 0 && o?.written !== 0) o = this.start(url, { total: 0 }) ?? undefined;
    if (!o || offset !== o.written) return; // not kept on disk (or out of order: the part stays as it was)
    try {
      for (let at = 0; at < chunk.length; ) at += writeSync(o.fd, chunk, at, chunk.length - at, offset + at);
      o.written += chunk.length;
      if (o.written - o.meta.length >= this.syncBytes) this.sync(o);
    } catch (e) {
      this.unwritable(url, o, e);
    }
  }
  /** Syncs every open part now (synchronously: for a process about to exit). */
  readonly syncAll = (): void => {
    for (const [url, o] of [...this.open]) this.syncOrGiveUp(url, o);
  };
  async flush(url: string): Promise<void> {
    const o = this.open.get(url);
    if (o) this.syncOrGiveUp(url, o);
  }
  async clear(url: string): Promise<void> {
    this.close(url);
    const part = this.partOf(url);
    if (!part) return;
    // The part before its record, so a part never stays behind without the record that makes it ours.
    rmSync(part, { force: true });
    rmSync(`${part}.json`, { force: true });
    rmSync(`${part}.lock`, { force: true });
  }
}

/**
 * Partial downloads on disk: `pathOf` maps a URL to the path its finished file gets (null: not kept on disk).
 * `warn` hears of a part left alone because this store did not write it.
 */
export function fileParts(
  pathOf: (url: string) => string | null,
  opts: { syncBytes?: number; warn?: (line: string) => void } = {},
): PartialStore & { syncAll(): void } {
  return new DiskParts(pathOf, opts);
}

/** The parts this store left in `dir` (not those of other tools), with the URL each was downloading. */
export function partsIn(dir: string): { part: string; url: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.part.json'))
    .flatMap((n) => {
      const meta = readMeta(join(dir, n));
      return meta ? [{ part: join(dir, n.slice(0, -'.json'.length)), url: meta.url }] : [];
    });
}

/** Removes a part this store wrote, unless a live process is writing it (then false). */
export function removePart(part: string): boolean {
  try {
    const held = JSON.parse(new TextDecoder().decode(readInputFile(`${part}.lock`, { maxBytes: 2 ** 20 }))) as {
      piplay?: unknown;
      pid?: unknown;
    };
    if (typeof held.pid === 'number' && held.pid !== process.pid && processAlive(held.pid)) return false;
  } catch {
    // no lock, or not one of ours: the part is not being written by piplay
  }
  rmSync(part, { force: true });
  rmSync(`${part}.json`, { force: true });
  rmSync(`${part}.lock`, { force: true });
  return true;
}
