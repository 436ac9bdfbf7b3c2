// `npm run bench -- train-pass [--shape=tiny|smollm2] [--layers=N] [--lora] [--packing=rows|trees|both]`: one student
// training pass as the student step runs it (the student's forward on the tape, the teacher's forward after its
// longer prompt, L_GRPO + λ·D, the backward), timed by kernel (GPU timestamps where the device has them), on
// question groups of rollouts that share prefixes as the demo's do (a prompt, then turns the rollouts share for a
// while). `rows` passes a row per rollout (policyBatch), `trees` a prefix tree per question (treeBatch).
// Shapes: `tiny` is the embedded default model (public/models/piplay-tiny), `smollm2` SmolLM2-135M's config with
// random weights (`--layers` keeps the first N of its 30 decoder layers, to fit a CPU driver's minutes).
import { readFileSync } from 'node:fs';
import type { Engine } from '../src/gpu/engine.ts';
import { filesFromNodeFolder } from '../src/gpu/host/node-files.ts';
import { blank, phaseKernel, Profile, type PhaseTotals } from '../src/gpu/profile.ts';
import { Rng } from '../src/env/random.ts';
import type { CausalLM } from '../src/model/decoder.ts';
import { loadModel } from '../src/model/io.ts';
import { LoraSet } from '../src/model/lora.ts';
import {
  perPolicyToken,
  policyBatch,
  teacherSequence,
  treeBatch,
  type MaskedSequence,
  type PolicyBatch,
} from '../src/rl/batch.ts';
import { constantLogits, policyLogits } from '../src/rl/forward.ts';
import { studentLoss } from '../src/rl/losses.ts';
import { randomModel } from './random-model.ts';
import { questionRollouts } from './rollouts.ts';
import { fmt } from './timing.ts';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

async function model(e: Engine, shape: string): Promise<CausalLM> {
  if (shape === 'tiny') return loadModel(e, filesFromNodeFolder('public/models/piplay-tiny'), { source: 'tiny' });
  const config = JSON.parse(readFileSync(new URL('./configs/smollm2-135m.json', import.meta.url), 'utf8'));
  const layers = Number(flag('layers') ?? 4);
  return randomModel(e, { ...config, num_hidden_layers: layers });
}

export async function benchTrainingPass(e: Engine): Promise<Record<string, unknown>[]> {
  const shape = flag('shape') ?? 'tiny';
  const packing = flag('packing') ?? 'both';
  const lora = process.argv.includes('--lora');
  const student = await model(e, shape);
  const teacher = await model(e, shape);
  student.profileName = 'student';
  teacher.profileName = 'teacher';
  if (lora) student.lora = new LoraSet(e, student.cfg, { rank: 16, alpha: 32, seed: 3 });
  student.setTrainable(true);
  const V = student.cfg.vocabSize;
  const rng = new Rng('train-pass');
  // The demo's shapes: 8 questions x 5 rollouts, prompts of ~150 tokens, responses of ~300 (tiny); fewer for
  // SmolLM2 on a CPU driver.
  const groups = Array.from({ length: shape === 'tiny' ? 8 : 2 }, () => questionRollouts(rng, V, 5, 150, 300));
  const teacherExtra = Array.from({ length: 120 }, () => rng.int(V));
  const teacherSeqs = groups.map((g) =>
    g.map((s) => teacherSequence({ ...s, promptLength: 150 }, [...s.ids.slice(0, 150), ...teacherExtra])),
  );
  const rows: Record<string, unknown>[] = [];
  const settings = {
    epsLow: 0.2,
    epsHigh: 0.2,
    beta: 0,
    lambda: 0.1,
    topK: 50,
    tail: true,
    direction: 'reverse' as const,
  };
  const rolloutTokens = groups.flat().reduce((a, s) => a + s.ids.length, 0);
  console.log(
    `\ntraining pass: ${shape}${shape === 'tiny' ? '' : ` (${student.cfg.layers} layers)`}${lora ? ', LoRA r16' : ''}; ` +
      `${groups.length} questions x 5 rollouts, ${rolloutTokens} rollout tokens`,
  );
  for (const kind of packing === 'both' ? ['rows', 'trees'] : [packing]) {
    const batch = (gs: MaskedSequence[][]): PolicyBatch => (kind === 'trees' ? treeBatch(gs) : policyBatch(gs.flat()));
    const sb = batch(groups);
    const tb = batch(teacherSeqs);
    const pass = () =>
      e.tidy(() => {
        const out = studentLoss(
          {
            logits: policyLogits(student, sb, 0.6),
            teacherLogits: constantLogits(teacher, tb, 0.6),
            targets: sb.targets,
            oldLogp: perPolicyToken(sb, () => -2),
            advantages: perPolicyToken(sb, (b) => (b % 3) - 1),
          },
          settings,
        );
        e.backward(out.loss);
        for (const p of student.trainable()) {
          p.grad?.dispose();
          p.grad = null;
        }
      });
    // Warm-up: pipelines compiled, then the buffer pool and the host allocator settled (at SmolLM2's shapes the
    // pass after the first was still a fifth slower, its big buffers new: bench/NOTES.md, round 14).
    for (let w = 0; w < 2; w++) pass();
    await e.sync();
    const profile = new Profile();
    profile.byKernel = true;
    e.profile = profile;
    const t0 = performance.now();
    pass();
    await e.sync();
    profile.flush();
    e.profile = null;
    const wall = (performance.now() - t0) / 1000;
    const byKernel = new Map<string, PhaseTotals>();
    for (const [phase, t] of profile.phases) {
      const { phase: where, kernel } = phaseKernel(phase);
      if (!kernel) continue;
      const key = `${where.replace(/^run \/ /, '')} [${kernel}]`;
      const sum = byKernel.get(key) ?? blank();
      sum.gpuSeconds += t.gpuSeconds;
      sum.dispatches += t.dispatches;
      byKernel.set(key, sum);
    }
    const gpu = [...byKernel.values()].reduce((a, t) => a + t.gpuSeconds, 0);
    const packed = sb.batch * sb.time;
    console.log(
      `  ${kind}: ${packed} student + ${tb.batch * tb.time} teacher positions (${sb.batch} rows); wall ${fmt(wall)} s, ` +
        `GPU ${fmt(gpu)} s; ${fmt(rolloutTokens / Math.max(wall, gpu), 0)} rollout tok/s`,
    );
    for (const [k, t] of [...byKernel].sort((a, b) => b[1].gpuSeconds - a[1].gpuSeconds))
      if (t.gpuSeconds > 0.005 * gpu)
        console.log(`    ${k.padEnd(58)} ${fmt(t.gpuSeconds)} s ${String(t.dispatches).padStart(6)} dispatches`);
    rows.push({ op: 'train-pass', shape, lora, packing: kind, wall, gpu, rolloutTokens, packed });
  }
  student.dispose();
  teacher.dispose();
  return rows;
}
