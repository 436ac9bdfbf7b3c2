// Hub downloads without a network: a fake fetch stands in for the hub (its file listing and resolve URLs), a
// Map for the browser cache.
import { describe, expect, it, vi } from 'vitest';
import { mapCache } from '../../helpers/map-cache.ts';
import { filesFromHub, hubApiUrl, hubDownloadPlan, hubUrl, listHubFiles } from '../../../src/hub/hub.ts';
import { cachePartials } from '../../../src/hub/partials.ts';

const HUB = 'http://hub.test';

/** A fake hub serving one repository `owner/name`; `cut` breaks the first body of a file off after N bytes. */
function fakeHub(
  files: Record<string, Uint8Array>,
  opts: {
    status?: Record<string, number>;
    cut?: Record<string, number>;
    listSizes?: boolean;
    /** sha256 the listing gives a file, as for an LFS file. */
    sha256?: Record<string, string>;
  } = {},
) {
  const calls: string[] = [];
  const cutDone = new Set<string>();
  const fetchFn = (async (url: string, init?: RequestInit) => {
    const range = new Headers(init?.headers).get('range');
    calls.push(range ? `${url} ${range}` : url);
    if (url.startsWith(`${HUB}/api/models/`)) {
      if (!url.startsWith(`${HUB}/api/models/owner/name?`)) return new Response('{}', { status: 404 });
      const siblings = Object.entries(files).map(([rfilename, b]) =>
        opts.listSizes === false
          ? { rfilename }
          : {
              rfilename,
              size: b.length,
              ...(opts.sha256?.[rfilename] ? { lfs: { sha256: opts.sha256[rfilename], size: b.length } } : {}),
            },
      );
      return new Response(JSON.stringify({ id: 'owner/name', siblings }));
    }
    const name = url.slice(url.lastIndexOf('/') + 1);
    if (opts.status?.[name]) return new Response('no', { status: opts.status[name] });
    const body = files[name];
    if (!body) return new Response('not found', { status: 404 });
    if (init?.method === 'HEAD') return new Response(null, { headers: { 'content-length': String(body.length) } });
    const start = range ? Number(/bytes=(\d+)-/.exec(range)![1]) : 0;
    const rest = body.slice(start);
    const cut = opts.cut?.[name];
    const cutNow = cut !== undefined && !cutDone.has(name);
    if (cutNow) cutDone.add(name);
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent) {
          if (cutNow) ctl.error(new TypeError('network error'));
          else ctl.close();
          return;
        }
        sent = true;
        ctl.enqueue(cutNow ? rest.slice(0, cut) : rest);
      },
    });
    const headers: Record<string, string> = { 'content-length': String(rest.length) };
    if (range) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    return new Response(stream, { status: range ? 206 : 200, headers });
  }) as unknown as typeof fetch;
  return { fetchFn, calls };
}

const repo = { id: 'owner/name', endpoint: HUB };
const data = new Uint8Array(1000).map((_, i) => i % 251);
const small = (s: string) => new TextEncoder().encode(s);

