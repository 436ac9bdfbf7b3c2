// Archives whose headers declare whatever a test wants (sizes, CRCs), for the zip-bomb tests of the worker and
// the page.
import { deflateRawSync } from 'node:zlib';
import { crc32 } from '../../src/worker/zip.ts';

export interface Raw {
  name: string;
  /** The bytes stored (compressed for method 8). */
  stored: Uint8Array;
  method: 0 | 8;
  /** What the headers declare. */
  size: number;
  crc: number;
}

/** An archive whose headers say whatever the entries declare. */
export function zipOf(entries: Raw[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = enc.encode(e.name);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(8, e.method, true);
    local.setUint32(14, e.crc, true);
    local.setUint32(18, e.stored.length, true);
    local.setUint32(22, e.size, true);
    local.setUint16(26, name.length, true);
    parts.push(new Uint8Array(local.buffer), name, e.stored);
    const c = new DataView(new ArrayBuffer(46));
    c.setUint32(0, 0x02014b50, true);
    c.setUint16(10, e.method, true);
    c.setUint32(16, e.crc, true);
    c.setUint32(20, e.stored.length, true);
    c.setUint32(24, e.size, true);
    c.setUint16(28, name.length, true);
    c.setUint32(42, offset, true);
    central.push(new Uint8Array(c.buffer), name);
    offset += 30 + name.length + e.stored.length;
  }
  const cdSize = central.reduce((s, b) => s + b.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, cdSize, true);
  end.setUint32(16, offset, true);
  const all = [...parts, ...central, new Uint8Array(end.buffer)];
  const out = new Uint8Array(all.reduce((s, b) => s + b.length, 0));
  let p = 0;
  for (const b of all) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}

export const deflated = (name: string, data: Uint8Array, size = data.length): Raw => ({
  name,
  stored: new Uint8Array(deflateRawSync(data)),
  method: 8,
  size,
  crc: crc32(data),
});
