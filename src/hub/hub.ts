// Model files from the Hugging Face hub (or a server with its URL layout: the hub address is a setting).
// Files are at {endpoint}/{id}/resolve/{revision}/{file}; the repository's file list with sizes at
// {endpoint}/api/models/{id}?blobs=true, so the download size is known before anything large is fetched.
// Downloads resume after a dropped connection (src/hub/resumable-fetch.ts) and land in the browser's Cache
// Storage under the file's URL (the cache transformers.js uses), so a reload loads them without a download; the
// command line keeps them in the Hugging Face cache folder instead (src/hub/hub-folder.ts). Nothing the hub says
// is taken on trust: every name is checked before it is asked for, a body is cut at the listed size, and a file is
// kept only when its size and its hash (sha256 for LFS files, the git blob id for the others) match the listing.
import { BodyTooLargeError, MissingFileError, modelFileCap, type ReadFile } from '../model/files.ts';
import { cachePartials, memoryPartials, type PartialStore } from './partials.ts';
import {
  DownloadInterruptedError,
  fetchResumable,
  fetchSmall,
  HttpStatusError,
  type SmallAnswer,
  TimeoutError,
} from './resumable-fetch.ts';

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
  /** The repository's listing, when it was fetched already. */
  listing?: HubListing;
  /** How long the hub may take (DEFAULT_HUB_TIMEOUTS when absent). */
  timeouts?: HubTimeouts;
}

/**
 * How long the hub may take, in ms, with the names huggingface_hub gives them: a listing (metadata) must arrive whole
 * within `metadataMs` ($HF_HUB_ETAG_TIMEOUT); a download must answer within `downloadMs` ($HF_HUB_DOWNLOAD_TIMEOUT)
 * and bring at least MIN_WINDOW_BYTES per window of that length.
 */
export interface HubTimeouts {
  metadataMs: number;
  downloadMs: number;
}

/** huggingface_hub's defaults: 10 s each. */
export const DEFAULT_HUB_TIMEOUTS: HubTimeouts = { metadataMs: 10_000, downloadMs: 10_000 };

/** The most bytes a listing may have (a repository of a hundred thousand files lists in a few MB). */
export const MAX_LISTING_BYTES = 64 * 2 ** 20;

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

/** A failed request in words: what the network layer says, with a redirect loop and a timeout named as such. */
export function networkProblem(repo: HubRepo, e: unknown): string {
  const where = `${hubEndpoint(repo.endpoint)} for '${repo.id}'`;
  const cause = (e as { cause?: { message?: string; code?: string } } | null)?.cause;
  const text = `${(e as Error)?.message ?? String(e)} ${cause?.message ?? ''}`;
  if (/redirect count exceeded/i.test(text))
    return (
      `${where} redirects in a loop (more than 20 redirects, never an answer): the hub address ($HF_ENDPOINT, or ` +
      'the hub address setting) is not a Hugging Face hub or is misconfigured; fix it, or leave it empty'
    );
  if (e instanceof TimeoutError)
    return (
      `${where}: ${e.message}: the hub is down or overloaded, or the connection too slow; try again later, or raise ` +
      'the timeout'
    );
  if (e instanceof BodyTooLargeError)
    return `${where}: ${e.message}, so it was not read further: is the hub address a Hugging Face hub?`;
  return unreachable(repo, cause?.message ? `${cause.code ? `${cause.code}: ` : ''}${cause.message}` : text.trim());
}

/** What the listing says of one file: its size and hash, where it gives them. */
export interface HubFileInfo {
  size?: number;
  /** The content's sha256 (LFS files). */
  sha256?: string;
  /** The git blob id, sha1 of "blob <size>\0" and the content (files not in LFS). */
  gitOid?: string;
}

/** The repository's files at one commit (`commit`: the listing's `sha`, absent from a server that gives none). */
export interface HubListing {
  commit?: string;
  files: Map<string, HubFileInfo>;
}

/**
 * The repository's file list (with sizes and hashes) from the hub's API. A listing fetched before is kept in the
 * cache and used when the hub cannot be reached.
 */
