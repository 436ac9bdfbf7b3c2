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
  mkdirSync,
  renameSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { readInputFile } from '../node/input-file.ts';

export function hfCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const home = env['HF_HOME'] || join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'huggingface');
  return resolve(env['HF_HUB_CACHE'] || env['HUGGINGFACE_HUB_CACHE'] || join(home, 'hub'));
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
    mkdirSync(dirname(p), { recursive: true });
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
    mkdirSync(dirname(at), { recursive: true });
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
