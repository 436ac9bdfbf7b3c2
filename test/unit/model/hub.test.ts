// Hub downloads without a network: a fake fetch stands in for the hub, a Map for the browser cache.
import { describe, expect, it } from 'vitest';
import { filesFromHub, hubUrl } from '../../../src/model/hub.ts';

function fakeHub(files: Record<string, Uint8Array>, status: Record<string, number> = {}) {
  const calls: string[] = [];
  const fetchFn = (async (url: string) => {
    calls.push(url);
    const name = url.slice(url.lastIndexOf('/') + 1);
    if (status[name]) return new Response('no', { status: status[name] });
    const body = files[name];
    if (!body) return new Response('not found', { status: 404 });
    return new Response(body.slice().buffer, { headers: { 'content-length': String(body.length) } });
  }) as unknown as typeof fetch;
  return { fetchFn, calls };
}

function mapCache() {
  const m = new Map<string, Uint8Array>();
  return {
    m,
    async match(url: RequestInfo | URL) {
      const b = m.get(String(url));
      return b ? new Response(b.slice().buffer) : undefined;
    },
    async put(url: RequestInfo | URL, res: Response) {
      m.set(String(url), new Uint8Array(await res.arrayBuffer()));
    },
  };
}

describe('hub files', () => {
  it('builds transformers-style URLs', () => {
    expect(hubUrl('Qwen/Qwen3-0.6B', 'config.json')).toBe(
      'https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/config.json',
    );
  });

  it('downloads with progress, then serves from the cache', async () => {
    const data = new Uint8Array(1000).map((_, i) => i % 251);
    const hub = fakeHub({ 'model.safetensors': data });
    const cache = mapCache();
    const progress: number[] = [];
    const read = filesFromHub('owner/name', {
      fetchFn: hub.fetchFn,
      cache,
      onProgress: (p) => progress.push(p.loaded),
    });
    expect(await read('model.safetensors')).toEqual(data);
    expect(progress.at(-1)).toBe(1000);
    expect(await read('model.safetensors')).toEqual(data);
    expect(hub.calls.length).toBe(1);
  });

  it('names a wrong model id, a gated model and a malformed id', async () => {
    const hub = fakeHub({}, { 'config.json': 404 });
    await expect(filesFromHub('nobody/nothing', { fetchFn: hub.fetchFn, cache: null })('config.json')).rejects.toThrow(
      /'nobody\/nothing' was not found/,
    );
    const gated = fakeHub({}, { 'config.json': 401 });
    await expect(filesFromHub('meta/llama', { fetchFn: gated.fetchFn, cache: null })('config.json')).rejects.toThrow(
      /gated or private/,
    );
    expect(() => filesFromHub('not a model id')).toThrow(/owner\/name/);
  });

  it('reports a missing optional file as missing, so sharded loading can fall back', async () => {
    const hub = fakeHub({});
    await expect(
      filesFromHub('owner/name', { fetchFn: hub.fetchFn, cache: null })('model.safetensors'),
    ).rejects.toMatchObject({
      name: 'MissingFileError',
    });
  });
});