describe('hub files', () => {
  it('builds the hub URL layout, with the hub address as a setting', () => {
    expect(hubUrl({ id: 'Qwen/Qwen3-0.6B' }, 'config.json')).toBe(
      'https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/config.json',
    );
    expect(hubUrl({ id: 'a/b', endpoint: 'http://127.0.0.1:9/', revision: 'v1' }, 'x/y.json')).toBe(
      'http://127.0.0.1:9/a/b/resolve/v1/x/y.json',
    );
    expect(hubApiUrl({ id: 'a/b' })).toBe('https://huggingface.co/api/models/a/b?blobs=true');
    expect(() => hubUrl({ id: 'a/b', endpoint: 'ftp://x' }, 'f')).toThrow(/hub address 'ftp:\/\/x'/);
  });

  it('downloads with progress, then serves from the cache without asking the hub', async () => {
    const hub = fakeHub({ 'model.safetensors': data });
    const cache = mapCache();
    const progress: number[] = [];
    const read = filesFromHub(repo, { fetchFn: hub.fetchFn, cache, onProgress: (p) => progress.push(p.loaded) });
    expect(await read('model.safetensors')).toEqual(data);
    expect(progress.at(-1)).toBe(1000);
    const again = filesFromHub(repo, { fetchFn: hub.fetchFn, cache });
    expect(await again('model.safetensors')).toEqual(data);
    expect(hub.calls.filter((c) => c.includes('/resolve/')).length).toBe(1);
  });

  it('continues a download that broke off with a Range request', async () => {
    const hub = fakeHub({ 'model.safetensors': data }, { cut: { 'model.safetensors': 400 } });
    const read = filesFromHub(repo, { fetchFn: hub.fetchFn, cache: mapCache(), retryDelayMs: 1 });
    expect(await read('model.safetensors')).toEqual(data);
    expect(hub.calls.filter((c) => c.includes('/resolve/'))).toEqual([
      `${HUB}/owner/name/resolve/main/model.safetensors`,
      `${HUB}/owner/name/resolve/main/model.safetensors bytes=400-`,
    ]);
  });

  it('keeps the bytes of a download that gave up, so a reload continues it with a Range request', async () => {
    const hub = fakeHub({ 'model.safetensors': data }, { cut: { 'model.safetensors': 400 } });
    let up = true;
    const flaky = (async (url: string, init?: RequestInit) => {
      if (!up && url.includes('/resolve/')) throw new TypeError('Failed to fetch');
      const res = await hub.fetchFn(url, init);
      if (url.includes('/resolve/')) up = false; // the network goes away after the first response
      return res;
    }) as unknown as typeof fetch;
    const cache = mapCache();
    const opts = { cache, retryDelayMs: 1 };
    const first = filesFromHub(repo, { ...opts, fetchFn: flaky, partials: cachePartials(cache, 128) });
    await expect(first('model.safetensors')).rejects.toMatchObject({
      kind: 'network',
      message: expect.stringMatching(
        /model.safetensors of 'owner\/name'.*broke off at 400 of 1000 bytes.*try again \(Start in the page, the same command on the command line\)/,
      ),
    });
    // A new page: the modules loaded afresh (nothing kept in memory), a new store over the same Cache Storage.
    vi.resetModules();
    const fresh = await import('../../../src/hub/hub.ts');
    const freshPartials = await import('../../../src/hub/partials.ts');
    const again = fresh.filesFromHub(repo, {
      ...opts,
      fetchFn: hub.fetchFn,
      partials: freshPartials.cachePartials(cache, 128),
    });
    expect(await again('model.safetensors')).toEqual(data);
    expect(hub.calls.filter((c) => c.includes('/resolve/')).at(-1)).toMatch(/bytes=400-$/);
    // Done: the pieces are gone, the file is cached.
    expect([...cache.m.keys()].filter((k) => k.includes('piplay-piece'))).toEqual([]);
    expect(cache.m.get(hubUrl(repo, 'model.safetensors'))).toEqual(data);
  });

  it('keeps a file only when its sha256 is the listed one', async () => {
    const digest = async (b: Uint8Array) =>
      [...new Uint8Array(await crypto.subtle.digest('SHA-256', b as Uint8Array<ArrayBuffer>))]
        .map((x) => x.toString(16).padStart(2, '0'))
        .join('');
    const cache = mapCache();
    const wrong = fakeHub({ 'model.safetensors': data }, { sha256: { 'model.safetensors': '0'.repeat(64) } });
    // The message is made before the download starts: awaited in toThrow's argument, the rejection could come first
    // with no handler yet (an unhandled rejection that failed a CI run).
    const message = `has sha256 ${await digest(data)}, but the hub lists ${'0'.repeat(64)}, so it was not kept`;
    await expect(filesFromHub(repo, { fetchFn: wrong.fetchFn, cache })('model.safetensors')).rejects.toThrow(message);
    expect(cache.m.size).toBe(1); // the listing only
    const right = fakeHub({ 'model.safetensors': data }, { sha256: { 'model.safetensors': await digest(data) } });
    expect(await filesFromHub(repo, { fetchFn: right.fetchFn, cache })('model.safetensors')).toEqual(data);
  });

  it('names a wrong model id, a gated model and a malformed id', async () => {
    const hub = fakeHub({});
    await expect(
      filesFromHub({ id: 'nobody/nothing', endpoint: HUB }, { fetchFn: hub.fetchFn, cache: null })('config.json'),
    ).rejects.toThrow(/'nobody\/nothing' was not found at http:\/\/hub.test: check the id's owner and name/);
    const gated = (async () => new Response('', { status: 401 })) as unknown as typeof fetch;
    await expect(listHubFiles({ id: 'meta/llama' }, { fetchFn: gated, cache: null })).rejects.toThrow(
      /'meta\/llama' is not served by https:\/\/huggingface.co \(HTTP 401\).*private or gated/,
    );
    expect(() => filesFromHub({ id: 'not a model id' })).toThrow(/owner\/name/);
  });

  it('names the hub and says what to do when it cannot be reached', async () => {
    const down = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    await expect(
      filesFromHub(repo, { fetchFn: down, cache: null, retryDelayMs: 1 })('config.json'),
    ).rejects.toMatchObject({
      kind: 'network',
      message: expect.stringMatching(/could not reach http:\/\/hub.test for 'owner\/name'.*check the network/),
    });
  });

  it('reports a file not in the listing as missing without a request, so sharded loading can fall back', async () => {
    const hub = fakeHub({ 'config.json': small('{}') });
    await expect(filesFromHub(repo, { fetchFn: hub.fetchFn, cache: null })('model.safetensors')).rejects.toMatchObject({
      name: 'MissingFileError',
    });
    expect(hub.calls.some((c) => c.includes('/resolve/'))).toBe(false);
  });

  it('plans the download: sizes from the listing, shards from the index, what is cached', async () => {
    const index = small(JSON.stringify({ weight_map: { a: 'model-1.safetensors', b: 'model-2.safetensors' } }));
    const files = {
      'config.json': small('{"x":1}'),
      'model.safetensors.index.json': index,
      'model-1.safetensors': data,
      'model-2.safetensors': data.slice(0, 500),
      'tokenizer.json': small('{}'),
      'tokenizer_config.json': small('{}'),
      'README.md': small('# hi'),
    };
    const cache = mapCache();
    const plan = await hubDownloadPlan(repo, { fetchFn: fakeHub(files).fetchFn, cache });
    expect(plan.files.map((f) => f.name)).toEqual([
      'config.json',
      'model.safetensors.index.json',
      'model-1.safetensors',
      'model-2.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
      'README.md', // the model card: its license is carried into an exported student's
    ]);
    const all = 7 + index.length + 1500 + 2 + 2 + 4;
    expect(plan.bytes).toBe(all);
    // The index was read to find the shards, so it is cached now.
    expect(plan.toDownload).toBe(all - index.length);
    // A listing without sizes or hashes: the plan cannot say how much, and no file of it is taken as whole.
    const { 'model.safetensors.index.json': _i, 'model-1.safetensors': w, 'model-2.safetensors': _w, ...rest } = files;
    const bare = fakeHub({ ...rest, 'model.safetensors': w }, { listSizes: false });
    expect((await hubDownloadPlan(repo, { fetchFn: bare.fetchFn, cache: mapCache() })).bytes).toBe(0);
    await expect(filesFromHub(repo, { fetchFn: bare.fetchFn, cache: null })('config.json')).rejects.toThrow(
      /lists config.json of 'owner\/name' without a size or a hash, so a download of it could not be known to be whole/,
    );
    const { 'tokenizer.json': _, ...noTokenizer } = files;
    await expect(hubDownloadPlan(repo, { fetchFn: fakeHub(noTokenizer).fetchFn, cache: null })).rejects.toThrow(
      /'owner\/name' has no tokenizer.json/,
    );
  });
});
