// Training documents for the tiny base model, as text segments with a loss flag: encyclopedia passages
// (loss on everything) and tool-format transcripts of scripted agents (loss on what the agent writes only;
// the prompt and the environment's <information> replies are context, never targets).
//
// Transcripts follow the prompts of src/env/prompts.ts and the tags of src/env/tags.ts, wrapped in the
// ChatML template of src/model/tokenizer-train.ts. Every segment boundary sits next to an added token
// (a tag or a control token), so encoding the segments one by one gives the ids of the whole text.
import { Bm25Index } from '../env/bm25.ts';
import type { Passage } from '../env/corpus.ts';
import {
  examinerPrompt,
  studentPrompt,
  teacherPrompt,
  type PrivilegedMode,
  type PrivilegedOptions,
} from '../env/prompts.ts';
import type { Rng } from '../env/random.ts';
import { factSentence, mentions, sentencesOf } from '../env/sentences.ts';
import { ANSWER_OPEN, formatInformation, inTags, THINK_CLOSE } from '../env/tags.ts';
import { generatePhrasedQuestion, valueText, worldQcp, type WorldIndex, type WorldQuestion } from '../env/world.ts';
import { IM_END, IM_START } from '../model/tokenizer-train.ts';

/** A piece of a document; `loss` marks text the model is trained to produce. */
export interface Segment {
  text: string;
  loss: boolean;
}

export type DocKind = 'passage' | 'student' | 'teacher' | 'examiner' | 'drill';

export interface Doc {
  kind: DocKind;
  segments: Segment[];
}

/** Passages retrieved per search (ALGORITHM.md section 2). */
export const TOP_K = 3;

/**
 * What the environment appends after `</search>`: `\n<information>…</information>\n`, the text whose ids
 * src/rl/tool-reply.ts appends in rollouts (a test checks they agree), so the base model is trained on
 * exactly what it will see.
 */
export function toolReply(passages: readonly Pick<Passage, 'title' | 'text'>[]): string {
  return `\n${formatInformation(passages)}\n`;
}

/** The chat template's text up to the assistant's reply (equals applyChatTemplate(..., {addGenerationPrompt})). */
export function chatPrompt(user: string): string {
  return `${IM_START}user\n${user}${IM_END}\n${IM_START}assistant\n`;
}

/** A passage as plain encyclopedia text. */
export function passageDoc(p: Passage): Doc {
  return { kind: 'passage', segments: [{ text: `${p.title}\n${p.text}`, loss: true }] };
}

/** Builds an assistant reply: alternating own text and tool replies, closed by <|im_end|>. */
class Reply {
  readonly segments: Segment[];
  constructor(prompt: string) {
    this.segments = [{ text: chatPrompt(prompt), loss: false }];
  }
  /** Text the agent writes; `loss: false` for a prefix it is shown but not trained to write. */
  say(text: string, loss = true): this {
    this.segments.push({ text, loss });
    return this;
  }
  tool(passages: readonly Passage[]): this {
    this.segments.push({ text: toolReply(passages), loss: false });
    return this;
  }
  end(): Segment[] {
    this.segments.push({ text: IM_END, loss: true }, { text: '\n', loss: false });
    return this.segments;
  }
}

const think = (s: string) => `${inTags('think', s)}\n`;
const search = (q: string) => inTags('search', q);
const answer = (a: string) => inTags('answer', a);

/** A world with its retrieval index, for scripting agents. */
export interface ScriptWorld {
  ix: WorldIndex;
  bm25: Bm25Index;
}

export function scriptWorld(ix: WorldIndex): ScriptWorld {
  return { ix, bm25: new Bm25Index(ix.world.passages) };
}

/**
 * A slip of a teacher transcript (see slipQuote): the generator of its wrong sentence, whether the model
 * is trained on what follows that sentence (closing its notes, then answering), and whether the last
 * search shows only the passages that do not state the answer (`blind`, absent: false).
 */
export interface Slip {
  rng: Rng;
  stop: boolean;
  blind?: boolean;
}

