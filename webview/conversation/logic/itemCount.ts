import { t } from '../../shared/l10n';

/** "1 item", "2 items". */
export function itemCountLabel(n: number): string {
  return n === 1 ? t('1 item') : t('{0} items', n.toLocaleString('en-US'));
}

/** "1 token", "1,234 tokens". */
export function tokenCountLabel(n: number): string {
  return n === 1 ? t('1 token') : t('{0} tokens', n.toLocaleString('en-US'));
}

/**
 * A turn row's usage: its tokens, or "no usage" for a turn that recorded none. Turn 0 (the items before the first
 * user message) is no run, so it has no usage to miss: nothing is said unless it somehow has some.
 */
export function turnUsageLabel(turn: number, totalTokens: number | null): string | null {
  if (totalTokens !== null) return tokenCountLabel(totalTokens);
  return turn === 0 ? null : t('no usage');
}

/** "Turn 3"; turn 0 (the items before the first user message) is "Before the first turn", as the Markdown export says. */
export function turnLabel(turn: number): string {
  return turn === 0 ? t('Before the first turn') : t('Turn {0}', turn);
}
