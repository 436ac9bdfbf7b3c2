// Zip import reads the central directory first: declared sizes past the limits are refused before anything is
// inflated, files the import does not use are never inflated, and no entry inflates past its declared size.
// (Before: a 1 MB zip declaring 100 bytes inflated to 1 GiB before it was refused.)
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_IMPORT_BYTES } from '../../../src/worker/checkpoint-service.ts';
import { crc32, listZip, readZip } from '../../../src/worker/zip.ts';

interface Raw {
  name: string;
  /** The bytes stored (compressed for method 8). */
  stored: Uint8Array;
  method: 0 | 8;
  /** What the headers declare. */
  size: number;
  crc: number;
}

/** An archive whose headers say whatever the entries declare. */
function zipOf(entries: Raw[]): Uint8Array {
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

const deflated = (name: string, data: Uint8Array, size = data.length): Raw => ({
  name,
  stored: new Uint8Array(deflateRawSync(data)),
  method: 8,
  size,
  crc: crc32(data),
});

describe('zip import against bombs', () => {
  it('refuses 10 GiB declared in all at once, from the directory alone', async () => {
    const small = deflated('x', new Uint8Array(16));
    const bomb = zipOf(
      ['model-1.safetensors', 'model-2.safetensors', 'model-3.safetensors'].map((name) => ({
        ...small,
        name,
        size: 0xd5555555, // 3.33 GiB each
      })),
    );
    expect(listZip(bomb).map((e) => e.size)).toEqual([0xd5555555, 0xd5555555, 0xd5555555]);
    const t0 = performance.now();
    await expect(readZip(bomb, 'bomb.zip', { maxTotalBytes: MAX_IMPORT_BYTES })).rejects.toThrow(
      'bomb.zip is not a readable ZIP file: its files declare 10240.0 MiB in all, more than a model folder may hold (4096.0 MiB)',
    );
    expect(performance.now() - t0).toBeLessThan(1000);
    await expect(readZip(bomb, 'bomb.zip', { maxBytes: () => 2 ** 30 })).rejects.toThrow(
      'model-1.safetensors declares 3413.3 MiB, more than such a file may hold (1024.0 MiB)',
    );
  });

  it('stops inflating an entry at its declared size', async () => {
    // 64 MiB of zeros deflate to ~64 KiB; the directory says 100 bytes.
    const liar = zipOf([deflated('config.json', new Uint8Array(64 * 2 ** 20), 100)]);
    await expect(readZip(liar, 'liar.zip')).rejects.toThrow(
      'liar.zip is not a readable ZIP file: config.json inflates to more than the 100 bytes its directory entry says',
    );
  });

  it('never inflates what the import discards', async () => {
    const config = new TextEncoder().encode('{"a":1}');
    const garbage: Raw = { name: 'junk.bin', stored: new Uint8Array([0xff, 0xff, 0xff]), method: 8, size: 5, crc: 0 };
    const zip = zipOf([deflated('config.json', config), garbage]);
    await expect(readZip(zip, 'z.zip')).rejects.toThrow(/junk.bin cannot be inflated/);
    const kept = await readZip(zip, 'z.zip', { keep: (n) => n !== 'junk.bin' });
    expect(kept.map((e) => [e.name, new TextDecoder().decode(e.data)])).toEqual([['config.json', '{"a":1}']]);
  });
});
