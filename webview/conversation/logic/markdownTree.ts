/**
 * Markdown to a small element tree, never to an HTML string: markdown-it parses with raw HTML disabled, and only a
 * fixed set of elements can come out. Text stays text (the DOM layer sets it with textContent), so `<script>` or
 * `<img onerror>` in a message is shown, not run. Links keep their address as data; the view asks the host to
 * open them, which asks the user first.
 */
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { t } from '../../shared/l10n';

export type MdNode = { tag: MdTag; children: MdNode[]; href?: string; start?: number } | { text: string };
export type MdTag =
  | 'p'
  | 'h1'
  | 'h2'
  | 'h3'
  | 'h4'
  | 'h5'
  | 'h6'
  | 'ul'
  | 'ol'
  | 'li'
  | 'blockquote'
  | 'pre'
  | 'code'
  | 'em'
  | 'strong'
  | 's'
  | 'a'
  | 'br'
  | 'hr'
  | 'table'
  | 'thead'
  | 'tbody'
  | 'tr'
  | 'th'
  | 'td';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: true });

const BLOCK_TAGS = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
]);
const INLINE_TAGS: Record<string, MdTag> = { em_open: 'em', strong_open: 'strong', s_open: 's', link_open: 'a' };

/** Only web links survive as links; anything else (javascript:, data:, file:, command:) is shown as plain text. */
export function safeHref(href: string | null | undefined): string | undefined {
  if (!href) return undefined;
  return /^https?:\/\//i.test(href.trim()) ? href.trim() : undefined;
}

/** A tree built from open/close tokens: `push` adds a node to the innermost open element (or the root). */
function treeBuilder<Open extends { children: MdNode[] }>(): { root: MdNode[]; stack: Open[]; push: (n: MdNode) => void } {
  const root: MdNode[] = [];
  const stack: Open[] = [];
  const push = (n: MdNode): void => {
    const top = stack[stack.length - 1];
    (top ? top.children : root).push(n);
  };
  return { root, stack, push };
}

/** An image's stand-in (images in messages are never loaded): its alt text, or just that there was one. */
const imageText = (alt: string): string => (alt ? `[${t('image: {0}', alt)}]` : `[${t('image')}]`);

function inline(tokens: Token[]): MdNode[] {
  const { root, stack, push } = treeBuilder<{ tag: MdTag; children: MdNode[]; href?: string }>();
  for (const t of tokens) {
    if (t.type === 'text' || t.type === 'html_inline') push({ text: t.content });
    else if (t.type === 'code_inline') push({ tag: 'code', children: [{ text: t.content }] });
    else if (t.type === 'softbreak' || t.type === 'hardbreak') push({ tag: 'br', children: [] });
    else if (t.type === 'image') push({ text: imageText(t.content) });
    else if (t.type in INLINE_TAGS) {
      const tag = INLINE_TAGS[t.type] as MdTag;
      const node: { tag: MdTag; children: MdNode[]; href?: string } = { tag, children: [] };
      if (tag === 'a') {
        const href = safeHref(t.attrGet('href'));
        if (href) node.href = href;
      }
      push(node);
      stack.push(node);
    } else if (t.type.endsWith('_close')) stack.pop();
  }
  return root;
}

/** Parses Markdown into the element tree. */
export function markdownTree(source: string): MdNode[] {
  const tokens = md.parse(source, {});
  const { root, stack, push } = treeBuilder<{ tag: MdTag; children: MdNode[]; start?: number }>();
  for (const t of tokens) {
    if (t.type === 'inline') {
      for (const n of inline(t.children ?? [])) push(n);
    } else if (t.type === 'fence' || t.type === 'code_block') {
      push({ tag: 'pre', children: [{ tag: 'code', children: [{ text: t.content }] }] });
    } else if (t.type === 'html_block') {
      push({ tag: 'p', children: [{ text: t.content }] });
    } else if (t.type === 'hr') {
      push({ tag: 'hr', children: [] });
    } else if (t.nesting === 1 && BLOCK_TAGS.has(t.tag)) {
      const node: { tag: MdTag; children: MdNode[]; start?: number } = { tag: t.tag as MdTag, children: [] };
      const start = t.attrGet('start');
      if (t.tag === 'ol' && start) node.start = Number(start);
      push(node);
      stack.push(node);
    } else if (t.nesting === -1 && BLOCK_TAGS.has(t.tag)) {
      stack.pop();
    }
  }
  return root;
}
