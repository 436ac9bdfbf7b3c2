// npm run soak -- [--kills N] [--seed S] [--keep DIR] [--<train setting> value ...]
// Exact resume under random kills: a straight `npm run train` run, then the same run killed with SIGKILL at
// random moments N times (default 20) and resumed each time (started again when no checkpoint was saved
// yet), until it finishes. The two run folders must then be byte-identical: config.json, every log
// (metrics with their timing fields aside), the latest checkpoint (weights, optimizer state, run state) and
// the exported student. Exit 0 when they are, 1 with the differences otherwise.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Rng } from '../src/env/random.ts';

/** The soaked run: the smoke preset over a few iterations, so kills land in every stage and in saves. */
const DEFAULT_SETTINGS = ['--preset', 'smoke', '--iterations', '4', '--examiner-steps', '2', '--student-steps', '2'];
/** Metrics that measure time, not the computation. */
const TIMING = new Set(['tokens_per_s', 'step_seconds']);

interface Options {
  kills: number;
  seed: number;
  keep: string | null;
  settings: string[];
}

function parse(argv: string[]): Options {
  const o: Options = { kills: 20, seed: 1, keep: null, settings: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`soak: ${a} needs a value`);
      return v;
    };
    if (a === '--kills' || a === '--seed') {
      const text = value();
      const n = Number(text);
      if (!Number.isInteger(n) || n < 0) throw new Error(`soak: ${a} '${text}' is not allowed; use an integer >= 0`);
      if (a === '--kills') o.kills = n;
      else o.seed = n;
    } else if (a === '--keep') o.keep = resolve(value());
    else if (a === '--out' || a === '--resume')
      throw new Error(`soak: ${a} is the soak's own; use --keep DIR to keep the two run folders`);
    else o.settings.push(a);
  }
  if (!o.settings.includes('--preset')) o.settings = [...DEFAULT_SETTINGS, ...o.settings];
  return o;
}

/** When to SIGKILL a run: `ms` after it starts, or `ms` after its first new checkpoint (so each run gets further). */
type Kill = { from: 'start' | 'checkpoint'; ms: number };

/** `npm run train` as a child, SIGKILLed as `kill` says. Resolves with its exit code (or 'killed') and when it was ready. */
function train(
  args: string[],
  kill?: Kill,
  pointer?: string,
): Promise<{ result: number | 'killed'; readyMs: number | null; stderr: string }> {
  return new Promise((done) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let readyMs: number | null = null;
    let killed = false;
    let timer: NodeJS.Timeout | null = null;
    const arm = (ms: number) => {
      timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, ms);
    };
    if (kill?.from === 'start') arm(kill.ms);
    let poll: NodeJS.Timeout | null = null;
    if (kill?.from === 'checkpoint' && pointer) {
      const stamp = () => (existsSync(pointer) ? statSync(pointer).mtimeMs : 0);
      const before = stamp();
      poll = setInterval(() => {
        if (stamp() === before) return;
        clearInterval(poll!);
        arm(kill.ms);
      }, 5);
    }
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      if (readyMs === null && /^train: /m.test(stdout)) readyMs = Date.now() - started;
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      if (poll) clearInterval(poll);
      done({ result: killed && code === null ? 'killed' : (code ?? 1), readyMs, stderr });
    });
  });
}

/** Every file under `dir`, relative names, sorted. */
function files(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1))
    .sort();
}

/** A JSON value with the timing metrics removed wherever they occur. */
function untimed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(untimed);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !TIMING.has(k))
        .map(([k, x]) => [k, untimed(x)]),
    );
  return v;
}

/** The differences between the two run folders (empty when identical, timing aside). */
function compare(straight: string, soaked: string): { compared: string[]; differences: string[] } {
  const compared: string[] = [];
  const differences: string[] = [];
  const pointer = (dir: string) =>
    (JSON.parse(readFileSync(join(dir, 'checkpoints', 'latest.json'), 'utf8')) as { slot: string }).slot;
  const slots = [pointer(straight), pointer(soaked)] as const;
  if (slots[0] !== slots[1])
    differences.push(`the latest checkpoint is in slot ${slots[0]} of the straight run, ${slots[1]} of the soaked one`);
  // Only the latest slot counts: the other may hold an older checkpoint or a save a kill cut short.
  const wanted = (dir: string, slot: string) =>
    files(dir)
      .filter(
        (f) =>
          f !== 'checkpoints/latest.json' && (!f.startsWith('checkpoints/') || f.startsWith(`checkpoints/${slot}/`)),
      )
      .map((f) => f.replace(`checkpoints/${slot}/`, 'checkpoints/latest/'));
  const a = wanted(straight, slots[0]);
  const b = wanted(soaked, slots[1]);
  for (const f of a.filter((x) => !b.includes(x))) differences.push(`${f}: only in the straight run`);
  for (const f of b.filter((x) => !a.includes(x))) differences.push(`${f}: only in the soaked run`);
  const read = (dir: string, slot: string, f: string) =>
    readFileSync(join(dir, f.replace('checkpoints/latest/', `checkpoints/${slot}/`)));
  for (const f of a.filter((x) => b.includes(x))) {
    let x: Buffer | string = read(straight, slots[0], f);
    let y: Buffer | string = read(soaked, slots[1], f);
    if (f.endsWith('.jsonl')) {
      const lines = (t: Buffer) =>
        t
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.stringify(untimed(JSON.parse(l))));
      x = lines(x).join('\n');
      y = lines(y as Buffer).join('\n');
    } else if (f.endsWith('state.json')) {
      x = JSON.stringify(untimed(JSON.parse(x.toString('utf8'))));
      y = JSON.stringify(untimed(JSON.parse((y as Buffer).toString('utf8'))));
    }
    compared.push(f);
    if (typeof x === 'string' ? x !== y : !x.equals(y as Buffer)) differences.push(`${f}: differs`);
  }
  return { compared, differences };
}

