/** Links clicked in a view's rendered Markdown: the text comes from a database, so nothing opens unasked. */
import * as vscode from 'vscode';
import { showWarningNotice } from './notices';

/**
 * Opens a link from session data: only http(s) (a `command:` or `file:` link could act in the editor), and only after
 * the user confirms the exact address (shown up to 2,000 characters; a refused one names up to 200).
 */
export async function openConfirmedLink(url: string): Promise<void> {
  let parsed: vscode.Uri;
  try {
    parsed = vscode.Uri.parse(url, true);
  } catch {
    return;
  }
  if (parsed.scheme !== 'http' && parsed.scheme !== 'https') {
    void showWarningNotice(vscode.l10n.t('Links of this kind are not opened from session data: {0}', url.slice(0, 200)));
    return;
  }
  const open = vscode.l10n.t('Open');
  const answer = await showWarningNotice(
    vscode.l10n.t('Open this link from the session data?'),
    { modal: true, detail: url.slice(0, 2000) },
    open,
  );
  if (answer === open) await vscode.env.openExternal(parsed);
}
