// File errors of the command line with the path and the cause in words: Node's own ("ENOSPC: no space
// left on device, write") name neither the file a run was writing nor what to do.
const CAUSES: Record<string, string> = {
  ENOENT: 'it or a folder above it does not exist',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder, not a file',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space is left on the device; free some and resume the run (--resume)',
  EDQUOT: 'the disk quota is used up; free some and resume the run (--resume)',
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted',
  EMFILE: 'too many open files',
  EFBIG: 'the file would be larger than this process or file system may write (ulimit -f); make room and run it again',
};

export type Action = 'read' | 'write' | 'list' | 'create' | 'rename';

/** An Error naming what was being done to which path and why it failed; `err` is kept as the cause. */
export function fsError(action: Action, path: string, err: unknown): Error {
  const code = (err as { code?: string } | null)?.code;
  const cause = (code && CAUSES[code]) ?? (err as Error)?.message ?? String(err);
  return new Error(`piplay: could not ${action} ${path}: ${cause}${code ? ` (${code})` : ''}`, { cause: err });
}

/** Runs `fn`, rethrowing a file error as fsError(action, path). */
export function withPath<T>(action: Action, path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw fsError(action, path, e);
  }
}

/** The async form of withPath. */
export async function withPathAsync<T>(action: Action, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fsError(action, path, e);
  }
}
