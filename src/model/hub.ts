// Model files from the Hugging Face hub (or a server with its URL layout: the hub address is a setting).
// Files are at {endpoint}/{id}/resolve/{revision}/{file}; the repository's file list with sizes at
// {endpoint}/api/models/{id}?blobs=true, so the download size is known before anything large is fetched.
// Downloads resume after a dropped connection (src/model/resumable-fetch.ts) and land in the browser's Cache
// Storage under the file's URL (the cache transformers.js uses), so a reload loads them without a download.
import { MissingFileError, type ReadFile } from './files.ts';
import { cachePartials, memoryPartials, type PartialStore } from './partials.ts';
import { DownloadInterruptedError, fetchResumable, HttpStatusError } from './resumable-fetch.ts';

export const DEFAULT_HUB = 'https://huggingface.co';
/** Cache Storage name shared with transformers.js (its `env.cacheKey`), keyed by the same URLs. */
export const HUB_CACHE = 'transformers-cache';

export interface HubRepo {
  /** owner/name, e.g. "Qwen/Qwen3-0.6B". */
  id: string;
  revision?: string;
  /** The hub's address (DEFAULT_HUB when absent). */
  endpoint?: string;
}

export interface HubProgress {
  file: string;
  loaded: number;
  /** Bytes expected (0 when neither the listing nor the server says). */
  total: number;
  cached: boolean;
}

export type HubCache = Pick<Cache, 'match' | 'put'>;

export interface HubOptions {
  onProgress?: (p: HubProgress) => void;
  /** Injected for tests; defaults to the global fetch. */
  fetchFn?: typeof fetch;
  /** Injected for tests; defaults to the browser's Cache Storage when present (null: no cache). */
  cache?: HubCache | null;
  /** Wait before retrying a dropped download, in ms. */
  retryDelayMs?: number;
  /**
   * Where the bytes of an unfinished download are kept for a Range resume; defaults to the browser's Cache
   * Storage when it is the cache (so a reload continues a download), else memory.
   */
  partials?: PartialStore;
  /** A kept partial download was dropped, since the hub's file is not the one it came from; it starts again. */
  onRestart?: (file: string, reason: string) => void;
}

/** bad-id: no such model or not public; missing: a file the model needs is not there; network: anything else. */
export type HubErrorKind = 'bad-id' | 'missing' | 'network';

export class HubError extends Error {
  override name = 'HubError';
  constructor(
    message: string,
    readonly kind: HubErrorKind,
  ) {
    super(message);
  }
}

const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The hub address without a trailing slash; an address that is not an http(s) URL is refused by name. */
export function hubEndpoint(endpoint?: string): string {
  const e = (endpoint ?? '').trim() || DEFAULT_HUB;
  let u: URL;
  try {
    u = new URL(e);
  } catch {
    u = new URL('about:blank');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new HubError(`the hub address '${e}' is not an http(s) URL; leave it empty for ${DEFAULT_HUB}`, 'network');
  }
  return e.replace(/\/+$/, '');
}

const encodePath = (file: string) => file.split('/').map(encodeURIComponent).join('/');

export function hubUrl(repo: HubRepo, file: string): string {
  const rev = encodeURIComponent(repo.revision ?? 'main');
  return `${hubEndpoint(repo.endpoint)}/${repo.id}/resolve/${rev}/${encodePath(file)}`;
}

/** The repository's metadata with every file and its size. */
export function hubApiUrl(repo: HubRepo): string {
  const rev = repo.revision && repo.revision !== 'main' ? `/revision/${encodeURIComponent(repo.revision)}` : '';
  return `${hubEndpoint(repo.endpoint)}/api/models/${repo.id}${rev}?blobs=true`;
}

async function openCache(): Promise<Cache | null> {
  if (typeof caches === 'undefined') return null;
  try {
    return await caches.open(HUB_CACHE);
  } catch {
    return null; // e.g. an opaque origin
  }
}

function checkId(id: string): void {
  if (!REPO_ID.test(id)) {
    throw new HubError(
      `'${id}' is not a Hugging Face model id: use the form owner/name, e.g. Qwen/Qwen3-0.6B`,
      'bad-id',
    );
  }
}

const notServed = (repo: HubRepo, status: number) =>
  `'${repo.id}' is not served by ${hubEndpoint(repo.endpoint)} (HTTP ${status}): the model id may be misspelt, ` +
  'or the model is private or gated (piplay downloads public models only); check the owner and name';
const unreachable = (repo: HubRepo, why: string) =>
  `could not reach ${hubEndpoint(repo.endpoint)} for '${repo.id}' (${why}): check the network connection ` +
  '(or the hub address setting) and try again';

/** Every file of the repository with its size in bytes (undefined where the listing gives none). */
export type HubListing = Map<string, number | undefined>;

