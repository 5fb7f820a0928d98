import { createHash, randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** CSP source for an inline style whose text is empty (sha256 of ''). */
const EMPTY_STYLE_HASH = `sha256-${createHash('sha256').update('').digest('base64')}`;

/**
 * The one place webview HTML is written. Its Content-Security-Policy allows nothing by default; scripts only with
 * this page's nonce (so no inline script and nothing injected can run), styles, fonts and images only from the
 * extension's own resources, images also as data: URLs (no inline styles but an empty one, no remote content), and no network access at all. The page itself
 * holds no data: everything arrives as messages and is inserted as text.
 */
export function webviewHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  options: { title: string; script: string; styles: string[] },
): string {
  // The translations for the display language go into an attribute, not a script: the CSP runs no inline script, and a
  // message would arrive after the first strings were drawn. webview/l10n.ts reads it before anything is drawn.
  const bundle = vscode.l10n.bundle ? escapeHtml(JSON.stringify(vscode.l10n.bundle)) : '';
  const lang = escapeHtml(vscode.env.language || 'en');
  const nonce = randomBytes(16).toString('base64');
  const asset = (path: string): string => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...path.split('/'))).toString();
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    // The hash is that of the empty string: it lets exactly one thing through, the toolkit's probe (FAST appends an
    // empty <style> to test `:focus-visible` support), which the browser otherwise reports as a CSP violation.
    `style-src ${webview.cspSource} '${EMPTY_STYLE_HASH}'`,
    `font-src ${webview.cspSource}`,
    // data: for images a tool returned (screenshots, generated images): the view shows only data URLs, never a remote one.
    `img-src ${webview.cspSource} data:`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
  const styles = options.styles.map((s) => `<link rel="stylesheet" href="${asset(s)}">`).join('\n    ');
  return `<!DOCTYPE html>
<html lang="${lang}">
  <head>
    <meta charset="UTF-8">
    <meta http-equiv="Content-Security-Policy" content="${csp}">
    <meta name="viewport" content="width=device-width, initial-scale=1.0">
    ${styles}
    <title>${escapeHtml(options.title)}</title>
  </head>
  <body data-l10n="${bundle}">
    <div id="app" aria-live="polite"></div>
    <script nonce="${nonce}" src="${asset(options.script)}"></script>
  </body>
</html>`;
}

/** Escapes text for an HTML text or attribute context (used only for the constant-ish title above). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}
