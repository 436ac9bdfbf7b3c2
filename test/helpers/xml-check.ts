// A tiny XML well-formedness check for the SVG the experiment writes (no dependency): every tag is
// closed in order, attributes are name="value" pairs, '&' only starts an entity, one root element.
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  /** Names of the open elements above it, outermost first. */
  path: string[];
}

const ENTITY = /&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;

function checkText(text: string, where: string): void {
  if (text.replace(ENTITY, '').includes('&'))
    throw new Error(`bare '&' in ${where}: ${JSON.stringify(text.slice(0, 80))}`);
  if (text.includes('>')) throw new Error(`bare '>' in ${where}`);
}

/** Parses `text`; throws on the first problem. Returns the root's name and every element in document order. */
export function parseXml(text: string): { root: string; elements: XmlElement[] } {
  const body = text.replace(/^\s*<\?xml[^?]*\?>/, '').replace(/<!--[\s\S]*?-->/g, '');
  const stack: string[] = [];
  const elements: XmlElement[] = [];
  let root: string | null = null;
  let last = 0;
  const tag = /<([^<>]*)>/g;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    const between = body.slice(last, m.index);
    if (stack.length === 0 && between.trim() !== '')
      throw new Error(`text outside the root element: ${JSON.stringify(between.trim().slice(0, 40))}`);
    checkText(between, 'text');
    last = m.index + m[0].length;
    const inner = m[1]!;
    if (inner.startsWith('/')) {
      const name = inner.slice(1).trim();
      const open = stack.pop();
      if (open !== name) throw new Error(`</${name}> closes <${open ?? 'nothing'}>`);
      continue;
    }
    const selfClosing = inner.endsWith('/');
    const content = selfClosing ? inner.slice(0, -1) : inner;
    const nm = /^([A-Za-z_][\w:.-]*)/.exec(content);
    if (!nm) throw new Error(`bad tag <${inner}>`);
    const name = nm[1]!;
    let rest = content.slice(name.length);
    const attrs: Record<string, string> = {};
    const attr = /^\s+([A-Za-z_][\w:.-]*)="([^"<]*)"/;
    for (let a = attr.exec(rest); a; a = attr.exec(rest)) {
      if (a[1]! in attrs) throw new Error(`attribute ${a[1]} twice on <${name}>`);
      checkText(a[2]!, `attribute ${a[1]} of <${name}>`);
      attrs[a[1]!] = a[2]!;
      rest = rest.slice(a[0].length);
    }
    if (rest.trim() !== '') throw new Error(`bad attributes on <${name}>: ${JSON.stringify(rest)}`);
    if (stack.length === 0) {
      if (root !== null) throw new Error(`a second root element <${name}>`);
      root = name;
    }
    elements.push({ name, attrs, path: stack.slice() });
    if (!selfClosing) stack.push(name);
  }
  if (body.slice(last).trim() !== '') throw new Error('text after the root element');
  if (stack.length) throw new Error(`unclosed <${stack.join('>, <')}>`);
  if (root === null) throw new Error('no element');
  return { root, elements };
}

/** The x,y pairs of a polyline's points attribute. */
export function polylinePoints(el: XmlElement): [number, number][] {
  return (el.attrs['points'] ?? '')
    .trim()
    .split(/\s+/)
    .filter((p) => p !== '')
    .map((p) => {
      const [x, y] = p.split(',').map(Number);
      if (!Number.isFinite(x) || !Number.isFinite(y)) throw new Error(`bad point '${p}'`);
      return [x!, y!];
    });
}
