// A tiny ZIP writer (method 0, "stored": no compression; safetensors weights hardly compress anyway) and a
// reader for importing (stored and deflated entries, so a folder zipped by any tool imports too).
// Layout (APPNOTE 6.3): [local header + name + data]* [central directory entry]* [end of central directory].
// Archives are limited to 4 GiB (no ZIP64), which covers the models piplay can train in a browser.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(data: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const LIMIT = 0xffffffff;

function dosTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getFullYear());
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

export interface ZipEntry {
  name: string;
  data: Uint8Array;
}

/**
 * Writes a store-only ZIP archive as a Blob (the file data are not copied into one big buffer).
 * Names use '/' for folders and are stored as UTF-8.
 */
export function writeZip(entries: readonly ZipEntry[], modified = new Date()): Blob {
  const enc = new TextEncoder();
  const { time, date } = dosTime(modified);
  const parts: BlobPart[] = [];
  const central: Uint8Array<ArrayBuffer>[] = [];
  let offset = 0;
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.name)) throw new Error(`zip: duplicate entry name ${e.name}`);
    seen.add(e.name);
    const name = enc.encode(e.name);
    const size = e.data.length;
    if (size >= LIMIT || offset + 30 + name.length + size >= LIMIT) {
      throw new Error(
        `zip: the archive would exceed 4 GiB at ${e.name}; export the weights as F16 or split the folder`,
      );
    }
    const crc = crc32(e.data);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 20, true); // version needed
    lv.setUint16(6, 0x0800, true); // UTF-8 names
    lv.setUint16(8, 0, true); // stored
    lv.setUint16(10, time, true);
    lv.setUint16(12, date, true);
    lv.setUint32(14, crc, true);
    lv.setUint32(18, size, true);
    lv.setUint32(22, size, true);
    lv.setUint16(26, name.length, true);
    lv.setUint16(28, 0, true);
    local.set(name, 30);
    parts.push(local, e.data as Uint8Array<ArrayBuffer>);

    const cd = new Uint8Array(46 + name.length);
    const cv = new DataView(cd.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 20, true); // made by
    cv.setUint16(6, 20, true); // needed
    cv.setUint16(8, 0x0800, true);
    cv.setUint16(10, 0, true);
    cv.setUint16(12, time, true);
    cv.setUint16(14, date, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, size, true);
    cv.setUint32(24, size, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(42, offset, true);
    cd.set(name, 46);
    central.push(cd);
    offset += local.length + size;
  }
  const cdSize = central.reduce((s, c) => s + c.length, 0);
  if (offset + cdSize + 22 >= LIMIT) throw new Error('zip: the archive would exceed 4 GiB');
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, cdSize, true);
  ev.setUint32(16, offset, true);
  parts.push(...central, end);
  return new Blob(parts, { type: 'application/zip' });
}

/**
 * Inflates a deflated entry, stopping as soon as it passes `size` bytes: an entry that inflates to more than its
 * directory says (a zip bomb) costs at most `size` bytes and one chunk of memory.
 */
async function inflateRaw(data: Uint8Array, size: number, tooLarge: () => Error): Promise<Uint8Array> {
  const reader = new Blob([data as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new DecompressionStream('deflate-raw'))
    .getReader();
  const out = new Uint8Array(size);
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out.subarray(0, n);
    if (n + value.length > size) {
      await reader.cancel();
      throw tooLarge();
    }
    out.set(value, n);
    n += value.length;
  }
}

/** An entry of the central directory: what the archive says of a file, before anything is inflated. */
export interface ZipListing {
  name: string;
  /** Bytes once inflated, as declared. */
  size: number;
}

export interface ReadZipOptions {
  /** Which files to read; the others are never inflated (default: all). */
  keep?: (name: string) => boolean;
  /** The most bytes a kept file may declare, by name (default: no limit past the format's 4 GiB). */
  maxBytes?: (name: string) => number;
  /** The most bytes all kept files together may declare. */
  maxTotalBytes?: number;
}

interface DirectoryEntry extends ZipListing {
  flags: number;
  method: number;
  crc: number;
  csize: number;
  lho: number;
}

