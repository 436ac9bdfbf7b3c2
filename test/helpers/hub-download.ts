// A command-line download in a process of its own, for tests that kill it mid-way:
// `node --import tsx test/helpers/hub-download.ts <hub url> <cache folder> <owner/name> <sync bytes>`.
import { hubModelFolder, hubModelRef } from '../../src/hub/hub-folder.ts';

const [endpoint, cache, id, syncBytes] = process.argv.slice(2) as [string, string, string, string];
const env = { HF_ENDPOINT: endpoint, HF_HUB_CACHE: cache };
await hubModelFolder(hubModelRef(`hf:${id}`, env)!, { env, syncBytes: Number(syncBytes), log: () => {} });
