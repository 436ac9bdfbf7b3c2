// The run's questions as a TRL-style dataset: rows for the examiner's valid questions only, the student's and
// the teacher's chat turns (the teacher's = the student's with the privileged block before the question),
// the answer and the construction path; and the command that writes them, which never overwrites a file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { privilegedBlock, studentPrompt } from '../../../src/env/prompts.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import type { QuestionRecord } from '../../../src/selfplay/events.ts';
import { qcpOfRecord, trlRows } from '../../../src/lab/dataset.ts';

const record = (over: Partial<QuestionRecord>): QuestionRecord => ({
  iteration: 0,
  step: 0,
  question: 'Where was the author of Beyond Thefyn born?',
  answer: 'Poupol',
  hops: 2,
  qcp: [
    {
      kind: 'source',
      passages: [
        { id: 'b', title: 'Beyond Thefyn', text: 'Beyond Thefyn is a poetry collection by Noraexel Moufeirani.' },
      ],
    },
    {
      kind: 'search',
      query: 'Noraexel Moufeirani',
      passages: [{ id: 'n', title: 'Noraexel Moufeirani', text: 'Noraexel Moufeirani was born in Poupol.' }],
    },
  ],
  k: 1,
  n: 5,
  formatReward: 0.9,
  difficultyReward: 1,
  examinerReward: 1.45,
  advantage: 0.5,
  ...over,
});

describe('the TRL dataset of a run', () => {
  it("keeps the valid questions, with the student's and the teacher's prompts and the path", () => {
    const recs = [
      record({}),
      record({ formatReward: 0, question: '' }),
      record({ step: -1, hops: 1, qcp: [record({}).qcp[0]!] }),
    ];
    const rows = trlRows(recs, 'full', { seed: 1, partialDrop: 0.5 });
    expect(rows).toHaveLength(2);
    const [r] = rows;
    expect(r!.prompt).toEqual([{ role: 'user', content: studentPrompt({ question: recs[0]!.question }) }]);
    const block = privilegedBlock(qcpOfRecord(recs[0]!), 'full');
    expect(r!.teacher_prompt[0]!.content.replace(block, '')).toBe(r!.prompt[0]!.content);
    // TRL's SDFT/SDPO trainers read the block alone and append it to the prompt themselves.
    expect(r!.privileged_context).toBe(block);
    expect(block).toContain(
      'Search 1: Noraexel Moufeirani\n<information>Doc 1 (Title: Noraexel Moufeirani) Noraexel Moufeirani was born in Poupol.</information>',
    );
    expect(r).toMatchObject({ answer: 'Poupol', hops: 2, k: 1, n: 5, iteration: 0, step: 0 });
    expect(rows[1]!.step).toBe(-1);
    const none = trlRows(recs, 'none', { seed: 1, partialDrop: 0.5 })[0]!;
    expect(none.teacher_prompt).toEqual(r!.prompt);
    expect(none.privileged_context).toBe('');
  });

  it('is written by npm run dataset (JSONL, or parquet for verl), which refuses to overwrite a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'piplay-dataset-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(makeConfig('smoke')));
    writeFileSync(
      join(dir, 'questions.jsonl'),
      [record({}), record({ formatReward: 0 })].map((q) => JSON.stringify(q) + '\n').join(''),
    );
    const cli = (...args: string[]) => spawnSync('npx', ['tsx', 'src/cli/dataset.ts', ...args], { encoding: 'utf8' });
    const outDir = mkdtempSync(join(tmpdir(), 'piplay-dataset-out-'));
    const out = join(outDir, 'data.jsonl');
    const ok = cli('--run', dir, '--out', out, '--privileged', 'gt');
    expect(ok.status, ok.stderr).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(1);
    expect(rows[0].teacher_prompt[0].content).toContain('the answer is Poupol.');
    expect(rows[0].privileged_context).toBe('Private notes on how this question was made: the answer is Poupol.\n');
    const again = cli('--run', dir, '--out', out);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/exists; piplay never overwrites a file/);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(1);
    const missing = cli('--run', join(dir, 'nope'), '--out', join(outDir, 'x.jsonl'));
    expect(missing.stderr).toMatch(/nope.*config\.json is missing/);

    // FILE.parquet: the same rows in verl's fields, read back by a parquet reader.
    const pq = join(outDir, 'data.parquet');
    const wrote = cli('--run', dir, '--out', pq, '--privileged', 'gt');
    expect(wrote.status, wrote.stderr).toBe(0);
    expect(wrote.stdout).toContain("verl's fields");
    const file = new Uint8Array(readFileSync(pq)).buffer;
    const meta = parquetMetadata(file);
    const top = parquetSchema(meta).children.map((c) => c.element.name);
    expect(top).toEqual(['data_source', 'prompt', 'ability', 'reward_model', 'extra_info']);
    const [row] = (await parquetReadObjects({ file })) as Record<string, unknown>[];
    expect(row).toEqual({
      data_source: 'piplay',
      prompt: rows[0].prompt,
      ability: 'search-qa',
      reward_model: { style: 'rule', ground_truth: 'Poupol' },
      extra_info: {
        split: 'train',
        index: 0,
        hops: 2,
        teacher_prompt: rows[0].teacher_prompt,
        privileged_context: rows[0].privileged_context,
        k: 1,
        n: 5,
        iteration: 0,
        step: 0,
        question: 'Where was the author of Beyond Thefyn born?',
        need_tools_kwargs: true,
        tools_kwargs: {
          search: {
            create_kwargs: {
              ground_truth: 'Poupol',
              question: 'Where was the author of Beyond Thefyn born?',
              data_source: 'piplay',
            },
          },
        },
      },
    });
    expect(cli('--run', dir, '--out', pq).stderr).toMatch(/exists; piplay never overwrites a file/);
  }, 60_000);

  it('refuses a run with no valid question instead of writing an empty file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'piplay-dataset-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(makeConfig('smoke')));
    const cli = (...args: string[]) => spawnSync('npx', ['tsx', 'src/cli/dataset.ts', ...args], { encoding: 'utf8' });
    // Outside the run folder (outputs into one are refused).
    const out = join(mkdtempSync(join(tmpdir(), 'piplay-dataset-out-')), 'data.jsonl');
    const none = cli('--run', dir, '--out', out);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/questions\.jsonl is missing \(the run wrote no question\); nothing was written/);
    writeFileSync(join(dir, 'questions.jsonl'), JSON.stringify(record({ formatReward: 0 })) + '\n');
    const invalid = cli('--run', dir, '--out', out);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toMatch(/holds no valid question .*; nothing was written/);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

