// The check that an exported model folder is the LoRA student: its weights are the student's adapters
// merged into the base (not the examiner's or the teacher's), and it gives the adapted student's logits.
import { expect } from 'vitest';
import type { CausalLM } from '../../src/model/decoder.ts';
import type { Policies } from '../../src/selfplay/policies.ts';
import { expectClose } from './compare.ts';

/** `weightTol`: how far the export may be from the GPU merge (0 when both come from the same merge). */
export async function expectStudentExport(exported: CausalLM, p: Policies, weightTol: number): Promise<void> {
  const e = exported.engine;
  const q = 'model.layers.0.self_attn.q_proj.weight';
  const got = (await exported.toHost()).get(q)!.data;
  const merged = async (m: CausalLM) => (await m.toHost({ mergeLora: true })).get(q)!.data;
  const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
  expect(maxDiff(got, await merged(p.student)), 'exported q_proj vs the student merged').toBeLessThanOrEqual(weightTol);
  // 1e-5: far above the host-vs-GPU rounding, well below what training moved the adapters here (~1e-4).
  expect(maxDiff(got, await merged(p.examiner))).toBeGreaterThan(1e-5);
  expect(maxDiff(got, await merged(p.teacher!))).toBeGreaterThan(1e-5);
  const ids = Int32Array.from([1, 5, 9, 3, 7, 2]);
  const logits = async (m: CausalLM) => {
    const t = e.noGrad(() => e.tidy(() => e.keep(m.forward({ ids, batch: 1, time: ids.length }))));
    const out = (await t.readF32()).slice();
    t.dispose();
    return out;
  };
  expectClose(
    await logits(exported),
    await logits(p.student),
    1e-4,
    1e-5,
    'logits of the export vs the adapted student',
  );
}
