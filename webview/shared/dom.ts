/**
 * The only way this view creates elements. Text is always set with textContent and attributes only by name from
 * code, never parsed from data, so nothing from a database can become markup or script. (ESLint forbids
 * innerHTML and friends in webview/.)
 */
export type Child = Node | string | null | undefined | false;
export type Props = Record<string, string | number | boolean | null | undefined> & { onclick?: never };

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props, ...children: Child[]): HTMLElementTagNameMap[K];
export function el(tag: string, props?: Props, ...children: Child[]): HTMLElement;
export function el(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  append(e, ...children);
  return e;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element: attributes by name (presentation comes from classes in the stylesheet, which the CSP allows). */
export function svgEl(tag: string, attributes: Record<string, string | number> = {}, ...children: Child[]): SVGElement {
  const e = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, String(v));
  append(e, ...children);
  return e;
}
