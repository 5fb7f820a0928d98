/**
 * Linking a trace by hand (docs/traces.md, "Linking"): a trace no session claims — its spans name none of the ids we
 * read — is linked to the turn the user is looking at, from the Timeline's "no trace" message. The link is the
 * strongest there is: no later span of the trace undoes it.
 */
import * as vscode from 'vscode';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import type { TraceService } from './traceService';
import { traceLabel } from './traceLabel';
import { showInformationNotice } from '../core/notices';

/** The unlinked traces offered at most (newest first), and those whose root span is read for a name. */
const OFFERED = 100;
const NAMED = 40;

/**
 * Asks which unlinked trace belongs to `turn` of `branchId` (the branch that ran it) and links it. False when there is
 * none (the user is told) or the pick was dismissed.
 */
export async function linkTraceToTurn(traces: TraceService, target: SessionRef, branchId: string, turn: number): Promise<boolean> {
  const store = await traces.traces();
  const unlinked = await store.call('unlinkedTraces', OFFERED);
  if (unlinked.length === 0) {
    void showInformationNotice(vscode.l10n.t('Every trace in the store is linked to a session: there is none to link to this turn.'));
    return false;
  }
  const firsts = await Promise.all(
    unlinked.map((t, i) => (i < NAMED ? store.call('spansOfTrace', t.traceId).then((s) => s[0]) : Promise.resolve(undefined))),
  );
  const picked = await vscode.window.showQuickPick(
    unlinked.map((t, i) => ({ ...traceLabel(t, firsts[i]), traceId: t.traceId })),
    {
      title: vscode.l10n.t('Link a Trace to Turn {0} of {1}', turn, branchId),
      placeHolder: vscode.l10n.t('Traces no session claims, newest first'),
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  if (!picked) return false;
  await traces.linkTrace(picked.traceId, { sessionId: target.sessionId, branchId, turnNumber: turn });
  return true;
}
