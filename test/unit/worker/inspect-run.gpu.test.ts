// The page's questions about a run, through the worker API in Node: the ablation of a recorded rollout and the
// base-vs-student comparison are refused before any run and answered after a smoke run has finished (the worker
// keeps its policies until the next job).
import { describe, expect, it } from 'vitest';
import { nodeHost } from '../../../src/gpu/host/node.ts';
import { ABLATION_MODES } from '../../../src/lab/ablation.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import type { RolloutRecord } from '../../../src/selfplay/events.ts';
import { WorkerApi } from '../../../src/worker/api.ts';
import { memoryBackend } from '../../../src/worker/checkpoint-store.ts';
import type { RunPhase, WorkerMessage } from '../../../src/worker/protocol.ts';
import { unpackEvent } from '../../../src/worker/wire.ts';

describe('questions about a run in the worker', () => {
  it('ablates a recorded rollout and compares base and student after a smoke run', async () => {
    const api = new WorkerApi(nodeHost(), memoryBackend());
    const rollouts: RolloutRecord[] = [];
    let phase = 'idle' as RunPhase;
    api.subscribe((msgs: WorkerMessage[]) => {
      for (const m of msgs) {
        if (m.type === 'phase') phase = m.phase;
        if (m.type === 'run') {
          const ev = unpackEvent(m.event);
          if (ev.type === 'rollout') rollouts.push(ev.record);
        }
      }
    });
    expect((await api.init()).ok).toBe(true);
    const early = await api.compareBaseAndStudent();
    expect(early.ok).toBe(false);
    if (!early.ok) expect(early.error).toMatch(/no run is active or finished/);

    const config = makeConfig('smoke', { evalAtStart: false });
    expect((await api.start({ config, model: { kind: 'random-tiny' }, corpus: { kind: 'world' } })).ok).toBe(true);
    const t0 = Date.now();
    while (phase !== 'finished' && phase !== 'failed' && Date.now() - t0 < 240_000)
      await new Promise((r) => setTimeout(r, 100));
    expect(phase).toBe('finished');
    const r = rollouts.find((x) => x.qcp && x.questionId && x.tokens.some((t) => t.policy));
    expect(r, 'a recorded rollout with its construction path').toBeDefined();

    const ab = await api.ablate({ questionId: r!.questionId!, question: r!.question, qcp: r!.qcp!, tokens: r!.tokens });
    if (!ab.ok) throw new Error(ab.error);
    expect(ab.scorer).toBe('teacher');
    expect(ab.result.modes.map((m) => m.mode)).toEqual(ABLATION_MODES);
    const policy = r!.tokens.filter((t) => t.policy).length;
    for (const m of ab.result.modes) {
      expect(m.kl).toHaveLength(policy);
      expect(m.kl.every(Number.isFinite)).toBe(true);
    }
    // The run's own mode, scored by the teacher after the run, is the block the record says the teacher saw.
    expect(ab.result.modes.find((m) => m.mode === config.privileged)!.block).toBe(r!.privilegedBlock);

    const cmp = await api.compareBaseAndStudent(1);
    if (!cmp.ok) throw new Error(cmp.error);
    expect(cmp.rows.map((x) => x.hops)).toEqual(config.evalHops);
    for (const row of cmp.rows) {
      expect(row.gold.length).toBeGreaterThan(0);
      expect(row.base.text.length + row.student.text.length).toBeGreaterThan(0);
    }
  }, 300_000);
});
