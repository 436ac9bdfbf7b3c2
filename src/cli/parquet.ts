// verl's dataset rows (src/lab/dataset.ts) as a parquet file, through hyparquet-writer (a maintained,
// dependency-light writer that handles nested columns): the schema is spelled out, so a reader (pyarrow, pandas,
// HF datasets) sees `prompt` as a list of {role, content} structs and `reward_model`/`extra_info` as structs.
import { ByteWriter, parquetWrite } from 'hyparquet-writer';
import type { VerlRow } from '../lab/dataset.ts';

type Element = Parameters<typeof parquetWrite>[0]['schema'] extends (infer E)[] | undefined ? E : never;

const text = (name: string): Element => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: 'REQUIRED',
});
const int = (name: string): Element => ({ name, type: 'INT32', repetition_type: 'REQUIRED' });
const bool = (name: string): Element => ({ name, type: 'BOOLEAN', repetition_type: 'REQUIRED' });
const struct = (name: string, fields: number): Element => ({ name, repetition_type: 'REQUIRED', num_children: fields });

/** A list of chat messages: the 3-level LIST of {role, content} structs. */
const messages = (name: string): Element[] => [
  { name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  struct('element', 2),
  text('role'),
  text('content'),
];

const SCHEMA: Element[] = [
  { name: 'root', num_children: 5 },
  text('data_source'),
  ...messages('prompt'),
  text('ability'),
  struct('reward_model', 2),
  text('style'),
  text('ground_truth'),
  struct('extra_info', 12),
  text('split'),
  int('index'),
  int('hops'),
  ...messages('teacher_prompt'),
  text('privileged_context'),
  int('k'),
  int('n'),
  int('iteration'),
  int('step'),
  text('question'),
  bool('need_tools_kwargs'),
  // verl's search tool: tools_kwargs.search.create_kwargs, the arguments its tool instance is created with.
  struct('tools_kwargs', 1),
  struct('search', 1),
  struct('create_kwargs', 3),
  text('ground_truth'),
  text('question'),
  text('data_source'),
];

const COLUMNS = ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info'] as const;

/** The rows as the bytes of a parquet file. */
export function verlParquet(rows: readonly VerlRow[]): Uint8Array {
  const writer = new ByteWriter();
  parquetWrite({
    writer,
    schema: SCHEMA,
    columnData: COLUMNS.map((name) => ({ name, data: rows.map((r) => r[name]) })),
    createdBy: 'piplay',
  });
  return new Uint8Array(writer.getBuffer());
}
