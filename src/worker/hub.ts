// Hugging Face model ids in the worker: a friendly check of the id's form, the download plan (sizes from the
// hub's file listing and what the browser cache holds, before anything large is downloaded), and the files
// themselves through src/hub/hub.ts (resumable downloads into Cache Storage, so a reload loads offline).
import type { ReadFile } from '../model/files.ts';
import { checkSpace, filesFromHub, HubError, hubDownloadPlan, type HubPlan, type HubRepo } from '../hub/hub.ts';

export { HubError, DEFAULT_HUB } from '../hub/hub.ts';

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

/**
 * What loading the repository downloads (sizes, cached or not); HubError for a wrong id, missing files, or a
 * download larger than the browser lets this site store.
 */
export async function hubPlan(repo: HubRepo): Promise<HubPlan> {
  const r = { ...repo, id: repo.id.trim() };
  const plan = await hubDownloadPlan(r);
  checkSpace(
    r,
    plan,
    await storageLeft(),
    "this browser's storage for the page",
    'free some space, or pick a smaller model',
  );
  return plan;
}

/** Bytes the browser still lets this site store (undefined where it does not say). */
async function storageLeft(): Promise<number | undefined> {
  try {
    const e = await navigator.storage?.estimate?.();
    return e?.quota !== undefined ? Math.max(0, e.quota - (e.usage ?? 0)) : undefined;
  } catch {
    return undefined;
  }
}

/** A ReadFile over a hub repository with progress (src/hub/hub.ts). */
export function hubReadFile(repo: HubRepo, onProgress?: (p: DownloadProgress) => void): ReadFile {
  const problem = hubIdProblem(repo.id);
  if (problem) throw new HubError(problem, 'bad-id');
  return filesFromHub(
    { ...repo, id: repo.id.trim() },
    {
      onProgress: (p) =>
        onProgress?.({ file: p.file, loaded: p.loaded, total: p.total || p.loaded, fromCache: p.cached }),
    },
  );
}