/**
 * The repository's file list (with sizes) from the hub's API. A listing fetched before is kept in the cache and
 * used when the hub cannot be reached.
 */
export async function listHubFiles(
  repo: HubRepo,
  opts: Pick<HubOptions, 'fetchFn' | 'cache'> = {},
): Promise<HubListing> {
  checkId(repo.id);
  const url = hubApiUrl(repo);
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const cache = opts.cache !== undefined ? opts.cache : await openCache();
  let res: Response;
  try {
    res = await fetchFn(url);
  } catch (e) {
    const kept = await cache?.match(url);
    if (kept) return parseListing(repo, await kept.text());
    throw new HubError(unreachable(repo, (e as Error).message), 'network');
  }
  if (res.status === 404) {
    throw new HubError(
      `the Hugging Face model '${repo.id}' was not found at ${hubEndpoint(repo.endpoint)}${
        repo.revision && repo.revision !== 'main' ? ` (revision ${repo.revision})` : ''
      }: check the id's owner and name, e.g. HuggingFaceTB/SmolLM2-135M-Instruct`,
      'bad-id',
    );
  }
  if (res.status === 401 || res.status === 403) throw new HubError(notServed(repo, res.status), 'bad-id');
  if (!res.ok) throw new HubError(unreachable(repo, `HTTP ${res.status} ${res.statusText}`.trim()), 'network');
  const text = await res.text();
  const listing = parseListing(repo, text);
  try {
    await cache?.put(url, new Response(text, { headers: { 'content-type': 'application/json' } }));
  } catch {
    // A full quota only costs the offline copy of the listing.
  }
  return listing;
}

function parseListing(repo: HubRepo, text: string): HubListing {
  let siblings: unknown;
  try {
    siblings = (JSON.parse(text) as { siblings?: unknown }).siblings;
  } catch {
    siblings = undefined;
  }
  if (!Array.isArray(siblings)) {
    throw new HubError(
      `${hubEndpoint(repo.endpoint)} answered for '${repo.id}' without a file list (no "siblings"): ` +
        'is the hub address a Hugging Face hub?',
      'network',
    );
  }
  const files: HubListing = new Map();
  for (const s of siblings as { rfilename?: unknown; size?: unknown; lfs?: { size?: unknown } }[]) {
    if (typeof s?.rfilename !== 'string') continue;
    const size = typeof s.lfs?.size === 'number' ? s.lfs.size : typeof s.size === 'number' ? s.size : undefined;
    files.set(s.rfilename, size);
  }
  return files;
}

/** Bytes of downloads that broke off, by URL, without a browser cache: pressing Start again continues them. */
const inMemory = memoryPartials();

/** A ReadFile over a hub repository: the cache first, then the hub (a file not in its listing is missing). */
export function filesFromHub(repo: HubRepo, opts: HubOptions = {}): ReadFile {
  checkId(repo.id);
  hubEndpoint(repo.endpoint);
  const where = `Hugging Face model '${repo.id}'`;
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const stores: Promise<{ cache: HubCache | null; partials: PartialStore }> =
    opts.cache !== undefined
      ? Promise.resolve({ cache: opts.cache, partials: opts.partials ?? inMemory })
      : openCache().then((c) => ({ cache: c, partials: opts.partials ?? (c ? cachePartials(c) : inMemory) }));
  const cachePromise = stores.then((s) => s.cache);
  let listing: Promise<HubListing> | null = null;
  const list = async () => {
    listing ??= cachePromise.then((cache) => listHubFiles(repo, { fetchFn, cache }));
    return listing.catch((e: unknown) => {
      listing = null; // a failed listing is asked for again next time
      throw e;
    });
  };
  return async (file) => {
    const url = hubUrl(repo, file);
    const { cache, partials } = await stores;
    const hit = await cache?.match(url);
    if (hit) {
      const bytes = new Uint8Array(await hit.arrayBuffer());
      opts.onProgress?.({ file, loaded: bytes.length, total: bytes.length, cached: true });
      return bytes;
    }
    const files = await list();
    if (!files.has(file)) throw new MissingFileError(file, where);
    const size = files.get(file) ?? 0;
    let partial = await partials.load(url);
    const version = partial ? ((await partials.version?.(url)) ?? undefined) : undefined;
    // The listing tells a changed length before anything is asked for; the answer's ETag, after.
    const stale = partial && size && (partial.length > size || (version?.total && version.total !== size));
    if (stale) {
      const was = version?.total ? `came from a file of ${version.total}` : `holds ${partial!.length}`;
      opts.onRestart?.(file, `the hub lists ${size} bytes; the kept part ${was}`);
      await partials.clear(url);
      partial = null;
    }
    let bytes: Uint8Array;
    try {
      bytes = await fetchResumable(url, {
        fetchFn,
        partial: partial ?? undefined,
        partialVersion: version,
        retryDelayMs: opts.retryDelayMs,
        onVersion: (v) => partials.begin?.(url, v),
        onRestart: (reason) => opts.onRestart?.(file, reason),
        onBytes: (chunk, offset) => partials.append(url, offset, chunk),
        onProgress: (loaded, total) => opts.onProgress?.({ file, loaded, total: total || size, cached: false }),
      });
    } catch (e) {
      await partials.flush(url);
      throw downloadError(repo, file, e);
    }
    if (size && bytes.length !== size) {
      await partials.clear(url);
      throw new HubError(
        `${file} of '${repo.id}' arrived with ${bytes.length} bytes, but the hub lists ${size}: try again`,
        'network',
      );
    }
    let stored = !cache;
    if (cache) {
      try {
        await cache.put(
          url,
          new Response(bytes.slice().buffer, { headers: { 'content-length': String(bytes.length) } }),
        );
        stored = true;
      } catch {
        // A full quota only costs the cache, not the download.
      }
    }
    // Only once the file is in the cache: a process killed before, or a cache that could not take the file,
    // keeps the part to finish from.
    if (stored) await partials.clear(url);
    return bytes;
  };
}

