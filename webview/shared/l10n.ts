import * as l10n from '@vscode/l10n';

/**
 * The webview side of localization. The host puts its `vscode.l10n.bundle` (the translations of the display language,
 * from `l10n/bundle.l10n.<lang>.json`) into the page's `data-l10n` attribute (the strict CSP allows no inline script,
 * and a message would arrive after the first paint), and this module loads it before any component asks for a string:
 * every module that calls `t()` imports this one, so it is evaluated first. With no bundle (English, or a unit test
 * in Node) `t()` returns the English source string with its placeholders filled.
 */
function loadBundle(): void {
  // Through globalThis: webview/logic (which uses t()) is also type-checked and unit-tested without the DOM.
  const page = (globalThis as { document?: { body?: { dataset: Record<string, string | undefined> } | null } }).document;
  const raw = page?.body?.dataset['l10n'];
  if (!raw) return;
  try {
    l10n.config({ contents: raw });
  } catch {
    // A bundle that does not parse leaves the view in English rather than blank.
  }
}

loadBundle();

/**
 * The localized text of an English source string, like `vscode.l10n.t` on the host: the English text is the key,
 * `{0}`, `{1}`… are replaced by `args` in order.
 */
export function t(message: string, ...args: Array<string | number | boolean>): string {
  return l10n.t(message, ...args);
}
