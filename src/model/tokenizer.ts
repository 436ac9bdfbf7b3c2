// The model's tokenizer: HF `tokenizer.json` + `tokenizer_config.json`, run by @huggingface/transformers.
// The tokenizer is built from the parsed JSON files directly (never `from_pretrained`), so it works the same
// in a browser and in Node, from dropped files, a URL or a folder, and never contacts the HF hub.
//
// The files come from a model repository, so nothing in them is trusted: the patterns it runs on every text are
// checked for catastrophic backtracking (tokenizer-patterns.ts), its chat template runs with a bound on its work
// (chat-template.ts), it must encode a sample text to real ids before it is used, and text from documents (message
// contents, tool replies) is never encoded as the special tokens whose text it may contain.

import type { PreTrainedTokenizer } from '@huggingface/transformers';
import { ChatTemplate } from './chat-template.ts';
import { MissingFileError, isMissingFile, parseJsonFile, readOptional, type ReadFile } from './files.ts';
import { checkTokenizerPatterns } from './tokenizer-patterns.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | (string & {});
  content: string;
}

export interface ChatTemplateOptions {
  /** End with the assistant header so the model writes the reply. */
  addGenerationPrompt?: boolean;
  /** Extra template variables, e.g. {enable_thinking: false} for Qwen3. */
  templateVars?: Record<string, unknown>;
}

export interface Tokenizer {
  /** One more than the largest id the tokenizer knows (added tokens included); may be below config vocab_size. */
  readonly vocabSize: number;
  /**
   * Ids that end a generation: the tokenizer's eos_token plus those passed to the loader (config.json,
   * generation_config.json).
   */
  readonly eosIds: number[];
  readonly bosId: number | null;
  readonly padId: number | null;
  /** Ids of special tokens (control tokens such as <|im_start|>). */
  readonly specialIds: ReadonlySet<number>;
  readonly hasChatTemplate: boolean;
  /**
   * The text's ids. With `asText` the text of a special token in it (`<|im_end|>` in a document) is encoded as the
   * plain text it is, never as that token: text from documents cannot inject a turn of the conversation.
   */
  encode(text: string, opts?: { addSpecialTokens?: boolean; asText?: boolean }): number[];
  decode(ids: readonly number[], opts?: { skipSpecialTokens?: boolean }): string;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /**
   * One display string per id whose concatenation is decode(ids) (without clean-up). A token that ends
   * inside a multi-byte character shows as '' and the token that completes it shows the whole character.
   */
  decodeEach(ids: readonly number[]): string[];
  /** The chat template rendered as text. */
  applyChatTemplate(messages: readonly ChatMessage[], opts?: ChatTemplateOptions): string;
  /**
   * The chat template rendered and encoded (no extra special tokens added, as HF does). The messages' contents are
   * text: a special token's text inside one is encoded as plain text (see encode's `asText`); only the template's
   * own markup becomes special tokens.
   */
  encodeChat(messages: readonly ChatMessage[], opts?: ChatTemplateOptions): number[];
}

export interface TokenizerLoadOptions {
  /** Where the files come from, for messages ("public/models/qwen3-0.6b"). */
  where?: string;
  /** More end-of-sequence ids (from config.json's or generation_config.json's eos_token_id). */
  eosIds?: readonly number[];
  /** The file the chat template came from, for messages (default tokenizer_config.json). */
  templateFile?: string;
}

type TransformersModule = typeof import('@huggingface/transformers');
let transformers: Promise<TransformersModule> | null = null;
function library(): Promise<TransformersModule> {
  transformers ??= import('@huggingface/transformers');
  return transformers;
}

const FILES_HELP =
  'piplay needs the HF tokenizer files tokenizer.json and tokenizer_config.json from the model repository, ' +
  'in the same folder as config.json';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Where newer HF exports (transformers 5) keep the chat template: its own file beside tokenizer_config.json. */
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

/** tokenizer_config.json's object with the template of chat_template.jinja when the config carries none. */
export function withChatTemplate(tokenizerConfig: unknown, jinja: Uint8Array | null): unknown {
  if (!jinja || !isObject(tokenizerConfig) || tokenizerConfig['chat_template'] != null) return tokenizerConfig;
  return { ...tokenizerConfig, chat_template: new TextDecoder().decode(jinja) };
}

/**
 * The tokenizer's files of a model folder as they are, to be written beside new weights: tokenizer.json,
 * tokenizer_config.json, and chat_template.jinja where the folder has one (without it an export of a base that
 * keeps its template there would have none).
 */
export async function tokenizerFileBytes(readFile: ReadFile): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) files[name] = await readFile(name);
  const jinja = await readOptional(readFile, CHAT_TEMPLATE_FILE);
  if (jinja) files[CHAT_TEMPLATE_FILE] = jinja;
  return files;
}

