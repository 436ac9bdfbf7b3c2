// `--model hf:owner/name` on the command line, against a local server with the hub's URL layout over real HTTP:
// the files land in the disk cache (a cut connection resumed with Range), a second run downloads nothing, and a
// wrong id is named.
import { mkdtempSync, readFileSync } from 'node:fs';
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
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'])
      expect(readFileSync(join(dir, f))).toEqual(readFileSync(join(MODEL, f)));
    const weights = hub.requests.filter((r) => r.path.endsWith('/model.safetensors'));
    expect(weights.map((r) => r.range)).toEqual([undefined, expect.stringMatching(/^bytes=[1-9]\d*-$/)]);
    expect(lines[0]).toMatch(/needs 1\.6 MiB of 1\.6 MiB/);

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