export async function listHubFiles(
  repo: HubRepo,
  opts: Pick<HubOptions, 'fetchFn' | 'cache' | 'retryDelayMs' | 'timeouts'> = {},
): Promise<HubListing> {
  checkId(repo.id);
  checkRevision(repo);
  const url = hubApiUrl(repo);
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const cache = opts.cache !== undefined ? opts.cache : await openCache();
  const deadlineMs = (opts.timeouts ?? DEFAULT_HUB_TIMEOUTS).metadataMs;
  let res: SmallAnswer;
  try {
    res = await askAgain(
      () => fetchSmall(fetchFn, url, { deadlineMs, setting: 'HF_HUB_ETAG_TIMEOUT', cap: MAX_LISTING_BYTES }),
      opts.retryDelayMs ?? 500,
    );
  } catch (e) {
    const kept = await cache?.match(url);
    if (kept) return parseListing(repo, await kept.text());
    throw new HubError(networkProblem(repo, e), 'network');
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
  const text = res.text;
  const listing = parseListing(repo, text);
  try {
    await cache?.put(url, new Response(text, { headers: { 'content-type': 'application/json' } }));
  } catch {
    // A full quota only costs the offline copy of the listing.
  }
  return listing;
}

/** Requests of a small answer (the listing) before giving up on a dropped connection or a 5xx. */
const ASKS = 4;

/**
 * `ask()` again after a thrown error or a 5xx/429 answer, waiting `delayMs`, doubled each time. An answer past its cap
 * is not asked again (it would be the same).
 */
async function askAgain<T extends { status: number }>(ask: () => Promise<T>, delayMs: number): Promise<T> {
  for (let i = 1; ; i++, delayMs *= 2) {
    try {
      const res = await ask();
      if (i >= ASKS || !(res.status >= 500 || res.status === 429)) return res;
    } catch (e) {
      if (i >= ASKS || e instanceof BodyTooLargeError) throw e;
    }
    await new Promise((r) => setTimeout(r, delayMs));
  }
}

const HEX40 = /^[0-9a-f]{40}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const size = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

function parseListing(repo: HubRepo, text: string): HubListing {
  let body: { siblings?: unknown; sha?: unknown } | null;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = null;
  }
  if (!Array.isArray(body?.siblings)) {
    throw new HubError(
      `${hubEndpoint(repo.endpoint)} answered for '${repo.id}' without a file list (no "siblings"): ` +
        'is the hub address a Hugging Face hub?',
      'network',
    );
  }
  const files = new Map<string, HubFileInfo>();
  type Sibling = { rfilename?: unknown; size?: unknown; blobId?: unknown; lfs?: { size?: unknown; sha256?: unknown } };
  for (const s of body.siblings as Sibling[]) {
    if (typeof s?.rfilename !== 'string') continue;
    const lfs = s.lfs && typeof s.lfs === 'object' ? s.lfs : undefined;
    const info: HubFileInfo = {};
    const n = size(lfs?.size) ?? size(s.size);
    if (n !== undefined) info.size = n;
    if (typeof lfs?.sha256 === 'string' && HEX64.test(lfs.sha256)) info.sha256 = lfs.sha256;
    else if (!lfs && typeof s.blobId === 'string' && HEX40.test(s.blobId)) info.gitOid = s.blobId;
    files.set(s.rfilename, info);
  }
  const commit = typeof body.sha === 'string' && HEX40.test(body.sha) ? body.sha : undefined;
  return { ...(commit ? { commit } : {}), files };
}

/** The name a file's bytes are kept under in the Hugging Face cache (its hash), or undefined without one. */
export const blobName = (info: HubFileInfo | undefined) => info?.sha256 ?? info?.gitOid;

const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');

/** Why `bytes` are not the file the listing describes (its size, then its hash), or null when they are. */
export async function contentMismatch(bytes: Uint8Array, info: HubFileInfo): Promise<string | null> {
  if (info.size !== undefined && bytes.length !== info.size) {
    return `arrived with ${bytes.length} bytes, but the hub lists ${info.size}`;
  }
  const view = bytes as Uint8Array<ArrayBuffer>;
  if (info.sha256) {
    const got = hex(await crypto.subtle.digest('SHA-256', view));
    if (got !== info.sha256) return `has sha256 ${got}, but the hub lists ${info.sha256}`;
  } else if (info.gitOid) {
    const head = new TextEncoder().encode(`blob ${bytes.length}\0`);
    const all = new Uint8Array(head.length + bytes.length);
    all.set(head);
    all.set(bytes, head.length);
    const got = hex(await crypto.subtle.digest('SHA-1', all));
    if (got !== info.gitOid) return `has git blob id ${got}, but the hub lists ${info.gitOid}`;
  }
  return null;
}

/**
 * Why `name` (from the listing or a model's index) is not a plain relative file name inside the repository, or
 * null when it is: no empty, "." or ".." parts, no absolute or drive path, no backslash or control character.
 */
export function fileNameProblem(name: string): string | null {
  if (!name || name.length > 1024) return 'it is empty or longer than 1024 characters';
  if (/[\\\x00-\x1f\x7f]/.test(name)) return 'it holds a backslash or a control character';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'it is an absolute path';
  if (name.split('/').some((p) => p === '' || p === '.' || p === '..')) return 'it has an empty, "." or ".." part';
  return null;
}

