// Ctrl-C in a terminal under `npm run train`: SIGINT goes to the whole process group (npm, tsx and the
// run), and npm and tsx pass it on as well, so the run receives it more than once within milliseconds.
// That must still be the graceful stop: the current step ends, a stop checkpoint is written, exit 130.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirStorage } from '../../src/cli/fs-storage.ts';
import { latestCheckpoint } from '../../src/selfplay/checkpoint.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-sigint-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * Runs `command args` in a process group of its own and, after the first examiner step, sends the group
 * SIGINT (a terminal's Ctrl-C), then again `againMs` later when given (what tsx's relay adds: it sends the
 * signal again when the run has not confirmed it within 30 ms).
 */
async function interrupted(
  command: string,
  args: string[],
  againMs?: number,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let signalled = false;
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const closed = new Promise<[number | null, string | null]>((done) =>
    child.on('close', (code, signal) => done([code, signal])),
  );
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
    // Mid-stage: after the first examiner step, with 39 to go.
    if (!signalled && /examiner it 0 step 0 /.test(stdout)) {
      signalled = true;
      process.kill(-child.pid!, 'SIGINT');
      if (againMs !== undefined) setTimeout(() => process.kill(-child.pid!, 'SIGINT'), againMs);
    }
  });
  const [code, signal] = await closed;
  expect(signalled, stderr).toBe(true);
  return { code, signal, stdout, stderr };
}

/** The run stopped after a step of the examiner stage and its stop checkpoint is there. */
async function expectStopCheckpoint(out: string, stdout: string, stderr: string): Promise<void> {
  expect(stdout, stderr).toMatch(/train: stopped at iteration 1, examiner step (\d+); continue with --resume/);
  const step = Number(/examiner step (\d+); continue/.exec(stdout)![1]);
  expect(step).toBeGreaterThan(0);
  expect(step).toBeLessThan(40);
  const cp = await latestCheckpoint(new DirStorage(out));
  expect(cp?.state.cursor).toEqual({ iteration: 0, stage: 'examiner', step });
}

// No periodic checkpoints and no first evaluation: the only checkpoint inside the examiner stage is the stop's.
const settings = ['--preset', 'smoke', '--eval-at-start', 'off', '--examiner-steps', '40', '--checkpoint-every', '0'];

describe('Ctrl-C (SIGINT to the process group)', () => {
  it('under npm run train: stops after the current step with a stop checkpoint', async () => {
    const out = join(root, 'npm');
    const r = await interrupted('npm', ['run', '-s', 'train', '--', '--out', out, ...settings]);
    await expectStopCheckpoint(out, r.stdout, r.stderr);
    // npm ends itself with the signal it got once the run has exited.
    expect(r.code === 130 || r.signal === 'SIGINT', `${r.code} ${r.signal}`).toBe(true);
  }, 180_000);

  it('twice, 50 ms apart (what tsx adds): the same, and the exit status is 130', async () => {
    const out = join(root, 'twice');
    const r = await interrupted(
      process.execPath,
      ['--import', 'tsx', 'src/cli/train.ts', '--out', out, ...settings],
      50,
    );
    await expectStopCheckpoint(out, r.stdout, r.stderr);
    expect(r.code).toBe(130);
  }, 180_000);
});
