// The tree's import structure: no module of src/ reaches itself through its imports (type imports included:
// a circle of types is still two modules that cannot be read apart), and the benchmarks and scripts import
// nothing from test/ (tests may use them, not the other way round).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url).pathname;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|mjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Each file's relative imports (static, `export ... from`, dynamic), resolved to paths. */
function imports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const specs = [
    ...src.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]/g),
    ...src.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s));
}

/** The strongly connected components of more than one module (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('import structure', () => {
  it('has no import circles in src/', () => {
    const files = tsFiles(join(ROOT, 'src'));
    const known = new Set(files);
    const graph = new Map(files.map((f) => [f, imports(f).filter((d) => known.has(d))]));
    const found = circles(graph).map((c) => c.map((f) => relative(join(ROOT, 'src'), f)).join(' -> '));
    expect(found).toEqual([]);
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('bench/ and scripts/ import nothing from test/', () => {
    const test = join(ROOT, 'test');
    const offenders = [...tsFiles(join(ROOT, 'bench')), ...tsFiles(join(ROOT, 'scripts'))].flatMap((f) =>
      imports(f)
        .filter((d) => d.startsWith(`${test}/`))
        .map((d) => `${relative(ROOT, f)} imports ${relative(ROOT, d)}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the tests that need a GPU device in *.gpu.test.ts, so the cpu set runs without one', () => {
    const cpu = tsFiles(join(ROOT, 'test', 'unit')).filter(
      (f) => f.endsWith('.test.ts') && !f.endsWith('.gpu.test.ts'),
    );
    const device = /helpers\/engine\.ts|Engine\.create\(/;
    expect(cpu.filter((f) => device.test(readFileSync(f, 'utf8'))).map((f) => relative(ROOT, f))).toEqual([]);
  });
});
