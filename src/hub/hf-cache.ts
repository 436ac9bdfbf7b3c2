// The Hugging Face cache on disk, as the hub's own tools (Python's huggingface_hub, the JS @huggingface/hub) lay it
// out, so a model downloaded by any of them is found by the others:
//   <root>/models--<owner>--<name>/blobs/<sha256 or git blob id>   each file's bytes, named by their hash;
//                                  snapshots/<commit>/<file>        a relative symlink to its blob;
//                                  refs/<revision>                  the commit a branch or tag last resolved to.
// <root> is $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub (the order of huggingface_hub's constants.py).
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  renameSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { readInputFile } from '../node/input-file.ts';
import { makeFolder } from '../node/make-folder.ts';

/** $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. */
function hfHome(env: NodeJS.ProcessEnv): string {
  return env['HF_HOME'] || join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'huggingface');
}

export function hfCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env['HF_HUB_CACHE'] || env['HUGGINGFACE_HUB_CACHE'] || join(hfHome(env), 'hub'));
}

/**
 * The hub token as huggingface_hub finds it: $HF_TOKEN (or the older $HUGGING_FACE_HUB_TOKEN), else the file `hf auth
 * login` saves ($HF_TOKEN_PATH, else $HF_HOME/token). Undefined when there is none. A token holding a space, a line
 * break or another character a token has not is refused, naming where it came from and never showing it (it would
 * otherwise go into a request header, and the network layer's error would print it).
 */
export function hfToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  let token: string | undefined;
  let from: string;
  if (env['HF_TOKEN'] || env['HUGGING_FACE_HUB_TOKEN']) {
    from = env['HF_TOKEN'] ? '$HF_TOKEN' : '$HUGGING_FACE_HUB_TOKEN';
    token = env['HF_TOKEN'] || env['HUGGING_FACE_HUB_TOKEN'];
  } else {
    const path = env['HF_TOKEN_PATH'] || join(hfHome(env), 'token');
    if (!existsSync(path)) return undefined;
    from = path;
    // The file holds the token and perhaps a line end, as `hf auth login` writes it.
    token = new TextDecoder().decode(readInputFile(path, { maxBytes: 4096, what: 'a token file' })).trim();
    if (!token) return undefined;
  }
  if (!/^[\x21-\x7e]+$/.test(token!))
    throw new Error(
      `piplay: the Hugging Face token in ${from} holds a space, a line break or another character a token has ` +
        `not (the token is not shown here); set it again without them${from.startsWith('$') ? '' : ' (hf auth login)'}`,
    );
  return token;
}

/** A timeout setting in seconds ($HF_HUB_DOWNLOAD_TIMEOUT, $HF_HUB_ETAG_TIMEOUT) in ms, or `fallbackMs`. */
export function hfTimeoutMs(env: NodeJS.ProcessEnv, name: string, fallbackMs: number): number {
  const text = env[name]?.trim();
  if (!text) return fallbackMs;
  const s = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(s > 0 && s <= 86_400))
    throw new Error(
      `piplay: $${name} is '${text}'; give a number of seconds above 0 (huggingface_hub's default is 10)`,
    );
  return s * 1000;
}

/** $HF_HUB_OFFLINE as huggingface_hub reads it: 1, ON, YES or TRUE in any case. */
export function hfOffline(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'on', 'yes', 'true'].includes((env['HF_HUB_OFFLINE'] ?? '').trim().toLowerCase());
}

export const isCommit = (revision: string) => /^[0-9a-f]{40}$/.test(revision);

/** One model repository's folder in the cache, every path of it checked to stay inside. */
export class RepoCache {
  readonly dir: string;

  constructor(
    readonly root: string,
    readonly id: string,
  ) {
    this.dir = join(root, `models--${id.replace('/', '--')}`);
  }

  /** `parts` joined under the repository folder; a path that would leave it is refused. */
  private inside(...parts: string[]): string {
    const p = resolve(this.dir, ...parts);
    if (!p.startsWith(this.dir + sep)) throw new Error(`${join(...parts)} would lie outside ${this.dir}`);
    return p;
  }

  blob(name: string): string {
    return this.inside('blobs', name);
  }

  snapshot(commit: string, file = ''): string {
    return this.inside('snapshots', commit, ...(file ? [file] : []));
  }

  /** The commit `revision` stands for: itself when it is one, else what refs/<revision> holds (null: none). */
  commitOf(revision: string): string | null {
    if (isCommit(revision)) return revision;
    try {
      const c = new TextDecoder().decode(readInputFile(this.inside('refs', revision), { maxBytes: 4096 })).trim();
      return isCommit(c) ? c : null;
    } catch {
      return null;
    }
  }

  /** Records that `revision` resolved to `commit` (written whole, then renamed). */
  setRef(revision: string, commit: string): void {
    if (isCommit(revision)) return;
    const p = this.inside('refs', revision);
    makeFolder(dirname(p));
    writeFileSync(`${p}.tmp`, commit);
    renameSync(`${p}.tmp`, p);
  }

  /** Whether the snapshot holds `file` whole (a link to a blob that is there, or a plain file). */
  has(commit: string, file: string): boolean {
    return existsSync(this.snapshot(commit, file));
  }

  /**
   * Points snapshots/<commit>/<file> at blobs/<blob>: a relative symlink as huggingface_hub makes, else (a file
   * system without symlinks) a hard link, else a copy.
   */
  link(commit: string, file: string, blob: string): void {
    const at = this.snapshot(commit, file);
    const target = this.blob(blob);
    makeFolder(dirname(at));
    try {
      if (lstatSync(at)) rmSync(at); // a dangling or stale link of ours; snapshots hold nothing else
    } catch {}
    try {
      symlinkSync(relative(dirname(at), target), at);
    } catch {
      try {
        linkSync(target, at);
      } catch {
        copyFileSync(target, at);
      }
    }
  }
}

/** Bytes free for an unprivileged writer on the disk that holds `path` (or its nearest existing parent). */
export function freeBytes(path: string): number | undefined {
  let p = resolve(path);
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  try {
    const s = statfsSync(p);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}
