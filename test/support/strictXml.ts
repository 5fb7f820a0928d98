/**
 * A strict XML 1.0 reader for tests: it refuses what a conforming parser refuses (characters outside §2.2 Char, a raw
 * `<` or `&` in text or a value, an unknown entity, a reference to a character XML cannot hold, unquoted or repeated
 * attributes, tags that do not nest, anything after the root) and returns the element tree with entities decoded.
 * No DTDs, comments, processing instructions (but the declaration) or CDATA: what our writers never emit is refused.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, entities decoded. */
  text: string;
}

const BAD_CHAR =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const NAME = '[A-Za-z_][A-Za-z0-9_.:-]*';

function decode(raw: string, where: string): string {
  if (/<|&(?!(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/.test(raw)) throw new Error(`raw < or & in ${where}: ${raw.slice(0, 80)}`);
  return raw.replace(/&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/g, (_, e: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (named[e]) return named[e];
    const c = String.fromCodePoint(e.startsWith('#x') ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    if (BAD_CHAR.test(c)) throw new Error(`a reference to a character XML cannot hold: &${e};`);
    return c;
  });
}

export function parseStrictXml(xml: string): XmlElement {
  const bad = BAD_CHAR.exec(xml);
  if (bad) throw new Error(`character U+${bad[0].charCodeAt(0).toString(16)} is not allowed in XML 1.0 (at ${bad.index})`);
  let rest = xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\s*/, '');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const tag = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*"[^"]*")*)\\s*(/?)>`);
  while (rest.length > 0) {
    const lt = rest.indexOf('<');
    const text = lt < 0 ? rest : rest.slice(0, lt);
    if (text.length > 0) {
      if (stack.length === 0) {
        if (text.trim() !== '') throw new Error(`text outside the root element: ${text.slice(0, 40)}`);
      } else stack[stack.length - 1]!.text += decode(text, 'text');
      if (text.includes(']]>')) throw new Error(']]> in text');
    }
    if (lt < 0) break;
    rest = rest.slice(lt);
    const m = tag.exec(rest);
    if (!m) throw new Error(`not a tag: ${rest.slice(0, 80)}`);
    rest = rest.slice(m[0].length);
    const [, close, name, attrs, selfClose] = m;
    if (close) {
      if (attrs || selfClose) throw new Error(`a closing tag with attributes: ${m[0]}`);
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`);
      continue;
    }
    if (root && stack.length === 0) throw new Error(`a second root element <${name}>`);
    const element: XmlElement = { name: name!, attributes: {}, children: [], text: '' };
    for (const a of attrs!.matchAll(new RegExp(`(${NAME})\\s*=\\s*"([^"]*)"`, 'g'))) {
      if (a[1]! in element.attributes) throw new Error(`attribute ${a[1]} twice on <${name}>`);
      // Attribute-value normalisation (§3.3.3): a raw line break or tab is read as a space; only references keep them.
      element.attributes[a[1]!] = decode(a[2]!.replace(/[\t\n\r]/g, ' '), `attribute ${a[1]}`);
    }
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
    else root = element;
    if (!selfClose) stack.push(element);
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1]!.name}> is never closed`);
  if (!root) throw new Error('no root element');
  return root;
}
