// A local stand-in for the Hugging Face hub: model folders served at the hub's URL layout
// ({id}/resolve/{revision}/{file}, and api/models/{id} with the file list and sizes), with Range requests, CORS
// for a page on another port, no HTTP caching (so only the page's own cache can spare a download), an optional
// slow body (so a progress bar has time to move) and a first download of a file cut off mid-way (so the page
// must resume it). Files carry an ETag (a hash of their bytes); a test can cut every download of a file at a byte
// and change a file meanwhile. The listing is the hub's: the commit (`sha`), each file's size and git blob id, and
// for *.safetensors the LFS sha256. `lie()` makes it a hub that lies (wrong lengths, sizes, hashes, bodies that
// run past the file, 500s), or a hostile one (that never answers, trickles a byte at a time, sends a listing that
// never ends, or redirects in a loop). Every request is recorded.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

export interface HubRequest {
  method: string;
  path: string;
  range?: string;
  authorization?: string;
}

export interface HubServerOptions {
  /** id ("owner/name") -> folder on disk. */
  repos: Record<string, string>;
  /** Bytes per write of a file body and the pause between writes (ms); whole bodies at once when absent. */
  chunk?: { bytes: number; ms: number };
  /** file name -> bytes after which its first full download is cut (the connection is destroyed). */
  cutFirst?: Record<string, number>;
}

/** How the hub lies, file by file where it is per file. */
export interface HubLies {
  /** Content-Length announced as the file's length times this (the body is the file). */
  lengthFactor?: number;
  /** A listing with neither sizes nor hashes. */
  bareListing?: boolean;
  /** Sizes the listing gives instead of the real ones. */
  listedSize?: Record<string, number>;
  /** sha256 the listing gives instead of the real one. */
  listedSha256?: Record<string, string>;
  /** Bytes sent after the file, without announcing a length. */
  extraBytes?: number;
  /** How many of the next requests for a file are answered 500. */
  fail500?: Record<string, number>;
  /** Every request is accepted and never answered. */
  silent?: boolean;
  /** The listing, or the body of these files, sent one byte every this many ms. */
  trickleMs?: number;
  trickle?: 'listing' | string[];
  /** The listing's body never ends (valid JSON opening, then padding forever). */
  endlessListing?: boolean;
  /** Every request is redirected to itself. */
  redirectLoop?: boolean;
}

