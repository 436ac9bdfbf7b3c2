// One π-Play iteration of the demo preset on the default model (public/models/piplay-tiny, default world):
// examiner steps, data generation, student steps and the evaluation, timed and broken down by phase
// (src/gpu/profile.ts): wall and GPU seconds, tokens/s (over the larger of the two), dispatches, submissions
// and read-backs.
// `--steps=N` runs N examiner and N student steps instead of the preset's 8 + 8 (same batch shapes);
// `--eval-per-hop=N` shrinks the evaluation the same way; `--by-kernel` splits the phases by kernel too;
// `--decode=fused|general` forces a decoding path (default: fused on a GPU, general on a CPU driver); `--rows` gives
// each rollout its own row in the student's passes instead of a prefix tree per question (src/rl/tree.ts);
// `--repeat=N` runs the iteration N times on one device: the first makes every pipeline it uses (on a CPU driver
// about a second of a fresh process's iteration, bench/NOTES.md round 18), the later ones time what each further
// iteration of a run costs.
// benchSelfPlay times the same for any preset, and for a whole run as a user starts it (the GPU benchmark's
// demo iteration and quick run).
import type { Engine } from '../src/gpu/engine.ts';
import { blank, phaseKernel, Profile, type PhaseTotals } from '../src/gpu/profile.ts';
import { buildBase, buildEnvironment } from '../src/cli/setup.ts';
import { makeConfig, type PresetName, type SelfPlayConfig } from '../src/selfplay/config.ts';
import { SelfPlayRun } from '../src/selfplay/loop.ts';
import { setDecodePath } from '../src/model/decode-step.ts';
import { setTreePacking } from '../src/selfplay/student.ts';
import { fmt } from './timing.ts';

function intFlag(name: string): number | undefined {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (!arg) return undefined;
  const v = Number(arg.slice(name.length + 3));
  if (!Number.isInteger(v) || v < 0)
    throw new Error(`piplay bench: --${name} must be a whole number >= 0, got '${arg}'`);
  return v;
}

/** The requested breakdown's rows: a name and the phases (stage / label) it sums. */
function category(phase: string): string {
  const [stage, label] = phaseKernel(phase).phase.split(' / ') as [string, string];
  if (stage === 'eval') return 'evaluation';
  if (label === 'generate examiner') return 'examiner generation';
  if (label === 'generate student')
    return stage === 'student' ? 'student rollouts' : 'student rollouts (examiner reward)';
  if (label === 'forward teacher') return 'teacher forward';
  if (label === 'backward') return `${stage} forward+backward`;
  if (label.startsWith('forward')) return `${label.slice('forward '.length)} forward+backward`;
  if (label === 'optimizer' || label === 'teacher EMA') return 'optimizer (+ teacher EMA)';
  return 'other (loss, read-backs, host)';
}

/** `npm run bench -- iteration`: one demo iteration, shrunk by --steps and --eval-per-hop. */
export async function benchIteration(e: Engine): Promise<Record<string, unknown>[]> {
  // --decode=fused or --decode=general forces one decoding path (src/model/decode-step.ts); default: by device.
  const decode = process.argv.find((a) => a.startsWith('--decode='))?.slice('--decode='.length);
  if (decode !== undefined && decode !== 'fused' && decode !== 'general') {
    throw new Error(`piplay bench: --decode must be fused or general, got '${decode}'`);
  }
  setDecodePath(decode ?? null);
  setTreePacking(!process.argv.includes('--rows'));
  const repeat = intFlag('repeat') ?? 1;
  const rows: Record<string, unknown>[] = [];
  for (let k = 1; k <= repeat; k++) {
    if (repeat > 1) console.log(`\nrun ${k} of ${repeat}: ${k === 1 ? 'makes its pipelines' : 'the pipelines made'}`);
    const run = await benchSelfPlay(e, {
      preset: 'demo',
      steps: intFlag('steps'),
      evalPerHop: intFlag('eval-per-hop'),
      byKernel: process.argv.includes('--by-kernel'),
    });
    rows.push(...run.map((r) => ({ ...r, run: k })));
  }
  return rows;
}