/**
 * Loads a tokenizer from a model folder: tokenizer.json, tokenizer_config.json, and chat_template.jinja when
 * the config carries no chat template (newer HF exports keep it there).
 */
export async function loadTokenizer(readFile: ReadFile, opts: TokenizerLoadOptions = {}): Promise<Tokenizer> {
  const where = opts.where ? ` (${opts.where})` : '';
  const read = async (name: string): Promise<Uint8Array> => {
    try {
      return await readFile(name);
    } catch (e) {
      if (isMissingFile(e)) {
        const msg = e instanceof MissingFileError ? e.message : `${name} was not found${where}`;
        throw new Error(`${msg}: ${FILES_HELP}`);
      }
      throw new Error(`could not read ${name}${where}: ${(e as Error).message}`);
    }
  };
  // Read together, but a failure is reported in file order, so which file the message names never depends on
  // which read failed first (both do in a folder that does not exist).
  const settled = await Promise.allSettled([read('tokenizer.json'), read('tokenizer_config.json')]);
  const [tj, tc] = settled.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  }) as [Uint8Array, Uint8Array];
  const tokenizerJson = parseJsonFile(tj, 'tokenizer.json' + where);
  const tokenizerConfig = parseJsonFile(tc, 'tokenizer_config.json' + where);
  let jinja: Uint8Array | null = null;
  if (isObject(tokenizerConfig) && tokenizerConfig['chat_template'] == null) {
    try {
      jinja = await readOptional(readFile, CHAT_TEMPLATE_FILE);
    } catch (e) {
      throw new Error(`could not read ${CHAT_TEMPLATE_FILE}${where}: ${(e as Error).message}`);
    }
  }
  // A template error names the file the template came from.
  const templateFile = jinja ? CHAT_TEMPLATE_FILE : 'tokenizer_config.json';
  return tokenizerFromJson(tokenizerJson, withChatTemplate(tokenizerConfig, jinja), { ...opts, templateFile });
}

/** Builds a tokenizer from the parsed tokenizer.json and tokenizer_config.json objects. */
export async function tokenizerFromJson(
  tokenizerJson: unknown,
  tokenizerConfig: unknown,
  opts: TokenizerLoadOptions = {},
): Promise<Tokenizer> {
  const where = opts.where ? ` (${opts.where})` : '';
  if (!isObject(tokenizerJson) || !isObject(tokenizerJson['model'])) {
    throw new Error(
      `tokenizer.json${where} is not an HF tokenizer file (it has no "model" object); ${FILES_HELP} ` +
        '(the fast-tokenizer tokenizer.json, not vocab.json/merges.txt or tokenizer.model)',
    );
  }
  if (!isObject(tokenizerConfig)) {
    throw new Error(`tokenizer_config.json${where} must hold a JSON object; ${FILES_HELP}`);
  }
  checkTokenizerPatterns(tokenizerJson, where);
  const lib = await library();
  // The class tokenizer_config.json names (as AutoTokenizer picks it), else the base class.
  const clsName =
    typeof tokenizerConfig['tokenizer_class'] === 'string'
      ? tokenizerConfig['tokenizer_class'].replace(/Fast$/, '')
      : '';
  const candidate = (lib as unknown as Record<string, unknown>)[clsName];
  const Cls =
    typeof candidate === 'function' &&
    (candidate === lib.PreTrainedTokenizer || candidate.prototype instanceof lib.PreTrainedTokenizer)
      ? (candidate as typeof lib.PreTrainedTokenizer)
      : lib.PreTrainedTokenizer;
  let tok: PreTrainedTokenizer;
  const build = (json: Record<string, unknown>) => new Cls(json, tokenizerConfig);
  try {
    tok = build(tokenizerJson);
  } catch (e) {
    throw new Error(
      `could not build the tokenizer from tokenizer.json/tokenizer_config.json${where}: ${(e as Error).message} ` +
        `(is its "model" complete: a BPE's vocab and merges, a Unigram's vocab?); ${FILES_HELP}`,
    );
  }
  const templateWhere = `${opts.templateFile ?? 'tokenizer_config.json'}${where}`;
  const t = new HfTokenizer(tok, opts.eosIds ?? [], tokenizerJson, build, templateWhere);
  t.check(where);
  return t;
}

/**
 * Refuses a tokenizer that knows ids the model has no embedding row for (tokenizer files of another model):
 * it would load, and the first prompt holding such a token would fail deep in the forward pass or sampler.
 * A model vocabulary larger than the tokenizer's is normal (padded embeddings).
 */
