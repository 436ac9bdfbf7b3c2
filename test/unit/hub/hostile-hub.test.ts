// A hostile or broken hub ends in a clear error, in bounded time and memory, with nothing kept: one that accepts and
// never answers, or sends a byte at a time ($HF_HUB_ETAG_TIMEOUT, $HF_HUB_DOWNLOAD_TIMEOUT), a listing that never
// ends, a redirect loop, a listing that claims a 1.5 GB config.json; a long download says how far it is. The token
// `hf auth login` saves is sent when $HF_TOKEN is not set, and a token holding a line break is refused without being
// shown.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubModelFolder, hubModelRef, notWritten } from '../../../src/hub/hub-folder.ts';
import { RepoCache } from '../../../src/hub/hf-cache.ts';
import { startHubServer, type HubServer } from '../../helpers/hub-server.ts';

const MODEL = new URL('../../../public/models/piplay-tiny/', import.meta.url).pathname;
const ID = 'test-org/piplay-tiny';
const root = mkdtempSync(join(tmpdir(), 'piplay-hostile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let hub: HubServer;
beforeAll(async () => {
  hub = await startHubServer({ repos: { [ID]: MODEL } });
});
afterAll(() => hub?.close());
afterEach(() => hub.lie({}));

let n = 0;
/** A fresh cache and the hub's address; `short` timeouts (seconds) for the tests of timeouts. */
function env(extra: NodeJS.ProcessEnv = {}, short = false): NodeJS.ProcessEnv {
  const t = short ? '0.3' : '20';
  return {
    HF_ENDPOINT: hub.url,
    HF_HUB_CACHE: join(root, `cache-${n++}`),
    HF_HOME: join(root, `home-${n}`),
    HF_HUB_ETAG_TIMEOUT: t,
    HF_HUB_DOWNLOAD_TIMEOUT: t,
    ...extra,
  };
}

/** The download with its log, the time it took, and its error. */
async function load(e: NodeJS.ProcessEnv, opts: { progressEveryMs?: number } = {}) {
  const lines: string[] = [];
  const t0 = Date.now();
  const result = await hubModelFolder(hubModelRef(`hf:${ID}`, e)!, {
    env: e,
    log: (l) => lines.push(l),
    retryDelayMs: 1,
    ...opts,
  }).then(
    (dir) => ({ dir, error: null }),
    (error: Error) => ({ dir: null, error }),
  );
  return { ...result, lines, seconds: (Date.now() - t0) / 1000 };
}

describe('a hub that does not answer, or trickles', () => {
  it('accepts and never answers: the listing times out (HF_HUB_ETAG_TIMEOUT)', async () => {
    hub.lie({ silent: true });
    const r = await load(env({}, true));
    expect(r.error?.message).toContain(
      'no whole answer within 0.3 s (HF_HUB_ETAG_TIMEOUT): the hub is down or overloaded',
    );
    expect(r.seconds).toBeLessThan(10);
  });

  it('a listing sent a byte at a time times out as a whole', async () => {
    hub.lie({ trickle: 'listing', trickleMs: 100 });
    const r = await load(env({}, true));
    expect(r.error?.message).toContain('no whole answer within 0.3 s (HF_HUB_ETAG_TIMEOUT)');
    expect(r.seconds).toBeLessThan(10);
  });

  it('a file sent a byte at a time stalls (HF_HUB_DOWNLOAD_TIMEOUT), in bounded time', async () => {
    hub.lie({ trickle: ['config.json'], trickleMs: 100 });
    // A short download timeout only: the listing, which comes whole, must not be what times out on a busy machine.
    const r = await load(env({ HF_HUB_DOWNLOAD_TIMEOUT: '0.3' }));
    expect(r.error?.message).toMatch(
      /the download of config.json .* broke off at \d+ of \d+ bytes \(the body stalled: \d bytes in 0.3 s \(HF_HUB_DOWNLOAD_TIMEOUT; at least 1024 are needed\)\)/,
    );
    expect(r.seconds).toBeLessThan(15);
  });

  it('a long download says how far it is', async () => {
    const slow = await startHubServer({ repos: { [ID]: MODEL }, chunk: { bytes: 200_000, ms: 30 } });
    try {
      const r = await load({ ...env(), HF_ENDPOINT: slow.url }, { progressEveryMs: 20 });
      expect(r.error).toBeNull();
      expect(r.lines.some((l) => /^hub: model.safetensors \d+\.\d MiB of \d+\.\d MiB \(\d+%\), .*\/s$/.test(l))).toBe(
        true,
      );
    } finally {
      await slow.close();
    }
  });
});

describe('a hub whose answers are wrong', () => {
  it('a listing that never ends is cut at its cap, not read into memory', async () => {
    hub.lie({ endlessListing: true });
    const r = await load(env({ HF_HUB_ETAG_TIMEOUT: '60' }));
    expect(r.error?.message).toContain('the answer ran past 67108864 bytes without ending, so it was not read further');
  }, 60_000);

  it('a redirect loop is named as one, not as the network', async () => {
    hub.lie({ redirectLoop: true });
    const r = await load(env());
    expect(r.error?.message).toContain(`${hub.url} for '${ID}' redirects in a loop (more than 20 redirects`);
    expect(r.error?.message).not.toContain('check the network');
  });

  it('a listing that claims a 1.5 GB config.json is refused before anything is downloaded', async () => {
    hub.lie({ listedSize: { 'config.json': 1_500_000_000 } });
    const from = hub.requests.length;
    const e = env();
    const r = await load(e);
    expect(r.error?.message).toContain(
      `lists config.json of '${ID}' at 1430.5 MiB, but a config.json has at most 64.0 MiB: nothing was downloaded`,
    );
    expect(hub.requests.slice(from).filter((q) => q.path.includes('/resolve/'))).toEqual([]);
  });
});

describe('the token', () => {
  it('sends the token `hf auth login` saved ($HF_HOME/token) when $HF_TOKEN is not set', async () => {
    const e = env();
    mkdirSync(e['HF_HOME']!, { recursive: true });
    writeFileSync(join(e['HF_HOME']!, 'token'), 'hf_saved_token\n');
    const from = hub.requests.length;
    const r = await load(e);
    expect(r.error).toBeNull();
    const sent = hub.requests.slice(from).map((q) => q.authorization);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((a) => a === 'Bearer hf_saved_token')).toBe(true);
    // $HF_TOKEN comes first.
    const first = hub.requests.length;
    expect((await load({ ...env(), HF_TOKEN: 'hf_env' })).error).toBeNull();
    expect(hub.requests[first]!.authorization).toBe('Bearer hf_env');
  });

  it('a token with a line break is refused without being shown', async () => {
    const secret = 'hf_secret_1234';
    const r = await load(env({ HF_TOKEN: `${secret}\nx` }));
    expect(r.error?.message).toContain(
      'the Hugging Face token in $HF_TOKEN holds a space, a line break or another character a token has not',
    );
    expect(r.error?.message).not.toContain(secret);
    expect(r.error?.message).not.toContain('check the network');
    const e = env();
    mkdirSync(e['HF_HOME']!, { recursive: true });
    writeFileSync(join(e['HF_HOME']!, 'token'), `${secret} x\n`);
    const f = await load(e);
    expect(f.error?.message).toContain(`the Hugging Face token in ${join(e['HF_HOME']!, 'token')} holds a space`);
    expect(f.error?.message).not.toContain(secret);
  });
});

describe('the cache', () => {
  it('offline without the model advises `hf download`', async () => {
    const r = await load(env({ HF_HUB_OFFLINE: '1' }));
    expect(r.error?.message).toContain(`download it with \`hf download ${ID}\``);
  });

  it('a cache that cannot be written says so, not that the disk is full', async () => {
    const e = env();
    // The repository's blobs folder is a file: every write into it fails (as a read-only cache's writes do).
    const repo = join(e['HF_HUB_CACHE']!, `models--${ID.replace('/', '--')}`);
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, 'blobs'), 'not a folder');
    const r = await load(e);
    expect(r.error?.message).toMatch(/was downloaded but could not write .*blobs\/[0-9a-f]+: .*\(EEXIST\)/);
    expect(r.error?.message).not.toContain('is the disk full');
    expect(readdirSync(repo)).toEqual(['blobs']);
    // A read-only cache (EROFS; EACCES for another user's) is named as such, with what to do.
    const cache = new RepoCache('/ro/hub', ID);
    const ro = Object.assign(new Error('read-only'), { code: 'EROFS' });
    expect(notWritten({ id: ID }, 'config.json', cache, { path: '/ro/hub/x', error: ro }, 'abc')).toBe(
      `hub: config.json of '${ID}' was downloaded but could not write /ro/hub/x: the file system is read-only ` +
        '(EROFS): the Hugging Face cache /ro/hub cannot be written; set HF_HUB_CACHE to a folder you can write',
    );
  });
});
