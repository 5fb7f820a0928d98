/**
 * What the conversation view says about replayed tool calls (docs/replay.md), without the DOM: the what-if form's
 * preview of a turn's recorded calls, the badge of each call (from the replay marks store, or from a live run's
 * events); the run summary's sentence is in shared/logic/replayText.ts (the compare view says it too). Every string in the marks and the table is
 * untrusted text from a database or a model: these only cut it to length, the components draw it as text.
 */
import { outputText, oneLine } from '../../../src/shared/itemText';
import { toolBadgeName } from '../../../src/shared/itemTitles';
import type { ReplayMarksView, ReplayOutcome, ReplayTableView, ToolsMode } from '../../../src/shared/protocol/replay';
import { t } from '../../shared/l10n';

/** How much of a recorded call's arguments and output the form's preview shows (the whole is in the turn's cards). */
export const PREVIEW_ARGUMENT_CHARS = 120;
export const PREVIEW_OUTPUT_CHARS = 160;

/** One row of the what-if form's replay preview: a recorded call, or a hosted call no re-run can replay. */
export type ReplayPreviewRow =
  | { kind: 'call'; callId: string; name: string; arguments: string; output: string | null }
  | { kind: 'hosted'; callId: string | null; name: string };

/** The preview of a turn's replay table: its calls in order (arguments and outputs on one short line), then hosted calls. */
export function replayPreviewRows(table: ReplayTableView): ReplayPreviewRow[] {
  return [
    ...table.calls.map((c): ReplayPreviewRow => ({
      kind: 'call',
      callId: c.callId,
      name: c.name,
      arguments: oneLine(c.arguments, PREVIEW_ARGUMENT_CHARS),
      // A list of content parts reads as its text; an output never recorded is said to be missing, not shown as empty.
      output: c.hasOutput ? oneLine(outputText(c.output), PREVIEW_OUTPUT_CHARS) : null,
    })),
    ...table.hosted.map((h): ReplayPreviewRow => ({ kind: 'hosted', callId: h.callId, name: toolBadgeName(h.type) })),
  ];
}

/** The choices of the form's tools mode, in the order offered. */
export function toolsModeLabel(mode: ToolsMode): string {
  switch (mode) {
    case 'replay':
      return t('Replay recorded results');
    case 'strict':
      return t('Strict: fail on a call with no recorded result');
    case 'live':
      return t('Live: run every tool again');
  }
}

/** The word on a call's badge. */
export function outcomeLabel(outcome: ReplayOutcome): string {
  switch (outcome) {
    case 'replayed':
      return t('replayed');
    case 'live':
      return t('live');
    case 'unmatched':
      return t('unmatched');
  }
}

/** Where the recorded call a replayed call got its output from lives: the link of its badge. */
export interface RecordedCallRef {
  callId: string;
  branchId: string;
  turn: number;
}

/** A call's badge: what happened to it, its tooltip, and the recorded call it points at (null: none to show). */
export interface CallBadge {
  outcome: ReplayOutcome;
  label: string;
  title: string;
  recorded: RecordedCallRef | null;
}

function badgeTitle(outcome: ReplayOutcome, recordedCallId: string | null, reported: ReplayOutcome | 'missing' | undefined): string {
  const what =
    outcome === 'replayed'
      ? t('The recorded output of {0} was used; the tool did not run.', recordedCallId ?? '?')
      : outcome === 'live'
        ? recordedCallId
          ? t('The tool ran live: no recorded call matched (nearest: {0}).', recordedCallId)
          : t('The tool ran live.')
        : t('No recorded call matched this call.');
  if (reported === undefined) return what;
  return `${what} ${reported === 'missing' ? t('The agent did not report this call.') : t("The agent reported '{0}'.", outcomeLabel(reported))}`;
}

/**
 * The badge of every marked call of a branch, by the new call's id. The store lists the newest runs' marks first: a
 * call id marked twice (a run written again under the same id) keeps the newest mark.
 */
export function callBadges(view: ReplayMarksView | undefined): Map<string, CallBadge> {
  const badges = new Map<string, CallBadge>();
  for (const m of view?.marks ?? []) {
    if (badges.has(m.callId)) continue;
    const recorded =
      m.outcome === 'replayed' && m.recordedCallId !== null && m.recordedBranchId !== null && m.recordedTurn !== null
        ? { callId: m.recordedCallId, branchId: m.recordedBranchId, turn: m.recordedTurn }
        : null;
    badges.set(m.callId, {
      outcome: m.outcome,
      label: outcomeLabel(m.outcome),
      title: badgeTitle(m.outcome, m.recordedCallId, m.reported),
      recorded,
    });
  }
  return badges;
}

/** The badge of a call while its run goes on, from its `tool/output` event (no link yet: the marks are kept at its end). */
export function runCallBadge(replay: { outcome: ReplayOutcome; recordedCallId: string | null } | undefined): CallBadge | undefined {
  if (!replay) return undefined;
  return {
    outcome: replay.outcome,
    label: outcomeLabel(replay.outcome),
    title: badgeTitle(replay.outcome, replay.recordedCallId, undefined),
    recorded: null,
  };
}
