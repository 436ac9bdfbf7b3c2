// The trained student of a finished run as an HF model folder, `<run>/student`, with its model card: what
// `npm run train` and each run of `npm run experiment` leave behind. Written beside and renamed into place.
import { join } from 'node:path';
import { exportModel } from '../model/io.ts';
import type { BaseModel } from '../selfplay/base-model.ts';
import type { SelfPlayRun } from '../selfplay/loop.ts';
import { modelCard } from '../selfplay/model-card.ts';
import { writeFolderAtomically } from './atomic-folder.ts';

/** Writes `<dir>/student` and returns its path. */
export async function exportStudent(run: SelfPlayRun, base: BaseModel, dir: string): Promise<string> {
  // Under LoRA the student is the shared base with the student's adapters: the export merges those in.
  const files = await exportModel(run.ctx.policies.student, {
    extraFiles: base.tokenizerFiles,
    config: base.configJson,
  });
  const card = modelCard({ config: run.state.config, evals: run.state.evals, license: base.license });
  files.set('README.md', new TextEncoder().encode(card));
  const out = join(dir, 'student');
  writeFolderAtomically(out, files);
  return out;
}