/** Units of work of a finished run (steps, data generations, evaluations): one metrics or eval line each. */
function countUnits(dir: string): number {
  const lines = (f: string) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l !== '').length;
  return lines('metrics.jsonl') + lines('eval.jsonl');
}

/** Where the latest checkpoint of a run folder stands, for the log. */
function latest(dir: string): string {
  const p = join(dir, 'checkpoints', 'latest.json');
  if (!existsSync(p)) return 'none yet';
  const c = (JSON.parse(readFileSync(p, 'utf8')) as { cursor: { iteration: number; stage: string; step: number } })
    .cursor;
  return `iteration ${c.iteration}, ${c.stage} step ${c.step}`;
}

async function main(): Promise<number> {
  const o = parse(process.argv.slice(2));
  const root = o.keep ?? mkdtempSync(join(tmpdir(), 'piplay-soak-'));
  const straight = join(root, 'straight');
  const soaked = join(root, 'soaked');
  for (const d of [straight, soaked]) if (existsSync(d)) throw new Error(`soak: ${d} exists; give --keep a new folder`);
  console.log(`soak: npm run train -- ${o.settings.join(' ')}; ${o.kills} kills; folders in ${root}`);

  const t0 = Date.now();
  const s = await train(['--out', straight, ...o.settings]);
  if (s.result !== 0) throw new Error(`soak: the straight run failed (exit ${s.result}):\n${s.stderr}`);
  const straightMs = Date.now() - t0;
  const readyMs = s.readyMs ?? 0;
  console.log(
    `soak: straight run in ${(straightMs / 1000).toFixed(1)} s (set up after ${(readyMs / 1000).toFixed(1)} s)`,
  );

  // Kill moments: some during set-up (the folder check, log truncation, the restore), the rest after the
  // run's first new checkpoint, within a unit's time of it (the next unit of work, or its save), so every
  // run gets at least one unit further and the kills sweep steps, evaluations, saves and the export.
  const rng = new Rng(`soak/${o.seed}`);
  const units = countUnits(straight);
  const unitMs = Math.max(straightMs - readyMs, 1000) / Math.max(units, 1);
  const pointer = join(soaked, 'checkpoints', 'latest.json');
  let kills = 0;
  let starts = 0;
  let finished = false;
  while (!finished) {
    const resume = existsSync(join(soaked, 'checkpoints', 'latest.json'));
    const args = ['--out', soaked, ...(resume ? ['--resume'] : o.settings)];
    let kill: Kill | undefined;
    if (kills < o.kills) {
      kill =
        rng.next() < 0.15
          ? { from: 'start', ms: Math.round(200 + rng.next() * readyMs) }
          : { from: 'checkpoint', ms: Math.round(rng.next() * unitMs) };
    }
    starts++;
    const r = await train(args, kill, pointer);
    if (r.result === 'killed') {
      kills++;
      const at = `${(kill!.ms / 1000).toFixed(2)} s after its ${kill!.from === 'start' ? 'start' : 'first new checkpoint'}`;
      console.log(
        `soak: kill ${kills}/${o.kills}, ${at} (${resume ? 'a resumed' : 'a new'} run); latest checkpoint: ${latest(soaked)}`,
      );
    } else if (r.result === 0) finished = true;
    else
      throw new Error(
        `soak: a ${resume ? 'resumed' : 'new'} run failed (exit ${r.result}) after ${kills} kills:\n${r.stderr}`,
      );
  }
  const early =
    kills < o.kills ? ` (it finished before the kill it was given; ${o.kills - kills} kills fewer than asked)` : '';
  console.log(`soak: the soaked run finished after ${kills} kills and ${starts} starts${early}`);

  const { compared, differences } = compare(straight, soaked);
  if (!o.keep) rmSync(root, { recursive: true, force: true });
  if (differences.length) {
    console.log(`soak: FAILED, ${differences.length} differences:\n  ${differences.join('\n  ')}`);
    return 1;
  }
  console.log(`soak: identical to the straight run (timing metrics aside): ${compared.join(', ')}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error((err as Error).message);
    process.exit(1);
  },
);