/**
 * Refuses a file the listing says is larger than a file of its kind can be (a config.json of 1.5 GB), before a byte
 * of it is downloaded.
 */
export function checkListedSize(repo: HubRepo, file: string, info: HubFileInfo | undefined): void {
  const cap = modelFileCap(file);
  if (cap === undefined || info?.size === undefined || info.size <= cap) return;
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  throw new HubError(
    `${hubEndpoint(repo.endpoint)} lists ${file} of '${repo.id}' at ${mib(info.size)}, but a ${file} has at most ` +
      `${mib(cap)}: nothing was downloaded; the listing is wrong, or the hub address is not a Hugging Face hub`,
    'missing',
  );
}

function checkFileName(repo: HubRepo, name: string, from: string): void {
  const why = fileNameProblem(name);
  if (why) {
    throw new HubError(
      `${from} of Hugging Face model '${repo.id}' names the file ${JSON.stringify(name)}, which piplay refuses ` +
        `(${why}); nothing was downloaded for it: the repository is malformed, tell its owner`,
      'missing',
    );
  }
}

/** A revision is a branch, tag or commit: parts of letters, digits, ".", "_" and "-" between single slashes. */
const REVISION = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;

/** Why `repo.revision` is not a branch, tag or commit name, or null when it is one (or absent). */
export function hubRevisionProblem(repo: HubRepo): string | null {
  if (repo.revision === undefined || (REVISION.test(repo.revision) && repo.revision.length <= 255)) return null;
  return (
    `'${repo.revision}' is not a revision of '${repo.id}': give a branch, tag or commit, e.g. ` +
    `hf:${repo.id}@main (letters, digits, ".", "_", "-" and single slashes, no "." or ".." part)`
  );
}

function checkRevision(repo: HubRepo): void {
  const bad = hubRevisionProblem(repo);
  if (bad) throw new HubError(bad, 'bad-id');
}

/** Bytes of downloads that broke off, by URL, without a browser cache: pressing Start again continues them. */
const inMemory = memoryPartials();

