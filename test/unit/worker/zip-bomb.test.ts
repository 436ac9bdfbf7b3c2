// Zip import reads the central directory first: declared sizes past the limits are refused before anything is
// inflated, files the import does not use are never inflated, and no entry inflates past its declared size.
// (Before: a 1 MB zip declaring 100 bytes inflated to 1 GiB before it was refused.)
import { describe, expect, it } from 'vitest';
import { MAX_IMPORT_BYTES } from '../../../src/worker/checkpoint-service.ts';
import { listZip, readZip } from '../../../src/worker/zip.ts';
import { deflated, type Raw, zipOf } from '../../helpers/zip-bomb.ts';

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
