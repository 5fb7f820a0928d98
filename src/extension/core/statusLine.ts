/**
 * The words of an outcome that fit the status bar. The status bar is one line shared with every other item, and
 * VS Code cuts what does not fit without an ellipsis, so a message of several sentences was read as its first half.
 * The status bar gets the first sentence, and at most `MAX_STATUS_CHARS` of it; the notification has the whole.
 */
import { plainIconText } from './iconText';

/** About what the status bar shows beside the usual left items on a laptop-width window. */
export const MAX_STATUS_CHARS = 80;

export function statusLine(message: string): string {
  const oneLine = message.replace(/\s+/g, ' ').trim();
  // The end of the first sentence: a full stop (or ! ?) followed by a space and a capital, or the end of the text.
  // "1.2 GB" or "gpt-4.1-mini" have no space after their dots, so they do not end it.
  const end = /[.!?](?=\s+\p{Lu})/u.exec(oneLine);
  const first = end ? oneLine.slice(0, end.index + 1) : oneLine;
  const chars = Array.from(first);
  return chars.length <= MAX_STATUS_CHARS
    ? first
    : `${chars
        .slice(0, MAX_STATUS_CHARS - 1)
        .join('')
        .trimEnd()}…`;
}

/**
 * What an outcome puts in the status bar: our `icon`, then `message`'s first sentence. The message often holds outside
 * words (a file's name, a session id), and the status bar draws `$(name)` as an icon: only `icon` is drawn.
 */
export function outcomeStatus(icon: 'check' | 'error', message: string): string {
  return `$(${icon}) ${plainIconText(statusLine(message))}`;
}
