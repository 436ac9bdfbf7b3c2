// The longest prompts of a run in the base model's tokens, for the memory estimate (src/selfplay/memory-plan.ts):
// the student's over held-out questions, the examiner's over source passages and hop counts, and the
// teacher's over world-generated questions of every hop count the run asks for (their construction paths
// are the privileged context). Examiner-written questions are not known ahead; theirs are shaped alike.
import { examinerPrompt, studentPrompt } from '../env/prompts.ts';
import { encodePrompt, type BaseModel } from './base-model.ts';
import type { SelfPlayConfig } from './config.ts';
import { rngFor } from './context.ts';
import type { Environment } from './environment.ts';
import { teacherPromptIds } from './prompt-ids.ts';
import type { PromptLengths } from './memory-plan.ts';

/** How many prompts of each kind are tokenized (the longest counts). */
const SAMPLES = 24;

export function measurePrompts(c: SelfPlayConfig, base: Pick<BaseModel, 'tokenizer'>, env: Environment): PromptLengths {
  const tok = base.tokenizer;
  const rng = rngFor(c.seed, 'prompt-lengths');
  const hops = c.hopWeights.flatMap((w, i) => (w > 0 ? [i + 1] : []));
  const questions = env.evalSet.slice(0, SAMPLES).map((q) => q.question);
  const world = hops.flatMap((h) =>
    Array.from({ length: Math.ceil(SAMPLES / hops.length) }, (_, k) => env.worldQuestion(rng, h, `len-${h}-${k}`)),
  );
  for (const q of world) if (q) questions.push(q.question);
  const student = Math.max(0, ...questions.map((q) => encodePrompt(tok, studentPrompt({ question: q })).length));
  let examiner = 0;
  for (let k = 0; k < SAMPLES; k++) {
    const source = env.sampleSource(rng);
    examiner = Math.max(examiner, encodePrompt(tok, examinerPrompt({ source, hops: hops[k % hops.length]! })).length);
  }
  const ctx = { config: c, base: base as BaseModel };
  const teachers = world.filter((q) => q !== null).map((q) => teacherPromptIds(ctx, q).length);
  // Without a world (an uploaded corpus) no construction path is at hand: the examiner's prompt, which
  // holds a source passage, stands in for one hop of it.
  const teacher = teachers.length > 0 ? Math.max(...teachers) : student + examiner;
  return { student, teacher: c.privileged === 'none' ? student : teacher, examiner };
}
