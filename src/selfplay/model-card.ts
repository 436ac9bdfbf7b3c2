// The model card (README.md) written beside every exported student, on the command line and in the page's zip:
// the hub's YAML front matter (base_model where the base is a hub model, library_name, tags, license carried from
// the base where it is known), what the run did, the held-out exact match before and after, and the command that
// runs it again.
import { flagsFor, type SelfPlayConfig } from './config.ts';
import type { EvalMetrics } from './events.ts';

export interface CardInput {
  config: SelfPlayConfig;
  /** The run's held-out evaluations in order (iteration -1: the base, before any training). */
  evals: readonly EvalMetrics[];
  /** The base model's license (from its card's front matter), where it is known. */
  license?: string | null;
}

/**
 * The hub id of the base the card may name as `base_model`: an `hf:` model's, or that of a folder in the Hugging
 * Face cache (`…/models--owner--name/snapshots/<revision>`); null for 'random-tiny' and any other folder, which
 * name no model on the hub.
 */
export function baseModelId(model: string): string | null {
  if (model.startsWith('hf:')) return model.slice(3).split('@')[0]!;
  const cached = /(?:^|[\\/])models--([^\\/]+?)--([^\\/]+)[\\/]snapshots[\\/][^\\/]+[\\/]*$/.exec(model);
  return cached ? `${cached[1]}/${cached[2]}` : null;
}

/** What the card calls the base: its hub id, else the folder's last name, or 'random-tiny'. */
function baseName(model: string): string {
  return (
    baseModelId(model) ??
    (model
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() ||
      model)
  );
}

/** The `license:` of a card's YAML front matter (null when there is none). */
export function licenseOf(card: string | undefined): string | null {
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(card ?? '')?.[1];
  const m = front && /^license:\s*["']?([^"'\r\n#]+?)["']?\s*$/m.exec(front);
  return m ? m[1]! : null;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function emLine(e: EvalMetrics | undefined): string {
  if (!e || e.n === 0) return 'not measured';
  const hops = Object.entries(e.emByHop)
    .map(([h, v]) => `${h}-hop ${pct(v)}`)
    .join(', ');
  return `${pct(e.em)} (${hops}; ${e.n} questions)`;
}

function method(c: SelfPlayConfig): string {
  if (c.privileged === 'none') return 'Dr. Zero (self-play with GRPO, no teacher)';
  const lambda = Array.isArray(c.lambda) ? c.lambda.join(', ') : String(c.lambda);
  if (c.privileged === 'self')
    return (
      `the self control (GRPO with the top-${c.topK} distillation, λ ${lambda}, towards an EMA teacher that sees ` +
      "only the student's prompt)"
    );
  return `π-Play (GRPO with the privileged teacher's top-${c.topK} distillation, λ ${lambda}, context ${c.privileged})`;
}

export function modelCard(run: CardInput): string {
  const c = run.config;
  const hubId = baseModelId(c.model);
  const base = baseName(c.model);
  const license = run.license;
  const before = run.evals.find((e) => e.iteration === -1);
  const after = run.evals.filter((e) => e.iteration >= 0).at(-1);
  const y = (s: string) => JSON.stringify(s);
  const front = [
    '---',
    ...(hubId ? [`base_model: ${y(hubId)}`] : []),
    'library_name: transformers',
    'pipeline_tag: text-generation',
    ...(license ? [`license: ${y(license)}`] : []),
    'tags:',
    ...['pi-play', 'piplay', 'self-play', 'search-agent', 'grpo'].map((t) => `- ${t}`),
    '---',
  ];
  const command = ['npm run train -- --out runs/again --preset paper', ...flagsFor(c, 'paper')].join(' ');
  return [
    ...front,
    '',
    `# ${base}, trained by piplay`,
    '',
    `The student of a piplay self-play run from \`${c.model}\`: ${method(c)}, ${c.iterations} iteration(s) of ` +
      `${c.examinerSteps} examiner and ${c.studentSteps} student steps, seed ${c.seed}. Weights in the base's ` +
      "format (LoRA adapters, if any, merged in); the tokenizer is the base's.",
    '',
    '## Held-out exact match',
    '',
    `Greedy answers to the run's held-out questions (${c.evalWorld} world).`,
    '',
    '| | EM |',
    '|---|---|',
    `| before (the base) | ${emLine(before)} |`,
    `| after (this model) | ${emLine(after)} |`,
    '',
    '## Run it again',
    '',
    'In a clone of piplay, after `npm install`:',
    '',
    '```',
    command,
    '```',
    '',
    '## Settings',
    '',
    '```json',
    JSON.stringify(c, null, 2),
    '```',
    '',
  ].join('\n');
}
