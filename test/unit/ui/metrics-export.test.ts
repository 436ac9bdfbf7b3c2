// The run's metrics exported as JSONL and CSV: every point of every series, with its iteration and step.
import { describe, expect, it } from 'vitest';
import { metricsCsv, metricsJsonl } from '../../../src/ui/metrics-export.ts';
import { applyEvent, emptyState } from '../../../src/ui/state.ts';

describe('metrics export', () => {
  const s = emptyState();
  applyEvent(s, { type: 'metrics', metrics: { stage: 'student', iteration: 0, step: 0, reward: 0.5, lambda: 0.1 } });
  applyEvent(s, { type: 'metrics', metrics: { stage: 'student', iteration: 1, step: 0, reward: 0.75, lambda: 0.03 } });
  applyEvent(s, {
    type: 'eval',
    metrics: { iteration: -1, em: 0.2, emByHop: {}, searchesPerRollout: 1, redundancy: 0, n: 4 },
  });

  it('writes one JSON object per point', () => {
    const rows = metricsJsonl(s.series)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toContainEqual({ series: 'student/reward', x: 2, iteration: 1, step: 0, value: 0.75 });
    expect(rows).toContainEqual({ series: 'eval/em', x: 0, iteration: -1, step: 0, value: 0.2 });
    expect(rows).toHaveLength(2 + 2 + 3);
  });

  it('writes a CSV row per point under a header', () => {
    const lines = metricsCsv(s.series).trim().split('\n');
    expect(lines[0]).toBe('series,x,iteration,step,value');
    expect(lines).toContain('student/lambda,1,0,0,0.1');
    expect(lines).toHaveLength(1 + 7);
  });
});
