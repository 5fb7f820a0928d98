/**
 * Replay badges on tool calls (docs/replay.md): *replayed* (with a link to the recorded call whose output it got),
 * *live* (in the theme's warning colour: the tool really ran) or *unmatched*. The turn detail leaves a slot on each
 * call's card; the marks arrive apart from the items (the replay marks store, read again on its own notice), so the
 * slots are filled, and filled again, without drawing the cards anew.
 */
import { el, replaceChildren } from '../../shared/dom';
import { t } from '../../shared/l10n';
import type { CallBadge, RecordedCallRef } from '../logic/replayViews';

const SLOT = 'data-replay-call';

/** One badge; `open` shows the recorded call (absent: the badge has no link, as in a run's live log). */
export function replayBadge(badge: CallBadge, open?: (ref: RecordedCallRef) => void): HTMLElement {
  const badgeEl = el('span', { class: `replay-badge replay-${badge.outcome}`, title: badge.title }, badge.label);
  const ref = badge.recorded;
  if (!ref || !open) return badgeEl;
  const label = t('Show the recorded call {0} (branch {1}, turn {2})', ref.callId, ref.branchId, ref.turn);
  const link = el(
    'button',
    { type: 'button', class: 'replay-recorded link-button', title: label, 'aria-label': label },
    t('recorded call'),
  );
  link.addEventListener('click', () => open(ref));
  return el('span', { class: 'replay-mark' }, badgeEl, link);
}

/** The empty slot a call's card keeps for its badge. */
export function replayBadgeSlot(callId: string): HTMLElement {
  return el('span', { class: 'replay-slot', [SLOT]: callId });
}

/** Fills every badge slot under `container` from `badges` (a call with no mark: empty). */
export function fillReplayBadges(
  container: HTMLElement,
  badges: ReadonlyMap<string, CallBadge> | undefined,
  open: (ref: RecordedCallRef) => void,
): void {
  for (const slot of Array.from(container.querySelectorAll<HTMLElement>(`[${SLOT}]`))) {
    const badge = badges?.get(slot.getAttribute(SLOT) ?? '');
    replaceChildren(slot, badge ? replayBadge(badge, open) : null);
  }
}

/**
 * The card of a call whose id is `callId`, under `container` (call ids are untrusted text: compared, never put in a
 * selector). Brought into view and flashed when the link of a badge led here.
 */
export function revealCall(container: HTMLElement, callId: string): boolean {
  const slot = Array.from(container.querySelectorAll<HTMLElement>(`[${SLOT}]`)).find((s) => s.getAttribute(SLOT) === callId);
  const card = slot?.closest<HTMLElement>('.item');
  if (!card) return false;
  card.scrollIntoView({ block: 'center' });
  card.classList.add('replay-target');
  window.setTimeout(() => card.classList.remove('replay-target'), 2000);
  return true;
}
