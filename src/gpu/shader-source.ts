// WGSL has no includes: a shader line `#include "lib/<name>.wgsl"` is replaced here by the text of
// shaders/lib/<name>.wgsl before compilation, so helpers shared by several kernels live in one place. And a
// kernel's `const` may be set by the host in its text (setSourceConst), for sizes WGSL takes only as constants.
// Pure (sources come from `read`), so both hosts and the tests share it.

/** Reads a shader's text by its name in shaders/ without `.wgsl` (e.g. `log_softmax`, `lib/online_lse`). */
export type ShaderReader = (name: string) => string;

// The whole line, nothing else on it; WGSL itself has no `#`, so any other `#` line is a mistake.
const INCLUDE = /^[ \t]*#include[ \t]+"([A-Za-z0-9_]+(?:\/[A-Za-z0-9_]+)*)\.wgsl"[ \t]*$/;
const DIRECTIVE = /^[ \t]*#/;

/**
 * The source of shader `name` with its `#include` lines replaced, recursively, by the included files. Each
 * file is included at most once per module (a later include of it expands to nothing), so two helpers may
 * include a third. Throws on a cycle (naming the chain), a malformed `#` line, or a file that cannot be read
 * (naming the including shader and the missing file).
 */
export function expandIncludes(name: string, read: ShaderReader): string {
  const done = new Set<string>([name]);
  return expand(name, read(name), [name], done, read);
}

function expand(name: string, src: string, chain: string[], done: Set<string>, read: ShaderReader): string {
  const lines = src.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    if (!DIRECTIVE.test(line)) continue;
    const m = INCLUDE.exec(line.replace(/\r$/, ''));
    if (!m) {
      throw new Error(
        `piplay: shader '${name}.wgsl' line ${n + 1}: expected \`#include "lib/<name>.wgsl"\` alone on the line, got ` +
          `'${line.trim()}'`,
      );
    }
    const inc = m[1]!;
    if (chain.includes(inc)) {
      throw new Error(`piplay: shader include cycle: ${[...chain, inc].map((s) => `${s}.wgsl`).join(' -> ')}`);
    }
    if (done.has(inc)) {
      lines[n] = `// (${inc}.wgsl: included above)`;
      continue;
    }
    done.add(inc);
    let text: string;
    try {
      text = read(inc);
    } catch (e) {
      throw new Error(
        `piplay: shader '${name}.wgsl' includes '${inc}.wgsl', which cannot be read: ${(e as Error).message}`,
        { cause: e },
      );
    }
    // A marker line keeps compiler messages traceable to the included file.
    lines[n] = `// ---- ${inc}.wgsl\n${expand(inc, text, [...chain, inc], done, read).replace(/\n$/, '')}`;
  }
  return lines.join('\n');
}

/**
 * The code with the module-scope `const name = ...;` declaration set to the unsigned integer `value`; throws, naming
 * the shader, where there is no such declaration or the value is not one.
 */
export function setSourceConst(shader: string, code: string, name: string, value: number): string {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new Error(`piplay: shader '${shader}': const ${name} must be set to an unsigned integer, got ${value}`);
  }
  const decl = new RegExp(`^const ${name}(: u32)? = [^;]+;`, 'm');
  if (!decl.test(code)) throw new Error(`piplay: shader '${shader}' has no module-scope \`const ${name}\` to set`);
  return code.replace(decl, `const ${name} = ${value}u;`);
}
