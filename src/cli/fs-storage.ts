// RunStorage over a folder on disk (Node): each name is a file path under the folder. A file is written
// to a temporary name and renamed, so a reader never sees half a file.
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { RunStorage } from '../selfplay/storage.ts';

export class DirStorage implements RunStorage {
  constructor(readonly root: string) {}

  private path(name: string): string {
    if (name.split('/').some((p) => p === '..' || p === '')) throw new Error(`piplay: bad storage name '${name}'`);
    return join(this.root, ...name.split('/'));
  }

  async put(name: string, bytes: Uint8Array): Promise<void> {
    const p = this.path(name);
    await mkdir(dirname(p), { recursive: true });
    const tmp = `${p}.tmp-${process.pid}`;
    await writeFile(tmp, bytes);
    await rename(tmp, p);
  }

  async get(name: string): Promise<Uint8Array | null> {
    const p = this.path(name);
    if (!existsSync(p)) return null;
    const b = await readFile(p);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  async list(): Promise<string[]> {
    if (!existsSync(this.root)) return [];
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true });
    return entries
      .filter((d) => d.isFile() && !d.name.includes('.tmp-'))
      .map((d) => relative(this.root, join(d.parentPath, d.name)).split(sep).join('/'))
      .sort();
  }
}
