// npx tsx scripts/scale-check/piplay-step.ts OUT.json
// piplay's own student and examiner steps on the embedded tiny model (Dawn, f32), written as JSON for the TRL
// cross-check (scale/piplay_scale/crosscheck.py), which replays the same rollouts through its trainer:
//   - cases: one student step each (src/selfplay/student.ts) at settings that cover the loss's options (privileged
//     full, partial and none; λ > 0 and 0; top-K with a tail and renormalised; reverse and forward KL; two PPO
//     epochs, so that the second sees moved weights, an EMA-updated teacher and clipped ratios), with the step's
//     questions, prompt ids, rollouts, rewards and advantages, and the metrics the step reported;
//   - examiner: one examiner step (src/selfplay/examiner.ts), each rollout's own turns and tool replies with the
//     format reward, k of n, the examiner reward and the HRPO advantage piplay gave it;
//   - parity: what the Python package re-implements, computed by piplay: privileged blocks in every mode and
//     rendering, BM25 results, normalised answers and tool replies as ids; and presets: piplay's paper and demo
//     settings, which the package's presets must equal.
// Nothing here computes a loss or a reward itself: every number comes from piplay's code.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildBase, buildEnvironment } from '../../src/cli/setup.ts';
import { normalizeAnswer } from '../../src/env/em.ts';
import {
  NOTES_RENDERINGS,
  PRIVILEGED_MODES,
  privilegedBlock,
  studentPrompt,
  type PrivilegedMode,
} from '../../src/env/prompts.ts';
import { Engine } from '../../src/gpu/engine.ts';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { encodeToolReply } from '../../src/rl/tool-reply.ts';
import { encodePrompt, type BaseModel } from '../../src/selfplay/base-model.ts';
import { DEMO, makeConfig, PAPER, type SelfPlayConfig } from '../../src/selfplay/config.ts';
import { rngFor, type RunContext } from '../../src/selfplay/context.ts';
import type { Environment, TrainQuestion } from '../../src/selfplay/environment.ts';
import { examinerStep } from '../../src/selfplay/examiner.ts';
import { Policies } from '../../src/selfplay/policies.ts';
import { teacherPromptIds } from '../../src/selfplay/prompt-ids.ts';
import { studentStep } from '../../src/selfplay/student.ts';

const MODEL = 'public/models/piplay-tiny';

/** Settings every case shares: the demo's, scaled to a step that takes seconds, every update applied. */
const COMMON: Partial<SelfPlayConfig> = {
  model: MODEL,
  evalPerHop: 0,
  studentBatch: 2,
  rolloutsPerQuestion: 4,
  examinerBatch: 8,
  miniBatches: 1,
  microBatch: 0,
  lrWarmup: 0,
  emptyUpdates: 'apply',
  rolloutSamples: 0,
};

/** The student cases: what each one's settings cover. */
const CASES: { name: string; settings: Partial<SelfPlayConfig> }[] = [
  {
    // π-Play as the demo runs it, with a learning rate that moves the second epoch's ratios past the clip.
    name: 'full',
    settings: { privileged: 'full', lambda: [0.1], ppoEpochs: 2, lr: 1e-3, epsHigh: 0.28 },
  },
  { name: 'none', settings: { privileged: 'none', lambda: 0 } },
  {
    name: 'partial-forward',
    settings: {
      privileged: 'partial',
      notes: 'passages',
      lambda: [0.5],
      topK: 8,
      tail: false,
      kl: 'forward',
      temperature: 1,
      seed: 3,
      // Passes of 2 rollouts whose gradients add up (TRL: gradient accumulation over 4 micro-batches).
      microBatch: 2,
    },
  },
];

async function context(e: Engine, config: SelfPlayConfig): Promise<RunContext> {
  const env = buildEnvironment(config);
  const base = await buildBase(e, config, env);
  return { engine: e, config, base, env, policies: Policies.create(e, base, config), emit: () => {} };
}

/** World questions of 1 and 2 hops with their construction paths (the student's training set of a case). */
function worldQuestions(env: Environment, c: SelfPlayConfig, count: number): TrainQuestion[] {
  const rng = rngFor(c.seed, 'scale-check');
  const out: TrainQuestion[] = [];
  for (let i = 0; out.length < count && i < 8 * count; i++) {
    const q = env.worldQuestion(rng, 1 + (out.length % 2), `q${out.length}`);
    if (q) out.push(q);
  }
  return out;
}

