// A local stand-in for the Hugging Face hub: model folders served at the hub's URL layout
// ({id}/resolve/{revision}/{file}, and api/models/{id} with the file list and sizes), with Range requests, CORS
// for a page on another port, no HTTP caching (so only the page's own cache can spare a download), an optional
// slow body (so a progress bar has time to move) and a first download of a file cut off mid-way (so the page
// must resume it). Files carry an ETag (a hash of their bytes); a test can cut every download of a file at a byte
// and change a file meanwhile. Every request is recorded.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

export interface HubRequest {
  method: string;
  path: string;
  range?: string;
}

export interface HubServerOptions {
  /** id ("owner/name") -> folder on disk. */
  repos: Record<string, string>;
  /** Bytes per write of a file body and the pause between writes (ms); whole bodies at once when absent. */
  chunk?: { bytes: number; ms: number };
  /** file name -> bytes after which its first full download is cut (the connection is destroyed). */
  cutFirst?: Record<string, number>;
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
  close(): Promise<void>;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'range',
  'access-control-expose-headers': 'content-range, content-length, accept-ranges, etag',
  'cache-control': 'no-store',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startHubServer(opts: HubServerOptions): Promise<HubServer> {
  const files = new Map<string, Map<string, Buffer>>();
  for (const [id, dir] of Object.entries(opts.repos)) {
    files.set(id, new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))])));
  }
  const requests: HubRequest[] = [];
  const cut = new Set<string>();
  const cutAll = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const range = req.headers.range;
    requests.push({ method: req.method ?? 'GET', path: url.pathname, ...(range ? { range } : {}) });
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    const api = /^\/api\/models\/([^/]+\/[^/]+)$/.exec(url.pathname);
    if (api) {
      const repo = files.get(decodeURIComponent(api[1]!));
      if (!repo) {
        res.writeHead(404, { ...CORS, 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
        return;
      }
      const siblings = [...repo].map(([rfilename, b]) => ({ rfilename, size: b.length }));
      res.writeHead(200, { ...CORS, 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: api[1], siblings }));
      return;
    }
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const body = m ? files.get(decodeURIComponent(m[1]!))?.get(decodeURIComponent(m[3]!)) : undefined;
    if (!m || !body) {
      res.writeHead(404, CORS).end('Entry not found');
      return;
    }
    const name = decodeURIComponent(m[3]!);
    const r = range ? /^bytes=(\d+)-$/.exec(range) : null;
    const start = r ? Number(r[1]) : 0;
    const rest = body.subarray(start);
    const headers: Record<string, string> = {
      ...CORS,
      'content-length': String(rest.length),
      'accept-ranges': 'bytes',
      etag: `"${createHash('sha1').update(body).digest('hex')}"`,
    };
    if (r) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(r ? 206 : 200, headers);
    if (req.method === 'HEAD') {
      res.end();
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
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