function downloadError(repo: HubRepo, file: string, e: unknown): Error {
  if (e instanceof HttpStatusError) {
    if (e.status === 404) return new MissingFileError(file, `Hugging Face model '${repo.id}'`);
    if (e.status === 401 || e.status === 403) return new HubError(notServed(repo, e.status), 'bad-id');
    return new HubError(`downloading ${file} of '${repo.id}' failed: ${e.message}; try again later`, 'network');
  }
  if (e instanceof DownloadInterruptedError) {
    const got = `${e.partial.length}${e.total ? ` of ${e.total}` : ''} bytes`;
    return new HubError(
      `the download of ${file} of '${repo.id}' from ${hubEndpoint(repo.endpoint)} broke off at ${got} ` +
        `(${e.reason}): check the network connection and try again (Start in the page, the same command on the command line); the download continues where it stopped`,
      'network',
    );
  }
  return e as Error;
}

/** A file's size from a HEAD request (the hub's X-Linked-Size for large files, else Content-Length); 0 if unknown. */
async function headSize(url: string, fetchFn: typeof fetch): Promise<number> {
  try {
    const res = await fetchFn(url, { method: 'HEAD' });
    if (!res.ok) return 0;
    return Number(res.headers.get('x-linked-size') ?? res.headers.get('content-length') ?? 0) || 0;
  } catch {
    return 0;
  }
}

export interface HubPlanFile {
  name: string;
  /** Bytes (0 when unknown). */
  size: number;
  cached: boolean;
}

export interface HubPlan {
  files: HubPlanFile[];
  /** Bytes of all the files the model needs, and of those not cached yet. */
  bytes: number;
  toDownload: number;
}

/**
 * What loading the model will download, before any large file is fetched: config, weights (one file or the
 * shards its index names), tokenizer files and the optional generation config and chat template, each with its
 * size from the listing and whether the cache holds it. Missing required files are refused by name.
 */
export async function hubDownloadPlan(
  repo: HubRepo,
  opts: Pick<HubOptions, 'fetchFn' | 'cache'> = {},
): Promise<HubPlan> {
  const cache = opts.cache !== undefined ? opts.cache : await openCache();
  const listing = await listHubFiles(repo, { fetchFn: opts.fetchFn, cache });
  const lacks = (what: string) =>
    new HubError(`Hugging Face model '${repo.id}' has no ${what}; piplay needs ${what} from the repository`, 'missing');
  const names = ['config.json'];
  if (!listing.has('config.json')) throw lacks('config.json');
  if (listing.has('model.safetensors')) names.push('model.safetensors');
  else if (listing.has('model.safetensors.index.json')) {
    names.push('model.safetensors.index.json');
    const read = filesFromHub(repo, { fetchFn: opts.fetchFn, cache });
    const index = JSON.parse(new TextDecoder().decode(await read('model.safetensors.index.json'))) as {
      weight_map?: Record<string, string>;
    };
    names.push(...new Set(Object.values(index.weight_map ?? {})));
  } else throw lacks('safetensors weights (model.safetensors or model.safetensors.index.json)');
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
    if (!listing.has(f)) throw lacks(f);
    names.push(f);
  }
  names.push(...['generation_config.json', 'chat_template.jinja'].filter((f) => listing.has(f)));
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const files = await Promise.all(
    names.map(async (name) => ({
      name,
      size: listing.get(name) ?? (await headSize(hubUrl(repo, name), fetchFn)),
      cached: (await cache?.match(hubUrl(repo, name))) !== undefined,
    })),
  );
  const sum = (fs: HubPlanFile[]) => fs.reduce((s, f) => s + f.size, 0);
  return { files, bytes: sum(files), toDownload: sum(files.filter((f) => !f.cached)) };
}
