// `--model hf:owner/name[@revision]` on the command line: the model's files downloaded from the hub (resumed after
// a dropped connection, src/model/hub.ts) into a folder of the disk cache, which then loads like any model folder.
// A second run finds them there and downloads nothing. The hub's address is $HF_ENDPOINT (as in Hugging Face's own
// tools), the cache $PIPLAY_HUB_CACHE or ~/.cache/piplay/hub.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { filesFromHub, hubApiUrl, hubDownloadPlan, hubUrl, type HubCache, type HubRepo } from '../model/hub.ts';
import { ConfigError } from '../selfplay/config.ts';
import { fileParts } from './file-partials.ts';

const mib = (b: number) => (b < 2 ** 20 ? `${(b / 1024).toFixed(1)} KiB` : `${(b / 2 ** 20).toFixed(1)} MiB`);

const PREFIX = 'hf:';

/** The repository an `hf:` model names (null for a folder or 'random-tiny'). */
export function hubModelRef(model: string, env: NodeJS.ProcessEnv = process.env): HubRepo | null {
  if (!model.startsWith(PREFIX)) return null;
  const [id, revision] = model.slice(PREFIX.length).split('@') as [string, string | undefined];
  if (!id) throw new ConfigError(`--model: '${model}' names no model; give hf:owner/name, e.g. hf:Qwen/Qwen3-0.6B`);
  return { id, ...(revision ? { revision } : {}), ...(env['HF_ENDPOINT'] ? { endpoint: env['HF_ENDPOINT'] } : {}) };
}

/** The cache folder of a repository: <cache>/<owner>--<name>/<revision>. */
export function hubFolderPath(repo: HubRepo, env: NodeJS.ProcessEnv = process.env): string {
  const root = env['PIPLAY_HUB_CACHE'] || join(homedir(), '.cache', 'piplay', 'hub');
  return join(root, repo.id.replace('/', '--'), repo.revision ?? 'main');
}

/** Where the folder keeps a URL of the repository: a file under its name, the listing as .hub-listing.json. */
function folderPath(repo: HubRepo, dir: string): (url: string) => string | null {
  const prefix = hubUrl(repo, '');
  return (url) => {
    if (url === hubApiUrl(repo)) return join(dir, '.hub-listing.json');
    if (!url.startsWith(prefix)) return null;
    const name = decodeURIComponent(url.slice(prefix.length));
    return name.split('/').some((p) => p === '..' || p === '') ? null : join(dir, name);
  };
}

/** A HubCache over a folder: a file's URL maps to its name in the folder, the listing to .hub-listing.json. */
export function folderCache(repo: HubRepo, dir: string): HubCache {
  const pathOf = folderPath(repo, dir);
  return {
    async match(req) {
      const p = pathOf(String(req instanceof Request ? req.url : req));
      if (!p || !existsSync(p)) return undefined;
      return new Response(readFileSync(p));
    },
    async put(req, res) {
      const p = pathOf(String(req instanceof Request ? req.url : req));
      if (!p) return;
      const bytes = new Uint8Array(await res.arrayBuffer());
      mkdirSync(dirname(p), { recursive: true });
      // Written whole, then renamed: a file in the folder is always complete.
      try {
        writeFileSync(`${p}.download`, bytes);
        renameSync(`${p}.download`, p);
      } catch (e) {
        try {
          rmSync(`${p}.download`, { force: true }); // a half-written file of ours; never a folder
        } catch {}
        throw e;
      }
    },
  };
}

/**
 * Downloads what loading the model reads into its cache folder (a line per file on stderr) and returns the folder.
 * A download that breaks off keeps its bytes as `<file>.part` there (src/cli/file-partials.ts): the next run
 * continues it with a Range request, or starts it again when the hub's file changed meanwhile.
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
  } = {},
): Promise<string> {
  const dir = hubFolderPath(repo, opts.env);
  const cache = folderCache(repo, dir);
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const plan = await hubDownloadPlan(repo, { fetchFn: opts.fetchFn, cache });
  if (plan.toDownload > 0 || plan.files.some((f) => !f.cached)) {
    log(`hub: ${repo.id} needs ${mib(plan.toDownload)} of ${mib(plan.bytes)} downloaded into ${dir}`);
  }
  const partials = fileParts(folderPath(repo, dir), { syncBytes: opts.syncBytes, warn: (l) => log(`hub: ${l}`) });
  const started = new Set<string>();
  const read = filesFromHub(repo, {
    fetchFn: opts.fetchFn,
    cache,
    partials,
    retryDelayMs: opts.retryDelayMs,
    onRestart: (file, why) =>
      log(`hub: ${file} changed on the hub since its partial download (${why}): starting again`),
    onProgress: ({ file, loaded, total, cached }) => {
      if (cached || started.has(file)) return;
      started.add(file);
      if (loaded > 0) log(`hub: resuming ${file} at ${mib(loaded)}${total ? ` of ${mib(total)}` : ''}`);
    },
  });
  const release = syncOnExit(partials.syncAll);
  try {
    for (const f of plan.files.filter((x) => !x.cached)) {
      const t0 = Date.now();
      const bytes = await read(f.name);
      if (!existsSync(join(dir, f.name))) {
        // The cache swallows a failed write (the browser's quota); here the folder is what the model loads from.
        partials.syncAll();
        throw new ConfigError(
          `hub: ${f.name} of '${repo.id}' was downloaded but could not be written into ${dir} (is the disk full?); ` +
            `its bytes are kept as ${f.name}.part there: free some space and run again to finish it`,
        );
      }
      log(`hub: ${f.name} ${mib(bytes.length)} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    }
  } finally {
    release();
  }
  return dir;
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
