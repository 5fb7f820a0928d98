/**
 * Words from outside in the places VS Code draws `$(name)` as an icon: a quick pick item's label, description and
 * detail, an input box's prompt and validation message, a status bar item's text and `setStatusBarMessage`. A session
 * id, branch name, file name, span name or message preview holding `$(pass)` or `$(loading~spin)` would show a fake
 * check mark or spinner there. (A quick pick's title and placeholder, a tree item's label and description, a
 * notification and a string tooltip are drawn as plain text.) Without VS Code, so it is unit-tested.
 */
import { plainNotice } from './noticeText';

/**
 * What VS Code draws as an icon: `$(` + a name of letters, digits and `-` + an optional `~modifier` of letters + `)`.
 * A backslash just before it makes VS Code show the words `$(name)` instead, without the backslash.
 */
const ICON = /\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g;

/**
 * `text` shown as written where VS Code draws icons: every `$(name)` gets VS Code's escape, a backslash before it (its
 * `escapeIcons`). A backslash already in front of one is kept and escaped in turn, so `\$(x)` is shown as `\$(x)`.
 * Only for outside words: our own `$(check)` prefixes are meant as icons, so escape the words, then add the prefix.
 */
export function plainIconText(text: string): string {
  return text.replace(ICON, '\\$&');
}

/**
 * An input box's prompt or validation message with outside words in it: VS Code draws icons there, and also draws
 * `[label](command:…)` as a link that runs the command (its quick input opens links with commands allowed), as a
 * notification does (noticeText.ts). Neither is drawn from the result.
 */
export function plainPromptText(text: string): string {
  return plainNotice(plainIconText(text));
}
