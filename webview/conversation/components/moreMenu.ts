import { el } from '../../shared/dom';
import { t } from '../../shared/l10n';

export interface MenuAction {
  label: string;
  className: string;
  disabled: boolean;
  run(): void;
}

/**
 * A "…" button with a small menu: where the header keeps actions that should not sit beside the everyday ones
 * (Delete away from Switch). Escape or a click elsewhere closes it; Up/Down move between its entries.
 */
export function moreMenu(actions: MenuAction[]): HTMLElement {
  const button = el(
    'vscode-button',
    {
      appearance: 'secondary',
      class: 'more-button',
      'aria-haspopup': 'menu',
      'aria-expanded': 'false',
      title: t('More actions'),
      'aria-label': t('More actions'),
    },
    '…',
  );
  const list = el('div', { class: 'more-menu', role: 'menu', hidden: true });
  const entries = actions.map((a) => {
    const entry = el('button', { class: `menu-entry ${a.className}`, role: 'menuitem', disabled: a.disabled, tabindex: -1 }, a.label);
    entry.addEventListener('click', () => {
      close();
      a.run();
    });
    list.appendChild(entry);
    return entry;
  });
  const wrap = el('div', { class: 'more-wrap' }, button, list);
  const onOutside = (ev: Event): void => {
    if (!wrap.contains(ev.target as Node)) close();
  };
  function close(): void {
    if (list.hidden) return;
    list.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    document.removeEventListener('mousedown', onOutside, true);
  }
  const open = (): void => {
    list.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    document.addEventListener('mousedown', onOutside, true);
    entries.find((e) => !e.disabled)?.focus();
  };
  button.addEventListener('click', () => (list.hidden ? open() : close()));
  list.addEventListener('keydown', (ev) => {
    const enabled = entries.filter((e) => !e.disabled);
    const at = enabled.indexOf(document.activeElement as HTMLButtonElement);
    if (ev.key === 'Escape') {
      ev.preventDefault();
      close();
      button.focus();
    } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      const next = enabled[(at + (ev.key === 'ArrowDown' ? 1 : enabled.length - 1)) % Math.max(1, enabled.length)];
      next?.focus();
    }
  });
  return wrap;
}
