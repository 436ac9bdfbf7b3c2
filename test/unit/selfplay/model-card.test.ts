// The model card of an exported student: the hub's front matter (base_model, library_name, tags, the base's
// license), the EM before and after, and a command that, read back by the train command's own parser, gives the
// run's settings exactly.
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../../src/cli/args.ts';
import { makeConfig, type PresetName } from '../../../src/selfplay/config.ts';
import type { EvalMetrics } from '../../../src/selfplay/events.ts';
import { baseModelId, licenseOf, modelCard } from '../../../src/selfplay/model-card.ts';

/** Words of a shell command line (single quotes and '\'' as a POSIX shell reads them). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      cur = (cur ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (ch === '\\') {
      cur = (cur ?? '') + line[++i];
    } else if (ch === ' ') {
      if (cur !== null) words.push(cur);
      cur = null;
    } else cur = (cur ?? '') + ch;
  }
  if (cur !== null) words.push(cur);
  return words;
}

const front = (card: string) => /^---\n([\s\S]*?)\n---\n/.exec(card)![1]!;
const evalAt = (iteration: number, em: number): EvalMetrics => ({
  iteration,
  em,
  emByHop: { '1': em + 0.1, '2': em - 0.1 },
  searchesPerRollout: 1,
  redundancy: 0,
  n: 400,
});

describe('model card', () => {
  it('names the base model, library, tags and the base license in the front matter', () => {
    const config = makeConfig('demo', { model: 'hf:Qwen/Qwen3-0.6B@main' });
    const card = modelCard({
      config,
      evals: [evalAt(-1, 0.38), evalAt(0, 0.4), evalAt(1, 0.42)],
      license: 'apache-2.0',
    });
    expect(front(card).split('\n')).toEqual([
      'base_model: "Qwen/Qwen3-0.6B"',
      'library_name: transformers',
      'pipeline_tag: text-generation',
      'license: "apache-2.0"',
      'tags:',
      '- pi-play',
      '- piplay',
      '- self-play',
      '- search-agent',
      '- grpo',
    ]);
    expect(card).toContain('| before (the base) | 38.0% (1-hop 48.0%, 2-hop 28.0%; 400 questions) |');
    expect(card).toContain('| after (this model) | 42.0% (1-hop 52.0%, 2-hop 32.0%; 400 questions) |');
    expect(card).toContain('π-Play (GRPO');
    const none = modelCard({ config: makeConfig('demo', { privileged: 'none', lambda: 0 }), evals: [] });
    expect(front(none)).not.toContain('license');
    expect(none).toContain('Dr. Zero');
    expect(none).toContain('| before (the base) | not measured |');
  });

  it('leaves base_model out for a base that is no hub model (random-tiny, a folder)', () => {
    for (const model of ['random-tiny', 'public/models/piplay-tiny']) {
      const card = modelCard({ config: makeConfig('demo', { model }), evals: [] });
      expect(front(card)).not.toContain('base_model');
      expect(front(card).split('\n')[0]).toBe('library_name: transformers');
    }
    const card = modelCard({ config: makeConfig('demo', { model: 'public/models/piplay-tiny' }), evals: [] });
    expect(card).toContain('# piplay-tiny, trained by piplay');
  });

  it.each(['demo', 'smoke', 'paper'] as PresetName[])('gives a command that runs the %s settings again', (preset) => {
    const config = makeConfig(preset, { model: 'my models/base', corpus: "it's.jsonl", seed: 7, lambda: [0.1, 0.05] });
    const command = /```\n(npm run train -- .*)\n```/.exec(modelCard({ config, evals: [] }))![1]!;
    const argv = shellWords(command).slice(4); // npm run train --
    const { own, settings } = parseArgs(argv, ['out', 'preset']);
    expect(makeConfig(own['preset'] as PresetName, settings)).toEqual(config);
  });

  it('reads a base id and a license', () => {
    expect(baseModelId('hf:HuggingFaceTB/SmolLM2-135M-Instruct@v1')).toBe('HuggingFaceTB/SmolLM2-135M-Instruct');
    // A folder of the Hugging Face cache is a hub model at a revision; any other folder and random-tiny are none.
    expect(baseModelId('/home/me/.cache/huggingface/hub/models--Qwen--Qwen3-0.6B/snapshots/abc123/')).toBe(
      'Qwen/Qwen3-0.6B',
    );
    expect(baseModelId('public/models/piplay-tiny/')).toBeNull();
    expect(baseModelId('random-tiny')).toBeNull();
    expect(licenseOf('---\nlicense: apache-2.0\ntags:\n- a\n---\n# x')).toBe('apache-2.0');
    expect(licenseOf("---\r\nlanguage: en\r\nlicense: 'mit'\r\n---\r\n")).toBe('mit');
    expect(licenseOf('# no front matter\nlicense: mit')).toBeNull();
    expect(licenseOf(undefined)).toBeNull();
  });
});