/** The top-K passages for a query, and where the wanted passage ranks among them (-1 when absent). */
function retrieve(w: ScriptWorld, query: string, wanted: string): { passages: Passage[]; rank: number } {
  const passages = w.bm25.search(query, TOP_K).map((h) => h.passage);
  return { passages, rank: passages.findIndex((p) => p.id === wanted) };
}

/**
 * A student that solves `q` perfectly: one search per hop for the entity whose passage states the next
 * fact, then the answer copied from the passages. Null when retrieval misses a passage it needs (the
 * script never answers from knowledge it did not retrieve). `prompt` is the student's prompt unless a
 * teacher transcript gives its own; `slip` (teacher transcripts only) makes the last quote a wrong one.
 */
export function studentTranscript(
  w: ScriptWorld,
  q: WorldQuestion,
  prompt = studentPrompt({ question: q.question }),
  kind: DocKind = 'student',
  slip: Slip | null = null,
): Doc | null {
  const reply = new Reply(prompt);
  const start = w.ix.entity(q.path[0]!.from).name;
  reply.say(think(`I need to search for ${start}.`) + search(start));
  for (let h = 0; h < q.hops; h++) {
    const step = q.path[h]!;
    const query = w.ix.entity(step.from).name;
    const got = retrieve(w, query, step.passage);
    if (got.rank < 0) return null;
    const value = valueText(w.ix, step.to);
    const last = h + 1 === q.hops;
    // A blind slip: no passage of the last search states the answer, so only the notes can give it.
    const shown = slip?.blind && last ? got.passages.filter((p) => !mentions(p.text, value)) : got.passages;
    reply.tool(shown);
    // Quote the sentence that states the fact: finding its start is the one hard step, the rest is copying,
    // and the value then sits a few tokens back (a tiny model cannot pick it out of three passages directly).
    const quote = `Doc ${got.rank + 1} says: ${factSentence(got.passages[got.rank]!.text, value)}`;
    if (!last) {
      // Follow the bridging fact: the decomposition multi-hop questions need.
      reply.say(think(`${quote} I need to search for ${value}.`) + search(value));
    } else if (slip) {
      // The last quote is a wrong sentence, shown but not a target; the answer (a target) is still right.
      const wrong = slipQuote(shown, value, slip.rng);
      if (wrong === null) return null;
      // With `stop`, closing the notes (the choice between answering and searching again) is a target too.
      const notes = think(wrong);
      const cut = slip.stop ? notes.lastIndexOf(THINK_CLOSE) : notes.length;
      reply.say(notes.slice(0, cut), false).say(notes.slice(cut) + answer(value));
    } else {
      reply.say(think(quote) + answer(value));
    }
  }
  return { kind, segments: reply.end() };
}

/**
 * The same scripted student given the teacher's prompt: a privileged block before the question (its
 * construction path, part of it, or the answer, as self-play's teacher gets it). It acts exactly as
 * without the block: it still searches every hop and copies the answer from the passages. A base model
 * that never saw such notes reads them as noise (the teacher probe measured a teacher that stopped
 * searching and found right answers less likely than the student did); from these transcripts it learns
 * that the notes agree with what the search finds, so self-play's teacher finds the right queries and the
 * right answer more probable than the student does, and still searches.
 */
export function teacherTranscript(
  w: ScriptWorld,
  q: WorldQuestion,
  mode: Exclude<PrivilegedMode, 'none'>,
  options: PrivilegedOptions & { seed: string },
  slip: Slip | null = null,
): Doc | null {
  const qcp = worldQcp(w.ix, q, (query) => w.bm25.search(query, TOP_K).map((h) => h.passage));
  return studentTranscript(w, q, teacherPrompt({ question: q.question, qcp, mode, options }), 'teacher', slip);
}

/**
 * The same transcript whose only targets are its answer and the turn's end: every search, quote and note
 * before the last `<answer>` becomes context. After a slip that stops, closing the notes stays a target (it
 * is the teacher's choice to answer from its notes). The text is unchanged.
 */
