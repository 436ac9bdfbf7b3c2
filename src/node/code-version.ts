// What code made a run: the git commit of the checkout the command runs from, and whether its tracked files
// differed from that commit (outside results/, where experiments write their own logs). Recorded in a run's
// config.json and an experiment run's result.json, so every number can be traced to the code behind it.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface CodeVersion {
  /** The commit's full hash; null outside a git checkout (an unpacked release) or without git. */
  commit: string | null;
  /** Tracked files changed from the commit (null when there is no commit to compare with). */
  dirty: boolean | null;
}

/** The checkout this code runs from (src/node/ is two levels down). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const git = (args: string[]) =>
  execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

let cached: CodeVersion | undefined;

/** The code version of this process (read once: the code a process runs does not change under it). */
export function codeVersion(): CodeVersion {
  if (cached) return cached;
  try {
    const commit = git(['rev-parse', 'HEAD']);
    const changes = git(['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)results']);
    cached = { commit, dirty: changes !== '' };
  } catch {
    cached = { commit: null, dirty: null };
  }
  return cached;
}

/** "1a2b3c4d5e6f", "1a2b3c4d5e6f (dirty)", or "unknown". */
export function formatCodeVersion(v: CodeVersion | undefined): string {
  if (!v?.commit) return 'unknown';
  return `${v.commit.slice(0, 12)}${v.dirty ? ' (dirty)' : ''}`;
}
