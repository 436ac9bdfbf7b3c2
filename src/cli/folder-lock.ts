// A lock on a folder a command writes (a run folder, an experiment): one process at a time. The lock is a file
// created with O_EXCL, holding its owner's pid and start time; it is released when the process exits. A lock whose
// owner is dead is taken over atomically: it is first renamed aside (only one process can), then created anew.
import { closeSync, existsSync, openSync, renameSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive, readRecord } from '../node/process.ts';
import { ConfigError } from '../selfplay/config.ts';
import { fsError, withPath } from './fs-errors.ts';
import { makeFolder } from '../node/make-folder.ts';

/** The lock's file name in the folder (a name the folder's owner command writes, see RUN_NAMES). */
export const LOCK_NAME = 'piplay.lock';

interface Owner {
  pid: number;
  host: string;
  startedAt: string;
  command: string;
}

const readOwner = (path: string) => readRecord<Owner>(path, (o) => typeof o?.pid === 'number');

/** The message for a folder held by `owner` (null: a lock being written). */
function inUse(dir: string, path: string, owner: Owner | null): ConfigError {
  const who = owner
    ? `${owner.command} (process ${owner.pid} on ${owner.host}, since ${owner.startedAt})`
    : 'another process';
  return new ConfigError(
    `${dir} is in use by ${who}; wait for it to finish or stop it, then run this again ` +
      `(if no such process runs, remove ${path})`,
  );
}

/** A lock file being written (no owner yet), a live owner, or one on another machine (a shared disk): in use. */
function isHeld(owner: Owner | null): boolean {
  return !owner || owner.host !== hostname() || processAlive(owner.pid);
}

/** Throws when another process holds `dir`'s lock; reads only (so it can come before any check of the folder). */
export function checkFolderLock(dir: string): void {
  const path = join(dir, LOCK_NAME);
  if (!existsSync(path)) return;
  const owner = readOwner(path);
  if (isHeld(owner)) throw inUse(dir, path, owner);
}

/**
 * Takes the lock of `dir` (created if missing) for `command`, or throws a ConfigError naming the process that holds
 * it. Returns the release function (also run when the process exits).
 */
export function lockFolder(dir: string, command: string): () => void {
  const created = !existsSync(dir);
  // A folder that cannot be made (a read-only disk, a path through a file) is named with the cause.
  withPath('create', dir, () => makeFolder(dir));
  const path = join(dir, LOCK_NAME);
  const me: Owner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), command };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError('create', path, e);
      const owner = readOwner(path);
      if (isHeld(owner)) throw inUse(dir, path, owner);
      // The owner is dead: move its lock aside; of several processes doing this, one succeeds.
      const aside = `${path}.stale-${process.pid}`;
      try {
        renameSync(path, aside);
        rmSync(aside, { force: true });
      } catch {
        // Another process took it over first: try again, and find that process as the owner.
      }
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(me));
    } finally {
      closeSync(fd);
    }
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.off('exit', release);
      // Only our own lock is removed (a lock file replaced by hand is someone else's).
      if (readOwner(path)?.pid === me.pid) rmSync(path, { force: true });
      // A folder made only to hold the lock (the command stopped before writing) is not left behind.
      if (created) {
        try {
          rmdirSync(dir);
        } catch {
          // Not empty: the command's output.
        }
      }
    };
    process.on('exit', release);
    return release;
  }
  throw new ConfigError(`${dir}: could not take its lock (${path}); run this again`);
}
