// A folder of files put in place whole: written beside its final name, then renamed into place, so a kill while
// writing never leaves a half-written model under the final name (a folder there from before stays whole until the
// new one replaces it).
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { withPath } from './fs-errors.ts';

export function writeFolderAtomically(dir: string, files: Iterable<[string, Uint8Array]>): void {
  const tmp = join(dirname(dir), `.${basename(dir)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  withPath('create', tmp, () => mkdirSync(tmp, { recursive: true }));
  try {
    for (const [name, bytes] of files) withPath('write', join(tmp, name), () => writeFileSync(join(tmp, name), bytes));
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const old = join(dirname(dir), `.${basename(dir)}.old-${process.pid}`);
  const had = existsSync(dir);
  if (had) withPath('rename', dir, () => renameSync(dir, old));
  withPath('rename', tmp, () => renameSync(tmp, dir));
  if (had) rmSync(old, { recursive: true, force: true });
}
