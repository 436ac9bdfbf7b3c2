// A kernel's host-facing interface, read from its WGSL text once per module: the fields of the struct behind
// its `var<uniform>` (its params), its `var<storage>` bindings and its windows (a `var<uniform>` of array type:
// part of a tensor read as a uniform buffer), its `override` constants, and for each `@compute` entry point the
// bindings that entry statically uses (what a pipeline with `layout: 'auto'` expects in its bind group). The
// engine binds host values by these names (engine.ts `dispatch`). Pure, so tests read the real shaders without a
// GPU.
//
// The parser reads the subset of WGSL the kernels are written in: `@group(0) @binding(n) var<...> name: T;`,
// a uniform struct of 4-byte scalar fields (u32, i32, f32), `override NAME: T [= default];`, and `fn` bodies
// in braces. Anything it does not understand there is an error naming the shader, never a silent guess.

/** A field of the uniform struct; fields are 4 bytes each and packed in declaration order. */
export interface UniformField {
  name: string;
  type: 'u32' | 'i32' | 'f32';
}

export interface ResourceBinding {
  name: string;
  binding: number;
  /** The params struct (`uniform`), a storage buffer, or a window: a `var<uniform>` array over part of a tensor. */
  kind: 'uniform' | 'storage' | 'window';
}

export interface OverrideConstant {
  name: string;
  type: string;
  /** False when the declaration has no `= default`: the host must set it. */
  hasDefault: boolean;
}

export interface EntryInterface {
  /** The uniform binding when the entry uses it, else null. */
  uniform: ResourceBinding | null;
  /** Storage and window bindings the entry uses, by binding number: the buffers the host names. */
  buffers: ResourceBinding[];
  /** The override constants the entry uses (in its body, its @workgroup_size, its workgroup arrays' sizes). */
  overrides: Set<string>;
}

export interface KernelInterface {
  shader: string;
  /** The uniform struct's fields in declaration order (empty when the module has no uniform). */
  params: UniformField[];
  /** Every resource the module declares, by binding number. */
  resources: ResourceBinding[];
  overrides: OverrideConstant[];
  /** `@compute` entry points by name. */
  entries: Map<string, EntryInterface>;
}

const SCALARS = new Set(['u32', 'i32', 'f32']);

