// One process per run folder: a live owner's lock refuses a second command, naming the owner; a dead owner's lock
// is taken over; the lock goes when its owner releases it or exits, and a folder made only for it goes too.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCK_NAME, lockFolder } from '../../../src/cli/folder-lock.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A pid that was just used and is now dead. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

describe('lockFolder', () => {
  it('refuses a folder held by a live process, naming it', () => {
    const dir = join(root, 'live');
    mkdirSync(dir);
    const owner = {
      pid: process.ppid,
      host: hostname(),
      startedAt: '2026-12-02T10:00:00.000Z',
      command: 'npm run train',
    };
    writeFileSync(join(dir, LOCK_NAME), JSON.stringify(owner));
    expect(() => lockFolder(dir, 'npm run train --resume')).toThrow(
      `${dir} is in use by npm run train (process ${process.ppid} on ${hostname()}, since 2026-12-02T10:00:00.000Z); ` +
        'wait for it to finish or stop it',
    );
    expect(JSON.parse(readFileSync(join(dir, LOCK_NAME), 'utf8')).pid).toBe(process.ppid);
  });

  it("takes over a dead owner's lock, and releases it", () => {
    const dir = join(root, 'dead');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{}');
    writeFileSync(
      join(dir, LOCK_NAME),
      JSON.stringify({ pid: deadPid(), host: hostname(), startedAt: 'x', command: 'c' }),
    );
    const release = lockFolder(dir, 'npm run train');
    expect(JSON.parse(readFileSync(join(dir, LOCK_NAME), 'utf8')).pid).toBe(process.pid);
    expect(() => lockFolder(dir, 'again')).toThrow(/is in use by npm run train \(process/);
    release();
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
    expect(existsSync(join(dir, 'config.json'))).toBe(true);
  });

  it('goes when its process exits; a folder made for the lock alone goes with it', () => {
    const dir = join(root, 'made', 'run');
    const src = new URL('../../../src/cli/folder-lock.ts', import.meta.url).pathname;
    execFileSync(process.execPath, [
      '--import',
      'tsx',
      '-e',
      `import(${JSON.stringify(src)}).then((m) => m.lockFolder(${JSON.stringify(dir)}, 't'))`,
    ]);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(root, 'made'))).toBe(true);
  });
});

describe('a folder that cannot be made', () => {
  it('is named with its cause: a read-only parent (immutable, where chattr can make one) or a file in the path', () => {
    writeFileSync(join(root, 'plain-file'), 'x');
    const through = join(root, 'plain-file', 'run');
    expect(() => lockFolder(through, 'npm run train')).toThrow(
      `piplay: could not create ${through}: a part of the path is a file, not a folder (ENOTDIR)`,
    );
    const ro = join(root, 'read-only');
    mkdirSync(ro);
    // An immutable folder refuses new entries even to root, as a read-only disk does.
    if (spawnSync('chattr', ['+i', ro]).status !== 0) return;
    try {
      expect(() => lockFolder(join(ro, 'run'), 'npm run train')).toThrow(
        new RegExp(`^piplay: could not create ${join(ro, 'run')}: the operation is not permitted \\(EPERM\\)$`),
      );
    } finally {
      execFileSync('chattr', ['-i', ro]);
    }
  });
});
