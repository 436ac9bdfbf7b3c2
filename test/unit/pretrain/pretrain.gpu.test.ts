// The pretraining pipeline at toy size: scripted transcripts are well-formed and match what rollouts see,
// packing masks the right tokens, a few steps lower the loss, and the written folder loads back.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { Bm25Index } from '../../../src/env/bm25.ts';
import { seedToInt, Rng } from '../../../src/env/random.ts';
import { lastAnswer, parseStudentTurn, stripInformation } from '../../../src/env/tags.ts';
import { PRIVILEGED_HEADER, teacherPrompt } from '../../../src/env/prompts.ts';
import { generateQuestion, generateWorld, WorldIndex, worldQcp } from '../../../src/env/world.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { loadModel } from '../../../src/model/io.ts';
import { loadTokenizer, tokenizerFromJson, type Tokenizer } from '../../../src/model/tokenizer.ts';
import { IM_END, TOOL_TAGS, trainTokenizer } from '../../../src/model/tokenizer-train.ts';
import {
  DEFAULT_WORLD_SEED,
  TEACHER_MODES,
  worldDocs,
  worldSeed,
  type DataSettings,
} from '../../../src/pretrain/data.ts';
import { checkCopying } from '../../../src/pretrain/check.ts';
import { copyTaskBatch } from '../../../src/pretrain/copy-task.ts';
import { Packer } from '../../../src/pretrain/pack.ts';
import { defaultWorldFiles, isCopyStep, pretrain } from '../../../src/pretrain/run.ts';
import { learningRate } from '../../../src/pretrain/train.ts';
import { factSentence } from '../../../src/env/sentences.ts';
import {
  chatPrompt,
  copyDrill,
  docText,
  examinerTranscript,
  scriptWorld,
  studentTranscript,
  teacherTranscript,
  toolReply,
  TOP_K,
  type Doc,
} from '../../../src/pretrain/transcripts.ts';
import { examinerFormatRewardOfTranscript } from '../../../src/rl/rewards.ts';
import { encodeToolReply } from '../../../src/rl/tool-reply.ts';
import { testEngine } from '../../helpers/engine.ts';

const DATA: DataSettings = { seed: 5, worldSize: 40, studentPerWorld: 12, examinerPerWorld: 6 };

