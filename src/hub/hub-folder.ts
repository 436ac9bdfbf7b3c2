// `--model hf:owner/name[@revision]` on the command line: the model's files in the Hugging Face cache
// (src/hub/hf-cache.ts), so a model Python's tools downloaded is loaded without a download and what piplay
// downloads is a normal cache entry. The hub is $HF_ENDPOINT, $HF_TOKEN is sent to it, and with $HF_HUB_OFFLINE
// nothing is asked of it. Downloads resume after a dropped connection (src/hub/hub.ts); one cut off (Ctrl-C, a
// crash, retries spent) keeps its bytes as blobs/<hash>.part (src/hub/file-partials.ts) for the next run.
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { modelFileCap } from '../model/files.ts';
import { readInputFile } from '../node/input-file.ts';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  blobName,
  checkSpace,
  contentMismatch,
  DEFAULT_HUB_TIMEOUTS,
  fileNameProblem,
  filesFromHub,
  hubDownloadPlan,
  hubEndpoint,
  HubError,
  type HubCache,
  type HubListing,
  type HubRepo,
  hubRevisionProblem,
  hubUrl,
  listHubFiles,
  modelFileNames,
} from './hub.ts';
import { ConfigError } from '../selfplay/config.ts';
import { fileParts, partsIn, removePart } from './file-partials.ts';
import { freeBytes, hfCacheRoot, hfOffline, hfTimeoutMs, hfToken, RepoCache } from './hf-cache.ts';
import { fsError } from '../cli/fs-errors.ts';
import { makeFolder } from '../node/make-folder.ts';

const mib = (b: number) => (b < 2 ** 20 ? `${(b / 1024).toFixed(1)} KiB` : `${(b / 2 ** 20).toFixed(1)} MiB`);

const PREFIX = 'hf:';

/** The repository an `hf:` model names (null for a folder or 'random-tiny'); a malformed revision is refused. */
export function hubModelRef(model: string, env: NodeJS.ProcessEnv = process.env): HubRepo | null {
  if (!model.startsWith(PREFIX)) return null;
  const [id, revision] = model.slice(PREFIX.length).split('@') as [string, string | undefined];
  if (!id) throw new ConfigError(`--model: '${model}' names no model; give hf:owner/name, e.g. hf:Qwen/Qwen3-0.6B`);
  const repo = {
    id,
    ...(revision ? { revision } : {}),
    ...(env['HF_ENDPOINT'] ? { endpoint: env['HF_ENDPOINT'] } : {}),
  };
  const bad = hubRevisionProblem(repo);
  if (bad) throw new ConfigError(`--model: ${bad}`);
  return repo;
}

/** The folder piplay kept hub downloads in before it used the Hugging Face cache. */
export function olderFolder(repo: HubRepo, env: NodeJS.ProcessEnv = process.env): string {
  const root = env['PIPLAY_HUB_CACHE'] || join(homedir(), '.cache', 'piplay', 'hub');
  return join(root, repo.id.replace('/', '--'), repo.revision ?? 'main');
}

/** `fetch` with the hub token (hfToken: $HF_TOKEN, else `hf auth login`'s file) sent to the hub, and to nothing else. */
function withToken(fetchFn: typeof fetch, repo: HubRepo, env: NodeJS.ProcessEnv): typeof fetch {
  const token = hfToken(env);
  if (!token) return fetchFn;
  const origin = new URL(hubEndpoint(repo.endpoint)).origin;
  return ((url: string, init?: RequestInit) => {
    if (new URL(url).origin !== origin) return fetchFn(url, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetchFn(url, { ...init, headers });
  }) as typeof fetch;
}

/** A Response whose body is read from `path` only when it is read (a plan asks for presence, not bytes). */
function lazyFile(path: string): Response {
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(readInputFile(path));
        c.close();
      },
    }),
  );
}

/** Writes `bytes` whole beside `path`, then renames it into place: a file under its final name is always whole. */
function writeWhole(path: string, bytes: Uint8Array): void {
  makeFolder(dirname(path));
  try {
    writeFileSync(`${path}.download`, bytes);
    renameSync(`${path}.download`, path);
  } catch (e) {
    try {
      rmSync(`${path}.download`, { force: true }); // a half-written file of ours; never a folder
    } catch {}
    throw e;
  }
}

/**
 * The cache of one commit as the hub code sees it: a file's URL at that commit maps to its blob (named by the
 * hash the listing gives), found through the snapshot's link or the blob itself, and stored as a blob plus a link.
 */
