// The run as a cursor over its units of work (ALGORITHM.md section 1): an optional first evaluation, then per
// iteration the examiner steps, data generation, the student steps and an evaluation; stages with nothing to do
// are skipped. The loop (loop.ts) walks it, the run estimate (run-estimate.ts) counts what is left of it.
import type { Cursor } from './checkpoint.ts';
import type { SelfPlayConfig } from './config.ts';

/** The unit after `c`, skipping stages that have nothing to do. */
export function nextCursor(c: Cursor, cfg: SelfPlayConfig): Cursor {
  let n: Cursor;
  switch (c.stage) {
    case 'eval-start':
      n = { iteration: 0, stage: 'examiner', step: 0 };
      break;
    case 'examiner':
      n = c.step + 1 < cfg.examinerSteps ? { ...c, step: c.step + 1 } : { ...c, stage: 'generate', step: 0 };
      break;
    case 'generate':
      n = { ...c, stage: 'student', step: 0 };
      break;
    case 'student':
      n = c.step + 1 < cfg.studentSteps ? { ...c, step: c.step + 1 } : { ...c, stage: 'eval', step: 0 };
      break;
    case 'eval':
      n =
        c.iteration + 1 < cfg.iterations
          ? { iteration: c.iteration + 1, stage: 'examiner', step: 0 }
          : { ...c, stage: 'done', step: 0 };
      break;
    case 'done':
      return c;
  }
  return normalise(n, cfg);
}

function normalise(c: Cursor, cfg: SelfPlayConfig): Cursor {
  if (c.stage === 'examiner' && cfg.examinerSteps === 0) return normalise({ ...c, stage: 'generate', step: 0 }, cfg);
  if ((c.stage === 'generate' || c.stage === 'student') && cfg.studentSteps === 0)
    return { ...c, stage: 'eval', step: 0 };
  return c;
}

export function firstCursor(cfg: SelfPlayConfig): Cursor {
  return cfg.evalAtStart
    ? { iteration: 0, stage: 'eval-start', step: 0 }
    : normalise({ iteration: 0, stage: 'examiner', step: 0 }, cfg);
}
