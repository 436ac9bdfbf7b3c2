// `--model hf:owner/name` on the command line, against a local server with the hub's URL layout over real HTTP:
// the files land in the Hugging Face cache layout (read back by the hub's own JS library), a second run downloads
// nothing, offline runs ask nothing, and a wrong id is named; a download that gave up is continued by the next run
// from its .part, or started again when the file changed on the hub; a hub that lies is caught before its bytes
// are kept.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanCacheDir } from '@huggingface/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hfCacheRoot } from '../../../src/hub/hf-cache.ts';
import { hubModelFolder, hubModelRef, olderFolder } from '../../../src/hub/hub-folder.ts';
import { startHubServer, type HubServer } from '../../helpers/hub-server.ts';

const MODEL = new URL('../../../public/models/piplay-tiny/', import.meta.url).pathname;
const ID = 'test-org/piplay-tiny';
const NAMES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** Whether two files hold the same bytes (a deep toEqual of megabytes is slow). */
const same = (a: string, b: string) => readFileSync(a).equals(readFileSync(b));
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
const repoDir = (env: NodeJS.ProcessEnv, id: string) => join(hfCacheRoot(env), `models--${id.replace('/', '--')}`);
const resolves = (hub: HubServer, from = 0) => hub.requests.slice(from).filter((r) => r.path.includes('/resolve/'));
/** A fetch that fails the test if anything is asked of the network. */
const noNetwork = (async (url: string) => {
  throw new Error(`asked the network for ${url}`);
}) as unknown as typeof fetch;

