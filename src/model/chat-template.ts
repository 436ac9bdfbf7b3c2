// A model's chat template (Jinja, from tokenizer_config.json or chat_template.jinja), run with a bound on its work
// and its output: a template is a program from the model repository, and one that loops (`range(100000000)`) or
// doubles a string in a loop would otherwise take the process's memory. It is parsed when the tokenizer loads, and
// every failure (a parse error, a raise_exception, a bound) names the file and says what went wrong.
import { Environment, Interpreter, Template } from '@huggingface/jinja';

/** How much a template may do in one render: Jinja nodes evaluated, characters of a value, items of a list. */
export const TEMPLATE_LIMITS = { steps: 200_000, chars: 4 * 2 ** 20, items: 100_000 } as const;

/** A template that broke a bound. */
class TemplateLimitError extends Error {}

/** range() as Jinja's, refusing more than TEMPLATE_LIMITS.items numbers before making any. */
function boundedRange(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error('range() step must not be zero');
  const n = Math.max(0, Math.ceil((stop - start) / step));
  if (n > TEMPLATE_LIMITS.items)
    throw new TemplateLimitError(`range() of ${n} numbers, more than the ${TEMPLATE_LIMITS.items} a template may make`);
  return Array.from({ length: n }, (_, i) => start + i * step);
}

type Evaluate = Interpreter['evaluate'];
/** The interpreter's method that evaluates a block of statements (private in its types, public in its code). */
type EvaluateBlock = (statements: unknown[], environment: Environment) => unknown;
type WithBlock = { evaluateBlock: EvaluateBlock };
type SetVariable = Environment['set'];

export class ChatTemplate {
  private readonly template: Template;

  /** `where` names the template's file for messages ("chat_template.jinja of models/x"). */
  constructor(
    source: string,
    readonly where: string,
  ) {
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new Error(`the chat template in ${where} cannot be read: ${(e as Error).message}`);
    }
  }

  /**
   * The template rendered with `vars`, within TEMPLATE_LIMITS. Rendering is synchronous: for this call only, the
   * interpreter's evaluate is wrapped, counting steps and checking each value's size, its evaluateBlock counts a step
   * too (a loop's pass over an empty body evaluates nothing else), and the global range() the library sets up is
   * replaced by boundedRange.
   */
  render(vars: Record<string, unknown>): string {
    const proto = Interpreter.prototype;
    const evaluate: Evaluate = proto.evaluate;
    const blocks = proto as unknown as WithBlock;
    const evaluateBlock = blocks.evaluateBlock;
    const step = () => {
      if (++steps > TEMPLATE_LIMITS.steps)
        throw new TemplateLimitError(`it took more than ${TEMPLATE_LIMITS.steps} steps (does it loop?)`);
    };
    blocks.evaluateBlock = function (this: Interpreter, ...args: Parameters<EvaluateBlock>) {
      step();
      return evaluateBlock.apply(this, args);
    };
    const env = Environment.prototype;
    const set: SetVariable = env.set;
    env.set = function (this: Environment, name: string, value: unknown) {
      return set.call(this, name, name === 'range' && typeof value === 'function' ? boundedRange : value);
    };
    let steps = 0;
    proto.evaluate = function (this: Interpreter, ...args: Parameters<Evaluate>) {
      step();
      const value = evaluate.apply(this, args);
      const v = (value as { value?: unknown }).value;
      if (typeof v === 'string' && v.length > TEMPLATE_LIMITS.chars)
        throw new TemplateLimitError(`it made a text of more than ${TEMPLATE_LIMITS.chars} characters`);
      if (Array.isArray(v) && v.length > TEMPLATE_LIMITS.items)
        throw new TemplateLimitError(`it made a list of more than ${TEMPLATE_LIMITS.items} items`);
      return value;
    };
    try {
      return this.template.render(vars);
    } catch (e) {
      const why = e instanceof RangeError ? `it ran out of room (${e.message})` : (e as Error).message;
      throw new Error(
        `the chat template in ${this.where} failed: ${why}` +
          (e instanceof TemplateLimitError || e instanceof RangeError
            ? '; a chat template only lays out the messages: is this the model repository’s own template?'
            : ''),
      );
    } finally {
      proto.evaluate = evaluate;
      blocks.evaluateBlock = evaluateBlock;
      env.set = set;
    }
  }
}