let e: Engine;
let tok: Tokenizer;
let docs: Doc[];
const dirs: string[] = [];
beforeAll(async () => {
  e = await testEngine();
  docs = worldDocs(DATA, 0);
  const t = trainTokenizer(docs.map(docText), { vocabSize: 512, addedTokens: TOOL_TAGS });
  tok = await tokenizerFromJson(t.tokenizerJson, t.tokenizerConfig);
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The assistant part of a transcript (what a rollout's text holds). */
const assistantText = (d: Doc) =>
  d.segments
    .slice(1)
    .map((s) => s.text)
    .join('')
    .replace(IM_END, '');

describe('data', () => {
  it('never uses the default world and mixes passages, students and examiners', () => {
    for (let k = 0; k < 5; k++) expect(seedToInt(worldSeed(0, k))).not.toBe(seedToInt(DEFAULT_WORLD_SEED));
    const kinds = new Map<string, number>();
    for (const d of docs) kinds.set(d.kind, (kinds.get(d.kind) ?? 0) + 1);
    expect(kinds.get('passage')).toBe(40);
    expect(kinds.get('student')).toBe(12);
    expect(kinds.get('examiner')).toBe(6);
    expect(docText(worldDocs(DATA, 0)[3]!)).toBe(docText(docs[3]!)); // seeded
  });

  it('writes the shipped default world and its held-out set byte for byte (question phrasing is not to drift)', () => {
    for (const [name, bytes] of defaultWorldFiles())
      expect(new TextDecoder().decode(bytes), name).toBe(
        readFileSync(new URL(`../../../public/worlds/default/${name}`, import.meta.url), 'utf8'),
      );
  });

  it('scripts students that search the named entity and answer with the gold answer', () => {
    const world = generateWorld({ seed: 'script-test', size: 60 });
    const w = scriptWorld(new WorldIndex(world));
    const rng = new Rng(3);
    let checked = 0;
    for (let i = 0; i < 20; i++) {
      const q = generateQuestion(w.ix, rng, 1 + (i % 2))!;
      const d = studentTranscript(w, q);
      if (!d) continue;
      const text = assistantText(d);
      expect(lastAnswer(text)).toBe(q.answers[0]);
      expect(parseStudentTurn(text)).toEqual({ kind: 'search', query: w.ix.entity(q.path[0]!.from).name });
      expect((stripInformation(text).match(/<search>/g) ?? []).length).toBe(q.hops);
      // Before answering, the student quotes the retrieved sentence that states the answer.
      const quote = /Doc (\d) says: ([^<]*?) <\/think>\s*<answer>/.exec(stripInformation(text));
      expect(quote, text).not.toBeNull();
      expect(quote![2]).toContain(q.answers[0]!);
      expect(text).toContain(quote![2]!);
      // Loss only on what the agent writes: never on the prompt or a tool reply.
      for (const s of d.segments)
        if (s.text.includes('<information>') || s.text.includes('<|im_start|>')) expect(s.loss).toBe(false);
      checked++;
    }
    expect(checked).toBeGreaterThan(15);
  });

  it('adds copying drills on request: names, then the same names again, loss on the repeat only', () => {
    const d = copyDrill(['Vorn Kel', 'Kelder']);
    expect(docText(d)).toBe('Names: Vorn Kel, Kelder.\nAgain: Vorn Kel, Kelder.');
    expect(d.segments.map((s) => s.loss)).toEqual([false, true]);
    const withDrills = worldDocs({ ...DATA, drillsPerWorld: 7 }, 0);
    const drills = withDrills.filter((x) => x.kind === 'drill');
    expect(drills).toHaveLength(7);
    const world = generateWorld({ seed: worldSeed(DATA.seed, 0), size: DATA.worldSize });
    const names = new Set(world.entities.map((x) => x.name));
    for (const x of drills) {
      const [first, again] = docText(x).split('\nAgain: ');
      expect(first!.replace(/^Names: /, '')).toBe(again);
      for (const n of again!.replace(/\.$/, '').split(', ')) expect(names.has(n)).toBe(true);
    }
    expect(
      withDrills
        .filter((x) => x.kind !== 'drill')
        .map(docText)
        .sort(),
    ).toEqual(docs.map(docText).sort());
  });

  it("scripts the student given the teacher's prompt: the same actions after a privileged block, on request", () => {
    const world = generateWorld({ seed: 'script-test', size: 60 });
    const w = scriptWorld(new WorldIndex(world));
    const rng = new Rng(4);
    const search = (query: string) => w.bm25.search(query, TOP_K).map((h) => h.passage);
    let checked = 0;
    for (let i = 0; i < 12; i++) {
      const q = generateQuestion(w.ix, rng, 1 + (i % 3))!;
      const mode = TEACHER_MODES[i % TEACHER_MODES.length]!;
      const d = teacherTranscript(w, q, mode, { seed: `t-${i}` });
      const plain = studentTranscript(w, q);
      expect(d === null).toBe(plain === null);
      if (!d || !plain) continue;
      expect(d.kind).toBe('teacher');
      // The prompt is the teacher's, with the QCP the self-play environment gives a world question.
      const qcp = worldQcp(w.ix, q, search);
      expect(d.segments[0]!.text).toBe(
        chatPrompt(teacherPrompt({ question: q.question, qcp, mode, options: { seed: `t-${i}` } })),
      );
      expect(d.segments[0]!.text).toContain(`${PRIVILEGED_HEADER}`);
      expect(d.segments[0]!.loss).toBe(false);
      if (mode === 'full')
        qcp.searches.forEach((s, k) => expect(d.segments[0]!.text).toContain(`Search ${k + 1}: ${s.query}`));
      // The agent acts exactly as without the notes: same searches, quotes and answer, same loss flags.
      expect(d.segments.slice(1)).toEqual(plain.segments.slice(1));
      checked++;
    }
    expect(checked).toBeGreaterThan(8);
    const withTeacher = worldDocs({ ...DATA, teacherPerWorld: 5 }, 0);
    expect(withTeacher.filter((x) => x.kind === 'teacher')).toHaveLength(5);
    expect(
      withTeacher
        .filter((x) => x.kind !== 'teacher')
        .map(docText)
        .sort(),
    ).toEqual(docs.map(docText).sort());
  });

  it("scripts the teacher after a student's slip: a wrong last quote, shown but not a target, then the right answer", () => {
    const world = generateWorld({ seed: 'script-test', size: 60 });
    const w = scriptWorld(new WorldIndex(world));
    const rng = new Rng(5);
    let checked = 0;
    let blinded = 0;
    for (let i = 0; i < 12; i++) {
      const q = generateQuestion(w.ix, rng, 1 + (i % 2))!;
      const plain = teacherTranscript(w, q, 'gt', { seed: `s-${i}` });
      const slipped = teacherTranscript(w, q, 'gt', { seed: `s-${i}` }, { rng: new Rng(i), stop: false });
      if (!plain || !slipped) continue;
      const answerText = plain.segments.at(-3)!.text;
      const value = /<answer> (.*) <\/answer>$/.exec(answerText)![1]!;
      // Everything before the last quote is the same; the last turn splits into the slip and the answer.
      expect(slipped.segments.slice(0, -4)).toEqual(plain.segments.slice(0, -3));
      const [slip, reply, end] = slipped.segments.slice(-4, -1);
      expect(slip!.loss).toBe(false);
      expect(slip!.text).toMatch(/^<think> Doc [1-3] says: .* <\/think>\n$/);
      expect(slip!.text).not.toMatch(new RegExp(`(^|\\W)${value}(\\W|$)`));
      expect(reply).toEqual({ text: `<answer> ${value} </answer>`, loss: true });
      expect(end!.loss).toBe(true);
      // A slip that stops: the same wrong sentence shown, then closing the notes and answering as targets.
      const stops = teacherTranscript(w, q, 'gt', { seed: `s-${i}` }, { rng: new Rng(i), stop: true })!;
      expect(stops.segments.slice(0, -4)).toEqual(slipped.segments.slice(0, -4));
      expect(stops.segments.at(-4)).toEqual({ text: slip!.text.replace(/<\/think>\n$/, ''), loss: false });
      expect(stops.segments.at(-3)).toEqual({ text: `</think>\n<answer> ${value} </answer>`, loss: true });
      // A blind slip: the last search result keeps only the passages that do not state the answer.
      const blind = teacherTranscript(w, q, 'gt', { seed: `s-${i}` }, { rng: new Rng(i), stop: true, blind: true });
      if (blind) {
        expect(blind.segments.slice(0, -6)).toEqual(stops.segments.slice(0, -6));
        const result = blind.segments.at(-5)!;
        expect(result.loss).toBe(false);
        expect(result.text).toMatch(/<information>/);
        expect(result.text).not.toMatch(new RegExp(`(^|\\W)${value}(\\W|$)`));
        expect(stops.segments.at(-5)!.text).toMatch(new RegExp(`(^|\\W)${value}(\\W|$)`));
        expect(blind.segments.at(-3)).toEqual({ text: `</think>\n<answer> ${value} </answer>`, loss: true });
        blinded++;
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(8);
    expect(blinded).toBeGreaterThan(4);
    // Slips are drawn only when asked for: without them the text is unchanged.
    const some = worldDocs({ ...DATA, teacherPerWorld: 6, teacherSlips: 0.5 }, 0).filter((x) => x.kind === 'teacher');
    const none = worldDocs({ ...DATA, teacherPerWorld: 6 }, 0).filter((x) => x.kind === 'teacher');
    expect(worldDocs({ ...DATA, teacherPerWorld: 6, teacherSlips: 0 }, 0).map(docText)).toEqual(
      worldDocs({ ...DATA, teacherPerWorld: 6 }, 0).map(docText),
    );
    const slipped = (d: Doc) => d.segments.some((s, k) => k > 0 && !s.loss && s.text.startsWith('<think>'));
    expect(some.filter(slipped).length).toBeGreaterThan(0);
    expect(none.filter(slipped)).toHaveLength(0);
    // Slip stops change only the slipped transcripts' last turn, and only when asked for.
    const stopping = worldDocs({ ...DATA, teacherPerWorld: 6, teacherSlips: 0.5, teacherSlipStops: 1 }, 0);
    const stopped = stopping.filter((x) => x.kind === 'teacher' && x.segments.at(-3)!.text.startsWith('</think>'));
    expect(stopped).toHaveLength(some.filter(slipped).length);
    // Blind slips change only the slipped transcripts' last search result, and only when asked for.
    const blinding = worldDocs(
      { ...DATA, teacherPerWorld: 6, teacherSlips: 0.5, teacherSlipStops: 1, teacherSlipBlind: 1 },
      0,
    );
    const info = (d: Doc) => d.segments.filter((x) => x.text.includes('<information>')).at(-1)!.text;
    expect(blinding.filter((d, k) => d.kind === 'teacher' && info(d) !== info(stopping[k]!))).toHaveLength(
      some.filter(slipped).length,
    );
    expect(stopping.map((d) => docText(d)).sort()).toEqual(
      worldDocs({ ...DATA, teacherPerWorld: 6, teacherSlips: 0.5 }, 0)
        .map(docText)
        .sort(),
    );
  });

  it('answer-only teacher transcripts: the same text, with the answer and the end as the only targets', () => {
    const settings = { ...DATA, teacherPerWorld: 8, teacherSlips: 0.5, teacherSlipStops: 0.5 };
    const all = worldDocs(settings, 0);
    const only = worldDocs({ ...settings, teacherAnswerOnly: 1 }, 0);
    // Off by default: a share of 0 leaves every document as it was.
    expect(worldDocs({ ...settings, teacherAnswerOnly: 0 }, 0)).toEqual(all);
    expect(only.map(docText)).toEqual(all.map(docText));
    const targets = (d: Doc) => d.segments.filter((x) => x.loss).map((x) => x.text);
    let stops = 0;
    only.forEach((d, k) => {
      if (d.kind !== 'teacher') {
        expect(d).toEqual(all[k]);
        return;
      }
      const [answer, end, ...rest] = targets(d);
      expect(rest).toEqual([]);
      expect(end).toBe(IM_END);
      // The answer, or (after a slip that stops) closing the notes and the answer.
      expect(answer).toMatch(/^(<\/think>\n)?<answer> [^<]+ <\/answer>$/);
      if (answer!.startsWith('</think>')) stops++;
      // The transcript trained as before had searches and quotes as targets too.
      expect(targets(all[k]!).join('')).toContain(answer);
      expect(targets(all[k]!).length).toBeGreaterThan(2);
      // Segment by segment still encodes to the ids of the whole text.
      const whole = tok.encode(docText(d), { addSpecialTokens: false });
      expect(d.segments.flatMap((x) => tok.encode(x.text, { addSpecialTokens: false }))).toEqual(whole);
    });
    expect(only.filter((d) => d.kind === 'teacher').length).toBeGreaterThan(4);
    expect(stops).toBeGreaterThan(0);
  });

  it("answer-first notes: the compact notes opened by the gt notes' line, only where asked for", () => {
    const settings = { ...DATA, teacherPerWorld: 12, teacherCompact: 1 };
    const compact = worldDocs(settings, 0);
    expect(worldDocs({ ...settings, teacherAnswerFirst: 0 }, 0)).toEqual(compact);
    const first = worldDocs({ ...settings, teacherAnswerFirst: 1 }, 0);
    const led = /Private notes on how this question was made: the answer is [^\n]+\.\n(Source document|Search 1): /;
    let changed = 0;
    first.forEach((d, k) => {
      const before = docText(compact[k]!);
      // Full and partial notes: the header on a line of its own (gt's goes on with the answer).
      if (d.kind !== 'teacher' || !before.includes('how this question was made:\n')) {
        expect(d).toEqual(compact[k]);
        return;
      }
      // Only the notes' first line differs; every target is the same.
      expect(docText(d)).toMatch(led);
      expect(docText(d).replace(/(made:) the answer is [^\n]+\./, '$1')).toBe(before);
      expect(d.segments.filter((x) => x.loss)).toEqual(compact[k]!.segments.filter((x) => x.loss));
      changed++;
    });
    expect(changed).toBeGreaterThan(3);
  });

  it('makes copy-task rows: spans repeated, loss only where the repeat determines the token', () => {
    const pool = [3, 5, 7, 11, 13, 17];
    const b = copyTaskBatch(new Rng(1), 2, 64, { ids: pool, span: [2, 5] });
    expect(b.ids).toHaveLength(128);
    for (let i = 0; i < 128; i++) {
      expect(pool).toContain(b.ids[i]);
      if (i % 64 < 63) expect(b.targets[i]).toBe(b.ids[i + 1]);
    }
    // Every target under the mask equals the token one span length back (found by re-walking the row).
    let masked = 0;
    for (let r = 0; r < 2; r++) {
      const m = Array.from(b.mask.subarray(r * 64, r * 64 + 64));
      masked += m.filter(Boolean).length;
      // A masked run of k targets is a span of length k + 1 repeated: its targets equal the tokens k + 1 back.
      for (let t = 0; t < 64; t++) {
        if (!m[t]) continue;
        let start = t;
        while (start > 0 && m[start - 1]) start--;
        let end = t;
        while (end < 63 && m[end + 1]) end++;
        const len = end - start + 2; // the span's length
        if (end < 63) expect(b.targets[r * 64 + t]).toBe(b.ids[r * 64 + t + 1 - len]);
      }
    }
    expect(masked).toBeGreaterThan(40);
    expect(() => copyTaskBatch(new Rng(1), 1, 8, { ids: [1] })).toThrow(/at least 2/);
  });

  it('quotes the first sentence that holds the value as a whole word', () => {
    const text = 'Vorn was born in 1801 in Kel. Vorn wrote Kelder. Vorn founded Kel Press in 1830.';
    expect(factSentence(text, 'Kel')).toBe('Vorn was born in 1801 in Kel.');
    expect(factSentence(text, 'Kelder')).toBe('Vorn wrote Kelder.');
    expect(factSentence(text, '1830')).toBe('Vorn founded Kel Press in 1830.');
    expect(factSentence(text, 'absent')).toBe(text);
  });

  it('scripts examiners whose transcripts get the full format reward', () => {
    const world = generateWorld({ seed: 'script-test', size: 60 });
    const w = scriptWorld(new WorldIndex(world));
    const rng = new Rng(4);
    let checked = 0;
    for (let i = 0; i < 24; i++) {
      const hops = 1 + (i % 3);
      const source = rng.pick(world.passages);
      const d = examinerTranscript(w, source, hops, rng);
      if (!d) continue;
      const f = examinerFormatRewardOfTranscript(assistantText(d), hops, `${source.title} ${source.text}`);
      expect(f.f).toBe(1);
      checked++;
    }
    expect(checked).toBeGreaterThan(12);
  });

  it('writes prompts and tool replies exactly as the chat template and src/rl/tool-reply.ts do', () => {
    const user = 'Answer the question.\nQuestion: Who?\n';
    expect(chatPrompt(user)).toBe(
      tok.applyChatTemplate([{ role: 'user', content: user }], { addGenerationPrompt: true }),
    );
    const passages = new Bm25Index(generateWorld({ seed: 9, size: 30 }).passages)
      .search('city', 3)
      .map((h) => h.passage);
    expect(tok.encode(toolReply(passages), { addSpecialTokens: false })).toEqual(
      encodeToolReply(tok, passages, 10_000).ids,
    );
    // Segment by segment encodes to the ids of the whole text (boundaries sit at added tokens).
    for (const d of docs.filter((x) => x.kind !== 'passage')) {
      const whole = tok.encode(docText(d), { addSpecialTokens: false });
      expect(d.segments.flatMap((s) => tok.encode(s.text, { addSpecialTokens: false }))).toEqual(whole);
    }
  });
});

describe('copy-task steps', () => {
  it('the warm-up, then every copyEvery-th step', () => {
    const which = (o: { copyWarmup?: number; copyEvery?: number }) =>
      Array.from({ length: 10 }, (_, s) => s).filter((s) => isCopyStep(s, o));
    expect(which({})).toEqual([]);
    expect(which({ copyWarmup: 3 })).toEqual([0, 1, 2]);
    expect(which({ copyEvery: 3 })).toEqual([2, 5, 8]);
    expect(which({ copyWarmup: 2, copyEvery: 2 })).toEqual([0, 1, 3, 5, 7, 9]);
    expect(which({ copyWarmup: 2, copyEvery: 1 })).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('Packer', () => {
  it('fills rows with whole transcripts and passage text, targets shifted by one, tool replies masked', () => {
    const seq = 700;
    const packer = new Packer(tok, docs[Symbol.iterator](), seq, 0.3);
    const b = packer.next(3);
    expect(b.ids.length).toBe(3 * seq);
    for (let r = 0; r < 3; r++)
      for (let t = 0; t + 1 < seq; t++) expect(b.targets[r * seq + t]).toBe(b.ids[r * seq + t + 1]);
    // Inside an <information> block nothing is a target; the tag that follows a tool reply is.
    const open = tok.tokenToId('<information>')!;
    const close = tok.tokenToId('</information>')!;
    let inside = false;
    let sawInfo = false;
    for (let i = 0; i < b.targets.length; i++) {
      if (i % seq === 0) inside = false;
      if (b.targets[i] === open) inside = true;
      if (inside) {
        sawInfo = true;
        expect(b.mask[i]).toBe(0);
      }
      if (b.targets[i] === close) inside = false;
    }
    expect(sawInfo).toBe(true);
    // The agent's final `</answer><|im_end|>` is a target (the prompts' own `</answer>` examples are not).
    const answerClose = tok.tokenToId('</answer>')!;
    const imEnd = tok.tokenToId(IM_END)!;
    let finals = 0;
    for (let i = 0; i + 1 < b.targets.length; i++) {
      if (b.targets[i] === answerClose && b.targets[i + 1] === imEnd) {
        expect([b.mask[i], b.mask[i + 1]]).toEqual([1, 1]);
        finals++;
      }
    }
    expect(finals).toBeGreaterThan(0);
    expect(packer.stats.transcriptTokens).toBeGreaterThan(0);
    expect(packer.stats.passageTokens).toBeGreaterThan(0);
  });

  it('refuses rows too short for any transcript', () => {
    const endless = (function* () {
      for (;;) yield* docs.filter((d) => d.kind !== 'passage');
    })();
    expect(() => new Packer(tok, endless, 32).next(1)).toThrow(/longer --seq/);
  });
});

describe('pretrain', () => {
  it('warms up, then decays the learning rate to the floor', () => {
    const s = { steps: 100, lr: 1e-3, warmup: 10 };
    expect(learningRate(0, s)).toBeCloseTo(1e-4);
    expect(learningRate(9, s)).toBeCloseTo(1e-3);
    expect(learningRate(99, s)).toBeCloseTo(1e-4);
    expect(learningRate(50, s)).toBeLessThan(1e-3);
  });

  it('lowers the loss in a few steps and writes a folder that loads back', async () => {
    const result = await pretrain(e, {
      seed: 5,
      steps: 10,
      batch: 1,
      seq: 700,
      lr: 1e-2,
      hidden: 32,
      layers: 1,
      vocab: 512,
      tokenizerWorlds: 1,
      logEvery: 1,
      data: DATA,
      train: { warmup: 2 },
    });
    const losses = result.logs.map((l) => l.loss);
    expect(losses).toHaveLength(10);
    expect(losses[0]!).toBeGreaterThan(Math.log(512) - 0.2);
    expect(Math.min(...losses.slice(-3))).toBeLessThan(losses[0]! - 0.5);
    expect(result.stats.tokens).toBe(10 * 700);

    // The copying check scores exactly the entity's tokens of each question.
    const world = generateWorld({ seed: 'copy-check', size: 40 });
    const qs = [0, 1, 2].map(() => generateQuestion(new WorldIndex(world), new Rng(9), 1)!);
    const copy = await checkCopying(result.model, result.tokenizer, world, qs);
    const ix = new WorldIndex(world);
    expect(copy.tokens).toBe(
      qs.reduce(
        (n, q) =>
          n + result.tokenizer.encode(` ${ix.entity(q.path[0]!.from).name}`, { addSpecialTokens: false }).length,
        0,
      ),
    );
    for (const share of [copy.fromQuestion, copy.fromNote]) expect(share >= 0 && share <= 1).toBe(true);

    const dir = mkdtempSync(join(tmpdir(), 'piplay-pretrain-'));
    dirs.push(dir);
    for (const [name, bytes] of result.files) writeFileSync(join(dir, name), bytes);
    expect(readdirSync(dir).sort()).toEqual([
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const model = await loadModel(e, filesFromNodeFolder(dir));
    const loaded = await loadTokenizer(filesFromNodeFolder(dir), { eosIds: model.cfg.eosIds });
    expect(model.cfg.vocabSize).toBe(loaded.vocabSize);
    expect(model.cfg.eosIds).toEqual([loaded.tokenToId(IM_END)]);
    expect(loaded.tokenToId('<search>')).toBeDefined();
    const a = await result.model.toHost();
    const back = await model.toHost();
    for (const [name, t] of a) expect(back.get(name)!.data).toEqual(t.data);
    model.dispose();
    result.model.dispose();

    // --from: training continues from the folder's weights (first loss near the last one, not ln V) and
    // keeps its tokenizer byte for byte.
    const more = await pretrain(e, {
      seed: 6,
      steps: 2,
      batch: 1,
      seq: 700,
      lr: 1e-3,
      hidden: 8, // ignored: the folder's config wins
      layers: 4,
      logEvery: 1,
      data: DATA,
      from: { files: filesFromNodeFolder(dir), source: dir },
    });
    expect(more.stats.copyTokens).toBe(0);
    expect(more.cfg.hidden).toBe(32);
    expect(more.cfg.layers).toBe(1);
    expect(more.logs[0]!.loss).toBeLessThan(losses[0]! - 0.5);
    for (const name of ['tokenizer.json', 'tokenizer_config.json'])
      expect(more.files.get(name)).toEqual(result.files.get(name));
    more.model.dispose();

    // --copy-warmup and --copy-every: copy-task rows (16 x 32) at steps 1, 3 and 5, counted in the totals.
    const warm = await pretrain(e, {
      seed: 7,
      steps: 5,
      copyWarmup: 1,
      copyEvery: 2,
      batch: 1,
      seq: 700,
      lr: 1e-3,
      hidden: 32,
      layers: 1,
      logEvery: 1,
      data: DATA,
      from: { files: filesFromNodeFolder(dir), source: dir },
    });
    expect(warm.stats.copyTokens).toBe(3 * 16 * 32);
    expect(warm.stats.copyTargets).toBeGreaterThan(0);
    expect(warm.stats.tokens).toBe(3 * 16 * 32 + 2 * 700);
    expect(warm.logs.map((l) => l.tokens)).toEqual([512, 1212, 1724, 2424, 2936]);
    warm.model.dispose();
  });
});