export interface HubServer {
  url: string;
  requests: HubRequest[];
  /** The files a repository lists, with their sizes. */
  sizes(id: string): Record<string, number>;
  /** Every download of `file` from now on breaks off at byte `at` of the file (undefined: no more cuts). */
  cut(file: string, at: number | undefined): void;
  /** Replaces (or adds) a file of a repository. */
  put(id: string, file: string, bytes: Uint8Array): void;
  /** From now on the hub lies so (replacing earlier lies). */
  lie(lies: HubLies): void;
  /** The commit a repository's listing names now. */
  commit(id: string): string;
  close(): Promise<void>;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'range',
  'access-control-expose-headers': 'content-range, content-length, accept-ranges, etag',
  'cache-control': 'no-store',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const gitOid = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function commitOf(repo: Map<string, Buffer>): string {
  const h = createHash('sha1');
  for (const [f, b] of [...repo].sort()) h.update(`${f}\0${gitOid(b)}\0`);
  return h.digest('hex');
}

export async function startHubServer(opts: HubServerOptions): Promise<HubServer> {
  const files = new Map<string, Map<string, Buffer>>();
  for (const [id, dir] of Object.entries(opts.repos)) {
    files.set(id, new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))])));
  }
  const requests: HubRequest[] = [];
  const cut = new Set<string>();
  const cutAll = new Map<string, number>();
  let lies: HubLies = {};
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const range = req.headers.range;
    const auth = req.headers.authorization;
    requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      ...(range ? { range } : {}),
      ...(auth ? { authorization: auth } : {}),
    });
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    if (lies.silent) return; // the connection stays open, unanswered
    if (lies.redirectLoop) {
      res.writeHead(302, { ...CORS, location: req.url ?? '/' }).end();
      return;
    }
    /** Sends `body` a byte every `ms`, until it ends or the client goes. */
    const trickle = async (body: Buffer, ms: number) => {
      for (let i = 0; i < body.length && !res.destroyed; i++) {
        res.write(body.subarray(i, i + 1));
        await sleep(ms);
      }
      res.end();
    };
    const api = /^\/api\/models\/([^/]+\/[^/]+)(?:\/revision\/[^/]+)?$/.exec(url.pathname);
    if (api) {
      const repo = files.get(decodeURIComponent(api[1]!));
      if (!repo) {
        res.writeHead(404, { ...CORS, 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
        return;
      }
      const siblings = [...repo].map(([rfilename, b]) => {
        if (lies.bareListing) return { rfilename };
        const size = lies.listedSize?.[rfilename] ?? b.length;
        const lfs = rfilename.endsWith('.safetensors')
          ? { lfs: { sha256: lies.listedSha256?.[rfilename] ?? sha256(b), size, pointerSize: 134 } }
          : {};
        return { rfilename, blobId: gitOid(b), size, ...lfs };
      });
      res.writeHead(200, { ...CORS, 'content-type': 'application/json' });
      const listing = Buffer.from(JSON.stringify({ id: api[1], sha: commitOf(repo), siblings }));
      if (lies.endlessListing) {
        res.write('{"siblings": [');
        const pad = Buffer.alloc(1 << 16, 32);
        const more = () => {
          while (!res.destroyed && res.write(pad));
          if (!res.destroyed) res.once('drain', more);
        };
        more();
      } else if (lies.trickle === 'listing') void trickle(listing, lies.trickleMs ?? 1000);
      else res.end(listing);
      return;
    }
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const body = m ? files.get(decodeURIComponent(m[1]!))?.get(decodeURIComponent(m[3]!)) : undefined;
    if (!m || !body) {
      res.writeHead(404, CORS).end('Entry not found');
      return;
    }
    const name = decodeURIComponent(m[3]!);
    if (lies.fail500?.[name]) {
      lies.fail500[name]--;
      res.writeHead(500, CORS).end('Internal Server Error');
      return;
    }
    const r = range ? /^bytes=(\d+)-$/.exec(range) : null;
    const start = r ? Number(r[1]) : 0;
    const rest = body.subarray(start);
    const headers: Record<string, string> = {
      ...CORS,
      'content-length': String(Math.round(rest.length * (lies.lengthFactor ?? 1))),
      'accept-ranges': 'bytes',
      etag: `"${createHash('sha1').update(body).digest('hex')}"`,
    };
    if (r) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    if (lies.extraBytes) delete headers['content-length'];
    res.writeHead(r ? 206 : 200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (Array.isArray(lies.trickle) && lies.trickle.includes(name)) {
      void trickle(rest, lies.trickleMs ?? 1000);
      return;
    }
    const cutAt = !r && !cut.has(name) ? opts.cutFirst?.[name] : undefined;
    if (cutAt !== undefined) cut.add(name);
    const cutEvery = cutAll.get(name);
    void (async () => {
      const step = opts.chunk?.bytes ?? rest.length;
      for (let at = 0; at < rest.length; at += step) {
        if ((cutAt !== undefined && at >= cutAt) || (cutEvery !== undefined && start + at >= cutEvery)) {
          res.socket?.destroy();
          return;
        }
        res.write(rest.subarray(at, Math.min(rest.length, at + step)));
        if (opts.chunk) await sleep(opts.chunk.ms);
      }
      for (let more = lies.extraBytes ?? 0; more > 0 && !res.destroyed; more -= 65536) {
        res.write(Buffer.alloc(Math.min(65536, more), 7));
        await sleep(0);
      }
      res.end();
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sizes: (id) => Object.fromEntries([...(files.get(id) ?? [])].map(([f, b]) => [f, b.length])),
    cut: (file, at) => (at === undefined ? cutAll.delete(file) : cutAll.set(file, at)),
    put: (id, file, bytes) => files.get(id)?.set(file, Buffer.from(bytes)),
    lie: (l) => {
      lies = structuredClone(l);
    },
    commit: (id) => commitOf(files.get(id) ?? new Map()),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