/** The central directory of an archive (read first: sizes are checked before anything is inflated). */
function directory(bytes: Uint8Array, bad: (why: string) => Error): DirectoryEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad('no end-of-central-directory record');
  const count = view.getUint16(eocd + 10, true);
  let p = view.getUint32(eocd + 16, true);
  if (count === 0xffff || p === LIMIT) throw bad('ZIP64 archives are not supported');
  const dec = new TextDecoder();
  const out: DirectoryEntry[] = [];
  for (let k = 0; k < count; k++) {
    if (p + 46 > bytes.length || view.getUint32(p, true) !== 0x02014b50)
      throw bad(`central directory entry ${k} is damaged`);
    const nlen = view.getUint16(p + 28, true);
    const entry = {
      flags: view.getUint16(p + 8, true),
      method: view.getUint16(p + 10, true),
      crc: view.getUint32(p + 16, true),
      csize: view.getUint32(p + 20, true),
      size: view.getUint32(p + 24, true),
      lho: view.getUint32(p + 42, true),
      name: dec.decode(bytes.subarray(p + 46, p + 46 + nlen)),
    };
    p += 46 + nlen + view.getUint16(p + 30, true) + view.getUint16(p + 32, true);
    if (!entry.name.endsWith('/')) out.push(entry);
  }
  return out;
}

const badZip = (archiveName: string) => (why: string) => new Error(`${archiveName} is not a readable ZIP file: ${why}`);

/** The files an archive holds and their declared sizes, without inflating anything. */
export function listZip(bytes: Uint8Array, archiveName = 'the archive'): ZipListing[] {
  return directory(bytes, badZip(archiveName)).map(({ name, size }) => ({ name, size }));
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

/**
 * Reads the files of a ZIP archive (stored or deflated; folders are skipped) that `keep` wants. Declared sizes are
 * checked against the limits before any inflating, and no entry is inflated past its declared size. Errors name
 * the archive.
 */
export async function readZip(
  bytes: Uint8Array,
  archiveName = 'the archive',
  opts: ReadZipOptions = {},
): Promise<ZipEntry[]> {
  const bad = badZip(archiveName);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kept = directory(bytes, bad).filter((e) => opts.keep?.(e.name) ?? true);
  let total = 0;
  for (const e of kept) {
    const max = opts.maxBytes?.(e.name) ?? Number.POSITIVE_INFINITY;
    if (e.size > max) throw bad(`${e.name} declares ${mib(e.size)}, more than such a file may hold (${mib(max)})`);
    total += e.size;
  }
  if (opts.maxTotalBytes !== undefined && total > opts.maxTotalBytes)
    throw bad(`its files declare ${mib(total)} in all, more than a model folder may hold (${mib(opts.maxTotalBytes)})`);
  const out: ZipEntry[] = [];
  for (const { name, flags, method, crc, csize, size, lho } of kept) {
    if (flags & 1) throw bad(`${name} is encrypted`);
    if (lho + 30 > bytes.length || view.getUint32(lho, true) !== 0x04034b50)
      throw bad(`local header of ${name} is damaged`);
    const start = lho + 30 + view.getUint16(lho + 26, true) + view.getUint16(lho + 28, true);
    if (start + csize > bytes.length) throw bad(`${name} is truncated`);
    const raw = bytes.subarray(start, start + csize);
    let data: Uint8Array;
    if (method === 0) data = raw;
    else if (method === 8) {
      const tooLarge = () => bad(`${name} inflates to more than the ${size} bytes its directory entry says`);
      data = await inflateRaw(raw, size, tooLarge).catch((e: Error) =>
        Promise.reject(e.message.startsWith(archiveName) ? e : bad(`${name} cannot be inflated (${e.message})`)),
      );
    } else throw bad(`${name} uses compression method ${method} (only stored and deflate are read)`);
    if (data.length !== size) throw bad(`${name} has ${data.length} bytes, the directory says ${size}`);
    if (crc32(data) !== crc) throw bad(`${name} fails its CRC check`);
    out.push({ name, data });
  }
  return out;
}
