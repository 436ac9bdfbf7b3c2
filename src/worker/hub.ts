// Hugging Face model ids in the worker: a friendly check of the id's form, the download size and cache state
// of a repository's files (transformers.js' `ModelRegistry.get_file_metadata`, before anything is
// downloaded), and the files themselves through src/model/hub.ts (transformers.js' URL scheme and its
// browser Cache Storage, so a model downloaded once loads offline afterwards).
import type { ReadFile } from '../model/files.ts';

type Transformers = typeof import('@huggingface/transformers');
let lib: Promise<Transformers> | null = null;
async function transformers(): Promise<Transformers> {
  lib ??= import('@huggingface/transformers').then((t) => {
    // Never look for hub ids on our own server (its /models/ holds the embedded default, not hub mirrors).
    t.env.allowLocalModels = false;
    t.env.allowRemoteModels = true;
    return t;
  });
  return lib;
}

/** owner/name as the hub spells repository ids. */
const HUB_ID = /^[\w.-]{1,96}\/[\w.-]{1,96}$/;

/** Why `id` cannot be a hub model id, or null when it can. */
export function hubIdProblem(id: string): string | null {
  const s = id.trim();
  if (!s) return 'Enter a Hugging Face model id such as HuggingFaceTB/SmolLM2-135M-Instruct.';
  if (/^https?:\/\//.test(s))
    return `Give the model id (owner/name), not a URL: e.g. ${s
      .replace(/^https?:\/\/[^/]+\//, '')
      .split('/')
      .slice(0, 2)
      .join('/')}`;
  if (!HUB_ID.test(s) || s.includes('..') || s.includes('--') || s.endsWith('.git')) {
    return `'${s}' is not a Hugging Face model id; it has the form owner/name, e.g. Qwen/Qwen2.5-0.5B-Instruct.`;
  }
  return null;
}

export interface DownloadProgress {
  file: string;
  loaded: number;
  total: number;
  fromCache: boolean;
}

export interface HubOptions {
  revision?: string;
  onProgress?: (p: DownloadProgress) => void;
}

export class HubError extends Error {
  override name = 'HubError';
}

const notServed = (id: string) =>
  `Hugging Face does not serve '${id}': the model id may be misspelt, or the model is private or gated (piplay downloads public models only).`;

/** Size of a hub file and whether it is already cached (null when it does not exist). */
export async function hubFileInfo(
  id: string,
  file: string,
  opts: HubOptions = {},
): Promise<{ size?: number; fromCache: boolean } | null> {
  const { ModelRegistry } = await transformers();
  try {
    const m = await ModelRegistry.get_file_metadata(id, file, { revision: opts.revision });
    return m.exists ? { size: m.size, fromCache: m.fromCache ?? false } : null;
  } catch (e) {
    const msg = (e as Error).message;
    if (/401|403/.test(msg)) throw new HubError(notServed(id));
    if (/404|not found/i.test(msg)) return null;
    throw new HubError(`could not reach Hugging Face for '${id}': ${msg}`);
  }
}

/**
 * A ReadFile over a hub repository (src/model/hub.ts: transformers.js URLs and Cache Storage), with
 * progress. transformers.js is loaded on first use, so the worker starts without it.
 */
export function hubReadFile(id: string, opts: HubOptions = {}): ReadFile {
  const problem = hubIdProblem(id);
  if (problem) throw new HubError(problem);
  let read: Promise<ReadFile> | null = null;
  return async (name) => {
    read ??= transformers().then(() =>
      import('../model/hub.ts').then(({ filesFromHub }) =>
        filesFromHub(id, {
          revision: opts.revision,
          onProgress: (p) =>
            opts.onProgress?.({ file: p.file, loaded: p.loaded, total: p.total || p.loaded, fromCache: p.cached }),
        }),
      ),
    );
    return (await read)(name);
  };
}
