// The Node host's model files: a ReadFile (src/model/files.ts) over a folder on disk, each file read by the one
// bounded reader (src/node/input-file.ts: a regular file, no larger than its kind's cap). The browser host's
// counterparts (dropped files, URLs, the hub) live with the loaders, since they need nothing but fetch/Blob.
import { join } from 'node:path';
import { isMissingFile, MissingFileError, modelFileCap, type ReadFile } from '../../model/files.ts';
import { readInputFileAsync } from '../../node/input-file.ts';

/** A ReadFile over a folder on disk; a file that is not there rejects with a MissingFileError. */
export function filesFromNodeFolder(dir: string): ReadFile {
  return async (name) => {
    try {
      return await readInputFileAsync(join(dir, name), { maxBytes: modelFileCap(name), what: name });
    } catch (e) {
      if (isMissingFile(e) || isMissingFile((e as Error).cause)) throw new MissingFileError(name, dir);
      throw e;
    }
  };
}
