// A run's history through the engine worker's API, in Node (Dawn) over an in-memory idb-keyval: a smoke run,
// stopped once it has shown questions and rollouts, is read back by runHistory with exactly what the page was
// sent; a new worker on the same store (a page reload) resuming it sends that whole history again before the
// run goes on, so every view continues where it was.
import { afterAll, describe, expect, it } from 'vitest';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { SMOKE } from '../../src/selfplay/config.ts';
import { WorkerApi } from '../../src/worker/api.ts';
import { memoryBackend } from '../../src/worker/checkpoint-store.ts';
import type { WorkerMessage } from '../../src/worker/protocol.ts';

const kv = memoryBackend();
const apis: WorkerApi[] = [];

function worker(): { api: WorkerApi; msgs: WorkerMessage[] } {
  const api = new WorkerApi(nodeHost(), kv);
  const msgs: WorkerMessage[] = [];
  api.subscribe((batch) => msgs.push(...batch));
  apis.push(api);
  return { api, msgs };
}

const phases = (msgs: WorkerMessage[]) => msgs.flatMap((m) => (m.type === 'phase' ? [m.phase] : []));

async function until(what: string, ok: () => boolean, timeoutMs = 500_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Run events per kind of the history (metrics, eval, question, rollout), in `msgs` up to index `end`. */
function counts(msgs: readonly WorkerMessage[], end = msgs.length): Record<string, number> {
  const out: Record<string, number> = { metrics: 0, eval: 0, question: 0, rollout: 0 };
  for (const m of msgs.slice(0, end)) if (m.type === 'run' && m.event.type in out) out[m.event.type]!++;
  return out;
}

afterAll(() => {
  for (const a of apis) a.loseDevice();
});

describe('run history through the worker', () => {
  it('reads back what the page was sent, and replays all of it on resume', async () => {
    const first = worker();
    expect((await first.api.init()).ok).toBe(true);
    const config = { ...SMOKE, iterations: 2 };
    const r = await first.api.start({ config, model: { kind: 'random-tiny' }, corpus: { kind: 'world' } });
    expect(r).toEqual({ ok: true });
    await until('a rollout', () => counts(first.msgs).rollout > 0);
    first.api.stop();
    await until('the stop', () => ['stopped', 'finished', 'failed'].includes(phases(first.msgs).at(-1) ?? ''));
    expect(phases(first.msgs).at(-1)).toBe('stopped');
    const live = counts(first.msgs);
    expect(live.question).toBeGreaterThan(0);
    const name = (await first.api.listCheckpoints()).find((c) => c.kind === 'run')!.name;

    const { events } = await first.api.runHistory(name);
    expect(counts(events.map((event) => ({ type: 'run', event }) as WorkerMessage))).toEqual(live);

    // A reload: a new worker on the same store resumes the run.
    first.api.loseDevice();
    const second = worker();
    expect((await second.api.init()).ok).toBe(true);
    expect((await second.api.start({ resumeFrom: name })).ok).toBe(true);
    await until('the resumed run', () => phases(second.msgs).includes('running'));
    const running = second.msgs.findIndex((m) => m.type === 'phase' && m.phase === 'running');
    expect(counts(second.msgs, running)).toEqual(live);
    second.api.stop();
    await until('the second stop', () => ['stopped', 'finished', 'failed'].includes(phases(second.msgs).at(-1) ?? ''));
  }, 600_000);
});
