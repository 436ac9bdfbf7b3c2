// `#include "lib/<name>.wgsl"` in shaders (src/gpu/shader-source.ts): expansion rules on made-up sources, then
// every real kernel expands, and the browser host bundles the same files the Node host reads.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expandIncludes, setSourceConst } from '../../../src/gpu/shader-source.ts';
import { browserHost } from '../../../src/gpu/host/browser.ts';

/** A reader over an in-memory set of shaders, failing like the hosts on an unknown name. */
function reader(files: Record<string, string>): (name: string) => string {
  return (name) => {
    const src = files[name];
    if (src === undefined) throw new Error(`no such shader '${name}.wgsl'`);
    return src;
  };
}

/** The non-comment lines of an expanded source (markers are comments). */
const code = (src: string) => src.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('//'));

describe('expandIncludes', () => {
  it('replaces an include line by the file and leaves other sources alone', () => {
    const read = reader({
      k: 'const WG = 64u;\n#include "lib/a.wgsl"\nfn main() {}\n',
      'lib/a': 'fn a() -> u32 { return WG; }\n',
      plain: 'fn main() {}\n// #include "lib/a.wgsl" in a comment is text\n',
    });
    expect(code(expandIncludes('k', read))).toEqual([
      'const WG = 64u;',
      'fn a() -> u32 { return WG; }',
      'fn main() {}',
    ]);
    expect(expandIncludes('plain', read)).toBe(read('plain'));
  });

  it('accepts surrounding blanks and CRLF line ends', () => {
    const read = reader({ k: '  #include   "lib/a.wgsl"  \r\nfn main() {}\r\n', 'lib/a': 'fn a() {}\n' });
    expect(code(expandIncludes('k', read))).toEqual(['fn a() {}', 'fn main() {}\r']);
  });

  it('includes a file once per module, nested includes too', () => {
    const read = reader({
      k: '#include "lib/b.wgsl"\n#include "lib/a.wgsl"\n#include "lib/c.wgsl"\nfn main() {}\n',
      'lib/a': 'fn a() {}\n',
      'lib/b': '#include "lib/a.wgsl"\nfn b() {}\n',
      'lib/c': '#include "lib/a.wgsl"\n#include "lib/b.wgsl"\nfn c() {}\n',
    });
    expect(code(expandIncludes('k', read))).toEqual(['fn a() {}', 'fn b() {}', 'fn c() {}', 'fn main() {}']);
  });

  it('names the chain of an include cycle', () => {
    const read = reader({
      k: '#include "lib/a.wgsl"\n',
      'lib/a': '#include "lib/b.wgsl"\n',
      'lib/b': '#include "lib/a.wgsl"\n',
      self: '#include "self.wgsl"\n',
    });
    expect(() => expandIncludes('k', read)).toThrow('k.wgsl -> lib/a.wgsl -> lib/b.wgsl -> lib/a.wgsl');
    expect(() => expandIncludes('self', read)).toThrow('self.wgsl -> self.wgsl');
  });

  it('names the including shader and the missing file', () => {
    const read = reader({ k: 'fn main() {}\n#include "lib/a.wgsl"\n', 'lib/a': '#include "lib/gone.wgsl"\n' });
    expect(() => expandIncludes('k', read)).toThrow(/'lib\/a\.wgsl' includes 'lib\/gone\.wgsl'.*no such shader/);
  });

  it('rejects a malformed # line', () => {
    for (const bad of [
      '#include lib/a.wgsl',
      '#include "lib/a"',
      '#include "../a.wgsl"',
      '#include "lib/a.wgsl" x',
      '#define X 1',
    ]) {
      expect(() => expandIncludes('k', reader({ k: `fn f() {}\n${bad}\n`, 'lib/a': '' })), bad).toThrow(
        /'k\.wgsl' line 2: expected/,
      );
    }
  });
});

describe('the project shaders', () => {
  const dir = fileURLToPath(new URL('../../../shaders/', import.meta.url));
  const readDisk = (name: string) => readFileSync(`${dir}${name}.wgsl`, 'utf8'); // as the Node host reads them
  const names = (sub: string) =>
    readdirSync(`${dir}${sub}`)
      .filter((f) => f.endsWith('.wgsl'))
      .map((f) => `${sub}${f.slice(0, -'.wgsl'.length)}`);
  const kernels = names('');
  const libs = names('lib/');

  it.each(kernels)('%s expands, leaving no # line', (name) => {
    const src = expandIncludes(name, readDisk);
    expect(src.split('\n').filter((l) => l.trim().startsWith('#'))).toEqual([]);
  });

  it('uses every lib file, and each lib file says what it needs', () => {
    // A lib file counts as used when a kernel includes it, directly or through another lib file.
    const used = new Set<string>();
    const visit = (name: string) => {
      for (const m of readDisk(name).matchAll(/^#include "(lib\/\w+)\.wgsl"/gm)) {
        if (used.has(m[1]!)) continue;
        used.add(m[1]!);
        visit(m[1]!);
      }
    };
    for (const k of kernels) visit(k);
    expect([...used].sort()).toEqual([...libs].sort());
    for (const l of libs) expect(readDisk(l).startsWith('//'), `${l}.wgsl header comment`).toBe(true);
  });

  it('are all bundled by the browser host, under the names the Node host reads', () => {
    const host = browserHost();
    for (const name of [...kernels, ...libs]) expect(host.shaderSource(name), name).toBe(readDisk(name));
  });
});

describe('setSourceConst', () => {
  const src = 'const TR = 4u; // rows\nconst MAXDH = 64u; // head dim\nvar<private> a: array<f32, MAXDH>;\n';

  it("sets a module-scope const's value in the text, and nothing else", () => {
    const out = setSourceConst('k', src, 'MAXDH', 24);
    expect(out).toBe('const TR = 4u; // rows\nconst MAXDH = 24u; // head dim\nvar<private> a: array<f32, MAXDH>;\n');
    expect(setSourceConst('k', 'const N: u32 = 2u;', 'N', 7)).toBe('const N = 7u;');
  });

  it('refuses a name the shader does not declare, or a value that is not an unsigned integer', () => {
    expect(() => setSourceConst('k', src, 'MAXD', 24)).toThrow(/shader 'k' has no module-scope `const MAXD`/);
    expect(() => setSourceConst('k', '  const MAXDH = 64u;', 'MAXDH', 24)).toThrow(/no module-scope/);
    for (const bad of [-1, 2.5, 2 ** 32, Number.NaN])
      expect(() => setSourceConst('k', src, 'MAXDH', bad)).toThrow(/must be set to an unsigned integer/);
  });
});