function commitStore(cache: RepoCache, at: HubRepo & { revision: string }, listing: HubListing) {
  const prefix = hubUrl(at, '');
  const fileOf = (url: string) => {
    if (!url.startsWith(prefix)) return null;
    const file = decodeURIComponent(url.slice(prefix.length));
    const blob = blobName(listing.files.get(file));
    return blob && !fileNameProblem(file) ? { file, blob } : null;
  };
  const urlOf = (req: RequestInfo | URL) => String(req instanceof Request ? req.url : req);
  const store: HubCache & { pathOf(url: string): string | null; writeError?: { path: string; error: unknown } } = {
    pathOf: (url) => {
      const f = fileOf(url);
      return f ? cache.blob(f.blob) : null;
    },
    async match(req) {
      const f = fileOf(urlOf(req));
      if (!f) return undefined;
      if (!cache.has(at.revision, f.file)) {
        if (!existsSync(cache.blob(f.blob))) return undefined;
        cache.link(at.revision, f.file, f.blob); // the bytes are there (another revision, or Python's download)
      }
      return lazyFile(cache.snapshot(at.revision, f.file));
    },
    async put(req, res) {
      const f = fileOf(urlOf(req));
      if (!f) return;
      try {
        writeWhole(cache.blob(f.blob), new Uint8Array(await res.arrayBuffer()));
        cache.link(at.revision, f.file, f.blob);
      } catch (error) {
        // Kept for the message (the hub code swallows a failed cache write, as a browser's full quota).
        store.writeError = { path: cache.blob(f.blob), error };
        throw error;
      }
    },
  };
  return store;
}