describe('hf: models on the command line', () => {
  let hub: HubServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    hub = await startHubServer({
      repos: { [ID]: MODEL, 'piplay/tiny': MODEL },
      chunk: { bytes: 65536, ms: 0 },
      cutFirst: { 'model.safetensors': 500_000 },
    });
    env = { HF_ENDPOINT: hub.url, HF_HUB_CACHE: tmp('piplay-hub-'), HF_TOKEN: 'hf_test' };
  });
  afterAll(() => hub?.close());

  it('reads hf:owner/name[@revision] with the hub address from $HF_ENDPOINT, and refuses a revision out of the cache', () => {
    expect(hubModelRef('public/models/piplay-tiny')).toBeNull();
    expect(hubModelRef('hf:Qwen/Qwen3-0.6B@v2', { HF_ENDPOINT: 'http://m' })).toEqual({
      id: 'Qwen/Qwen3-0.6B',
      revision: 'v2',
      endpoint: 'http://m',
    });
    expect(hubModelRef('hf:a/b@refs/pr/1', {})).toEqual({ id: 'a/b', revision: 'refs/pr/1' });
    expect(() => hubModelRef('hf:')).toThrow(/hf:owner\/name/);
    for (const bad of ['../../x', 'a/../../b', '/abs', 'a//b', '.']) {
      expect(() => hubModelRef(`hf:owner/name@${bad}`, {})).toThrow(/is not a revision of 'owner\/name'/);
    }
  });

  it("reads the cache root from the environment as the hub's tools do", () => {
    expect(hfCacheRoot({ HF_HUB_CACHE: '/a', HF_HOME: '/b' })).toBe('/a');
    expect(hfCacheRoot({ HUGGINGFACE_HUB_CACHE: '/c', HF_HOME: '/b' })).toBe('/c');
    expect(hfCacheRoot({ HF_HOME: '/b', XDG_CACHE_HOME: '/x' })).toBe('/b/hub');
    expect(hfCacheRoot({ XDG_CACHE_HOME: '/x' })).toBe('/x/huggingface/hub');
  });

  it('downloads into the Hugging Face cache layout (resuming a cut connection), then downloads nothing', async () => {
    const repo = hubModelRef(`hf:${ID}`, env)!;
    const lines: string[] = [];
    const dir = await hubModelFolder(repo, { env, log: (l) => lines.push(l) });
    const commit = hub.commit(ID);
    expect(dir).toBe(join(repoDir(env, ID), 'snapshots', commit));
    expect(readFileSync(join(repoDir(env, ID), 'refs', 'main'), 'utf8')).toBe(commit);
    for (const f of NAMES) {
      expect(same(join(dir, f), join(MODEL, f))).toBe(true);
      expect(lstatSync(join(dir, f)).isSymbolicLink()).toBe(true);
    }
    const weights = readFileSync(join(MODEL, 'model.safetensors'));
    expect(existsSync(join(repoDir(env, ID), 'blobs', sha256(weights)))).toBe(true);
    const ranges = resolves(hub).filter((r) => r.path.endsWith('/model.safetensors'));
    expect(ranges.map((r) => r.range)).toEqual([undefined, expect.stringMatching(/^bytes=[1-9]\d*-$/)]);
    expect(hub.requests.every((r) => r.authorization === 'Bearer hf_test')).toBe(true);
    const mib = (NAMES.reduce((n, f) => n + statSync(join(MODEL, f)).size, 0) / 2 ** 20).toFixed(1);
    expect(lines[0]).toContain(`needs ${mib} MiB of ${mib} MiB`);
    expect(readdirSync(join(repoDir(env, ID), 'blobs')).filter((f) => /\.(part|download)/.test(f))).toEqual([]);

    // The hub's own JS library reads the folder as a cache entry: the revision, its ref and its files.
    const scan = await scanCacheDir(hfCacheRoot(env));
    const entry = scan.repos.find((r) => r.id.name === ID)!;
    expect(entry.id.type).toBe('model');
    expect(entry.revisions.map((r) => [r.commitOid, r.refs])).toEqual([[commit, ['main']]]);
    expect(entry.revisions[0]!.files.map((f) => f.path.slice(dir.length + 1)).sort()).toEqual(NAMES);

    const files = resolves(hub).length;
    const again: string[] = [];
    expect(await hubModelFolder(repo, { env, log: (l) => again.push(l) })).toBe(dir);
    expect(resolves(hub).length).toBe(files);
    expect(again).toEqual([]);
  });

  it('with HF_HUB_OFFLINE asks nothing of the network, and says what to do when the cache lacks the model', async () => {
    const repo = hubModelRef(`hf:${ID}`, env)!;
    await hubModelFolder(repo, { env, log: () => {} });
    const offline = { ...env, HF_HUB_OFFLINE: '1' };
    expect(await hubModelFolder(repo, { env: offline, fetchFn: noNetwork })).toBe(
      join(repoDir(env, ID), 'snapshots', hub.commit(ID)),
    );
    await expect(
      hubModelFolder(hubModelRef('hf:test-org/absent', env)!, { env: offline, fetchFn: noNetwork }),
    ).rejects.toThrow(
      `the Hugging Face cache ${hfCacheRoot(env)} holds no complete copy of 'test-org/absent' at main (it has no ` +
        'refs/main), and HF_HUB_OFFLINE is set: run once without HF_HUB_OFFLINE',
    );
  });

  it('uses the cached copy when the hub cannot be reached', async () => {
    const repo = hubModelRef(`hf:${ID}`, env)!;
    const dir = await hubModelFolder(repo, { env, log: () => {} });
    const down = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    const lines: string[] = [];
    expect(await hubModelFolder(repo, { env, fetchFn: down, retryDelayMs: 1, log: (l) => lines.push(l) })).toBe(dir);
    expect(lines).toEqual([expect.stringMatching(/^hub: could not reach .*; using the cached copy in /)]);
  });

  it("loads a model the hub's Python tools cached (blobs, snapshot links, refs) with HF_HUB_OFFLINE", async () => {
    // The layout huggingface_hub writes, made by hand: models--piplay--tiny with the embedded model.
    const root = tmp('piplay-hf-');
    const repo = join(root, 'models--piplay--tiny');
    const commit = 'c0ffee'.padEnd(40, '0');
    for (const f of NAMES) {
      const bytes = readFileSync(join(MODEL, f));
      const blob = sha256(bytes);
      mkdirSync(join(repo, 'blobs'), { recursive: true });
      writeFileSync(join(repo, 'blobs', blob), bytes);
      mkdirSync(join(repo, 'snapshots', commit), { recursive: true });
      symlinkSync(`../../blobs/${blob}`, join(repo, 'snapshots', commit, f));
    }
    mkdirSync(join(repo, 'refs'));
    writeFileSync(join(repo, 'refs', 'main'), commit);
    const dir = await hubModelFolder(hubModelRef('hf:piplay/tiny', {})!, {
      env: { HF_HUB_CACHE: root, HF_HUB_OFFLINE: '1' },
      fetchFn: noNetwork,
    });
    expect(dir).toBe(join(repo, 'snapshots', commit));
    expect(same(join(dir, 'model.safetensors'), join(MODEL, 'model.safetensors'))).toBe(true);

    // The command a user runs: `npm run eval -- --model hf:piplay/tiny --preset smoke`, with the hub asked nothing.
    const from = hub.requests.length;
    const evalCli = new URL('../../../src/cli/eval.ts', import.meta.url).pathname;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', evalCli, '--model', 'hf:piplay/tiny', '--preset', 'smoke'],
      {
        env: { ...process.env, HF_HUB_CACHE: root, HF_HUB_OFFLINE: '1', HF_ENDPOINT: hub.url },
        encoding: 'utf8',
      },
    );
    expect(child.stderr + child.stdout).toMatch(/eval of the model \| EM/);
    expect(child.status).toBe(0);
    expect(hub.requests.length).toBe(from);
  }, 120_000);

  it('takes files of an older piplay download ($PIPLAY_HUB_CACHE) whose hashes match, downloading nothing', async () => {
    const older = tmp('piplay-older-');
    const e = { HF_ENDPOINT: hub.url, HF_HUB_CACHE: tmp('piplay-hub-'), PIPLAY_HUB_CACHE: older };
    const repo = hubModelRef('hf:piplay/tiny', e)!;
    cpSync(MODEL, olderFolder(repo, e), { recursive: true });
    const from = hub.requests.length;
    const lines: string[] = [];
    const dir = await hubModelFolder(repo, { env: e, log: (l) => lines.push(l) });
    expect(resolves(hub, from)).toEqual([]);
    expect(lines[0]).toMatch(/^hub: 4 file\(s\) of 'piplay\/tiny' taken from the older piplay download in /);
    expect(same(join(dir, 'tokenizer.json'), join(MODEL, 'tokenizer.json'))).toBe(true);
    // Offline, with nothing in the Hugging Face cache, the older folder is used as it is.
    const only = { HF_HUB_CACHE: tmp('piplay-hub-'), PIPLAY_HUB_CACHE: older, HF_HUB_OFFLINE: '1' };
    const said: string[] = [];
    expect(await hubModelFolder(repo, { env: only, fetchFn: noNetwork, log: (l) => said.push(l) })).toBe(
      olderFolder(repo, only),
    );
    expect(said[0]).toMatch(/using the older piplay download of 'piplay\/tiny'/);
  });

  it('names a wrong id and the hub it asked', async () => {
    await expect(hubModelFolder(hubModelRef('hf:test-org/nothing', env)!, { env })).rejects.toThrow(
      `the Hugging Face model 'test-org/nothing' was not found at ${hub.url}`,
    );
  });
});