export interface SelfPlayBench {
  preset: PresetName;
  /** The preset's whole run (every iteration, and its evaluation at the start), not one iteration. */
  wholeRun?: boolean;
  /** Iterations of a whole run (default: the preset's). */
  iterations?: number | undefined;
  /** Examiner and student steps per iteration (default: the preset's). */
  steps?: number | undefined;
  /** Held-out questions per hop of each evaluation (default: the preset's). */
  evalPerHop?: number | undefined;
  byKernel?: boolean;
}

/** User and system seconds of a process.cpuUsage() reading. */
function cpuSeconds(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1e6;
}

/** Times a self-play run of `opts.preset` on its model and world, phase by phase. */
export async function benchSelfPlay(e: Engine, opts: SelfPlayBench): Promise<Record<string, unknown>[]> {
  const { steps, evalPerHop, iterations } = opts;
  const config = makeConfig(opts.preset, {
    ...(opts.wholeRun ? (iterations !== undefined ? { iterations } : {}) : { iterations: 1, evalAtStart: false }),
    ...(steps !== undefined ? { examinerSteps: steps, studentSteps: steps } : {}),
    ...(evalPerHop !== undefined ? { evalPerHop } : {}),
  });
  console.log(`\n${describe(opts, config)}`);
  const env = buildEnvironment(config);
  const base = await buildBase(e, config, env);
  const run = await SelfPlayRun.start({ engine: e, config, base, env });
  const p = run.ctx.policies;
  p.examiner.profileName = 'examiner';
  p.student.profileName = 'student';
  if (p.teacher) p.teacher.profileName = 'teacher';
  await e.sync();

  const profile = new Profile();
  profile.byKernel = opts.byKernel === true;
  const c0 = { ...e.counters };
  e.profile = profile;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  // Wall and CPU seconds by stage: CPU time over wall time is how many cores the process kept busy (a CPU driver's
  // compute threads, the host and the driver's own threads together; 2 on this machine at most). The GPU is synced
  // where the stage changes, so a stage's queued work is not charged to the next.
  const stageSeconds = new Map<string, { wall: number; cpu: number }>();
  let stage = run.cursor.stage;
  let wall0 = performance.now();
  let cpuAt = process.cpuUsage();
  const closeStage = () => {
    const spent = stageSeconds.get(stage) ?? { wall: 0, cpu: 0 };
    spent.wall += (performance.now() - wall0) / 1000;
    spent.cpu += cpuSeconds(process.cpuUsage(cpuAt));
    stageSeconds.set(stage, spent);
    wall0 = performance.now();
    cpuAt = process.cpuUsage();
  };
  profile.setStage(stage);
  while (!run.done) {
    await run.step();
    if (run.done || run.cursor.stage !== stage) {
      await e.sync();
      closeStage();
      stage = run.cursor.stage;
      profile.setStage(stage);
    }
  }
  await e.sync();
  profile.flush();
  const total = (performance.now() - t0) / 1000;
  const cores = cpuSeconds(process.cpuUsage(cpu0)) / total;
  e.profile = null;
  const counts = Object.fromEntries(Object.entries(e.counters).map(([k, v]) => [k, v - c0[k as keyof typeof c0]]));
  run.dispose();

  const rows: Record<string, unknown>[] = [];
  const header =
    '  phase                                      wall s   GPU s  tokens   tok/s  dispatches  submits  reads';
  const line = (name: string, t: PhaseTotals) =>
    `  ${name.padEnd(40)} ${fmt(t.wallSeconds)}${fmt(t.gpuSeconds)}${String(t.tokens).padStart(8)}` +
    `${t.tokens ? fmt(t.tokens / Math.max(t.wallSeconds, t.gpuSeconds, 1e-9), 0) : '       -'}` +
    `${String(t.dispatches).padStart(12)}${String(t.submits).padStart(9)}${String(t.reads).padStart(7)}`;
  const add = (a: PhaseTotals, b: PhaseTotals): PhaseTotals => ({
    wallSeconds: a.wallSeconds + b.wallSeconds,
    gpuSeconds: a.gpuSeconds + b.gpuSeconds,
    dispatches: a.dispatches + b.dispatches,
    submits: a.submits + b.submits,
    reads: a.reads + b.reads,
    tokens: a.tokens + b.tokens,
    steps: a.steps + b.steps,
  });
  const zero = blank();
  const byCategory = new Map<string, PhaseTotals>();
  for (const [phase, t] of profile.phases)
    byCategory.set(category(phase), add(byCategory.get(category(phase)) ?? zero, t));
  console.log(header);
  const sorted = [...byCategory].sort((a, b) => b[1].wallSeconds - a[1].wallSeconds);
  for (const [name, t] of sorted) {
    console.log(line(name, t));
    rows.push({ op: 'iteration', category: name, ...t });
  }
  const stageLine = ([s, v]: [string, { wall: number; cpu: number }]) =>
    `${s} ${v.wall.toFixed(1)} s (${(v.cpu / v.wall).toFixed(2)} cores)`;
  console.log(`  by stage: ${[...stageSeconds].map(stageLine).join(', ')}`);
  console.log(`  (phases in detail)`);
  for (const [phase, t] of [...profile.phases].sort((a, b) => b[1].wallSeconds - a[1].wallSeconds)) {
    if (t.wallSeconds + t.gpuSeconds > 0.05) console.log(line(phase, t));
    rows.push({ op: 'iteration-phase', phase, ...t });
  }
  // By kernel, each kernel's time over every phase (phases by kernel are 'stage / phase [kernel]'): every kernel,
  // however small, so the table accounts for the whole GPU time.
  const byKernel = new Map<string, PhaseTotals>();
  for (const [phase, t] of profile.phases) {
    const { kernel } = phaseKernel(phase);
    if (kernel) byKernel.set(kernel, add(byKernel.get(kernel) ?? zero, t));
  }
  if (byKernel.size > 0) {
    console.log(`  (by kernel, all phases)`);
    for (const [kernel, t] of [...byKernel].sort((a, b) => b[1].gpuSeconds - a[1].gpuSeconds)) {
      console.log(line(kernel, t));
      rows.push({ op: 'iteration-kernel', kernel, ...t });
    }
  }
  console.log(
    `  total ${total.toFixed(1)} s; ${counts['dispatches']} dispatches, ${counts['submits']} submissions, ${counts['reads']} read-backs, ` +
      `${counts['uploads']} uploads (the profile adds a submission at each phase change); ${cores.toFixed(2)} cores ` +
      'busy on average (CPU time of all its threads over the wall time)',
  );
  // Decoding alone (every generation phase: rollouts, evaluation, examiner): what one step costs in dispatches and
  // read-backs, the per-token overhead that dominates a CPU driver and a browser alike.
  const decode = [...profile.phases]
    .filter(([phase]) => phase.includes('generate '))
    .reduce((a, [, t]) => add(a, t), zero);
  const per = (n: number) => (decode.steps ? n / decode.steps : 0);
  console.log(
    `decode: ${decode.steps} steps, ${per(decode.dispatches).toFixed(1)} dispatches per step, ` +
      `${per(decode.reads).toFixed(3)} read-backs per step`,
  );
  rows.push({ op: 'iteration-decode', steps: decode.steps, dispatches: decode.dispatches, reads: decode.reads });
  rows.push({
    op: 'iteration-total',
    preset: opts.preset,
    wholeRun: opts.wholeRun === true,
    iterations: config.iterations,
    seconds: total,
    cores,
    steps: config.examinerSteps,
    evalPerHop: config.evalPerHop,
    stageSeconds: Object.fromEntries(stageSeconds),
    ...counts,
  });
  return rows;
}

function describe(opts: SelfPlayBench, c: SelfPlayConfig): string {
  const steps = `${c.examinerSteps} examiner + ${c.studentSteps} student steps`;
  const evals = `eval ${c.evalPerHop} per hop x hops ${c.evalHops.join(',')}`;
  return opts.wholeRun
    ? `self-play run: ${opts.preset} preset, ${c.model}, ${c.iterations} x (${steps}), ${evals}` +
        `${c.evalAtStart ? ' at the start and' : ''} after each iteration`
    : `self-play iteration: ${opts.preset} preset, ${c.model}, ${steps}, ${evals}`;
}
