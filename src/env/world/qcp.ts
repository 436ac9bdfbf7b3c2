// The question construction path (QCP) of a world-generated question, shaped like the examiner's: the
// source passage, then one search per further hop (the next entity's name as the query, with what the
// search tool returns for it). The teacher's privileged context for a world question, in self-play's
// fallback questions and in the base model's pretraining transcripts alike.
import type { Passage } from '../corpus.ts';
import type { Qcp } from '../prompts.ts';
import { formatInformationBody } from '../tags.ts';
import type { WorldIndex } from './index.ts';
import type { WorldQuestion } from './questions.ts';

export function worldQcp(ix: WorldIndex, q: WorldQuestion, search: (query: string) => readonly Passage[]): Qcp {
  const source = ix.world.passages.find((p) => p.id === q.path[0]!.passage);
  if (!source)
    throw new Error(
      `piplay: question '${q.question}' starts from passage ${q.path[0]!.passage}, which its world lacks`,
    );
  const searches = q.path.slice(1).map((step) => {
    const query = ix.entity(step.from).name;
    return { query, information: formatInformationBody(search(query)) };
  });
  return { source, hops: q.hops, searches, question: q.question, answer: q.answers[0]! };
}
