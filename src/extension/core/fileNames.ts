/**
 * The file names a save dialog offers, made from what a store holds (a session id, a branch name): letters, digits,
 * `.`, `_` and `-` of any script, the rest as `-`, at most 80 characters. A session id is anyone's text: taken as it
 * was, `../../.config/x` offered a folder outside the session's, and `/` or `\` made a path of it.
 */
export function safeFileName(text: string): string {
  return (
    text
      .replace(/[^\p{L}\p{N}._-]+/gu, '-')
      .replace(/^[-.]+|-+$/g, '')
      .slice(0, 80) || 'session'
  );
}
