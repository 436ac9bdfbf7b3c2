// npm run -s fixtures -- <dir>: runs every *.json reference case in a folder on the GPU.
// Prints one line per failing case (name, worst error), then "N passed, N failed"; exits 0 only if all pass.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';
import { loadFixture, runFixture } from '../fixtures/runner.ts';
import { runCommand } from './command.ts';

async function main(): Promise<number> {
  const dir = resolve(process.argv[2] ?? '../shared/fixtures');
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
  } catch {
    console.error(`fixtures: cannot read folder '${dir}'. Usage: npm run -s fixtures -- <folder of *.json cases>`);
    return 2;
  }
  const e = await Engine.create(nodeHost());
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    const path = join(dir, file);
    const name = file.replace(/\.json$/, '');
    let line: string | null = null;
    try {
      if (!statSync(path).isFile()) continue;
      const fx = await loadFixture(readFileSync(path, 'utf8'), file);
      const r = await runFixture(e, fx, name, dir);
      if (r.ok) passed++;
      else {
        failed++;
        line =
          `FAIL ${name} (${r.op}): worst ` +
          `${Number.isFinite(r.worst) ? `${r.worst.toFixed(2)}x tolerance` : 'n/a'}: ${r.detail}`;
      }
    } catch (err) {
      failed++;
      line = `FAIL ${name}: ${(err as Error).message}`;
    }
    if (line) console.log(line);
  }
  console.log(`${passed} passed, ${failed} failed`);
  e.destroy();
  return failed === 0 ? 0 : 1;
}

runCommand('fixtures', main, 2);
