// Reads the first markdown table under a heading of a document: the header cells and the rows' cells.
export function markdownTable(doc: string, heading: string): { head: string[]; rows: string[][] } {
  const lines = doc.split('\n');
  const at = lines.findIndex((l) => l.startsWith('#') && l.includes(heading));
  if (at < 0) throw new Error(`no heading '${heading}'`);
  let i = at + 1;
  while (i < lines.length && !lines[i]!.startsWith('|')) {
    if (lines[i]!.startsWith('#')) throw new Error(`no table under '${heading}'`);
    i++;
  }
  const cells = (l: string) =>
    l
      .slice(1, l.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
  const head = cells(lines[i]!);
  const rows: string[][] = [];
  for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(cells(lines[i]!));
  return { head, rows };
}
