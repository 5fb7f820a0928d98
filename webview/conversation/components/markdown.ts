import { markdownTree, type MdNode } from '../logic/markdownTree';
import { el } from '../../shared/dom';
import { t } from '../../shared/l10n';

/** Renders Markdown from the database as DOM: elements from a fixed set, text as text, links through the host. */
export function renderMarkdown(source: string, openLink: (url: string) => void): HTMLElement {
  const root = el('div', { class: 'markdown' });
  const build = (nodes: MdNode[], parent: HTMLElement): void => {
    for (const n of nodes) {
      if ('text' in n) {
        parent.appendChild(document.createTextNode(n.text));
        continue;
      }
      if (n.tag === 'a') {
        const a = el('a', { href: '#', title: n.href ?? t('Not a web link') });
        if (n.href) {
          const href = n.href;
          a.addEventListener('click', (ev) => {
            ev.preventDefault();
            openLink(href);
          });
        } else a.addEventListener('click', (ev) => ev.preventDefault());
        build(n.children, a);
        parent.appendChild(a);
        continue;
      }
      const e = el(n.tag, n.tag === 'ol' && n.start !== undefined ? { start: n.start } : {});
      build(n.children, e);
      parent.appendChild(e);
    }
  };
  build(markdownTree(source), root);
  return root;
}
