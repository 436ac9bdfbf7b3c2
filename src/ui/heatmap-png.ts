// The heatmap of one rollout as a PNG: its question, then its tokens in the view's colours (tool tokens
// hatched grey), wrapped to a fixed width, with the colour scale's range underneath. Drawn on a canvas in the
// page (nothing leaves the browser).

export interface PngToken {
  text: string;
  /** The token's background in the view (a CSS colour), or null for a masked tool token. */
  background: string | null;
}

const WIDTH = 1200;
const PAD = 16;
const LINE = 22;

/** Draws the rollout and returns it as PNG bytes. */
export async function heatmapPng(title: string, tokens: readonly PngToken[], scaleNote: string): Promise<Blob> {
  const measure = document.createElement('canvas').getContext('2d')!;
  const font = '14px ui-monospace, "DejaVu Sans Mono", monospace';
  measure.font = font;
  // Lay out first (wrapping at the width, breaking at newlines) to know the height.
  const placed: { x: number; y: number; w: number; text: string; bg: string | null }[] = [];
  let x = PAD;
  let y = PAD + 2 * LINE;
  for (const t of tokens) {
    const parts = t.text.split('\n');
    parts.forEach((part, k) => {
      if (k > 0) {
        x = PAD;
        y += LINE;
      }
      const shown = part === '' && parts.length === 1 ? '∅' : part.replace(/\t/g, '  ');
      const w = measure.measureText(shown).width;
      if (x + w > WIDTH - PAD && x > PAD) {
        x = PAD;
        y += LINE;
      }
      if (shown) placed.push({ x, y, w, text: shown, bg: t.background });
      x += w;
    });
  }
  const height = y + 2 * LINE + PAD;
  const canvas = document.createElement('canvas');
  canvas.width = WIDTH;
  canvas.height = height;
  const g = canvas.getContext('2d')!;
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, WIDTH, height);
  g.fillStyle = '#1d1d1f';
  g.font = 'bold 15px system-ui, sans-serif';
  g.fillText(title.length > 140 ? `${title.slice(0, 139)}…` : title, PAD, PAD + 14);
  g.font = font;
  for (const p of placed) {
    g.fillStyle = p.bg ?? '#ececf0';
    g.fillRect(p.x, p.y - 15, p.w, 19);
    g.fillStyle = p.bg ? '#1d1d1f' : '#8a8a92';
    g.fillText(p.text, p.x, p.y);
  }
  g.fillStyle = '#66666c';
  g.font = '12px system-ui, sans-serif';
  g.fillText(scaleNote, PAD, height - PAD);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the heatmap could not be drawn as a PNG'))), 'image/png'),
  );
}
