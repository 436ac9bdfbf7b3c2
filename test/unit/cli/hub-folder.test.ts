// `--model hf:owner/name` on the command line, against a local server with the hub's URL layout over real HTTP:
// the files land in the disk cache (a cut connection resumed with Range), a second run downloads nothing, and a
// wrong id is named; a download that gave up is continued by the next run from its .part, or started again when the
// file changed on the hub.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubFolderPath, hubModelFolder, hubModelRef } from '../../../src/cli/hub-folder.ts';
import { startHubServer, type HubServer } from '../../helpers/hub-server.ts';

const MODEL = new URL('../../../public/models/piplay-tiny/', import.meta.url).pathname;
const ID = 'test-org/piplay-tiny';

describe('hf: models on the command line', () => {
  let hub: HubServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    hub = await startHubServer({
      repos: { [ID]: MODEL },
      chunk: { bytes: 65536, ms: 0 },
      cutFirst: { 'model.safetensors': 500_000 },
    });
    env = { HF_ENDPOINT: hub.url, PIPLAY_HUB_CACHE: mkdtempSync(join(tmpdir(), 'piplay-hub-')) };
  });
  afterAll(() => hub?.close());

  it('reads hf:owner/name[@revision] with the hub address from $HF_ENDPOINT', () => {
    expect(hubModelRef('public/models/piplay-tiny')).toBeNull();
    expect(hubModelRef('hf:Qwen/Qwen3-0.6B@v2', { HF_ENDPOINT: 'http://m' })).toEqual({
      id: 'Qwen/Qwen3-0.6B',
      revision: 'v2',
      endpoint: 'http://m',
    });
    expect(() => hubModelRef('hf:')).toThrow(/hf:owner\/name/);
  });

  it('downloads into the disk cache (resuming a cut connection), then downloads nothing', async () => {
    const repo = hubModelRef(`hf:${ID}`, env)!;
    const lines: string[] = [];
    const dir = await hubModelFolder(repo, { env, log: (l) => lines.push(l) });
    expect(dir).toBe(hubFolderPath(repo, env));
    const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
    for (const f of names) expect(readFileSync(join(dir, f))).toEqual(readFileSync(join(MODEL, f)));
    const weights = hub.requests.filter((r) => r.path.endsWith('/model.safetensors'));
    expect(weights.map((r) => r.range)).toEqual([undefined, expect.stringMatching(/^bytes=[1-9]\d*-$/)]);
    const mib = (names.reduce((n, f) => n + statSync(join(MODEL, f)).size, 0) / 2 ** 20).toFixed(1);
    expect(lines[0]).toContain(`needs ${mib} MiB of ${mib} MiB`);
    expect(readdirSync(dir).filter((f) => /\.(part|download)/.test(f))).toEqual([]);

    const files = hub.requests.filter((r) => r.path.includes('/resolve/')).length;
    const again: string[] = [];
    await hubModelFolder(repo, { env, log: (l) => again.push(l) });
    expect(hub.requests.filter((r) => r.path.includes('/resolve/')).length).toBe(files);
    expect(again).toEqual([]);
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
    const model = mkdtempSync(join(tmpdir(), 'piplay-hub-model-'));
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(model, f), '{}');
    writeFileSync(join(model, 'model.safetensors'), WEIGHTS);
    const repos = Object.fromEntries(['resume', 'etag', 'length', 'unwritable'].map((n) => [`test-org/${n}`, model]));
    hub = await startHubServer({ repos, chunk: { bytes: 4096, ms: 0 } });
    env = { HF_ENDPOINT: hub.url, PIPLAY_HUB_CACHE: mkdtempSync(join(tmpdir(), 'piplay-hub-')) };
  });
  afterAll(() => hub?.close());

  const weightRanges = (id: string, from = 0) =>
    hub.requests
      .slice(from)
      .filter((r) => r.path === `/${id}/resolve/main/model.safetensors`)
      .map((r) => r.range);
  const parts = (dir: string) => readdirSync(dir).filter((f) => /\.(part|download)/.test(f));

  /** A first run whose weights download is cut at CUT bytes every time, until the retries give up. */
  async function cutRun(id: string): Promise<{ dir: string; kept: number }> {
    const repo = hubModelRef(`hf:${id}`, env)!;
    hub.cut('model.safetensors', CUT);
    await expect(hubModelFolder(repo, { env, retryDelayMs: 1, log: () => {} })).rejects.toThrow(/broke off/);
    hub.cut('model.safetensors', undefined);
    const dir = hubFolderPath(repo, env);
    expect(existsSync(join(dir, 'model.safetensors'))).toBe(false);
    const part = readFileSync(join(dir, 'model.safetensors.part'));
    expect(part.length).toBeGreaterThan(0);
    expect(part.length).toBeLessThanOrEqual(CUT + 4096);
    expect(new Uint8Array(part)).toEqual(WEIGHTS.subarray(0, part.length));
    return { dir, kept: part.length };
  }

  it('leaves a .part; the next run asks for the rest with Range and ends byte-identical, with no .part', async () => {
    const id = 'test-org/resume';
    const { dir, kept } = await cutRun(id);
    const from = hub.requests.length;
    const lines: string[] = [];
    await hubModelFolder(hubModelRef(`hf:${id}`, env)!, { env, retryDelayMs: 1, log: (l) => lines.push(l) });
    expect(weightRanges(id, from)).toEqual([`bytes=${kept}-`]);
    expect(lines).toContain(`hub: resuming model.safetensors at ${(kept / 1024).toFixed(1)} KiB of 39.1 KiB`);
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(WEIGHTS);
    expect(parts(dir)).toEqual([]);
  });

  it('fails naming the folder when the finished file cannot be written there, and keeps its .part', async () => {
    const id = 'test-org/unwritable';
    const repo = hubModelRef(`hf:${id}`, env)!;
    const dir = hubFolderPath(repo, env);
    // A folder where the whole file is written before its rename: the write fails as on a full disk.
    mkdirSync(join(dir, 'model.safetensors.download'), { recursive: true });
    await expect(hubModelFolder(repo, { env, retryDelayMs: 1, log: () => {} })).rejects.toThrow(
      `model.safetensors of '${id}' was downloaded but could not be written into ${dir}`,
    );
    expect(existsSync(join(dir, 'model.safetensors'))).toBe(false);
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors.part')))).toEqual(WEIGHTS);
    rmdirSync(join(dir, 'model.safetensors.download'));
    await hubModelFolder(repo, { env, retryDelayMs: 1, log: () => {} });
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(WEIGHTS);
    expect(parts(dir)).toEqual([]);
  });

  it('starts again when the file changed on the hub with the same length (another ETag)', async () => {
    const id = 'test-org/etag';
    const { dir, kept } = await cutRun(id);
    const changed = WEIGHTS.map((b) => 255 - b);
    hub.put(id, 'model.safetensors', changed);
    const from = hub.requests.length;
    const lines: string[] = [];
    await hubModelFolder(hubModelRef(`hf:${id}`, env)!, { env, retryDelayMs: 1, log: (l) => lines.push(l) });
    expect(weightRanges(id, from)).toEqual([`bytes=${kept}-`, undefined]);
    expect(lines).toContainEqual(expect.stringMatching(/model\.safetensors changed on the hub .*ETag.*starting again/));
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(changed);
    expect(parts(dir)).toEqual([]);
  });

  it('starts again without a Range request when the hub lists another length', async () => {
    const id = 'test-org/length';
    const { dir } = await cutRun(id);
    const longer = new Uint8Array(50_000).map((_, i) => (i * 7) % 253);
    hub.put(id, 'model.safetensors', longer);
    const from = hub.requests.length;
    const lines: string[] = [];
    await hubModelFolder(hubModelRef(`hf:${id}`, env)!, { env, retryDelayMs: 1, log: (l) => lines.push(l) });
    expect(weightRanges(id, from)).toEqual([undefined]);
    expect(lines).toContain(
      'hub: model.safetensors changed on the hub since its partial download (the hub lists 50000 bytes; ' +
        'the kept part came from a file of 40000): starting again',
    );
    expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(longer);
    expect(parts(dir)).toEqual([]);
  });

  // SIGKILL: the part is resumed from its last sync (every 16 KiB here). SIGINT (Ctrl-C): the process syncs all it
  // received before it exits, though its sync interval (1 MiB) is longer than the file.
  it.each([
    ['SIGKILL', 16 * 1024],
    ['SIGINT', 2 ** 20],
  ] as const)('resumes what a process %s-ed mid-download synced, byte-identical', async (signal, syncBytes) => {
    const big = new Uint8Array(200_000).map((_, i) => (i * 29) % 241);
    const model = mkdtempSync(join(tmpdir(), 'piplay-hub-model-'));
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(model, f), '{}');
    writeFileSync(join(model, 'model.safetensors'), big);
    const slow = await startHubServer({ repos: { 'test-org/killed': model }, chunk: { bytes: 4096, ms: 10 } });
    try {
      const env = { HF_ENDPOINT: slow.url, PIPLAY_HUB_CACHE: mkdtempSync(join(tmpdir(), 'piplay-hub-')) };
      const repo = hubModelRef('hf:test-org/killed', env)!;
      const part = join(hubFolderPath(repo, env), 'model.safetensors.part');
      const helper = new URL('../../helpers/hub-download.ts', import.meta.url).pathname;
      const args = ['--import', 'tsx', helper, slow.url, env.PIPLAY_HUB_CACHE, repo.id, String(syncBytes)];
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
      await hubModelFolder(repo, { env, log: () => {} });
      const ranges = slow.requests.slice(from).filter((r) => r.path.endsWith('/model.safetensors'));
      expect(ranges.map((r) => r.range)).toEqual([`bytes=${synced}-`]);
      const dir = hubFolderPath(repo, env);
      expect(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))).toEqual(big);
      expect(parts(dir)).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
