// Model files from the Hugging Face hub, addressed and cached the way @huggingface/transformers does it:
// its `env.remoteHost` / `env.remotePathTemplate` build the URL and, in a browser, its Cache Storage
// (`env.cacheKey`) keeps the files, so a model downloaded once (by piplay or any transformers.js app on the
// same origin) loads offline afterwards. Downloads report progress per file.
import { env } from '@huggingface/transformers';
import { MissingFileError, type ReadFile } from './files.ts';

export interface HubProgress {
  file: string;
  loaded: number;
  /** Bytes expected (0 when the server does not say). */
  total: number;
  cached: boolean;
}

export interface HubOptions {
  revision?: string;
  onProgress?: (p: HubProgress) => void;
  /** Injected for tests; defaults to the global fetch. */
  fetchFn?: typeof fetch;
  /** Injected for tests; defaults to the browser's Cache Storage when present and enabled. */
  cache?: Pick<Cache, 'match' | 'put'> | null;
}

const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function hubUrl(modelId: string, file: string, revision = 'main'): string {
  const path = env.remotePathTemplate
    .replaceAll('{model}', modelId)
    .replaceAll('{revision}', encodeURIComponent(revision));
  const host = env.remoteHost.endsWith('/') ? env.remoteHost : `${env.remoteHost}/`;
  return host + path + file.split('/').map(encodeURIComponent).join('/');
}

async function openCache(): Promise<Pick<Cache, 'match' | 'put'> | null> {
  if (!env.useBrowserCache || typeof caches === 'undefined') return null;
  try {
    return await caches.open(env.cacheKey);
  } catch {
    return null; // e.g. an opaque origin
  }
}

/** A ReadFile over a hub repository such as "HuggingFaceTB/SmolLM2-135M-Instruct". */
export function filesFromHub(modelId: string, opts: HubOptions = {}): ReadFile {
  if (!REPO_ID.test(modelId)) {
    throw new Error(`'${modelId}' is not a Hugging Face model id: use the form owner/name, e.g. Qwen/Qwen3-0.6B`);
  }
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const cachePromise = opts.cache !== undefined ? Promise.resolve(opts.cache) : openCache();
  return async (file) => {
    const url = hubUrl(modelId, file, opts.revision);
    const cache = await cachePromise;
    const hit = await cache?.match(url);
    if (hit) {
      const bytes = new Uint8Array(await hit.arrayBuffer());
      opts.onProgress?.({ file, loaded: bytes.length, total: bytes.length, cached: true });
      return bytes;
    }
    let res: Response;
    try {
      res = await fetchFn(url);
    } catch (e) {
      throw new Error(
        `could not download ${file} of ${modelId} (${(e as Error).message}); check the network connection`,
      );
    }
    if (res.status === 404) {
      // A missing model and a missing file both answer 404; tell them apart by what was asked for.
      if (file === 'config.json') {
        throw new Error(
          `the Hugging Face model '${modelId}' was not found (no config.json): check the id's spelling and owner`,
        );
      }
      throw new MissingFileError(file, `hub model ${modelId}`);
    }
    if (res.status === 401 || res.status === 403) {
      throw new Error(
        `the Hugging Face model '${modelId}' is gated or private (HTTP ${res.status}): piplay can only download public models`,
      );
    }
    if (!res.ok) throw new Error(`downloading ${file} of ${modelId} failed: HTTP ${res.status} ${res.statusText}`);
    const total = Number(res.headers.get('content-length') ?? 0);
    const bytes = await readWithProgress(res, (loaded) => opts.onProgress?.({ file, loaded, total, cached: false }));
    if (cache) {
      try {
        await cache.put(
          url,
          new Response(bytes.slice().buffer, { headers: { 'content-length': String(bytes.length) } }),
        );
      } catch {
        // A full quota only costs the cache, not the download.
      }
    }
    return bytes;
  };
}

async function readWithProgress(res: Response, onChunk: (loaded: number) => void): Promise<Uint8Array> {
  if (!res.body) {
    const b = new Uint8Array(await res.arrayBuffer());
    onChunk(b.length);
    return b;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onChunk(loaded);
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