/** Why a folder (`pathOf` names its files) lacks a file the model needs, or null when it holds them all. */
async function missingFrom(repo: HubRepo, pathOf: (file: string) => string): Promise<string | null> {
  try {
    await modelFileNames(
      repo.id,
      (f) => !fileNameProblem(f) && existsSync(pathOf(f)),
      async () =>
        readInputFile(pathOf('model.safetensors.index.json'), {
          maxBytes: modelFileCap('model.safetensors.index.json'),
        }),
    );
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The snapshot folder of `revision` when it holds every file the model needs, else why not. */
async function cachedSnapshot(cache: RepoCache, repo: HubRepo): Promise<{ dir: string } | { why: string }> {
  const revision = repo.revision ?? 'main';
  const commit = cache.commitOf(revision);
  if (!commit) return { why: `it has no refs/${revision}` };
  const why = await missingFrom(repo, (f) => cache.snapshot(commit, f));
  return why ? { why } : { dir: cache.snapshot(commit) };
}

/** The older piplay folder when it holds every file the model needs (used only where the hub cannot be asked). */
async function olderComplete(repo: HubRepo, env: NodeJS.ProcessEnv): Promise<string | null> {
  const dir = olderFolder(repo, env);
  return (await missingFrom(repo, (f) => join(dir, f))) ? null : dir;
}

/** The model from the cache alone ($HF_HUB_OFFLINE, or a hub that cannot be reached): its folder, or why not. */
async function offline(cache: RepoCache, repo: HubRepo, env: NodeJS.ProcessEnv, log: (l: string) => void) {
  const found = await cachedSnapshot(cache, repo);
  if ('dir' in found) return found.dir;
  const older = await olderComplete(repo, env);
  if (older) {
    log(
      `hub: using the older piplay download of '${repo.id}' in ${older} (not in the Hugging Face cache ${cache.root})`,
    );
    return older;
  }
  throw new ConfigError(
    `hub: the Hugging Face cache ${cache.root} holds no complete copy of '${repo.id}' at ${repo.revision ?? 'main'} ` +
      `(${found.why}), and HF_HUB_OFFLINE is set: run once without HF_HUB_OFFLINE, or download it with ` +
      `\`hf download ${repo.id}\` (HF_HUB_CACHE chooses the cache folder)`,
  );
}

/**
 * Takes files the older piplay folder holds, whose size and hash match the listing, into the cache instead of
 * downloading them. Returns how many.
 */
async function takeOlder(
  files: { name: string; cached: boolean }[],
  older: string,
  store: ReturnType<typeof commitStore>,
  at: HubRepo,
  listing: HubListing,
): Promise<number> {
  let taken = 0;
  for (const f of files.filter((x) => !x.cached && existsSync(join(older, x.name)))) {
    const bytes = readInputFile(join(older, f.name), { maxBytes: modelFileCap(f.name) });
    if (await contentMismatch(bytes, listing.files.get(f.name)!)) continue;
    await store.put(hubUrl(at, f.name), new Response(bytes));
    f.cached = true;
    taken++;
  }
  return taken;
}

/**
 * The folder the model loads from, its files downloaded first where the cache lacks them (a line per file on
 * stderr). A second run downloads nothing; with $HF_HUB_OFFLINE, or when the hub cannot be reached, the cached
 * snapshot is used as it is.
 */
export async function hubModelFolder(
  repo: HubRepo,
  opts: {
    env?: NodeJS.ProcessEnv;
    fetchFn?: typeof fetch;
    log?: (line: string) => void;
    /** Wait before retrying a dropped download, in ms (tests). */
    retryDelayMs?: number;
    /** Bytes between two syncs of a partial download to disk (tests). */
    syncBytes?: number;
    /** A progress line of a file being downloaded at most this often (ms). */
    progressEveryMs?: number;
  } = {},
): Promise<string> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const cache = new RepoCache(hfCacheRoot(env), repo.id);
  if (hfOffline(env)) return offline(cache, repo, env, log);
  const fetchFn = withToken(opts.fetchFn ?? globalThis.fetch.bind(globalThis), repo, env);
  const timeouts = {
    metadataMs: hfTimeoutMs(env, 'HF_HUB_ETAG_TIMEOUT', DEFAULT_HUB_TIMEOUTS.metadataMs),
    downloadMs: hfTimeoutMs(env, 'HF_HUB_DOWNLOAD_TIMEOUT', DEFAULT_HUB_TIMEOUTS.downloadMs),
  };
  let listing: HubListing;
  try {
    listing = await listHubFiles(repo, { fetchFn, cache: null, retryDelayMs: opts.retryDelayMs, timeouts });
  } catch (e) {
    if (!(e instanceof HubError && e.kind === 'network')) throw e;
    const found = await cachedSnapshot(cache, repo);
    if (!('dir' in found)) throw e;
    log(`hub: ${(e as Error).message.split(':')[0]}; using the cached copy in ${found.dir}`);
    return found.dir;
  }
  if (!listing.commit) {
    throw new ConfigError(
      `hub: ${hubEndpoint(repo.endpoint)} lists '${repo.id}' without its commit ("sha"), which the Hugging Face ` +
        'cache is kept by: is HF_ENDPOINT a Hugging Face hub?',
    );
  }
  const at = { ...repo, revision: listing.commit };
  const store = commitStore(cache, at, listing);
  const plan = await hubDownloadPlan(at, { fetchFn, cache: store, listing, timeouts });
  const unhashed = plan.files.find((f) => !blobName(listing.files.get(f.name)));
  if (unhashed) {
    throw new ConfigError(
      `hub: ${hubEndpoint(repo.endpoint)} lists ${unhashed.name} of '${repo.id}' without a hash, which the ` +
        'Hugging Face cache keeps files by: is HF_ENDPOINT a Hugging Face hub?',
    );
  }
  const older = olderFolder(repo, env);
  const taken = await takeOlder(plan.files, older, store, at, listing);
  if (taken) log(`hub: ${taken} file(s) of '${repo.id}' taken from the older piplay download in ${older}`);
  const missing = plan.files.filter((f) => !f.cached);
  const toDownload = missing.reduce((n, f) => n + f.size, 0);
  checkSpace(
    repo,
    { ...plan, toDownload },
    freeBytes(cache.dir),
    `the disk of ${cache.root}`,
    'free some space, or set HF_HUB_CACHE to a folder on a larger disk',
  );
  if (missing.length > 0) {
    log(`hub: ${repo.id} needs ${mib(toDownload)} of ${mib(plan.bytes)} downloaded into ${cache.dir}`);
  }
  dropOtherVersions(cache, at, missing, listing, log);
  const partials = fileParts(store.pathOf, { syncBytes: opts.syncBytes, warn: (l) => log(`hub: ${l}`) });
  const started = new Map<string, { t0: number; from: number; shown: number }>();
  const every = opts.progressEveryMs ?? 5000;
  const read = filesFromHub(at, {
    fetchFn,
    cache: store,
    listing,
    partials,
    timeouts,
    retryDelayMs: opts.retryDelayMs,
    onRestart: (file, why) =>
      log(`hub: ${file} changed on the hub since its partial download (${why}): starting again`),
    onProgress: ({ file, loaded, total, cached }) => {
      if (cached) return;
      const now = Date.now();
      const s = started.get(file);
      if (!s) {
        started.set(file, { t0: now, from: loaded, shown: now });
        if (loaded > 0) log(`hub: resuming ${file} at ${mib(loaded)}${total ? ` of ${mib(total)}` : ''}`);
        return;
      }
      // A long download says how far it is, so a slow hub is seen as slow rather than as a hang.
      if (now - s.shown < every || (total && loaded >= total)) return;
      s.shown = now;
      const rate = (loaded - s.from) / Math.max((now - s.t0) / 1000, 1e-3);
      const pct = total ? ` (${Math.floor((100 * loaded) / total)}%)` : '';
      log(`hub: ${file} ${mib(loaded)}${total ? ` of ${mib(total)}` : ''}${pct}, ${mib(rate)}/s`);
    },
  });
  const release = syncOnExit(partials.syncAll);
  try {
    for (const f of missing) {
      const t0 = Date.now();
      const bytes = await read(f.name);
      if (!cache.has(at.revision, f.name)) {
        // The cache swallows a failed write (the browser's quota); here the folder is what the model loads from.
        partials.syncAll();
        throw new ConfigError(notWritten(repo, f.name, cache, store.writeError, blobName(listing.files.get(f.name))!));
      }
      log(`hub: ${f.name} ${mib(bytes.length)} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    }
  } finally {
    release();
  }
  cache.setRef(repo.revision ?? 'main', listing.commit);
  return cache.snapshot(listing.commit);
}

/** Why a downloaded file is not in the cache, with what to do for that cause (a full disk, a read-only folder, ...). */
export function notWritten(
  repo: HubRepo,
  file: string,
  cache: RepoCache,
  failed: { path: string; error: unknown } | undefined,
  blob: string,
): string {
  const code = (failed?.error as { code?: string } | undefined)?.code ?? '';
  const cause = failed ? fsError('write', failed.path, failed.error).message.replace(/^piplay: /, '') : '';
  const what = `hub: ${file} of '${repo.id}' was downloaded but ${cause || `could not be written into ${cache.dir}`}`;
  if (['EROFS', 'EACCES', 'EPERM'].includes(code))
    return `${what}: the Hugging Face cache ${cache.root} cannot be written; set HF_HUB_CACHE to a folder you can write`;
  return (
    `${what}${cause ? '' : ' (is the disk full?)'}; its bytes are kept as blobs/${blob}.part in ${cache.dir} where ` +
    'that could be written: make room (or set HF_HUB_CACHE to another folder) and run again to finish it'
  );
}

/**
 * Drops the parts of earlier versions of the files about to be downloaded (the hub's file changed since: its hash,
 * so its blob, is another), saying so; a part another live process writes is left alone.
 */
function dropOtherVersions(
  cache: RepoCache,
  at: HubRepo,
  files: { name: string }[],
  listing: HubListing,
  log: (l: string) => void,
): void {
  const wanted = new Map(files.map((f) => [f.name, cache.blob(blobName(listing.files.get(f.name))!)]));
  const base = `${hubEndpoint(at.endpoint)}/${at.id}/resolve/`;
  for (const { part, url } of partsIn(join(cache.dir, 'blobs'))) {
    if (!url.startsWith(base)) continue;
    const file = decodeURIComponent(url.slice(base.length).split('/').slice(1).join('/'));
    const now = wanted.get(file);
    if (now && `${now}.part` !== part && removePart(part)) {
      log(`hub: ${file} changed on the hub since its partial download (another version now): starting again`);
    }
  }
}

/**
 * Runs `sync` when the process exits while a download is under way, so Ctrl-C keeps every byte received: a SIGINT
 * or SIGTERM that nothing else handles exits (130, 143) as the signal would have, after it.
 */
function syncOnExit(sync: () => void): () => void {
  const quits = (['SIGINT', 'SIGTERM'] as const)
    .filter((s) => process.listenerCount(s) === 0)
    .map((s) => [s, () => process.exit(s === 'SIGINT' ? 130 : 143)] as const);
  process.on('exit', sync);
  for (const [s, quit] of quits) process.on(s, quit);
  return () => {
    process.off('exit', sync);
    for (const [s, quit] of quits) process.off(s, quit);
  };
}