/** Parses `code` (the module after `#include` expansion); `shader` names it in error messages. */
export function parseKernelInterface(shader: string, code: string): KernelInterface {
  const fail = (what: string): never => {
    throw new Error(`piplay: shader '${shader}.wgsl': ${what}`);
  };
  const src = stripComments(code);

  const resources: ResourceBinding[] = [];
  let uniformType: string | null = null;
  const RESOURCE =
    /@group\(\s*(\d+)\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var<\s*(uniform|storage)\b[^>]*>\s*(\w+)\s*:\s*([^;]+);/g;
  for (const m of src.matchAll(RESOURCE)) {
    if (m[1] !== '0') fail(`binding '${m[4]}' is in @group(${m[1]}); the engine binds only group 0`);
    const window = m[3] === 'uniform' && /^array\s*</.test(m[5]!.trim());
    const kind = window ? 'window' : (m[3] as 'uniform' | 'storage');
    const r: ResourceBinding = { name: m[4]!, binding: Number(m[2]), kind };
    if (r.kind === 'uniform') {
      if (uniformType !== null) fail('declares more than one var<uniform>; the engine binds one');
      uniformType = m[5]!.trim();
    }
    resources.push(r);
  }
  const declared = (src.match(/@binding\s*\(/g) ?? []).length;
  if (declared !== resources.length) {
    fail(
      `${declared} @binding attributes but only ${resources.length} read as '@group(0) @binding(n) var<...> name: T;'`,
    );
  }
  const names = new Set<string>();
  for (const r of resources) {
    if (names.has(r.name)) fail(`binding name '${r.name}' is declared twice`);
    names.add(r.name);
  }
  resources.sort((a, b) => a.binding - b.binding);

  let params: UniformField[] = [];
  if (uniformType !== null) {
    const m = new RegExp(`struct\\s+${uniformType}\\s*\\{([^}]*)\\}`).exec(src);
    if (!m) fail(`the uniform's type '${uniformType}' is not a struct declared in the module`);
    params = m![1]!
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((s) => {
        const f = /^(\w+)\s*:\s*(\w+)$/.exec(s);
        if (!f || !SCALARS.has(f[2]!)) fail(`uniform field '${s}' is not 'name: u32|i32|f32' (4-byte scalars only)`);
        return { name: f![1]!, type: f![2]! as UniformField['type'] };
      });
  }

  // Module-scope declarations whose text may name overrides: an override's default, a workgroup array's size.
  const refs = new Map<string, Set<string>>();
  const overrides: OverrideConstant[] = [];
  for (const m of src.matchAll(/(?:@id\([^)]*\)\s*)?\boverride\s+(\w+)\s*(?::\s*(\w+))?\s*(=[^;]+)?;/g)) {
    overrides.push({ name: m[1]!, type: m[2] ?? 'inferred', hasDefault: m[3] !== undefined });
    refs.set(m[1]!, identifiers(m[3] ?? ''));
  }
  for (const m of src.matchAll(/\bvar<\s*workgroup\s*>\s*(\w+)\s*:([^;]+);/g)) refs.set(m[1]!, identifiers(m[2]!));

  // Functions: each body's identifiers (not member names after `.`), to follow calls and find resource uses.
  const bodies = new Map<string, Set<string>>();
  const computeEntries: string[] = [];
  const FN = /((?:@[\w]+(?:\s*\([^)]*\))?\s*)*)\bfn\s+(\w+)\s*\(/g;
  for (const m of src.matchAll(FN)) {
    const open = src.indexOf('{', m.index + m[0].length);
    if (open < 0) fail(`function '${m[2]}' has no body`);
    const close = matchBrace(src, open);
    if (close < 0) fail(`function '${m[2]}' has unbalanced braces`);
    // The entry's attributes count as its body: `@workgroup_size(WG)` uses WG.
    bodies.set(m[2]!, identifiers(m[1]! + src.slice(open, close)));
    if (/@compute\b/.test(m[1]!)) computeEntries.push(m[2]!);
  }
  const entries = new Map<string, EntryInterface>();
  for (const entry of computeEntries) {
    // Everything the entry reaches: functions it calls, and the declarations those name.
    const used = new Set<string>();
    const stack = [entry];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (used.has(id)) continue;
      used.add(id);
      for (const next of bodies.get(id) ?? refs.get(id) ?? []) stack.push(next);
    }
    const mine = resources.filter((r) => used.has(r.name));
    entries.set(entry, {
      uniform: mine.find((r) => r.kind === 'uniform') ?? null,
      buffers: mine.filter((r) => r.kind !== 'uniform'),
      overrides: new Set(overrides.filter((o) => used.has(o.name)).map((o) => o.name)),
    });
  }
  if (entries.size === 0) fail('has no @compute entry point');
  return { shader, params, resources, overrides, entries };
}

/** The identifiers in a piece of code, except member names (after `.`). */
function identifiers(code: string): Set<string> {
  const ids = new Set<string>();
  for (const t of code.matchAll(/(\.\s*)?\b([A-Za-z_]\w*)/g)) if (!t[1]) ids.add(t[2]!);
  return ids;
}

/** The code with `//` and `/* *\/` comments replaced by spaces (offsets kept). */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, ' '));
}

/** The index of the `}` closing the `{` at `open`, or -1. */
function matchBrace(src: string, open: number): number {
  let depth = 0;
  for (let k = open; k < src.length; k++) {
    if (src[k] === '{') depth++;
    else if (src[k] === '}' && --depth === 0) return k;
  }
  return -1;
}
