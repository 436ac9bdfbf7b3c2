// Restoring policies from a run's checkpoint refuses NaN or infinite weights and optimizer moments (a run
// that diverged before the save), naming the file, the tensor and what to do, instead of resuming or
// evaluating on garbage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { parseSafetensors, toFloat32, writeSafetensors } from '../../../src/model/safetensors.ts';
import type { BaseModel } from '../../../src/selfplay/base-model.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Policies, optimizerStateFromBytes, optimizerStateToBytes } from '../../../src/selfplay/policies.ts';
import { testEngine } from '../../helpers/engine.ts';

let e: Engine;
let p: Policies;
beforeAll(async () => {
  e = await testEngine();
  const cfg = tinyConfig({ vocabSize: 32, hidden: 8, layers: 1, heads: 2, kvHeads: 1 });
  const base = { name: 'tiny', cfg, weights: initWeights(cfg, { seed: 1 }) } as unknown as BaseModel;
  p = Policies.create(e, base, makeConfig('smoke', { policies: 'separate' }));
});
afterAll(() => p.dispose());

/** The saved weights with `value` written at index 1 of tensor `name`. */
function poisoned(bytes: Uint8Array, name: string, value: number): Uint8Array {
  const st = parseSafetensors(bytes, 'student.safetensors');
  const tensors = [...st.tensors].map(([n, t]) => {
    const data = toFloat32(t);
    if (n === name) data[1] = value;
    return { name: n, dtype: 'F32' as const, shape: t.shape, data };
  });
  return writeSafetensors(tensors);
}

describe('restoring a checkpoint with non-finite values', () => {
  it('weights: refused with the file, the tensor and what to do; finite weights restore', async () => {
    const good = (await p.saveWeights('student'))!;
    p.loadWeights('student', good);
    const name = 'model.layers.0.mlp.up_proj.weight';
    for (const v of [NaN, Infinity, -Infinity]) {
      const want = `student\\.safetensors: tensor '${name}' holds 1 NaN or infinite values of \\d+ \\(the first`;
      expect(() => p.loadWeights('student', poisoned(good, name, v))).toThrow(new RegExp(want));
    }
    expect(() => p.loadWeights('student', poisoned(good, name, NaN))).toThrow(/the run diverged.*lower learning rate/);
  });

  it('optimizer moments: refused naming the file and the moment', async () => {
    const s = await p.optimizerState('student');
    const file = 'student.optim.safetensors';
    expect(optimizerStateFromBytes(optimizerStateToBytes(s), file).params.length).toBe(s.params.length);
    const v = s.params[0]!.v.slice();
    v[0] = Infinity;
    const bad = { ...s, params: [{ ...s.params[0]!, v }, ...s.params.slice(1)] };
    expect(() => optimizerStateFromBytes(optimizerStateToBytes(bad), file)).toThrow(
      /student\.optim\.safetensors: the second moment of parameter 0 holds 1 NaN or infinite values/,
    );
  });
});