describe('npm run dataset writes whole files, outside run folders, from checked settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'piplay-dataset-safe-'));
  const outDir = mkdtempSync(join(tmpdir(), 'piplay-dataset-safe-out-'));
  // As npm run train writes it: the settings, and the code that started the run (not a setting).
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ ...makeConfig('smoke'), code: { commit: 'a'.repeat(40), dirty: false } }),
  );
  writeFileSync(
    join(dir, 'questions.jsonl'),
    Array.from({ length: 8 }, () => JSON.stringify(record({})) + '\n').join(''),
  );
  /** The command, with at most `limitKiB` KiB per file it writes (a full disk, as `ulimit -f` makes one). */
  const cli = (args: string[], limitKiB?: number) =>
    spawnSync(
      'bash',
      ['-c', `${limitKiB ? `ulimit -f ${limitKiB}; ` : ''}exec npx tsx src/cli/dataset.ts "$@"`, 'dataset', ...args],
      { encoding: 'utf8' },
    );

  it('a full disk leaves no truncated file under the name, names it, and a retry then works', () => {
    const out = join(outDir, 'full.jsonl');
    const full = cli(['--run', dir, '--out', out], 4);
    expect(full.status).toBe(1);
    expect(full.stderr).toContain(`piplay: could not write ${out}: the file would be larger than`);
    expect(readdirSync(outDir)).toEqual([]);
    const again = cli(['--run', dir, '--out', out]);
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(8);
  }, 60_000);

  it('refuses --out inside a run folder, and a config.json that lacks a setting, by name', () => {
    const inside = cli(['--run', dir, '--out', join(dir, 'data.jsonl')]);
    expect(inside.status).toBe(1);
    expect(inside.stderr).toContain(`--out: ${join(dir, 'data.jsonl')} is inside the run folder ${dir}`);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'questions.jsonl']);
    const { privileged: _, ...partial } = makeConfig('smoke');
    const bare = mkdtempSync(join(tmpdir(), 'piplay-dataset-bare-'));
    writeFileSync(join(bare, 'config.json'), JSON.stringify(partial));
    const r = cli(['--run', bare, '--out', join(outDir, 'bare.jsonl')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `--run: ${join(bare, 'config.json')} holds settings piplay refuses: --privileged is missing from the configuration`,
    );
  }, 60_000);
});
