// Names that become paths: a checkpoint's name is the folder of its exported zip, and the files of an
// imported folder are stored and exported under their names. Neither may climb out of the folder ('..'),
// name another folder (path separators), be absolute, or hold control characters.

/** Runs of what a folder name may not hold: characters other than letters, digits, '_', '.', '-', and '..'. */
const UNSAFE = /(?:[^\p{L}\p{N}_.-]|\.{2,})+/gu;

/**
 * A checkpoint name made safe as a folder name and as a stored name: every run of other characters
 * (separators, control characters, spaces, ':', ...) and of two or more dots becomes one '_', and leading
 * and trailing dots go, so neither '.' nor '..' nor a hidden folder remains. `fallback` when nothing is left.
 */
export function safeName(name: string, fallback: string): string {
  const s = name
    .normalize('NFC')
    .replace(UNSAFE, '_')
    .replace(/^\.+|\.+$/g, '')
    .slice(0, 100);
  return s === '' || /^_+$/.test(s) ? fallback : s;
}

/** True for a plain file name: not empty, not '.' or '..', no path separators, no control characters. */
export function isPlainFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\:\u0000-\u001f\u007f-\u009f]/.test(name);
}
