// The README runs as written: every `npm run X` it shows is a script of package.json, every option it gives that
// command is one the command reads (a setting of the table, or an option its source declares), every file and
// document it links or names exists, it stays a front door (at most 200 lines), and every interval its result
// section quotes stands in the report of an experiment it cites.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyOfFlag } from '../../../src/selfplay/config.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** The source file an npm script runs (its last .ts/.mjs argument). */
const sourceOf = (script: string) => /(\S+\.(?:ts|mjs))/.exec(SCRIPTS[script] ?? '')?.[1];
/** Where a command declares options outside its own file (pretraining's settings table). */
const MORE_OPTIONS: Record<string, string[]> = { pretrain: ['src/pretrain/settings.ts', 'src/cli/pretrain-args.ts'] };

/** Every `npm ...` command inside backticks or a shell block. */
function commands(): string[] {
  const inline = [...README.matchAll(/`(npm [^`]+)`/g)].map((m) => m[1]!);
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1]!.split('\n').flatMap((l) => l.split('&&').map((c) => c.replace(/#.*/, '').trim())),
  );
  return [...inline, ...blocks].filter((c) => c.startsWith('npm '));
}

describe('the README', () => {
  it('is a front door: at most 200 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('shows only npm scripts that exist, with options those commands read', () => {
    const problems: string[] = [];
    for (const c of commands()) {
      const words = c.split(/\s+/);
      const name = words[1] === 'run' ? words[words[2] === '-s' ? 3 : 2]! : words[1]!;
      if (['install', 'ci', 'test', 'start'].includes(name) && words[1] !== 'run') {
        if (name === 'test' || name === 'start') expect(SCRIPTS[name], c).toBeDefined();
        continue;
      }
      if (!SCRIPTS[name]) {
        problems.push(`${c}: no script '${name}'`);
        continue;
      }
      const source = sourceOf(name);
      const text = [...(source ? [source] : []), ...(MORE_OPTIONS[name] ?? [])]
        .map((f) => readFileSync(join(ROOT, f), 'utf8'))
        .join('\n');
      for (const flag of c.matchAll(/--([a-z][a-z0-9-]*)/g)) {
        const f = flag[1]!;
        if (keyOfFlag(f) || text.includes(`'${f}'`) || text.includes(`"${f}"`) || text.includes(`--${f}`)) continue;
        problems.push(`${c}: ${name} does not read --${f}`);
      }
    }
    expect(problems).toEqual([]);
    expect(commands().length).toBeGreaterThan(15);
  });

  it('links and names files that exist', () => {
    const links = [...README.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^https?:/.test(l));
    const named = [...README.matchAll(/`((?:docs|results|public|src|scripts|bench|shaders)\/[^`\s]+)`/g)].map(
      (m) => m[1]!,
    );
    const missing = [...links, ...named].filter((p) => !existsSync(join(ROOT, p)));
    expect(missing).toEqual([]);
    expect(links).toContain('docs/glossary.md');
  });

  it('quotes only intervals that the results.md of an experiment it cites holds', () => {
    const start = README.indexOf('## Does the student get better?');
    const section = README.slice(start, README.indexOf('\n## ', start + 1));
    const cited = [...section.matchAll(/`(results\/[\w-]+)\/?`/g)]
      .map((m) => join(ROOT, m[1]!, 'results.md'))
      .filter((f) => existsSync(f));
    expect(cited.length).toBeGreaterThan(0);
    const reports = cited.map((f) => readFileSync(f, 'utf8')).join('\n');
    const quoted = [...section.matchAll(/\[[+−]?\d+\.\d, [+−]?\d+\.\d\]/g)].map((m) => m[0]);
    expect(quoted.length).toBeGreaterThan(3);
    expect(quoted.filter((q) => !reports.includes(q))).toEqual([]);
  });
});
