// The Node host's model files: a ReadFile (src/model/files.ts) over a folder on disk. The browser host's
// counterparts (dropped files, URLs, the hub) live with the loaders, since they need nothing but fetch/Blob.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissingFile, MissingFileError, type ReadFile } from '../../model/files.ts';

/** A ReadFile over a folder on disk; a file that is not there rejects with a MissingFileError. */
export function filesFromNodeFolder(dir: string): ReadFile {
  return async (name) => {
    try {
      const buf = await readFile(join(dir, name));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (e) {
      if (isMissingFile(e)) throw new MissingFileError(name, dir);
      throw e;
    }
  };
}
