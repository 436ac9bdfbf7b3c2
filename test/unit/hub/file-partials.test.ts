// Partial downloads on disk: a new store (as in the next process) reads back what the last one synced, a killed
// process's unsynced or torn tail is cut off, offset 0 starts afresh, clear removes the part, and a .part this
// store did not write is left alone, and so is one another live process is writing (a dead one's is taken over);
// a part that cannot be written only costs the resume.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileParts } from '../../../src/hub/file-partials.ts';

const bytes = (from: number, n: number) => new Uint8Array(n).map((_, i) => (from + i) % 251);
const U = 'http://hub/a/b/resolve/main/model.safetensors';
const MARK = 'piplay partial download';
const KEPT = 'so this download is not kept for a later run';

function folder() {
  const dir = mkdtempSync(join(tmpdir(), 'piplay-parts-'));
  const file = join(dir, 'model.safetensors');
  return { dir, file, pathOf: (url: string) => (url === U ? file : null) };
}

describe('partial downloads on disk', () => {
  it('keeps the bytes with their version; a new store continues them, and clear removes them', async () => {
    const { file, pathOf } = folder();
    const store = fileParts(pathOf);
    store.begin?.(U, { total: 500, etag: '"v1"' });
    store.append(U, 0, bytes(0, 100));
    store.append(U, 100, bytes(100, 50));
    await store.flush(U);
    expect(readFileSync(`${file}.part`)).toEqual(Buffer.from(bytes(0, 150)));
    expect(existsSync(file)).toBe(false);

    const next = fileParts(pathOf);
    expect(await next.load(U)).toEqual(bytes(0, 150));
    expect(await next.version?.(U)).toEqual({ total: 500, etag: '"v1"' });
    next.append(U, 150, bytes(150, 50));
    await next.flush(U);
    expect(await fileParts(pathOf).load(U)).toEqual(bytes(0, 200));

    await next.clear(U);
    expect(existsSync(`${file}.part`)).toBe(false);
    expect(existsSync(`${file}.part.json`)).toBe(false);
    expect(await fileParts(pathOf).load(U)).toBeNull();
  });

  it('after a kill, resumes only what was synced: a torn or unsynced tail is cut off', async () => {
    const { file, pathOf } = folder();
    const store = fileParts(pathOf, { syncBytes: 100 });
    store.begin?.(U, { total: 1000 });
    for (let at = 0; at < 260; at += 40) store.append(U, at, bytes(at, 40));
    // No flush (the process was killed): 240 bytes were synced (at 120 and 240), 280 written; then a torn write.
    expect(statSync(`${file}.part`).size).toBe(280);
    appendFileSync(`${file}.part`, new Uint8Array([9, 9, 9]));
    const next = fileParts(pathOf, { syncBytes: 100 });
    expect(await next.load(U)).toEqual(bytes(0, 240));
    // The next chunk goes right after the bytes resumed, not after the cut-off tail.
    next.append(U, 240, bytes(240, 60));
    await next.flush(U);
    expect(readFileSync(`${file}.part`)).toEqual(Buffer.from(bytes(0, 300)));
  });

  it('starts afresh at offset 0 with the new version', async () => {
    const { pathOf } = folder();
    const store = fileParts(pathOf);
    store.begin?.(U, { total: 500, etag: '"v1"' });
    store.append(U, 0, bytes(0, 100));
    store.begin?.(U, { total: 300, etag: '"v2"' });
    store.append(U, 0, bytes(7, 30));
    await store.flush(U);
    const next = fileParts(pathOf);
    expect(await next.load(U)).toEqual(bytes(7, 30));
    expect(await next.version?.(U)).toEqual({ total: 300, etag: '"v2"' });
  });

  it('leaves a .part it did not write alone, and keeps nothing on disk for that file', async () => {
    const { file, pathOf } = folder();
    writeFileSync(`${file}.part`, 'mine');
    const warned: string[] = [];
    const store = fileParts(pathOf, { warn: (l) => warned.push(l) });
    expect(await store.load(U)).toBeNull();
    store.begin?.(U, { total: 10 });
    store.append(U, 0, bytes(0, 10));
    await store.flush(U);
    await store.clear(U);
    expect(readFileSync(`${file}.part`, 'utf8')).toBe('mine');
    expect(existsSync(`${file}.part.json`)).toBe(false);
    expect(warned).toEqual([expect.stringMatching(/model\.safetensors\.part was not written by piplay: left alone/)]);
  });

  it("leaves a part another live process is writing to it, and takes over a killed process's", async () => {
    const { file, pathOf } = folder();
    const lockBy = (pid: number) => writeFileSync(`${file}.part.lock`, JSON.stringify({ piplay: MARK, pid }));
    lockBy(process.ppid);
    const warned: string[] = [];
    const busy = fileParts(pathOf, { warn: (l) => warned.push(l) });
    busy.begin?.(U, { total: 10 });
    busy.append(U, 0, bytes(0, 10));
    await busy.flush(U);
    await busy.clear(U);
    expect(existsSync(`${file}.part`)).toBe(false);
    expect(existsSync(`${file}.part.lock`)).toBe(true);
    expect(warned).toEqual([`another process (pid ${process.ppid}) is downloading into ${file}.part, ${KEPT}`]);

    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    lockBy(gone);
    const next = fileParts(pathOf);
    next.begin?.(U, { total: 10 });
    next.append(U, 0, bytes(0, 10));
    await next.flush(U);
    expect(readFileSync(`${file}.part`)).toEqual(Buffer.from(bytes(0, 10)));
    expect(JSON.parse(readFileSync(`${file}.part.lock`, 'utf8')).pid).toBe(process.pid);
    await next.clear(U);
    expect(existsSync(`${file}.part.lock`)).toBe(false);
  });

  it('gives a part it cannot write up with a warning, without failing the download', async () => {
    const { dir } = folder();
    writeFileSync(join(dir, 'file'), 'not a folder');
    const warned: string[] = [];
    const store = fileParts(() => join(dir, 'file', 'model.safetensors'), { warn: (l) => warned.push(l) });
    expect(await store.load(U)).toBeNull();
    store.begin?.(U, { total: 10 });
    store.append(U, 0, bytes(0, 10));
    await store.flush(U);
    await store.clear(U);
    expect(warned).toEqual([expect.stringMatching(/could not write .*model\.safetensors\.part\.lock \(E[A-Z]+: /)]);
  });
});