// Across runs: each call is a new store over the same cache folder, as the next process would be.
describe('hf: downloads cut off in one run and resumed in the next', () => {
  const WEIGHTS = new Uint8Array(40_000).map((_, i) => (i * 13) % 251);
  const CUT = 10_000;
  let hub: HubServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    const model = tmp('piplay-hub-model-');
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(model, f), '{}');
    writeFileSync(join(model, 'model.safetensors'), WEIGHTS);
    const repos = Object.fromEntries(['resume', 'etag', 'unwritable'].map((n) => [`test-org/${n}`, model]));
    hub = await startHubServer({ repos, chunk: { bytes: 4096, ms: 0 } });
    env = { HF_ENDPOINT: hub.url, HF_HUB_CACHE: tmp('piplay-hub-') };
  });
  afterAll(() => hub?.close());

  const weightRanges = (id: string, from = 0) =>
    resolves(hub, from)
      .filter((r) => r.path.startsWith(`/${id}/`) && r.path.endsWith('/model.safetensors'))
      .map((r) => r.range);
  const blobs = (id: string) => join(repoDir(env, id), 'blobs');
  const parts = (id: string) => readdirSync(blobs(id)).filter((f) => /\.(part|download)/.test(f));

  /** A first run whose weights download is cut at CUT bytes every time, until the retries give up. */
  async function cutRun(id: string): Promise<{ part: string; kept: number }> {
    const repo = hubModelRef(`hf:${id}`, env)!;
    hub.cut('model.safetensors', CUT);
    await expect(hubModelFolder(repo, { env, retryDelayMs: 1, log: () => {} })).rejects.toThrow(/broke off/);
    hub.cut('model.safetensors', undefined);
    expect(existsSync(join(blobs(id), sha256(WEIGHTS)))).toBe(false);
    const part = join(blobs(id), `${sha256(WEIGHTS)}.part`);
    const bytes = readFileSync(part);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.length).toBeLessThanOrEqual(CUT + 4096);
    expect(new Uint8Array(bytes)).toEqual(WEIGHTS.subarray(0, bytes.length));
    return { part, kept: bytes.length };
  }

  it('leaves a .part; the next run asks for the rest with Range and ends byte-identical, with no .part', async () => {
    const id = 'test-org/resume';
    const { kept } = await cutRun(id);
    const from = hub.requests.length;
    const lines: string[] = [];
    const dir = await hubModelFolder(hubModelRef(`hf:${id}`, env)!, {
      env,
      retryDelayMs: 1,
      log: (l) => lines.push(l),
    });
    expect(weightRanges(id, from)).toEqual([`bytes=${kept}-`]);
    expect(lines).toContain(`hub: resuming model.safetensors at ${(kept / 1024).toFixed(1)} KiB of 39.1 KiB`);
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(WEIGHTS);
    expect(parts(id)).toEqual([]);
  });

  it('fails naming the folder when the finished file cannot be written there, and keeps its .part', async () => {
    const id = 'test-org/unwritable';
    const repo = hubModelRef(`hf:${id}`, env)!;
    const blob = join(blobs(id), sha256(WEIGHTS));
    // A folder where the whole file is written before its rename: the write fails as on a full disk.
    mkdirSync(`${blob}.download`, { recursive: true });
    await expect(hubModelFolder(repo, { env, retryDelayMs: 1, log: () => {} })).rejects.toThrow(
      `model.safetensors of '${id}' was downloaded but could not write ${blob}: it is a folder, not a file (EISDIR)`,
    );
    expect(existsSync(blob)).toBe(false);
    expect(new Uint8Array(readFileSync(`${blob}.part`))).toEqual(WEIGHTS);
    rmdirSync(`${blob}.download`);
    const dir = await hubModelFolder(repo, { env, retryDelayMs: 1, log: () => {} });
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(WEIGHTS);
    expect(parts(id)).toEqual([]);
  });

  it('starts again, dropping the old part, when the file changed on the hub', async () => {
    const id = 'test-org/etag';
    const { part } = await cutRun(id);
    const changed = WEIGHTS.map((b) => 255 - b);
    hub.put(id, 'model.safetensors', changed);
    const from = hub.requests.length;
    const lines: string[] = [];
    const dir = await hubModelFolder(hubModelRef(`hf:${id}`, env)!, {
      env,
      retryDelayMs: 1,
      log: (l) => lines.push(l),
    });
    expect(weightRanges(id, from)).toEqual([undefined]);
    expect(lines).toContain(
      'hub: model.safetensors changed on the hub since its partial download (another version now): starting again',
    );
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(changed);
    expect(existsSync(part)).toBe(false);
    expect(parts(id)).toEqual([]);
  });

  // SIGKILL: the part is resumed from its last sync (every 16 KiB here). SIGINT (Ctrl-C): the process syncs all it
  // received before it exits, though its sync interval (1 MiB) is longer than the file.
  it.each([
    ['SIGKILL', 16 * 1024],
    ['SIGINT', 2 ** 20],
  ] as const)('resumes what a process %s-ed mid-download synced, byte-identical', async (signal, syncBytes) => {
    const big = new Uint8Array(200_000).map((_, i) => (i * 29) % 241);
    const model = tmp('piplay-hub-model-');
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(model, f), '{}');
    writeFileSync(join(model, 'model.safetensors'), big);
    const slow = await startHubServer({ repos: { 'test-org/killed': model }, chunk: { bytes: 4096, ms: 10 } });
    try {
      const e = { HF_ENDPOINT: slow.url, HF_HUB_CACHE: tmp('piplay-hub-') };
      const repo = hubModelRef('hf:test-org/killed', e)!;
      const part = join(repoDir(e, repo.id), 'blobs', `${sha256(big)}.part`);
      const helper = new URL('../../helpers/hub-download.ts', import.meta.url).pathname;
      const args = ['--import', 'tsx', helper, slow.url, e.HF_HUB_CACHE, repo.id, String(syncBytes)];
      const child = spawn(process.execPath, args, { stdio: 'ignore' });
      let done = false;
      const exited = new Promise<number | null>((ok) => child.on('exit', ok)).finally(() => (done = true));
      while (!done && !(existsSync(part) && statSync(part).size > 100_000)) await new Promise((r) => setTimeout(r, 2));
      expect(done).toBe(false); // killed mid-way, not after it finished (or failed)
      child.kill(signal);
      const code = await exited;
      const synced = (JSON.parse(readFileSync(`${part}.json`, 'utf8')) as { length: number }).length;
      if (signal === 'SIGINT') {
        expect(code).toBe(130);
        expect(synced).toBe(statSync(part).size);
      }
      expect(synced).toBeGreaterThan(0);
      expect(synced).toBeLessThanOrEqual(statSync(part).size);
      const from = slow.requests.length;
      const dir = await hubModelFolder(repo, { env: e, log: () => {} });
      const ranges = resolves(slow, from).filter((r) => r.path.endsWith('/model.safetensors'));
      expect(ranges.map((r) => r.range)).toEqual([`bytes=${synced}-`]);
      expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(big);
      expect(readdirSync(join(repoDir(e, repo.id), 'blobs')).filter((f) => f.includes('.part'))).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

// A hub that lies: every case ends in a message that names the file and keeps nothing it sent as the model.
describe('hf: a hub that lies', () => {
  const WEIGHTS = new Uint8Array(40_000).map((_, i) => (i * 17) % 253);
  let hub: HubServer;
  let env: NodeJS.ProcessEnv;
  let n = 0;
  beforeAll(async () => {
    const model = tmp('piplay-hub-model-');
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(model, f), '{}');
    writeFileSync(join(model, 'model.safetensors'), WEIGHTS);
    const sharded = tmp('piplay-hub-sharded-');
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(sharded, f), '{}');
    writeFileSync(
      join(sharded, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { a: '../../evil.safetensors' } }),
    );
    const repos = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`test-org/lie${i}`, model]));
    hub = await startHubServer({ repos: { ...repos, 'test-org/sharded': sharded }, chunk: { bytes: 4096, ms: 0 } });
    env = { HF_ENDPOINT: hub.url, HF_HUB_CACHE: tmp('piplay-hub-') };
  });
  afterAll(() => hub?.close());
  const next = () => `test-org/lie${n++}`;
  const weightAsks = (id: string, from: number) =>
    resolves(hub, from).filter((r) => r.path === `/${id}/resolve/${hub.commit(id)}/model.safetensors`).length;
  const kept = (id: string) => existsSync(join(repoDir(env, id), 'blobs', sha256(WEIGHTS)));
  const run = (id: string) => hubModelFolder(hubModelRef(`hf:${id}`, env)!, { env, retryDelayMs: 1, log: () => {} });

  it('a Content-Length twice the file: a bounded number of attempts, then a message; nothing kept', async () => {
    const id = next();
    hub.lie({ lengthFactor: 2 });
    const from = hub.requests.length;
    await expect(run(id)).rejects.toThrow(
      new RegExp(`config.json of '${id}'.*the server announced 4 bytes for a file listed at 2`),
    );
    expect(weightAsks(id, from)).toBeLessThanOrEqual(5);
    expect(kept(id)).toBe(false);
    hub.lie({});
  });

  it('a listing with neither sizes nor hashes: refused before any file is asked for', async () => {
    const id = next();
    hub.lie({ bareListing: true });
    const from = hub.requests.length;
    await expect(run(id)).rejects.toThrow(/lists config.json of 'test-org\/lie\d' without a hash/);
    expect(resolves(hub, from)).toEqual([]);
    hub.lie({});
  });

  it('a body that runs past the listed size is cut there, never read whole, and not kept', async () => {
    const id = next();
    hub.lie({ extraBytes: 64 * 2 ** 20 });
    const t0 = Date.now();
    await expect(run(id)).rejects.toThrow(/config.json of .*received more bytes than the file's length \(2\)/);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(kept(id)).toBe(false);
    hub.lie({});
  });

  it('500s are retried with back-off, and the download then completes', async () => {
    const id = next();
    hub.lie({ fail500: { 'model.safetensors': 2 } });
    const from = hub.requests.length;
    const dir = await run(id);
    expect(weightAsks(id, from)).toBe(3);
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(WEIGHTS);
    hub.lie({});
  });

  it('a listed size past the free disk is refused before anything is downloaded', async () => {
    const id = next();
    hub.lie({ listedSize: { 'model.safetensors': 909 * 2 ** 40 } });
    const from = hub.requests.length;
    await expect(run(id)).rejects.toThrow(
      new RegExp(`'${id}' needs 9308\\d+\\.\\d GiB downloaded, but the disk of .* GiB free .*HF_HUB_CACHE`),
    );
    expect(resolves(hub, from)).toEqual([]);
    hub.lie({});
  });

  it('bytes whose sha256 is not the listed one are refused and not kept; a later honest run succeeds', async () => {
    const id = next();
    hub.lie({ listedSha256: { 'model.safetensors': 'ab'.repeat(32) } });
    await expect(run(id)).rejects.toThrow(
      new RegExp(
        `model.safetensors of '${id}' from .* has sha256 ${sha256(WEIGHTS)}, but the hub lists ${'ab'.repeat(32)}`,
      ),
    );
    expect(existsSync(join(repoDir(env, id), 'blobs', 'ab'.repeat(32)))).toBe(false);
    hub.lie({});
    const dir = await run(id);
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(WEIGHTS);
  });

  it('a shard name that leaves the repository is refused before it is asked for', async () => {
    const from = hub.requests.length;
    await expect(run('test-org/sharded')).rejects.toThrow(
      'model.safetensors.index.json of Hugging Face model \'test-org/sharded\' names the file "../../evil.safetensors", which piplay refuses',
    );
    expect(hub.requests.slice(from).some((r) => r.path.includes('evil'))).toBe(false);
  });
});
