// The one reader of input files on Node: a file is read only when it is a regular file, of the size it has when
// opened and no larger than the cap its kind allows. A FIFO, a device (/dev/zero, /dev/urandom), a socket or a
// folder under a file's name is refused by name before a byte is read: such "files" never end, or block the
// open itself, so a plain readFile on them hangs or fills the memory. The open does not wait for a writer
// (O_NONBLOCK), and the kind is taken from the opened file (fstat), so a file swapped after a check is seen too.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { fsError } from '../cli/fs-errors.ts';

export interface InputOptions {
  /** The most bytes the file may have (none: no cap beyond being a regular file). */
  maxBytes?: number;
  /** What the file is, for the message of a file past the cap ("a corpus", "config.json"). */
  what?: string;
}

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What a file that is not a regular file is, in words. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder, not a file';
  if (st.isFIFO()) return 'a FIFO (a named pipe), not a regular file';
  if (st.isCharacterDevice()) return 'a character device (like /dev/zero), not a regular file';
  if (st.isBlockDevice()) return 'a block device, not a regular file';
  if (st.isSocket()) return 'a socket, not a regular file';
  return 'not a regular file';
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 3 : 1)} MiB`;

/** The error of a file that cannot be read as an input: it names the path, what it is, and what to do. */
function refuse(path: string, st: Stats, opts: InputOptions): Error | null {
  if (!st.isFile()) {
    return new Error(
      `piplay: could not read ${path}: it is ${kindOf(st)}; piplay reads only regular files of a known size ` +
        '(a link is followed to what it names): give the file itself',
    );
  }
  if (opts.maxBytes !== undefined && st.size > opts.maxBytes) {
    return new Error(
      `piplay: could not read ${path}: it has ${mib(st.size)}, more than the ${mib(opts.maxBytes)} ` +
        `${opts.what ?? 'such a file'} may have; is it the right file?`,
    );
  }
  return null;
}

/** The bytes of the regular file at `path` (its size when opened), or an error naming the path and the cause. */
export function readInputFile(path: string, opts: InputOptions = {}): Uint8Array<ArrayBuffer> {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (e) {
    throw fsError('read', path, e);
  }
  try {
    const st = fstatSync(fd);
    const bad = refuse(path, st, opts);
    if (bad) throw bad;
    const out = new Uint8Array(st.size);
    let at = 0;
    while (at < out.length) {
      const n = readSync(fd, out, at, out.length - at, null);
      if (n === 0) break; // cut while being read: what is there
      at += n;
    }
    return at === out.length ? out : out.subarray(0, at);
  } catch (e) {
    throw (e as Error).message?.startsWith('piplay: ') ? e : fsError('read', path, e);
  } finally {
    closeSync(fd);
  }
}

/** readInputFile without blocking the event loop. */
export async function readInputFileAsync(path: string, opts: InputOptions = {}): Promise<Uint8Array<ArrayBuffer>> {
  let f: Awaited<ReturnType<typeof open>>;
  try {
    f = await open(path, FLAGS);
  } catch (e) {
    throw fsError('read', path, e);
  }
  try {
    const st = await f.stat();
    const bad = refuse(path, st, opts);
    if (bad) throw bad;
    const out = new Uint8Array(st.size);
    let at = 0;
    while (at < out.length) {
      const { bytesRead } = await f.read(out, at, out.length - at, null);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === out.length ? out : out.subarray(0, at);
  } catch (e) {
    throw (e as Error).message?.startsWith('piplay: ') ? e : fsError('read', path, e);
  } finally {
    await f.close();
  }
}

/** The JSON of an input file (readInputFile); a file that is not JSON (cut short, say) is named with the problem. */
export function readInputJson(path: string, opts: InputOptions = {}): unknown {
  const text = new TextDecoder().decode(readInputFile(path, opts));
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(
      `piplay: ${path} is not valid JSON (${(e as Error).message})` +
        (text.trim() === '' ? ': it is empty' : ': it may have been cut short by a full disk or a kill'),
    );
  }
}
