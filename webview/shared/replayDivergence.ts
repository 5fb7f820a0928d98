/**
 * Where a re-run left the recorded sequence of tool calls (docs/replay.md), drawn the same in the run summary and in
 * the compare view: the step, the recorded call and this run's, and one line per differing argument. All text.
 */
import type { ReplayDivergence } from '../../src/shared/protocol/replay';
import { el } from './dom';
import { t } from './l10n';
import { divergenceText } from './logic/replayText';

export function divergenceBlock(d: ReplayDivergence): HTMLElement {
  const call = (c: { name: string; arguments: string } | null): string => (c ? `${c.name}(${c.arguments})` : t('(none)'));
  return el(
    'div',
    { class: 'replay-divergence', role: 'note', 'aria-label': divergenceText(d) },
    el('div', { class: 'replay-divergence-step' }, t('Diverged at step {0}', d.step)),
    el('div', { class: 'replay-divergence-side' }, t('Recorded: {0}', call(d.recorded))),
    el('div', { class: 'replay-divergence-side' }, t('This run: {0}', call(d.actual))),
    d.diff.length > 0 ? el('ul', { class: 'replay-diff' }, ...d.diff.map((line) => el('li', {}, line))) : null,
  );
}
