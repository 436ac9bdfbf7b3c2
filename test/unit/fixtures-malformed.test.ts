// `npm run fixtures` on a folder of malformed cases: each one is a failing case line that names the file,
// the field and what is wrong (no raw JS error such as "shape.join is not a function"), and the run goes on
// to the well-formed case, which passes.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureProblems } from '../../src/fixtures/format.ts';

const t = (shape: unknown, data: unknown, dtype: unknown = 'f32') => ({ shape, dtype, data });
const matmul = (over: Record<string, unknown> = {}) => ({
  op: 'matmul',
  params: {},
  inputs: { a: t([1, 2], [1, 2]), b: t([2, 1], [3, 4]) },
  outputs: { c: t([1, 1], [11]) },
  grads: {},
  upstream: {},
  tol: { rtol: 1e-4, atol: 1e-5 },
  ...over,
});

const CASES: Record<string, unknown> = {
  good: matmul(),
  // The input 'a' is also an output name: the old check validated only the output and the GPU code then
  // failed with "shape.join is not a function".
  shape_number: matmul({ inputs: { a: t(2, [1, 2]), b: t([2, 1], [3, 4]) }, outputs: { a: t([1, 1], [11]) } }),
  null_tensor: matmul({ inputs: { a: null, b: t([2, 1], [3, 4]) } }),
  missing_input: matmul({ inputs: { a: t([1, 2], [1, 2]) } }),
  bad_tol: matmul({ tol: { rtol: 'tight', atol: 1e-5 } }),
  bad_data: matmul({ inputs: { a: t([1, 2], [1, 'x']), b: t([2, 1], [3, 4]) } }),
  bad_params: matmul({ params: null }),
  array: [1, 2, 3],
};

const dir = mkdtempSync(join(tmpdir(), 'piplay-fixtures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runCli(folder: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/fixtures.ts', folder], (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

describe('malformed fixture cases', () => {
  it('fixtureProblems names the field and what is wrong', () => {
    expect(fixtureProblems(matmul())).toEqual([]);
    const shapeNumber = 'inputs.a.shape must be an array of non-negative integers (got 2)';
    expect(fixtureProblems(CASES.shape_number)).toEqual([shapeNumber]);
    const nullTensor = 'inputs.a must be a tensor object {shape, dtype, data} (got null)';
    expect(fixtureProblems(CASES.null_tensor)).toEqual([nullTensor]);
    expect(fixtureProblems(CASES.missing_input)).toEqual(['inputs.b is missing (op matmul needs a, b)']);
    expect(fixtureProblems(CASES.bad_tol)).toEqual(['tol.rtol must be a non-negative number (got "tight")']);
    expect(fixtureProblems(CASES.bad_data)).toEqual(['inputs.a.data[1] must be a number (got "x")']);
    expect(fixtureProblems(CASES.bad_params)).toEqual(['params must be an object (got null)']);
    expect(fixtureProblems(matmul({ inputs: { a: t([2, 2], [1, 2]), b: t([2, 1], [3, 4], 'f64') } }))).toEqual([
      'inputs.a.data has 2 values but shape [2, 2] needs 4',
      'inputs.b.dtype must be "f32" or "i32" (got "f64")',
    ]);
    expect(fixtureProblems(CASES.array)[0]).toMatch(/^the case must be a JSON object/);
  });

  it('the CLI reports each as a failing case line and runs the rest', async () => {
    for (const [name, c] of Object.entries(CASES)) writeFileSync(join(dir, `${name}.json`), JSON.stringify(c));
    writeFileSync(join(dir, 'not_json.json'), '{"op": ');
    const { code, out } = await runCli(dir);
    expect(out).not.toMatch(/is not a function|Cannot read propert|TypeError|\n\s+at /);
    const lines = out.split('\n').filter((l) => l.startsWith('FAIL'));
    expect(lines).toEqual([
      'FAIL array: array.json: the case must be a JSON object with op, params, inputs, outputs and tol (got [1,2,3])',
      'FAIL bad_data: bad_data.json: inputs.a.data[1] must be a number (got "x")',
      'FAIL bad_params: bad_params.json: params must be an object (got null)',
      'FAIL bad_tol: bad_tol.json: tol.rtol must be a non-negative number (got "tight")',
      'FAIL missing_input: missing_input.json: inputs.b is missing (op matmul needs a, b)',
      expect.stringMatching(/^FAIL not_json: not_json\.json: not valid JSON/),
      'FAIL null_tensor: null_tensor.json: inputs.a must be a tensor object {shape, dtype, data} (got null)',
      'FAIL shape_number: shape_number.json: inputs.a.shape must be an array of non-negative integers (got 2)',
    ]);
    expect(out).toMatch(/^1 passed, 8 failed$/m);
    expect(code).toBe(1);
  });
});