export function answerTargetsOnly(doc: Doc): Doc {
  let last = doc.segments.length - 1;
  while (last >= 0 && !(doc.segments[last]!.loss && doc.segments[last]!.text.includes(ANSWER_OPEN))) last--;
  if (last < 0) return doc;
  const segments = doc.segments.flatMap((s, k): Segment[] => {
    if (k < last) return [{ text: s.text, loss: false }];
    if (k > last || s.text.startsWith(THINK_CLOSE)) return [s];
    const cut = s.text.lastIndexOf(ANSWER_OPEN);
    return cut > 0
      ? [
          { text: s.text.slice(0, cut), loss: false },
          { text: s.text.slice(cut), loss: true },
        ]
      : [s];
  });
  return { kind: doc.kind, segments };
}

/**
 * A student's slip before its answer, for a teacher transcript: "Doc k says: S" with S a sentence of the
 * retrieved passages that does not state `value` (null when there is none). Self-play's teacher scores
 * the student's own rollouts, slips included; in a transcript where the quote is right, the answer is a
 * copy of it and the notes never matter, so a teacher trained only on those ignores its notes (the teacher
 * probe: a gain of about 0.01 nats on right answers). After a slip the right answer is in the notes only.
 */
export function slipQuote(passages: readonly Passage[], value: string, rng: Rng): string | null {
  const found: string[] = [];
  passages.forEach((p, k) => {
    for (const sentence of sentencesOf(p.text))
      if (!mentions(sentence, value)) found.push(`Doc ${k + 1} says: ${sentence}`);
  });
  return found.length ? rng.pick(found) : null;
}

/**
 * An examiner given `source` and h that writes an h-hop question. Each hop it quotes the sentence that
 * states the next fact (from the source, then from the passage it retrieved) and names what it found by
 * the chain so far ("So the birthplace of X is Y."), then searches it (h - 1 searches) or, at the last hop,
 * says what it asks about and writes the question and its answer. Every part of the question is then a
 * copy of a nearby span (the description built hop by hop, the relation of the quoted sentence), as the
 * student's quotes put the value next to its answer (TRAINING.md says why: an examiner that wrote the
 * question straight from the source wrote no question true of the world).
 * Null when no such question exists from this source or retrieval misses a passage.
 */
export function examinerTranscript(w: ScriptWorld, source: Passage, hops: number, rng: Rng): Doc | null {
  const phrased = generatePhrasedQuestion(w.ix, rng, hops, { start: source.id, attempts: 8 });
  if (!phrased) return null;
  const { question: q, descriptions } = phrased;
  const path = q.path;
  const reply = new Reply(examinerPrompt({ source, hops }));
  let passage: Passage = source;
  let where = 'The source says:';
  for (let h = 0; h < hops; h++) {
    const value = valueText(w.ix, path[h]!.to);
    const quote = `${where} ${factSentence(passage.text, value)}`;
    if (h + 1 === hops) {
      reply.say(
        think(`${quote} I ask about ${descriptions[h]}; the answer is ${value}.`) +
          `${inTags('question', q.question)}${answer(value)}`,
      );
      break;
    }
    reply.say(think(`${quote} So ${descriptions[h + 1]} is ${value}. I need to search for ${value}.`) + search(value));
    const got = retrieve(w, value, path[h + 1]!.passage);
    if (got.rank < 0) return null;
    reply.tool(got.passages);
    passage = got.passages[got.rank]!;
    where = `Doc ${got.rank + 1} says:`;
  }
  return { kind: 'examiner', segments: reply.end() };
}

/**
 * A copying drill: names of a world, then the same names again in the same order (loss on the repeat
 * only). Every agent step the model learns (the question's entity into the query, a retrieved sentence
 * into its notes, the value into the answer) copies a span it has seen; a small model learns that
 * mechanism (induction heads) far sooner from densely repeated spans than from transcripts alone.
 */
export function copyDrill(names: readonly string[]): Doc {
  const list = names.join(', ');
  return {
    kind: 'drill',
    segments: [
      { text: `Names: ${list}.\nAgain:`, loss: false },
      { text: ` ${list}.`, loss: true },
    ],
  };
}

/** The whole text of a document. */
export function docText(d: Doc): string {
  return d.segments.map((s) => s.text).join('');
}