export function checkTokenizerFitsModel(tok: Pick<Tokenizer, 'vocabSize'>, modelVocabSize: number, where: string) {
  const n = tok.vocabSize;
  if (n <= modelVocabSize) return;
  throw new Error(
    `${where}: the tokenizer (tokenizer.json, tokenizer_config.json) has ${n} ids (0 to ${n - 1}, ` +
      `added tokens included) but config.json's vocab_size is ${modelVocabSize}, so ids ${modelVocabSize} and above ` +
      'have no embedding in the model. The tokenizer files belong to another model: use the tokenizer.json and ' +
      'tokenizer_config.json of the same model repository as config.json and the weights.',
  );
}

const REPLACEMENT = '\uFFFD';
/** At most this many tokens of context in decodeEach (a run of invalid bytes could otherwise grow it). */
const MAX_PENDING = 16;

/** A text every tokenizer must encode to real ids (letters, digits, punctuation, spaces, accents, CJK). */
const SAMPLE = 'Hello, world! The 2 answers: Zoë and 東京.\n  done';

/** The template variables of the special tokens, as transformers.js sets them (SPECIAL_TOKEN_ATTRIBUTES). */
const SPECIAL_VARS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'];

class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosIds: number[];
  readonly bosId: number | null;
  readonly padId: number | null;
  readonly specialIds: ReadonlySet<number>;
  readonly hasChatTemplate: boolean;
  private readonly template: ChatTemplate | null;
  /** The texts of the special tokens. */
  private readonly specialTexts: string[];
  /** The same tokenizer without special tokens (built when first needed): it encodes their texts as text. */
  private plain: PreTrainedTokenizer | null = null;

  constructor(
    private readonly tok: PreTrainedTokenizer,
    extraEos: readonly number[],
    private readonly json: Record<string, unknown>,
    private readonly build: (json: Record<string, unknown>) => PreTrainedTokenizer,
    templateWhere: string,
  ) {
    let max = -1;
    for (const id of tok.get_vocab().values()) if (id > max) max = id;
    for (const id of tok.all_special_ids) if (id > max) max = id;
    this.vocabSize = max + 1;
    const idOrNull = (v: number | undefined | null) => (typeof v === 'number' && Number.isInteger(v) ? v : null);
    const eos = idOrNull(tok.eos_token_id);
    this.eosIds = [...new Set([...(eos === null ? [] : [eos]), ...extraEos])];
    this.bosId = idOrNull(tok.bos_token_id);
    this.padId = idOrNull(tok.pad_token_id);
    this.specialIds = new Set(tok.all_special_ids);
    this.hasChatTemplate = tok.chat_template != null;
    const added = Array.isArray(json['added_tokens'])
      ? (json['added_tokens'] as { content?: unknown; special?: unknown }[])
      : [];
    this.specialTexts = added.flatMap((a) =>
      a?.special === true && typeof a.content === 'string' && a.content ? [a.content] : [],
    );
    let template: ChatTemplate | null = null;
    if (this.hasChatTemplate) {
      let source: unknown;
      try {
        source = tok.get_chat_template();
      } catch (e) {
        throw new Error(`the chat template in ${templateWhere} cannot be used: ${(e as Error).message}`);
      }
      if (typeof source !== 'string') throw new Error(`the chat template in ${templateWhere} is not a text`);
      template = new ChatTemplate(source, templateWhere);
    }
    this.template = template;
  }

  /**
   * Refuses, at load, a tokenizer that cannot be used: an empty vocabulary, a sample text that does not encode to
   * real ids, a chat template that fails on a user message. Every message names the files.
   */
  check(where: string): void {
    if (this.vocabSize === 0)
      throw new Error(`tokenizer.json${where} has an empty vocabulary: it is no tokenizer; ${FILES_HELP}`);
    let ids: number[];
    try {
      ids = this.encode(SAMPLE, { addSpecialTokens: false });
    } catch (e) {
      throw new Error(`tokenizer.json${where} cannot encode text (${(e as Error).message}); ${FILES_HELP}`);
    }
    if (ids.length === 0) throw new Error(`tokenizer.json${where} encodes text to no tokens; ${FILES_HELP}`);
    if (this.hasChatTemplate)
      this.applyChatTemplate([{ role: 'user', content: 'Hello' }], { addGenerationPrompt: true });
  }

  encode(text: string, opts: { addSpecialTokens?: boolean; asText?: boolean } = {}): number[] {
    const inject = opts.asText && this.holdsSpecial(text);
    const tok = inject ? this.plainTokenizer() : this.tok;
    const ids = tok.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true });
    // A tokenizer without an unknown token gives no id for a piece its vocabulary lacks.
    const bad = ids.findIndex((id) => !Number.isInteger(id));
    if (bad >= 0)
      throw new Error(
        `the tokenizer has no id for a piece of the text (token ${bad} of ${ids.length}, near ` +
          `${JSON.stringify(text.slice(0, 40))}) and no unknown token: its vocabulary does not cover this text`,
      );
    return ids;
  }

  /** Whether `text` holds the text of a special token. */
  private holdsSpecial(text: string): boolean {
    return this.specialTexts.some((s) => text.includes(s));
  }

  private plainTokenizer(): PreTrainedTokenizer {
    const added = (this.json['added_tokens'] as { special?: unknown }[] | undefined) ?? [];
    this.plain ??= this.build({ ...this.json, added_tokens: added.filter((a) => a?.special !== true) });
    return this.plain;
  }

  decode(ids: readonly number[], opts: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return '';
    return this.tok.decode([...ids], { skip_special_tokens: opts.skipSpecialTokens ?? false });
  }

  tokenToId(token: string): number | undefined {
    const id = this.tok._tokenizer.token_to_id(token);
    return typeof id === 'number' ? id : undefined;
  }

  idToToken(id: number): string | undefined {
    const t = this.tok._tokenizer.id_to_token(id);
    return typeof t === 'string' ? t : undefined;
  }

  private raw(ids: readonly number[]): string {
    if (ids.length === 0) return '';
    return this.tok.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  decodeEach(ids: readonly number[]): string[] {
    // Each token is decoded in the context of the tokens since the last character boundary before it (the
    // decoders of SentencePiece-style tokenizers treat the first token of a text differently, and byte-level
    // tokens may split a character): its string is what it adds to that context's text. A token that leaves
    // a character incomplete (the text ends in U+FFFD) shows nothing; the token that completes it shows it.
    const out: string[] = [];
    const bounds = [0]; // token indices at which everything before decodes to whole characters
    for (let i = 0; i < ids.length; i++) {
      let start = 0;
      if (i > 0) {
        let j = bounds.length - 1;
        if (bounds[j] === i) j--;
        start = Math.max(bounds[Math.max(j, 0)]!, i - MAX_PENDING);
      }
      const before = stripReplacement(this.raw(ids.slice(start, i)));
      const text = this.raw(ids.slice(start, i + 1));
      let k = 0;
      while (k < before.length && k < text.length && before.charCodeAt(k) === text.charCodeAt(k)) k++;
      let piece = text.slice(k);
      if (i < ids.length - 1 && text.endsWith(REPLACEMENT)) piece = stripReplacement(piece);
      else bounds.push(i + 1);
      out.push(piece);
    }
    return out;
  }

  applyChatTemplate(messages: readonly ChatMessage[], opts: ChatTemplateOptions = {}): string {
    if (!this.template) {
      throw new Error(
        'this tokenizer has no chat template: tokenizer_config.json has no "chat_template" and there is no ' +
          "chat_template.jinja; use an instruct model's tokenizer files, or format the prompt without a template",
      );
    }
    const config = this.tok.config as Record<string, unknown>;
    const special: Record<string, string> = {};
    for (const key of SPECIAL_VARS) {
      const v = config[key];
      const text = typeof v === 'string' ? v : (v as { content?: unknown } | null)?.content;
      if (typeof text === 'string' && text) special[key] = text;
    }
    return this.template.render({
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: opts.addGenerationPrompt ?? false,
      tools: null,
      documents: null,
      ...special,
      ...opts.templateVars,
    });
  }

  encodeChat(messages: readonly ChatMessage[], opts: ChatTemplateOptions = {}): number[] {
    const text = this.applyChatTemplate(messages, opts);
    if (!messages.some((m) => this.holdsSpecial(m.content))) return this.encode(text, { addSpecialTokens: false });
    // A content holds a special token's text: the template's markup is encoded as it is, each content as text. The
    // contents are found in the rendered text in order (a template inserts them as they are).
    const ids: number[] = [];
    let at = 0;
    for (const m of messages) {
      const i = m.content ? text.indexOf(m.content, at) : -1;
      if (i < 0) {
        if (!this.holdsSpecial(m.content)) continue;
        throw new Error(
          `a ${m.role} message holds the text of a special token, and the chat template changed the message, so ` +
            'its text could not be kept apart from the markup: remove the special token text from it',
        );
      }
      if (i > at) ids.push(...this.encode(text.slice(at, i), { addSpecialTokens: false }));
      ids.push(...this.encode(m.content, { addSpecialTokens: false, asText: true }));
      at = i + m.content.length;
    }
    if (at < text.length) ids.push(...this.encode(text.slice(at), { addSpecialTokens: false }));
    return ids;
  }
}

function stripReplacement(s: string): string {
  let e = s.length;
  while (e > 0 && s.charCodeAt(e - 1) === 0xfffd) e--;
  return e === s.length ? s : s.slice(0, e);
}
