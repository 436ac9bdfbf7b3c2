#!/usr/bin/env node
// `npm test`: the whole suite, with its own set-up.
//  1. Installs the CPU Vulkan drivers the tests need when they are missing (as root; otherwise prints the
//     commands): Mesa lavapipe for Node/Dawn, Debian chromium (SwiftShader) for the browser tests.
//  2. Type-checks, then runs every vitest test (unit, fixtures, integration, browser end-to-end).
// On a machine with a GPU, Dawn picks the hardware adapter; without one it finds lavapipe.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

const step = (name) => console.log(`\n== ${name}`);

step('drivers');
if (run('bash', ['scripts/setup-drivers.sh']) !== 0) process.exit(1);

if (!existsSync('../shared/fixtures')) {
  console.warn('note: ../shared/fixtures is missing; the fixture tests will be skipped.');
}

step('type-check');
if (run('npx', ['tsc', '--noEmit', '-p', '.']) !== 0) process.exit(1);

step('tests');
// --cpu, --gpu and --browser run one set of tests (vitest.config.ts's projects); anything else goes to vitest.
const SETS = { '--cpu': 'cpu', '--gpu': 'gpu', '--browser': 'browser' };
const extra = process.argv.slice(2).flatMap((a) => (SETS[a] ? ['--project', SETS[a]] : [a]));
process.exit(run('npx', ['vitest', 'run', ...extra]));
