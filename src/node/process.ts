// Node helpers the command line's folder lock and the hub's on-disk partial downloads share: whether a process
// that left a lock behind still runs, and a small JSON record read back only when it is the shape expected.
import { readInputFile } from './input-file.ts';

/** Whether process `pid` on this machine runs (signal 0 checks without sending; EPERM: it does, as another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The JSON file at `path` when it parses and `is` accepts it, else null (missing, torn or someone else's). */
export function readRecord<T>(path: string, is: (v: Partial<T> | null) => boolean): T | null {
  try {
    const v = JSON.parse(new TextDecoder().decode(readInputFile(path, { maxBytes: 2 ** 20 }))) as Partial<T> | null;
    return is(v) ? (v as T) : null;
  } catch {
    return null;
  }
}
