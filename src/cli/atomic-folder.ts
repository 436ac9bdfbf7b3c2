// Outputs put in place whole: a file or a folder of files is written beside its final name (`.NAME.tmp-PID`),
// flushed, then renamed into place, so a kill or a full disk while writing never leaves a half-written output under
// the final name (a file or folder there from before stays whole until the new one replaces it), and a retry finds
// the final name free. Errors name the final path and the cause (fs-errors.ts). What a killed writer leaves beside
// its outputs (`.NAME.tmp-PID`, `.NAME.old-PID`) is recognised as the command's own and cleaned by the next one.
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { processAlive } from '../node/process.ts';
import { fsError, withPath } from './fs-errors.ts';
import { makeFolder } from '../node/make-folder.ts';

/** A leftover of a writer: `.NAME.tmp-PID` (being written) or `.NAME.old-PID` (the output it replaced). */
const LEFTOVER = /^\.(.+)\.(tmp|old)-(\d+)$/;

/** The output a leftover belongs to, what it is and its writer, or null for any other name. */
export function leftoverOf(entry: string): { name: string; kind: 'tmp' | 'old'; pid: number } | null {
  const m = LEFTOVER.exec(entry);
  return m ? { name: m[1]!, kind: m[2] as 'tmp' | 'old', pid: Number(m[3]) } : null;
}

const tmpOf = (path: string) => join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);

/**
 * Writes `bytes` to `path` whole (temporary file, fsync, rename). With `replace: false` an existing file is never
 * replaced: the temporary file is linked to the final name, which fails if anything is there.
 */
export function writeFileAtomically(path: string, bytes: Uint8Array | string, opts: { replace: boolean }): void {
  const tmp = tmpOf(path);
  rmSync(tmp, { force: true });
  try {
    const fd = openSync(tmp, 'wx');
    try {
      const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
      for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (opts.replace) renameSync(tmp, path);
    else {
      linkSync(tmp, path);
      rmSync(tmp, { force: true });
    }
  } catch (e) {
    rmSync(tmp, { force: true });
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' && !opts.replace)
      throw new Error(`piplay: ${path} exists; piplay never overwrites a file: give a new path`, { cause: e });
    throw fsError('write', path, e);
  }
}

export function writeFolderAtomically(dir: string, files: Iterable<[string, Uint8Array]>): void {
  cleanLeftovers(dirname(dir), [basename(dir)]);
  const tmp = tmpOf(dir);
  rmSync(tmp, { recursive: true, force: true });
  withPath('create', tmp, () => makeFolder(tmp));
  try {
    for (const [name, bytes] of files) withPath('write', join(tmp, name), () => writeAll(join(tmp, name), bytes));
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

/** A file written and flushed (a folder's files are on the disk before the folder is renamed into place). */
function writeAll(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, 'w');
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Cleans what killed writers left in `dir` beside the outputs `names`: an output the kill left missing between its
 * two renames gets its previous version back (`.NAME.old-PID`); every other leftover of a process that is gone is
 * removed. Returns what was done, in words.
 */
export function cleanLeftovers(dir: string, names: readonly string[]): string[] {
  if (!existsSync(dir)) return [];
  const done: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const left = leftoverOf(entry);
    if (!left || !names.includes(left.name) || left.pid === process.pid || processAlive(left.pid)) continue;
    const path = join(dir, entry);
    const final = join(dir, left.name);
    if (left.kind === 'old' && !existsSync(final)) {
      withPath('rename', path, () => renameSync(path, final));
      done.push(`put back ${final} from ${entry}, left by a process killed while replacing it`);
    } else {
      rmSync(path, { recursive: true, force: true });
      done.push(`removed ${path}, left by a process killed while writing ${left.name}`);
    }
  }
  return done;
}
