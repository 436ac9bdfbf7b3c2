// The page's pretraining checks its memory plan before any work, as `npm run pretrain` does: a step no device
// holds (65,536 rows of 512 tokens) is refused as a settings problem naming the largest term, at once, instead of
// minutes of text generation and a failed allocation.
import { describe, expect, it } from 'vitest';
import { nodeHost } from '../../../src/gpu/host/node.ts';
import { PRETRAIN_DEFAULTS } from '../../../src/pretrain/settings.ts';
import { WorkerApi } from '../../../src/worker/api.ts';
import { memoryBackend } from '../../../src/worker/checkpoint-store.ts';
import type { WorkerMessage } from '../../../src/worker/protocol.ts';

describe("the page's pretraining", () => {
  it('refuses a step no device holds before generating its text', async () => {
    const api = new WorkerApi(nodeHost(), memoryBackend());
    const seen: { failed?: Extract<WorkerMessage, { type: 'phase' }> } = {};
    api.subscribe((msgs: WorkerMessage[]) => {
      for (const m of msgs) if (m.type === 'phase' && m.phase === 'failed') seen.failed = m;
    });
    expect((await api.init()).ok).toBe(true);
    const started = await api.pretrain({ ...PRETRAIN_DEFAULTS, batch: 65_536, seq: 512 });
    const t0 = Date.now();
    while (started.ok && !seen.failed && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 50));
    const error = started.ok ? seen.failed?.error : started.error;
    expect(error).toMatch(/^this pretraining cannot fit this GPU: .* The estimate's largest term is .*; lower it/);
    if (started.ok) expect(seen.failed?.errorKind).toBe('config');
    expect((await api.listCheckpoints()).filter((c) => c.kind === 'model')).toEqual([]);
  }, 60_000);
});
