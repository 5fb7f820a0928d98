/**
 * The Tokens tab's pricing line: which model the costs are at and the price table's date, or, for a model the table
 * has no price for, the hint that shows tokens only; both with *Set Pricing Model…* (the host asks with a quick pick).
 */
import type { TablesView } from '../../../src/shared/protocol/conversationViews';
import { el } from '../../shared/dom';
import { t } from '../../shared/l10n';

export function renderPricingHeader(tables: TablesView, choose: () => void): HTMLElement | null {
  const p = tables.pricing;
  if (!p) return null;
  const button = el(
    'vscode-button',
    {
      appearance: 'secondary',
      class: 'set-pricing-model',
      'data-focus': 'set-pricing-model',
      title: t('Choose the model this session is priced as'),
    },
    t('Set Pricing Model…'),
  );
  button.addEventListener('click', choose);
  const text = p.known
    ? t('Costs at {0} prices of {1} (USD; reasoning billed as output).', p.model ?? '', p.date)
    : p.model
      ? t('No price for model {0}: tokens only.', p.model)
      : t('No pricing model: tokens only.');
  return el(
    'div',
    { class: `pricing-header${p.known ? '' : ' unknown'}`, role: p.known ? null : 'note', title: t('Prices: {0}', p.source) },
    el('span', { class: 'pricing-text' }, text),
    button,
  );
}
