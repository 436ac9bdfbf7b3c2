// RunStorage over a folder on disk (Node): each name is a file path under the folder. A file is written
// to a temporary name, flushed to the disk (fsync), renamed, and the rename flushed (fsync of the folder):
// a reader never sees half a file, and since saveCheckpoint writes the pointer last, a power loss cannot
// leave a pointer to a slot whose files are not on the disk. Errors name the file and the cause.
import { existsSync } from 'node:fs';
import { type FileHandle, open, readdir, rename, rm } from 'node:fs/promises';
import { readInputFileAsync } from '../node/input-file.ts';
import { dirname, join, relative, sep } from 'node:path';
import type { RunStorage } from '../selfplay/storage.ts';
import { withPathAsync } from './fs-errors.ts';
import { makeFolder } from '../node/make-folder.ts';

/** A temporary file of put(): `<name>.tmp-<pid>`. */
const TMP = /\.tmp-(\d+)$/;

export class DirStorage implements RunStorage {
  constructor(readonly root: string) {}

  private path(name: string): string {
    if (name.split('/').some((p) => p === '..' || p === '')) throw new Error(`piplay: bad storage name '${name}'`);
    return join(this.root, ...name.split('/'));
  }

  async put(name: string, bytes: Uint8Array): Promise<void> {
    const p = this.path(name);
    await withPathAsync('create', dirname(p), async () => makeFolder(dirname(p)));
    const tmp = `${p}.tmp-${process.pid}`;
    try {
      await withPathAsync('write', p, async () => {
        const f = await open(tmp, 'w');
        try {
          await f.writeFile(bytes);
          await f.sync();
        } finally {
          await f.close();
        }
        await rename(tmp, p);
      });
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => {});
      throw e;
    }
    await syncFolder(dirname(p));
  }

  async get(name: string): Promise<Uint8Array | null> {
    const p = this.path(name);
    if (!existsSync(p)) return null;
    return readInputFileAsync(p);
  }

  async list(): Promise<string[]> {
    if (!existsSync(this.root)) return [];
    const entries = await this.entries();
    return entries
      .filter((d) => d.isFile() && !TMP.test(d.name))
      .map((d) => relative(this.root, join(d.parentPath, d.name)).split(sep).join('/'))
      .sort();
  }

  private entries() {
    return withPathAsync('list', this.root, () => readdir(this.root, { recursive: true, withFileTypes: true }));
  }

  /** Removes the temporary files a killed writer left behind (any `.tmp-PID` but this process's own). */
  async removeLeftovers(): Promise<string[]> {
    if (!existsSync(this.root)) return [];
    const entries = await this.entries();
    const left = entries.filter((d) => {
      const pid = TMP.exec(d.name)?.[1];
      return d.isFile() && pid !== undefined && pid !== String(process.pid);
    });
    const removed: string[] = [];
    for (const d of left) {
      const p = join(d.parentPath, d.name);
      await rm(p, { force: true });
      removed.push(relative(this.root, p).split(sep).join('/'));
    }
    return removed.sort();
  }
}

/** fsync of a folder, so a rename in it is on the disk; skipped where folders cannot be opened (Windows). */
async function syncFolder(dir: string): Promise<void> {
  let f: FileHandle;
  try {
    f = await open(dir, 'r');
  } catch {
    return;
  }
  try {
    await f.sync().catch(() => {});
  } finally {
    await f.close();
  }
}
