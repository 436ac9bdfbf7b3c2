// npx tsx scripts/scale-check/export-folder.ts IN OUT
// A model folder through piplay's export, as `npm run train` writes a student: the base read as piplay reads it
// (folderBase), its weights through the engine, exportModel with the base's tokenizer files. The Python package's
// tests load OUT with transformers (scale/tests/test_export.py): an export of a base that keeps its chat template
// in chat_template.jinja must keep it.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeFolderAtomically } from '../../src/cli/atomic-folder.ts';
import { Engine } from '../../src/gpu/engine.ts';
import { nodeHost } from '../../src/gpu/host/node.ts';
import { filesFromNodeFolder } from '../../src/gpu/host/node-files.ts';
import { CausalLM } from '../../src/model/decoder.ts';
import { exportModel } from '../../src/model/io.ts';
import { folderBase } from '../../src/selfplay/base-model.ts';

const [from, to] = process.argv.slice(2);
if (!from || !to) {
  console.error('usage: npx tsx scripts/scale-check/export-folder.ts IN OUT');
  process.exit(2);
}
if (existsSync(resolve(to))) {
  console.error(`export-folder: ${resolve(to)} exists; give a new folder`);
  process.exit(1);
}
const e = await Engine.create(nodeHost());
const base = await folderBase(e, filesFromNodeFolder(resolve(from)), from);
const model = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
const files = await exportModel(model, { extraFiles: base.tokenizerFiles, config: base.configJson });
model.dispose();
writeFolderAtomically(resolve(to), files);
e.destroy();
console.log(`export-folder: ${[...files.keys()].sort().join(', ')} in ${resolve(to)}`);
