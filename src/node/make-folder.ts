// Makes a folder and the folders above it. Node's own `mkdirSync(p, { recursive: true })` never returns where the
// parent exists but takes no new entries (under /proc it gets ENOENT, makes the parent, gets EEXIST, tries again):
// here each missing folder is made once, top down, and the first refusal is thrown.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Makes `dir` and its missing parents; throws the first file error (code kept) or one saying why it cannot. */
export function makeFolder(dir: string): void {
  const missing: string[] = [];
  let p = resolve(dir);
  while (!existsSync(p)) {
    missing.push(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  if (missing.length === 0 && !statSync(p).isDirectory()) mkdirSync(p); // a file there: Node's own EEXIST
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && statSync(m).isDirectory()) continue; // made by another process meanwhile
      // ENOENT with the parent there: a file system that takes no folders of ours (/proc, /sys).
      if (code === 'ENOENT' && existsSync(dirname(m))) throw new Error(`${dirname(m)} takes no new folders`);
      throw e;
    }
  }
}
