/**
 * The Tokens tab's pricing line: which model the costs are at and the price table's date, or, for a model the table
 * has no price for, the hint that shows tokens only; both with *Set Pricing Model…* (the host asks with a quick pick).
 */
import type { TablesView } from '../../src/shared/viewModels';
import { el } from '../dom';

export function renderPricingHeader(t: TablesView, choose: () => void): HTMLElement | null {
  const p = t.pricing;
  if (!p) return null;
  const button = el(
    'vscode-button',
    {
      appearance: 'secondary',
      class: 'set-pricing-model',
      'data-focus': 'set-pricing-model',
      title: 'Choose the model this session is priced as',
    },
    'Set Pricing Model…',
  );
  button.addEventListener('click', choose);
  const text = p.known
    ? `Costs at ${p.model ?? ''} prices of ${p.date} (USD; reasoning billed as output).`
    : p.model
      ? `No price for model ${p.model}: tokens only.`
      : 'No pricing model: tokens only.';
  return el(
    'div',
    { class: `pricing-header${p.known ? '' : ' unknown'}`, role: p.known ? null : 'note', title: `Prices: ${p.source}` },
    el('span', { class: 'pricing-text' }, text),
    button,
  );
}