/** A ReadFile over a hub repository: the cache first, then the hub (a file not in its listing is missing). */
export function filesFromHub(repo: HubRepo, opts: HubOptions = {}): ReadFile {
  checkId(repo.id);
  checkRevision(repo);
  hubEndpoint(repo.endpoint);
  const where = `Hugging Face model '${repo.id}'`;
  const fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
  const stores: Promise<{ cache: HubCache | null; partials: PartialStore }> =
    opts.cache !== undefined
      ? Promise.resolve({ cache: opts.cache, partials: opts.partials ?? inMemory })
      : openCache().then((c) => ({ cache: c, partials: opts.partials ?? (c ? cachePartials(c) : inMemory) }));
  const cachePromise = stores.then((s) => s.cache);
  let listing: Promise<HubListing> | null = opts.listing ? Promise.resolve(opts.listing) : null;
  const list = async () => {
    listing ??= cachePromise.then((cache) =>
      listHubFiles(repo, { fetchFn, cache, retryDelayMs: opts.retryDelayMs, timeouts: opts.timeouts }),
    );
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
    const listed = await list();
    const info = listed.files.get(file);
    if (!info) throw new MissingFileError(file, where);
    checkFileName(repo, file, 'the listing');
    checkListedSize(repo, file, info);
    if (info.size === undefined && !blobName(info)) {
      throw new HubError(
        `${hubEndpoint(repo.endpoint)} lists ${file} of '${repo.id}' without a size or a hash, so a download of ` +
          'it could not be known to be whole: is the hub address a Hugging Face hub?',
        'network',
      );
    }
    const size = info.size ?? 0;
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
        expectedTotal: size,
        retryDelayMs: opts.retryDelayMs,
        onVersion: (v) => partials.begin?.(url, v),
        onRestart: (reason) => opts.onRestart?.(file, reason),
        onBytes: (chunk, offset) => partials.append(url, offset, chunk),
        timeouts: {
          answerMs: (opts.timeouts ?? DEFAULT_HUB_TIMEOUTS).downloadMs,
          stallMs: (opts.timeouts ?? DEFAULT_HUB_TIMEOUTS).downloadMs,
          setting: 'HF_HUB_DOWNLOAD_TIMEOUT',
        },
        ...(modelFileCap(file) !== undefined ? { maxBytes: modelFileCap(file) } : {}),
        onProgress: (loaded, total) => opts.onProgress?.({ file, loaded, total: total || size, cached: false }),
      });
    } catch (e) {
      await partials.flush(url);
      throw downloadError(repo, file, e);
    }
    const wrong = await contentMismatch(bytes, info);
    if (wrong) {
      await partials.clear(url);
      throw new HubError(
        `${file} of '${repo.id}' from ${hubEndpoint(repo.endpoint)} ${wrong}, so it was not kept: ` +
          'the download was damaged or the hub serves another file than it lists; try again later',
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
  if (e instanceof BodyTooLargeError) return new HubError(`${file}: ${networkProblem(repo, e)}`, 'network');
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

export interface HubPlanFile {
  name: string;
  /** Bytes (0 when the listing gives a hash but no size). */
  size: number;
  cached: boolean;
}

export interface HubPlan {
  files: HubPlanFile[];
  /** Bytes of all the files the model needs, and of those not cached yet. */
  bytes: number;
  toDownload: number;
  /** The listing the plan was made from. */
  listing: HubListing;
}

/**
 * The files loading a model reads: config, weights (one file or the shards its index names), tokenizer files and
 * the optional generation config, chat template and model card (its license is carried into an exported
 * student's card). `has` says what the repository holds, `readIndex` reads the
 * shard index. A missing file, or a shard name that is not a plain file of the repository, is refused by name
 * before anything is asked for it.
 */
export async function modelFileNames(
  id: string,
  has: (file: string) => boolean,
  readIndex: () => Promise<Uint8Array>,
): Promise<string[]> {
  const lacks = (what: string) =>
    new HubError(`Hugging Face model '${id}' has no ${what}; piplay needs ${what} from the repository`, 'missing');
  const names = ['config.json'];
  if (!has('config.json')) throw lacks('config.json');
  if (has('model.safetensors')) names.push('model.safetensors');
  else if (has('model.safetensors.index.json')) {
    names.push('model.safetensors.index.json');
    let map: unknown;
    try {
      map = (JSON.parse(new TextDecoder().decode(await readIndex())) as { weight_map?: unknown }).weight_map;
    } catch {
      map = undefined;
    }
    if (!map || typeof map !== 'object') {
      throw new HubError(
        `model.safetensors.index.json of Hugging Face model '${id}' is not JSON with a "weight_map": the ` +
          'repository is malformed, tell its owner',
        'missing',
      );
    }
    for (const shard of new Set(Object.values(map as Record<string, unknown>).map(String))) {
      checkFileName({ id }, shard, 'model.safetensors.index.json');
      if (!has(shard)) throw lacks(`${shard} (a shard its model.safetensors.index.json names)`);
      names.push(shard);
    }
  } else throw lacks('safetensors weights (model.safetensors or model.safetensors.index.json)');
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
    if (!has(f)) throw lacks(f);
    names.push(f);
  }
  names.push(...['generation_config.json', 'chat_template.jinja', 'README.md'].filter(has));
  return names;
}

/**
 * What loading the model will download, before any large file is fetched: the files of `modelFileNames`, each
 * with its size from the listing and whether the cache holds it. A listing already fetched may be passed in.
 */
export async function hubDownloadPlan(
  repo: HubRepo,
  opts: Pick<HubOptions, 'fetchFn' | 'cache' | 'timeouts'> & { listing?: HubListing } = {},
): Promise<HubPlan> {
  const cache = opts.cache !== undefined ? opts.cache : await openCache();
  const listing = opts.listing ?? (await listHubFiles(repo, { fetchFn: opts.fetchFn, cache, timeouts: opts.timeouts }));
  for (const name of listing.files.keys()) if (fileNameProblem(name)) listing.files.delete(name);
  const read = filesFromHub(repo, { fetchFn: opts.fetchFn, cache, listing, timeouts: opts.timeouts });
  const names = await modelFileNames(
    repo.id,
    (f) => listing.files.has(f),
    () => read('model.safetensors.index.json'),
  );
  for (const name of names) checkListedSize(repo, name, listing.files.get(name));
  const files = await Promise.all(
    names.map(async (name) => ({
      name,
      size: listing.files.get(name)?.size ?? 0,
      cached: (await cache?.match(hubUrl(repo, name))) !== undefined,
    })),
  );
  const sum = (fs: HubPlanFile[]) => fs.reduce((s, f) => s + f.size, 0);
  return { files, bytes: sum(files), toDownload: sum(files.filter((f) => !f.cached)), listing };
}

/**
 * Refuses a download larger than the space left for it (`free` bytes, where it is known), before any of it is
 * fetched; `where` names the place and `hint` what to do.
 */
export function checkSpace(repo: HubRepo, plan: HubPlan, free: number | undefined, where: string, hint: string) {
  if (free === undefined || plan.toDownload <= free) return;
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(b < 2 ** 30 ? 3 : 1)} GiB`;
  throw new HubError(
    `Hugging Face model '${repo.id}' needs ${gib(plan.toDownload)} downloaded, but ${where} has ${gib(free)} free ` +
      `(the hub lists these sizes): ${hint}`,
    'missing',
  );
}
