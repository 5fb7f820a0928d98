/** Turning writes on for a server store, which is shared (often production) data. */
import * as vscode from 'vscode';
import { showWarningNotice } from '../core/notices';

/** Asks before a server store is made writable (it is production data). */
export async function confirmRemoteWrites(address: string): Promise<boolean> {
  const allow = vscode.l10n.t('Allow Writing');
  const answer = await showWarningNotice(
    vscode.l10n.t('Allow writing to {0}?', address),
    {
      modal: true,
      detail: vscode.l10n.t(
        'This is a shared server store, often production data. While writing is on, Delete Session changes it for every agent using it.',
      ),
    },
    allow,
  );
  return answer === allow;
}