async function studentCase(e: Engine, name: string, settings: Partial<SelfPlayConfig>) {
  const config = makeConfig('demo', { ...COMMON, ...settings });
  const ctx = await context(e, config);
  try {
    const set = worldQuestions(ctx.env, config, config.studentBatch);
    const tok = ctx.base.tokenizer;
    const r = await studentStep(ctx, 0, 0, set);
    const col = r.collected!;
    return {
      name,
      config,
      questions: col.qs,
      studentPromptIds: col.qs.map((q) => encodePrompt(tok, studentPrompt({ question: q.question }))),
      teacherPromptIds: col.teacherPrompts,
      rollouts: col.rollouts.map((ro, i) => ({
        ids: ro.ids,
        mask: ro.mask,
        logprobs: ro.logprobs,
        promptLength: ro.promptLength,
        policyTurns: ro.policyTurns,
        searches: ro.searches.map((s) => ({ query: s.query, information: s.information })),
        answer: col.answers[i],
      })),
      rewards: col.rewards,
      advantages: col.advantages,
      metrics: r.metrics,
    };
  } finally {
    ctx.policies.dispose();
  }
}

async function examinerCase(e: Engine) {
  const config = makeConfig('demo', { ...COMMON, examinerLr: 1e-3 });
  const ctx = await context(e, config);
  try {
    const r = await examinerStep(ctx, 0, 0);
    return {
      config,
      items: r.written.map((w, i) => ({
        source: { id: w.source.id, title: w.source.title, text: w.source.text },
        hops: w.hops,
        policyTurns: w.rollout.policyTurns,
        queries: w.rollout.searches.map((s) => s.query),
        informations: w.rollout.searches.map((s) => s.information),
        ids: w.rollout.ids,
        mask: w.rollout.mask,
        promptLength: w.rollout.promptLength,
        question: r.questions[i]!.question,
        answer: r.questions[i]!.answer,
        formatReward: r.questions[i]!.formatReward,
        k: r.questions[i]!.k,
        n: r.questions[i]!.n,
        difficultyReward: r.questions[i]!.difficultyReward,
        examinerReward: r.questions[i]!.examinerReward,
        advantage: r.questions[i]!.advantage,
      })),
      metrics: r.metrics,
    };
  } finally {
    ctx.policies.dispose();
  }
}

/** What the Python package re-implements, as piplay computes it. */
function parity(env: Environment, base: BaseModel, c: SelfPlayConfig, queries: string[]) {
  const questions = worldQuestions(env, c, 6).concat(
    worldQuestions(env, { ...c, seed: 11 }, 6).map((q) => ({ ...q, id: `r${q.id}` })),
  );
  const blocks = questions.flatMap((q) =>
    PRIVILEGED_MODES.flatMap((mode: PrivilegedMode) =>
      NOTES_RENDERINGS.map((notes) => {
        const options = { seed: `${c.seed}/${q.id}`, dropFraction: c.partialDrop, notes };
        return { id: q.id, mode, notes, block: privilegedBlock(q.qcp, mode, options) };
      }),
    ),
  );
  const ctx = { config: c, base };
  const teacherIds = questions.map((q) => teacherPromptIds(ctx, q, 'full'));
  const search = [...new Set(queries)].map((query) => ({
    query,
    hits: env.index.search(query, c.retrievalTopK).map((h) => ({ id: h.passage.id, score: h.score })),
  }));
  const answers = [
    'The Eiffel Tower!',
    '  an  apple, a day ',
    'Théâtre — “Quoted”',
    'the_the a-b',
    'ΑΘΗΝΑ an',
    '1,000.5',
  ].map((s) => ({ text: s, normalized: normalizeAnswer(s) }));
  const replies = [0, 3, 9].flatMap((from) =>
    [24, 60, 320].map((budget) => {
      const passages = env.passages.slice(from, from + 3);
      return { passages: passages.map((p) => p.id), budget, ...encodeToolReply(base.tokenizer, passages, budget) };
    }),
  );
  return { seed: c.seed, partialDrop: c.partialDrop, questions, blocks, teacherIds, search, answers, replies };
}

async function main(out: string): Promise<void> {
  const e = await Engine.create(nodeHost());
  const cases = [];
  for (const { name, settings } of CASES) cases.push(await studentCase(e, name, settings));
  const examiner = await examinerCase(e);
  const config = makeConfig('demo', COMMON);
  const env = buildEnvironment(config);
  const base = await buildBase(e, config, env);
  const queries = [
    ...cases.flatMap((c) => c.rollouts.flatMap((r) => r.searches.map((s) => s.query))),
    ...examiner.items.flatMap((it) => it.queries),
    'capital of Gulteth',
    'who founded the observatory in Kaxvar',
  ];
  writeFileSync(
    out,
    JSON.stringify(
      {
        model: MODEL,
        presets: { paper: PAPER, demo: DEMO },
        cases,
        examiner,
        parity: parity(env, base, config, queries),
      },
      null,
      1,
    ),
  );
  e.destroy();
  console.log(`piplay-step: ${cases.length} student cases and an examiner step in ${out}`);
}

const out = process.argv[2];
if (!out) {
  console.error('usage: npx tsx scripts/scale-check/piplay-step.ts OUT.json');
  process.exit(2);
}
await main(resolve(out));
